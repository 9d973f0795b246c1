package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Bulk ingestion on a replicated engine (issue 17; replication.go). An
// sstable ingested into one replica's Pebble would change that replica
// only, so IngestVersioned sends the keys its fill writes, already in
// their engine form (versions at the ingestion's commit timestamp), as
// replicated writes of at most replBulkChunkBytes, up to replBulkInFlight
// of them proposed at once: memory stays bounded whatever the size of the
// load, and every replica applies the same keys.
//
// Atomicity. The keys are versions at one commit timestamp that stays in
// flight (commitTracker) until the last write applied here, so no read of
// this node sees part of the load; reads below the timestamp never see
// it. What a failure could leave behind is a prefix of the writes on the
// replicas, visible to the next serving node. So the first write also
// sets a pending record (a system key, bulkRecordKey: the timestamp → the
// load's first key), the last one deletes it, and:
//
//   - a load that fails with every write's outcome known is rolled back
//     at once: its versions at the timestamp are deleted (again through
//     the replicator), then the record;
//   - otherwise (a write whose outcome is unknown may still apply, or the
//     rollback failed) the replicator is told to give up serving
//     (BulkAbandoner): the node's reads stop at once and the next serving
//     node, whose epoch fences every write of this one, rolls back every
//     pending load before it serves (RollBackBulkLoads).
//
// The rollback finds the load's keys as the versions at its timestamp
// from its first key to the end of the table area (the keys of a load are
// in key order; only one commit has that timestamp).

// Variables, so that tests can make chunks small.
var (
	replBulkChunkBytes = 512 << 10
	replBulkInFlight   = 8
)

// bulkRecordPrefix starts the system keys of pending replicated loads:
// 0x01 "bulk/" <commit timestamp: wall (8 BE), logical (4 BE)>.
var bulkRecordPrefix = append([]byte{SystemPrefix}, "bulk/"...)

func bulkRecordKey(ts hlc.Timestamp) []byte {
	k := append([]byte(nil), bulkRecordPrefix...)
	k = binary.BigEndian.AppendUint64(k, uint64(ts.WallTime))
	return binary.BigEndian.AppendUint32(k, uint32(ts.Logical))
}

// BulkAbandoner is implemented by a Replicator that can stop its node
// serving when a replicated load may be left half applied: the node must
// stop answering reads at once, and the next node that serves (under a
// new epoch, which fences this one's writes) calls RollBackBulkLoads.
type BulkAbandoner interface {
	AbandonServing(reason error)
}

// replBulk sends one load's keys.
type replBulk struct {
	e     *Engine
	ts    hlc.Timestamp
	buf   []byte // keys and values of the chunk being filled
	ms    []Mutation
	first []byte // the load's first user key
	sent  bool   // the first chunk, with the record, was applied
	sem   chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	err     error
	unknown bool // a write's outcome is unknown
}

func (r *replBulk) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(err, ErrOutcomeUnknown) {
		r.unknown = true
	}
	if r.err == nil {
		r.err = err
	}
}

func (r *replBulk) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// set adds one key (SSTWriter.Set: userKey and its engine key and value).
func (r *replBulk) set(userKey, key, value []byte) error {
	if !isVersioned(userKey) {
		// Only versions at the timestamp can be found again to roll back.
		return fmt.Errorf("storage: a replicated bulk load writes only table keys, not %s", FormatKey(userKey))
	}
	if err := r.failed(); err != nil {
		return err
	}
	if r.first == nil {
		r.first = append([]byte(nil), userKey...)
	}
	n := len(key) + len(value)
	if len(r.ms) > 0 && len(r.buf)+n > cap(r.buf) {
		if err := r.flush(); err != nil {
			return err
		}
	}
	if r.buf == nil || len(r.buf)+n > cap(r.buf) {
		r.buf = make([]byte, 0, max(replBulkChunkBytes, n))
	}
	off := len(r.buf)
	r.buf = append(append(r.buf, key...), value...)
	kEnd := off + len(key)
	r.ms = append(r.ms, Mutation{Kind: MutationSet, Key: r.buf[off:kEnd:kEnd], Value: r.buf[kEnd:len(r.buf):len(r.buf)]})
	return nil
}

// flush sends the chunk: the first one (with the pending record) alone
// and waited for, so that no key of the load is on a replica without it;
// the others up to replBulkInFlight at a time.
func (r *replBulk) flush() error {
	ms, size := r.ms, len(r.buf)
	r.ms, r.buf = nil, nil
	if len(ms) == 0 {
		return nil
	}
	if !r.sent {
		rec := Mutation{Kind: MutationSet, Key: bareKey(bulkRecordKey(r.ts)), Value: r.first}
		if err := r.replicate(append([]Mutation{rec}, ms...), size); err != nil {
			r.fail(err)
			return err
		}
		r.sent = true
		return nil
	}
	r.sem <- struct{}{}
	r.wg.Add(1)
	go func() {
		defer func() {
			<-r.sem
			r.wg.Done()
		}()
		if err := r.replicate(ms, size); err != nil {
			r.fail(err)
		}
	}()
	return r.failed()
}

func (r *replBulk) replicate(ms []Mutation, size int) error {
	if r.e.space != nil {
		if err := r.e.space.admit(size, false); err != nil {
			return err
		}
		defer r.e.space.release(size)
	}
	return r.e.repl.Replicate(r.ts, ms)
}

// ingestReplicated is IngestVersioned on a replicated engine (w's
// commit timestamp is in flight).
func (e *Engine) ingestReplicated(ctx context.Context, w *SSTWriter, fill func(w *SSTWriter) error) error {
	r := &replBulk{e: e, ts: w.ts, sem: make(chan struct{}, replBulkInFlight)}
	w.rb = r
	err := fill(w)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = r.flush()
	}
	r.wg.Wait()
	if err == nil {
		err = r.failed()
	}
	if err == nil && r.sent {
		// The end of the load: the record goes.
		del := []Mutation{{Kind: MutationDelete, Key: bareKey(bulkRecordKey(r.ts))}}
		if err = e.repl.Replicate(r.ts, del); err != nil {
			r.fail(err)
		}
	}
	if err == nil {
		return nil
	}
	r.mu.Lock()
	unknown := r.unknown
	r.mu.Unlock()
	if !r.sent && !unknown {
		return err // the first write failed: nothing of the load applied
	}
	if !unknown {
		rerr := e.rollBackBulk(ctx, r.ts, r.first)
		if rerr == nil {
			return err
		}
		err = errors.Join(err, fmt.Errorf("storage: rolling back the bulk load: %w", rerr))
	}
	if a, ok := e.repl.(BulkAbandoner); ok {
		a.AbandonServing(err)
	}
	return err
}

// rollBackBulk deletes, through the replicator, every version at ts from
// the user key first to the end of the table area, then the pending
// record of ts.
func (e *Engine) rollBackBulk(ctx context.Context, ts hlc.Timestamp, first []byte) error {
	lower, upper := engineBounds(Span{Start: first, End: TablesSpan().End})
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	b := e.db.NewBatch()
	defer func() { b.Close() }()
	flush := func() error {
		if b.Empty() {
			return nil
		}
		if err := e.replicate(b, hlc.Timestamp{}); err != nil {
			return err
		}
		b.Close()
		b = e.db.NewBatch()
		return ctx.Err()
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if enginekey.Split(k) == len(k) {
			continue // bare: not a version
		}
		_, vts, ok := enginekey.DecodeVersion(k)
		if !ok {
			return fmt.Errorf("%w: engine key %x", ErrCorruptEncoding, k)
		}
		if vts != ts {
			continue
		}
		if err := b.Delete(k, nil); err != nil {
			return err
		}
		if b.Count() >= gcBatchDeletes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := b.Delete(bareKey(bulkRecordKey(ts)), nil); err != nil {
		return err
	}
	return flush()
}

// RollBackBulkLoads rolls back every replicated load whose pending record
// is in the store (its node failed or gave up before it finished); it
// returns how many. A node that starts serving calls it after
// SetReplicator and before it serves SQL: its epoch fences the writes of
// the node that ran the loads, so the store holds all that will ever apply
// of them.
func (e *Engine) RollBackBulkLoads(ctx context.Context) (int, error) {
	if !e.replOn.Load() {
		return 0, errors.New("storage: RollBackBulkLoads needs a replicator")
	}
	type pending struct {
		ts    hlc.Timestamp
		first []byte
	}
	var loads []pending
	lower, upper := engineBounds(PrefixSpan(bulkRecordPrefix))
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		uk, ok := enginekey.UserKeyOf(it.Key())
		if !ok || len(uk) != len(bulkRecordPrefix)+12 {
			it.Close()
			return 0, fmt.Errorf("%w: bulk load record %x", ErrCorruptEncoding, it.Key())
		}
		t := uk[len(bulkRecordPrefix):]
		ts := hlc.Timestamp{WallTime: int64(binary.BigEndian.Uint64(t)), Logical: int32(binary.BigEndian.Uint32(t[8:]))}
		loads = append(loads, pending{ts: ts, first: append([]byte(nil), it.Value()...)})
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return 0, err
	}
	for _, l := range loads {
		if err := e.rollBackBulk(ctx, l.ts, l.first); err != nil {
			return 0, fmt.Errorf("storage: rolling back the bulk load at %s: %w", l.ts, err)
		}
	}
	return len(loads), nil
}
