package mvcc

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// ReadOptions qualify a read at a timestamp.
type ReadOptions struct {
	// Txn is the reading transaction, if any: its own writes of its
	// current epoch with a sequence number up to Txn.Seq are visible to it
	// whatever their timestamp (read-your-writes). A statement that must not
	// see its own writes (INSERT ... SELECT from the same table) reads with
	// the Seq from before it and writes with a larger one. Intents of older
	// epochs are not visible.
	Txn *TxnMeta
	// GCThreshold is the shard's GC threshold (ReadGCThreshold): a read
	// below it fails with BelowGCThresholdError rather than miss versions
	// that GC removed.
	GCThreshold hlc.Timestamp
	// UncertaintyLimit, when after the read timestamp, is the read
	// timestamp plus the maximum clock offset (design §12): a version in
	// (read timestamp, limit] may have been committed before the read began
	// on a node whose clock is ahead, so the read cannot tell whether to
	// see it and fails with ReadWithinUncertaintyError (the layer above
	// retries above that version, as CockroachDB does); another
	// transaction's intent in the window is a LockConflictError. Zero on a
	// single node, where every timestamp comes from one clock.
	UncertaintyLimit hlc.Timestamp
}

// itersBeforeSeek is how many versions the scanner steps over with Next
// before it seeks instead: a Next within a block is much cheaper than a
// seek, a seek is cheaper than many Nexts (CockroachDB uses 5).
const itersBeforeSeek = 5

// Scanner returns, in key order, the newest version visible at a read
// timestamp of every key in a span: committed at or before the timestamp,
// not a tombstone. It stops with a LockConflictError at an intent of
// another transaction at or below the timestamp, whose outcome decides what
// the read sees: the caller resolves or waits for it and resumes the scan
// at that key. Intents above the timestamp are skipped: a transaction never
// commits below its intent's timestamp.
//
//	s, err := NewScanner(r, span, ts, ReadOptions{})
//	for s.Next() { use(s.Key(), s.Value()) }
//	err = s.Close() // the first error, including a LockConflictError
//
// NewReverseScanner returns the same rows in descending key order (ORDER BY
// ... DESC); it pays two seeks per key, since a key's newest version is the
// last one met going backwards.
//
// Key and Value are valid until the next call to Next.
type Scanner struct {
	it     *pebble.Iterator
	readTS hlc.Timestamp
	// limit is the newest timestamp the read must look at: readTS, or the
	// uncertainty limit when later.
	limit hlc.Timestamp
	opts  ReadOptions
	err   error
	// first: the iterator is not positioned yet.
	first bool
	// reverse: descending key order; prevKey is the bare key of the key
	// last settled, the upper bound of the next one.
	reverse bool
	prevKey []byte

	key, value []byte
	ts         hlc.Timestamp
	seekBuf    []byte
	keyBuf     []byte
}

// NewScanner returns a Scanner over span at readTS.
func NewScanner(r Reader, span storage.Span, readTS hlc.Timestamp, opts ReadOptions) (*Scanner, error) {
	if err := checkRead(readTS, opts); err != nil {
		return nil, err
	}
	lower, upper, err := engineSpan(span)
	if err != nil {
		return nil, err
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &Scanner{it: it, readTS: readTS, limit: readTS.Forward(opts.UncertaintyLimit), opts: opts, first: true}, nil
}

// NewReverseScanner returns a Scanner over span at readTS that returns the
// keys in descending order.
func NewReverseScanner(r Reader, span storage.Span, readTS hlc.Timestamp, opts ReadOptions) (*Scanner, error) {
	s, err := NewScanner(r, span, readTS, opts)
	if err != nil {
		return nil, err
	}
	s.reverse = true
	return s, nil
}

func checkRead(readTS hlc.Timestamp, opts ReadOptions) error {
	if err := checkTimestamp(readTS); err != nil {
		return err
	}
	if readTS.Less(opts.GCThreshold) {
		return &BelowGCThresholdError{ReadTimestamp: readTS, Threshold: opts.GCThreshold}
	}
	return nil
}

// Next moves to the next visible key; false at the end or on an error
// (Close returns it).
func (s *Scanner) Next() bool {
	if s.err != nil {
		return false
	}
	if s.reverse {
		return s.prev()
	}
	var ok bool
	if s.first {
		ok, s.first = s.it.First(), false
	} else {
		ok = s.it.NextPrefix()
	}
	for ok {
		found, advanced, err := s.visible()
		if err != nil {
			s.err = err
			return false
		}
		if found {
			return true
		}
		if advanced {
			ok = s.it.Valid()
		} else {
			ok = s.it.NextPrefix()
		}
	}
	s.err = s.it.Error()
	return false
}

// prev is Next for a reverse scan: step back onto some version of the
// previous key (SeekLT its bare key), seek to that key's newest version
// and settle it as a forward scan would.
func (s *Scanner) prev() bool {
	for {
		var ok bool
		if s.first {
			ok, s.first = s.it.Last(), false
		} else {
			ok = s.it.SeekLT(s.prevKey)
		}
		if !ok {
			s.err = s.it.Error()
			return false
		}
		uk, _, isVersion := decodeVersion(s.it.Key())
		if !isVersion {
			s.err = fmt.Errorf("%w: %s is not a version", ErrCorruptKey, FormatKey(s.it.Key()))
			return false
		}
		s.prevKey = AppendBareKey(s.prevKey[:0], uk)
		if !s.it.SeekGE(s.prevKey) { // the key's newest version
			s.err = firstErr(s.it.Error(), fmt.Errorf("mvcc: version of %s vanished under a reverse scan", FormatKey(s.prevKey)))
			return false
		}
		found, _, err := s.visible()
		if err != nil {
			s.err = err
			return false
		}
		if found {
			return true
		}
	}
}

// visible settles the key the iterator is at (on its newest version): it
// returns found with key, value and ts set if a version is visible. If none
// is, advanced tells whether the iterator already left the key (it is on
// the next key, or exhausted); otherwise it is on some version of the key
// and NextPrefix moves on.
func (s *Scanner) visible() (found, advanced bool, err error) {
	uk, ts, ok := decodeVersion(s.it.Key())
	if !ok {
		return false, false, fmt.Errorf("%w: %s is not a version", ErrCorruptKey, FormatKey(s.it.Key()))
	}
	// steps counts the Nexts within the key; seeked: a seek was made, after
	// which only Nexts remain (it landed at or below the limit).
	seeked := false
	for steps := 0; ; steps++ {
		raw, err := s.it.ValueAndErr()
		if err != nil {
			return false, false, err
		}
		if len(raw) == 0 {
			return false, false, fmt.Errorf("%w: empty version value at %s", ErrCorruptValue, FormatKey(s.it.Key()))
		}
		switch valueKind(raw[0]) {
		case kindValue:
			if ts.LessEq(s.readTS) {
				s.key, s.value, s.ts = uk, raw[1:], ts
				return true, false, nil
			}
			if ts.LessEq(s.limit) {
				return false, false, s.uncertain(uk, ts)
			}
		case kindTombstone:
			if ts.LessEq(s.readTS) {
				return false, false, nil
			}
			if ts.LessEq(s.limit) {
				return false, false, s.uncertain(uk, ts)
			}
		default:
			v, err := decodeVersionValue(raw)
			if err != nil {
				return false, false, err
			}
			switch {
			case s.opts.Txn.isOwn(&v.txn):
				if w, ok := v.writeAsOf(s.opts.Txn.Seq); ok {
					if w.isDelete {
						return false, false, nil
					}
					s.key, s.value, s.ts = uk, w.value, ts
					return true, false, nil
				}
				// None of its writes of the key is visible to this read
				// (all came later in the transaction): read under it.
			case v.txn.ID == idOf(s.opts.Txn):
				// Own intent of an older epoch: not a write of the
				// current attempt; read what is under it.
			case ts.LessEq(s.limit):
				return false, false, intentConflict(uk, &versionAt{v: v})
			}
		}
		// Not visible: go to the next older version of the same key. uk
		// points into the iterator, which the step invalidates: keep a copy.
		if steps == 0 {
			s.keyBuf = append(s.keyBuf[:0], uk...)
			uk = s.keyBuf
		}
		if steps < itersBeforeSeek || seeked {
			if !s.it.Next() {
				return false, true, s.it.Error()
			}
		} else {
			// Many versions above the read timestamp: seek to the newest
			// one at or below the limit (versions sort newest first).
			s.seekBuf = AppendVersionKey(s.seekBuf[:0], uk, s.limit)
			if !s.it.SeekGE(s.seekBuf) {
				return false, true, s.it.Error()
			}
			seeked = true
		}
		nuk, nts, ok := decodeVersion(s.it.Key())
		if !ok || !bytes.Equal(nuk, uk) {
			// Past the key's last version. The step or seek may land on a
			// bare key (a local key after a shard's last row, when the
			// iterator is not bounded to the rows): that is another key,
			// never a version of this one (a bare key sorts before its
			// versions), and whoever reads on decides what it is.
			return false, true, nil
		}
		ts = nts
	}
}

func (s *Scanner) uncertain(uk []byte, ts hlc.Timestamp) error {
	return &ReadWithinUncertaintyError{Key: bytes.Clone(uk), Existing: ts, ReadTimestamp: s.readTS, Limit: s.limit}
}

func idOf(txn *TxnMeta) TxnID {
	if txn == nil {
		return TxnID{}
	}
	return txn.ID
}

// Key returns the current user key.
func (s *Scanner) Key() []byte { return s.key }

// Value returns the current row value.
func (s *Scanner) Value() []byte { return s.value }

// Timestamp returns the timestamp of the current version (its commit
// timestamp, or the provisional one of the reader's own intent).
func (s *Scanner) Timestamp() hlc.Timestamp { return s.ts }

// Stats returns the Pebble iterator's counters: seeks and steps, and the
// block bytes, keys and values it went through. Versions the scan stepped
// over show as points beyond the rows returned (see "Debugging" in
// doc.go). Call it before Close.
func (s *Scanner) Stats() pebble.IteratorStats {
	if s.it == nil {
		return pebble.IteratorStats{}
	}
	return s.it.Stats()
}

// Close releases the iterator and returns the error that stopped the scan.
func (s *Scanner) Close() error {
	if s.it == nil {
		return s.err
	}
	err := s.it.Close()
	s.it = nil
	return firstErr(s.err, err)
}

// Get returns the value of userKey visible at readTS (see Scanner for what
// is visible); found is false if there is none. It reads with a prefix seek,
// so the key bloom filters of the user key are consulted (UseL6Filters
// includes the bottom level, where most data lives). A statement reading
// many keys uses a PointReader instead: one iterator for all of them.
func Get(r Reader, userKey []byte, readTS hlc.Timestamp, opts ReadOptions) (value []byte, ts hlc.Timestamp, found bool, err error) {
	p, err := NewPointReader(r, readTS, opts)
	if err != nil {
		return nil, ts, false, err
	}
	defer func() { err = firstErr(err, p.Close()) }()
	value, ts, found, err = p.Get(userKey)
	return bytes.Clone(value), ts, found, err
}

// PointReader reads single keys at one read timestamp through one Pebble
// iterator (storage.PointReader's idea, for versions): a statement with an
// IN list of keys pays for one iterator, not one per key. Ascending keys are
// cheapest. Open it after taking the read timestamp — its view of the store
// is fixed when it opens, and a commit that landed after that has a
// timestamp later than the read's, so the view misses nothing the read must
// see. Not safe for concurrent use.
type PointReader struct {
	s      Scanner
	prefix []byte
}

// NewPointReader returns a PointReader over r at readTS.
func NewPointReader(r Reader, readTS hlc.Timestamp, opts ReadOptions) (*PointReader, error) {
	if err := checkRead(readTS, opts); err != nil {
		return nil, err
	}
	it, err := r.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return nil, err
	}
	return &PointReader{s: Scanner{it: it, readTS: readTS, limit: readTS.Forward(opts.UncertaintyLimit), opts: opts}}, nil
}

// Get returns the value of userKey visible at the read timestamp and its
// version's timestamp; found is false if there is none. The value is valid
// until the next Get or Close.
func (p *PointReader) Get(userKey []byte) (value []byte, ts hlc.Timestamp, found bool, err error) {
	if p.s.it == nil {
		return nil, ts, false, storage.ErrClosed
	}
	p.prefix = AppendBareKey(p.prefix[:0], userKey)
	it := p.s.it
	if !it.SeekPrefixGE(p.prefix) {
		return nil, ts, false, it.Error()
	}
	if split(it.Key()) != len(p.prefix) || !bytes.HasPrefix(it.Key(), p.prefix) {
		return nil, ts, false, nil
	}
	found, _, err = p.s.visible()
	if err != nil || !found {
		return nil, ts, false, err
	}
	return p.s.value, p.s.ts, true, nil
}

// Close releases the iterator; closing twice is harmless.
func (p *PointReader) Close() error {
	if p.s.it == nil {
		return nil
	}
	err := p.s.it.Close()
	p.s.it = nil
	return err
}
