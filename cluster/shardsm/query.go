package shardsm

import (
	"crypto/sha256"
	"encoding/binary"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Queries answered by Lookup (raft.Host.Read after ReadIndex, or StaleRead).

// Get reads Key at Timestamp: the newest committed version at or below it,
// or Txn's own write (mvcc.Get). It fails with a *StaleError outside the
// shard, an *mvcc.LockConflictError at another transaction's intent at or
// below Timestamp, and an *mvcc.BelowGCThresholdError below the shard's GC
// threshold.
type Get struct {
	Key       []byte
	Timestamp hlc.Timestamp
	Txn       *mvcc.TxnMeta
}

// GetResult answers Get.
type GetResult struct {
	Value     []byte
	Timestamp hlc.Timestamp
	Found     bool
}

// Scan reads the rows of Span at Timestamp, in key order, at most Limit of
// them when Limit > 0 (mvcc.NewScanner); errors as Get.
type Scan struct {
	Span      storage.Span
	Timestamp hlc.Timestamp
	Txn       *mvcc.TxnMeta
	Limit     int
}

// KV is one row of a Scan.
type KV struct {
	Key, Value []byte
	Timestamp  hlc.Timestamp
}

// State asks for the replica's replicated state: its descriptor, applied
// index and stats counter.
type State struct{}

// StateResult answers State.
type StateResult struct {
	Descriptor  Descriptor
	Initialized bool
	Applied     uint64
	Stats       mvcc.Stats
	// MaxTimestamp is the newest commit timestamp of a Write applied.
	MaxTimestamp hlc.Timestamp
	// Serving is the serving node and epoch (serving.go).
	Serving Serving
	// Closed is the closed timestamp (closedts.go): the replica holds
	// every commit of the group at or below it.
	Closed hlc.Timestamp
}

// Check recounts the shard's stats (mvcc.ComputeStats) and hashes every key
// and value the replica owns (its data spans and its own state), so tests
// and repair tools can compare replicas at the same applied index.
type Check struct{}

// CheckResult answers Check.
type CheckResult struct {
	Applied     uint64
	Stored      mvcc.Stats // the counter
	Computed    mvcc.Stats // the recount
	Fingerprint [32]byte
	Keys        int
}

func (m *stateMachine) Lookup(query any) (any, error) {
	m.mu.RLock()
	desc, initialized, stats, maxTS, serving, closedTS, closed := m.desc, m.initialized, m.stats, m.maxTS, m.serving, m.closedTS, m.closed
	m.mu.RUnlock()
	if closed {
		return nil, errClosed
	}
	db := m.store.db
	switch q := query.(type) {
	case Get:
		if !initialized || !desc.Contains(q.Key) {
			return nil, &StaleError{Descriptor: desc, Initialized: initialized}
		}
		opts, err := m.readOptions(db, desc, q.Txn)
		if err != nil {
			return nil, err
		}
		v, ts, found, err := mvcc.Get(rowReader(db, desc), q.Key, q.Timestamp, opts)
		if err != nil {
			return nil, err
		}
		return GetResult{Value: v, Timestamp: ts, Found: found}, nil
	case Scan:
		if !initialized || !desc.ContainsSpan(q.Span) || q.Span.End == nil {
			return nil, &StaleError{Descriptor: desc, Initialized: initialized}
		}
		opts, err := m.readOptions(db, desc, q.Txn)
		if err != nil {
			return nil, err
		}
		s, err := mvcc.NewScanner(db, q.Span, q.Timestamp, opts)
		if err != nil {
			return nil, err
		}
		var out []KV
		for (q.Limit <= 0 || len(out) < q.Limit) && s.Next() {
			out = append(out, KV{Key: clone(s.Key()), Value: clone(s.Value()), Timestamp: s.Timestamp()})
		}
		if err := s.Close(); err != nil {
			return nil, err
		}
		return out, nil
	case State:
		applied, err := readApplied(db, m.group)
		if err != nil {
			return nil, err
		}
		return StateResult{Descriptor: desc, Initialized: initialized, Applied: applied, Stats: stats, MaxTimestamp: maxTS, Serving: serving, Closed: closedTS}, nil
	case Check:
		return m.check(db)
	}
	return m.lookupCross(query) // Staged, Decisions (crossgroup.go)
}

// readOptions carries the shard's GC threshold, so that reads below it fail
// instead of missing collected versions.
func (m *stateMachine) readOptions(r mvcc.Reader, desc Descriptor, txn *mvcc.TxnMeta) (mvcc.ReadOptions, error) {
	gc, err := mvcc.ReadGCThreshold(r, desc.Span.Start)
	return mvcc.ReadOptions{Txn: txn, GCThreshold: gc}, err
}

func (m *stateMachine) check(db *pebble.DB) (CheckResult, error) {
	// One Pebble snapshot, so the recount, the counter, the index and the
	// hash are of the same applied state.
	snap := db.NewSnapshot()
	defer snap.Close()
	var out CheckResult
	var err error
	d, ok, err := readDescriptor(snap, m.group)
	if err != nil {
		return out, err
	}
	if out.Applied, err = readApplied(snap, m.group); err != nil {
		return out, err
	}
	if out.Stored, err = readStats(snap, m.group); err != nil {
		return out, err
	}
	var dp *Descriptor
	if ok {
		dp = &d
		if out.Computed, err = mvcc.ComputeStats(snap, d.Span); err != nil {
			return out, err
		}
		m.dropLocalLocks(&out.Computed)
	}
	h := sha256.New()
	var lenBuf [binary.MaxVarintLen64]byte
	for _, sp := range dataSpans(m.group, dp, m.store.localLocks.Load()) {
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: sp[0], UpperBound: sp[1]})
		if err != nil {
			return out, err
		}
		for ok := it.First(); ok; ok = it.Next() {
			if string(it.Key()) == string(stateKey(m.group, stateApplied)) {
				continue // the index is compared on its own
			}
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return out, err
			}
			h.Write(lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(it.Key())))])
			h.Write(it.Key())
			h.Write(lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(v)))])
			h.Write(v)
			out.Keys++
		}
		if err := it.Close(); err != nil {
			return out, err
		}
	}
	copy(out.Fingerprint[:], h.Sum(nil))
	return out, nil
}

// rowReader bounds the iterators the mvcc layer opens on r to the shard's
// rows. mvcc.Get's point reader opens an unbounded iterator and, when it
// seeks past a key's versions above the read timestamp, may land on the
// next key in the store; past the last row of a shard that is a local key
// (a GC threshold, a lock record), which it reports as a corrupt version.
// Bounded, it finds nothing there instead.
func rowReader(r mvcc.Reader, d Descriptor) mvcc.Reader {
	lo, hi, _ := mvcc.EngineSpan(d.Span)
	return boundedReader{r: r, lower: lo, upper: hi}
}

type boundedReader struct {
	r            mvcc.Reader
	lower, upper []byte
}

func (b boundedReader) NewIter(o *pebble.IterOptions) (*pebble.Iterator, error) {
	var opts pebble.IterOptions
	if o != nil {
		opts = *o
	}
	if opts.LowerBound == nil || lessEngine(opts.LowerBound, b.lower) {
		opts.LowerBound = b.lower
	}
	if opts.UpperBound == nil || lessEngine(b.upper, opts.UpperBound) {
		opts.UpperBound = b.upper
	}
	return b.r.NewIter(&opts)
}

func (b boundedReader) Get(key []byte) ([]byte, io.Closer, error) { return b.r.Get(key) }

func clone(b []byte) []byte { return append([]byte{}, b...) }
