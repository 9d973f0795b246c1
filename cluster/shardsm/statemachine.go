package shardsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// stateMachine is one replica's raft.StateMachine: the shard its
// descriptor names, in the store's shared Pebble.
type stateMachine struct {
	store   *Store
	group   raft.GroupID
	replica raft.ReplicaID

	// mu guards the cached copies of replicated state, which Apply and
	// RecoverFromSnapshot write and Lookup reads.
	mu          sync.RWMutex
	desc        Descriptor
	initialized bool
	stats       mvcc.Stats
	maxTS       hlc.Timestamp // stateMaxTimestamp
	serving     Serving       // stateServing
	closedTS    hlc.Timestamp // stateClosed (closedts.go)
	closed      bool

	// recent records the row keys of the Writes applied lately, for
	// taking a Write's carried stats change (statshint.go). Apply,
	// Open and RecoverFromSnapshot use it, one at a time.
	recent recentWrites

	// onceFrom is where the records of Writes applied once start after
	// the last Close deleted the older ones (writeonce.go; nil: from the
	// first), nextOnceFrom where they will once the Close being applied
	// is committed. Apply's alone.
	onceFrom, nextOnceFrom []byte
}

var _ raft.StateMachine = (*stateMachine)(nil)

var errClosed = errors.New("shardsm: replica closed")

func (m *stateMachine) Open(stop <-chan struct{}) (uint64, error) {
	m.recent.reset()
	if err := m.load(); err != nil {
		return 0, err
	}
	return readApplied(m.store.db, m.group)
}

// load reads the descriptor and stats into the cache.
func (m *stateMachine) load() error {
	d, ok, err := readDescriptor(m.store.db, m.group)
	if err != nil {
		return err
	}
	st, err := readStats(m.store.db, m.group)
	if err != nil {
		return err
	}
	maxTS, err := readMaxTimestamp(m.store.db, m.group)
	if err != nil {
		return err
	}
	serving, err := readServing(m.store.db, m.group)
	if err != nil {
		return err
	}
	closedTS, err := readClosed(m.store.db, m.group)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.desc, m.initialized, m.stats, m.maxTS, m.serving, m.closedTS = d, ok, st, maxTS, serving, closedTS
	m.mu.Unlock()
	m.onceFrom, m.nextOnceFrom = nil, nil
	if err := m.store.observe(closedTS); err != nil {
		return err
	}
	return m.store.observe(maxTS)
}

// Apply applies each entry in a batch of its own, committed without fsync
// with the entry's index as the applied index, the new stats counter and,
// for a split or an init, the descriptors. One batch per entry because a
// command is all or nothing: an operation that fails leaves its batch
// unwritten while the applied index still moves past it, and a later entry
// reads what the earlier ones wrote. Pebble's WAL keeps batches in order, so
// a crash leaves a prefix of them and Open's index matches the data. In
// local-lock mode (a cluster node's commits) runs of Writes that touch
// different keys share one batch instead (applyrun.go).
func (m *stateMachine) Apply(entries []raft.Entry) error {
	if len(entries) > 1 && m.store.localLocks.Load() {
		// A cluster node's commits: runs of Writes share a batch
		// (applyrun.go).
		return m.applyRuns(entries)
	}
	for i := range entries {
		if err := m.applyOne(&entries[i]); err != nil {
			return fmt.Errorf("shardsm: group %d: applying entry %d: %w", m.group, entries[i].Index, err)
		}
	}
	return nil
}

// outcome of one command: a result, and whether its writes are kept.
type outcome struct {
	res   raft.Result
	keep  bool
	split *SplitEvent
}

func (m *stateMachine) applyOne(e *raft.Entry) error {
	m.mu.RLock()
	desc, initialized, stats, maxTS, serving, closedTS := m.desc, m.initialized, m.stats, m.maxTS, m.serving, m.closedTS
	m.mu.RUnlock()
	newMaxTS, newServing, newClosed := maxTS, serving, closedTS

	cmd, err := decodeCommand(e.Cmd)
	// A Write of a store in local-lock mode counts its stats change
	// without reading its batch back (applyWrite), so its batch need not
	// be indexed: indexing every key costs a skiplist insert.
	var b *pebble.Batch
	if _, isWrite := cmd.(*Write); isWrite && m.store.localLocks.Load() {
		b = m.store.db.NewBatch()
	} else {
		b = m.store.db.NewIndexedBatch()
	}
	defer func() { b.Close() }()
	var out outcome
	newDesc, newInit := desc, initialized
	newStats := stats

	if err != nil {
		out.res = raft.Result{Value: ResultMalformed, Data: []byte(err.Error())}
	} else {
		switch c := cmd.(type) {
		case *Batch:
			var delta mvcc.Stats
			out, delta, err = m.applyBatch(b, c, desc, initialized)
			newStats.Add(delta)
		case *Write:
			var delta mvcc.Stats
			out, delta, newMaxTS, err = m.applyWriteCmd(b, c, e.Index, desc, initialized, serving, maxTS, closedTS, nil)
			newStats.Add(delta)
		case *Init:
			if initialized {
				out.res = rejected(fmt.Errorf("shardsm: group %d already holds shard %s", m.group, desc))
			} else if err := c.Descriptor.validate(); err != nil {
				out.res = rejected(err)
			} else {
				newDesc, newInit = c.Descriptor, true
				// The span may hold data of an earlier life of these keys
				// (a shard removed from this node); the new shard starts
				// from what is there, counted.
				newStats, err = mvcc.ComputeStats(b, newDesc.Span)
				m.dropLocalLocks(&newStats)
				out = outcome{res: raft.Result{Value: ResultApplied}, keep: true}
			}
		case *Split:
			out, newDesc, newStats, err = m.applySplit(b, c, e.Index, desc, initialized, stats)
		case *Stage, *Decide, *Resolve, *ServeAt: // crossgroup.go
			var x crossOutcome
			x, err = m.applyCross(b, c, desc, initialized, maxTS, serving, closedTS)
			out, newMaxTS, newServing = x.out, x.maxTS, x.serving
			newStats.Add(x.delta)
		case *Close:
			out, newClosed = applyClose(c, serving, closedTS)
		case *Mark:
			// Only the applied index moves (written below).
			out = outcome{res: raft.Result{Value: ResultApplied}}
		case *Serve:
			newServing = Serving{Epoch: serving.Epoch + 1, Node: c.Node}
			out = outcome{res: raft.Result{Value: ResultApplied, Data: binary.BigEndian.AppendUint64(nil, newServing.Epoch)}, keep: true}
		}
		if err != nil {
			return err // an I/O failure: stop the node
		}
	}
	if !out.keep {
		// Nothing of the command is written; only the index moves.
		b.Close()
		b = m.store.db.NewIndexedBatch()
		newDesc, newInit, newStats, newMaxTS, newServing, newClosed = desc, initialized, stats, maxTS, serving, closedTS
	} else {
		if newClosed != closedTS {
			if err := b.Set(stateKey(m.group, stateClosed), appendTimestamp(nil, newClosed), nil); err != nil {
				return err
			}
			// The Writes at or below it can no longer apply: their
			// records of having applied are not needed (writeonce.go).
			if err := m.forgetOnce(b, newClosed); err != nil {
				return err
			}
		}
		if newServing != serving {
			if err := b.Set(stateKey(m.group, stateServing), encodeServing(newServing), nil); err != nil {
				return err
			}
		}
		if newMaxTS != maxTS {
			if err := b.Set(stateKey(m.group, stateMaxTimestamp), appendTimestamp(nil, newMaxTS), nil); err != nil {
				return err
			}
		}
		if !newDesc.equal(desc) || newInit != initialized {
			if err := b.Set(stateKey(m.group, stateDescriptor), encodeDescriptor(newDesc), nil); err != nil {
				return err
			}
		}
		if newStats != stats {
			if err := b.Set(stateKey(m.group, stateStats), encodeStats(newStats), nil); err != nil {
				return err
			}
		}
	}
	if err := b.Set(stateKey(m.group, stateApplied), binary.BigEndian.AppendUint64(nil, e.Index), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	m.mu.Lock()
	m.desc, m.initialized, m.stats, m.maxTS, m.serving, m.closedTS = newDesc, newInit, newStats, newMaxTS, newServing, newClosed
	m.mu.Unlock()
	if newClosed != closedTS {
		m.onceFrom = m.nextOnceFrom
		if err := m.store.observe(newClosed); err != nil {
			return err
		}
	}
	if newMaxTS != maxTS {
		if err := m.store.observe(newMaxTS); err != nil {
			return err
		}
	}
	e.Result = out.res
	m.recent.note(e.Index, cmd)
	if newServing != serving {
		if f := m.store.onServing.Load(); f != nil {
			(*f)(m.group, newServing)
		}
	}
	if out.split != nil {
		if f := m.store.onSplit.Load(); f != nil {
			(*f)(*out.split)
		}
	}
	return nil
}

// applyWriteCmd applies a Write command into b under the replica's state
// before it: refused unless its epoch is the serving one (another node
// took over: this writer is fenced) and above the closed timestamp
// (closedts.go), else applyWrite (reading through deltas: see
// applyWriteWith). It returns the stats delta and the newest commit
// timestamp after it. Both Apply paths use it (applyOne, and applyRun for
// several Writes in one batch).
func (m *stateMachine) applyWriteCmd(b *pebble.Batch, c *Write, index uint64, desc Descriptor, initialized bool,
	serving Serving, maxTS, closed hlc.Timestamp, deltas *mvcc.StatsDeltaReader) (outcome, mvcc.Stats, hlc.Timestamp, error) {
	if !c.ID.IsZero() {
		// Before the fences: a repeat must learn that its first copy
		// applied, whatever changed since (writeonce.go).
		done, err := m.appliedBefore(c)
		if err != nil {
			return outcome{}, mvcc.Stats{}, maxTS, err
		}
		if done {
			m.store.duplicateWrites.Add(1)
			return duplicateWrite(), mvcc.Stats{}, maxTS, nil
		}
	}
	if c.Epoch != serving.Epoch {
		return outcome{res: rejected(&FencedError{WriteEpoch: c.Epoch, Serving: serving})}, mvcc.Stats{}, maxTS, nil
	}
	if out, ok := closedFence(c, closed); !ok {
		return out, mvcc.Stats{}, maxTS, nil
	}
	out, delta, err := m.applyWriteWith(b, c, index, desc, initialized, deltas)
	if err != nil {
		return out, delta, maxTS, err
	}
	if out.keep && !c.ID.IsZero() {
		if err := m.recordOnce(b, c); err != nil {
			return out, delta, maxTS, err
		}
	}
	if out.keep && maxTS.Less(c.Timestamp) {
		maxTS = c.Timestamp
	}
	return out, delta, maxTS, nil
}

// Descriptors compare by value (spans as bytes).
func (d Descriptor) equal(o Descriptor) bool {
	return d.Generation == o.Generation && bytes.Equal(d.Span.Start, o.Span.Start) && bytes.Equal(d.Span.End, o.Span.End)
}

func rejected(err error) raft.Result {
	return raft.Result{Value: ResultRejected, Data: encodeError(err)}
}

func stale(desc Descriptor, initialized bool) raft.Result {
	if !initialized {
		return raft.Result{Value: ResultStale}
	}
	return raft.Result{Value: ResultStale, Data: encodeDescriptor(desc)}
}

// applyBatch runs c's operations into b. A stale key or generation, or an
// operation that fails with a conflict or a bad request, rejects the whole
// command; only an I/O error is returned as err.
func (m *stateMachine) applyBatch(b *pebble.Batch, c *Batch, desc Descriptor, initialized bool) (outcome, mvcc.Stats, error) {
	var total mvcc.Stats
	if !initialized || (c.Generation != 0 && c.Generation != desc.Generation) {
		return outcome{res: stale(desc, initialized)}, total, nil
	}
	for i := range c.Ops {
		op := &c.Ops[i]
		if op.Kind != OpGC && !desc.ContainsSpan(storage.Span{Start: op.Key, End: op.EndKey}) {
			return outcome{res: stale(desc, initialized)}, total, nil
		}
	}
	for i := range c.Ops {
		op := &c.Ops[i]
		var d mvcc.Stats
		var err error
		switch op.Kind {
		case OpPut:
			d, err = mvcc.PutCommitted(b, op.Key, op.Timestamp, op.Value)
		case OpDelete:
			d, err = mvcc.DeleteCommitted(b, op.Key, op.Timestamp)
		case OpIntent:
			d, err = mvcc.WriteIntent(b, op.Key, op.Txn, op.Timestamp, op.Value, op.IsDelete, op.Strength)
		case OpLock:
			d, err = mvcc.AcquireLock(b, op.Key, op.Txn, op.Timestamp, op.Strength)
		case OpResolve:
			if op.EndKey == nil {
				d, err = mvcc.ResolveIntent(b, op.Key, op.Resolution)
			} else {
				d, _, err = mvcc.ResolveSpan(b, storage.Span{Start: op.Key, End: op.EndKey}, op.Resolution)
			}
		case OpGC:
			d, err = mvcc.GC(b, desc.Span, op.Timestamp)
		}
		if err != nil {
			if isIOError(err) {
				return outcome{}, total, err
			}
			if i == 0 {
				replay, rerr := isReplay(b, desc, op, err)
				if rerr != nil {
					return outcome{}, total, rerr
				}
				if replay {
					return outcome{res: raft.Result{Value: ResultApplied}}, mvcc.Stats{}, nil
				}
			}
			return outcome{res: rejected(fmt.Errorf("operation %d (%s): %w", i, op.Kind, err))}, mvcc.Stats{}, nil
		}
		total.Add(d)
	}
	return outcome{res: raft.Result{Value: ResultApplied}, keep: true}, total, nil
}

// isReplay reports whether a batch whose first operation, a committed put
// or delete, failed with err is a repeat of a batch that was applied
// already: the key's newest committed version is exactly the one the
// operation writes (same timestamp, same value or a tombstone). A caller
// may then repeat a one-phase write whose outcome it does not know (a
// proposal that timed out, or was forwarded to a leader that died) and be
// told it applied, rather than a write conflict with itself. The other
// operations (intents, locks, resolution, GC) are idempotent in the mvcc
// layer already. Batches apply all or nothing, so the first operation
// stands for the batch.
func isReplay(b *pebble.Batch, desc Descriptor, op *Op, err error) (bool, error) {
	var wc *mvcc.WriteConflictError
	if (op.Kind != OpPut && op.Kind != OpDelete) || !errors.As(err, &wc) || wc.Existing != op.Timestamp {
		return false, nil
	}
	v, vts, found, gerr := mvcc.Get(rowReader(b, desc), op.Key, op.Timestamp, mvcc.ReadOptions{})
	if gerr != nil {
		if isIOError(gerr) {
			return false, gerr
		}
		return false, nil
	}
	if op.Kind == OpPut {
		return found && vts == op.Timestamp && bytes.Equal(v, op.Value), nil
	}
	// The version at the timestamp is not a value, so it is a tombstone.
	return !found || vts != op.Timestamp, nil
}

// isIOError tells a failure of the store (which must stop the node: the
// replica cannot know what it applied) from a refusal the mvcc layer made
// on the data, which every replica makes alike. The mvcc layer's refusals
// are its typed conflicts and its own "mvcc: ..." errors; Pebble's errors
// are neither.
func isIOError(err error) bool {
	var lc *mvcc.LockConflictError
	var wc *mvcc.WriteConflictError
	switch {
	case errors.As(err, &lc), errors.As(err, &wc),
		errors.Is(err, mvcc.ErrInvalidTimestamp), errors.Is(err, storage.ErrInvertedSpan):
		return false
	case errors.Is(err, mvcc.ErrCorruptKey), errors.Is(err, mvcc.ErrCorruptValue):
		// The store is damaged: going on would apply on bad data.
		return true
	}
	return !strings.HasPrefix(err.Error(), "mvcc: ")
}

// applySplit shrinks the parent to [Start, Key) and, unless the child's
// state is here already (it came by snapshot before this replica applied
// the split), writes the child's descriptor [Key, End), its stats and its
// GC threshold. No row moves: the child's rows are the parent's, in place.
// The parent's new stats are recounted over its remaining span, which only
// the parent owns, so every replica computes the same; the child gets the
// rest.
func (m *stateMachine) applySplit(b *pebble.Batch, c *Split, index uint64, desc Descriptor, initialized bool, stats mvcc.Stats) (outcome, Descriptor, mvcc.Stats, error) {
	if !initialized {
		return outcome{res: stale(desc, false)}, desc, stats, nil
	}
	if bytes.Compare(c.Key, desc.Span.Start) <= 0 || bytes.Compare(c.Key, desc.Span.End) >= 0 {
		return outcome{res: stale(desc, true)}, desc, stats, nil
	}
	if c.Child == m.group || c.Child == 0 || len(c.Members) == 0 {
		return outcome{res: rejected(fmt.Errorf("shardsm: group %d cannot split into group %d with %d members", m.group, c.Child, len(c.Members)))}, desc, stats, nil
	}
	parent := Descriptor{Span: storage.Span{Start: desc.Span.Start, End: c.Key}, Generation: desc.Generation + 1}
	child := Descriptor{Span: storage.Span{Start: c.Key, End: desc.Span.End}, Generation: desc.Generation + 1}
	parentStats, err := mvcc.ComputeStats(b, parent.Span)
	if err != nil {
		return outcome{}, desc, stats, err
	}
	m.dropLocalLocks(&parentStats)
	_, seeded, err := readDescriptor(b, c.Child)
	if err != nil {
		return outcome{}, desc, stats, err
	}
	seeded = !seeded
	// Refused while staged parts wait; the child inherits the serving
	// epoch (crossgroup.go).
	if res, ok, err := m.splitCross(b, c.Child, seeded); err != nil || !ok {
		return outcome{res: res}, desc, stats, err
	}
	if seeded {
		childStats := stats
		childStats.Sub(parentStats)
		if err := b.Set(stateKey(c.Child, stateDescriptor), encodeDescriptor(child), nil); err != nil {
			return outcome{}, desc, stats, err
		}
		if err := b.Set(stateKey(c.Child, stateStats), encodeStats(childStats), nil); err != nil {
			return outcome{}, desc, stats, err
		}
		if err := b.Set(stateKey(c.Child, stateMembers), encodeMembers(c.Members), nil); err != nil {
			return outcome{}, desc, stats, err
		}
		// The child's applied index is absent: 0, the index its group
		// starts at. An old one from an earlier life of the group id is
		// removed with the rest of its state.
		if err := b.Delete(stateKey(c.Child, stateApplied), nil); err != nil {
			return outcome{}, desc, stats, err
		}
		gc, err := mvcc.ReadGCThreshold(b, desc.Span.Start)
		if err != nil {
			return outcome{}, desc, stats, err
		}
		if !gc.IsEmpty() {
			if err := mvcc.WriteGCThreshold(b, c.Key, gc); err != nil {
				return outcome{}, desc, stats, err
			}
		}
	}
	ev := &SplitEvent{Parent: m.group, Child: c.Child, Replica: m.replica, Members: c.Members,
		Descriptor: child, Index: index, Seeded: seeded}
	return outcome{res: raft.Result{Value: ResultApplied}, keep: true, split: ev}, parent, parentStats, nil
}

// Sync makes every applied batch durable: one fsync of Pebble's WAL.
func (m *stateMachine) Sync() error {
	if m.store.noSync.Load() {
		return nil
	}
	return m.store.db.LogData(nil, pebble.Sync)
}

func (m *stateMachine) Close() error {
	m.mu.Lock()
	wasClosed := m.closed
	m.closed = true
	m.mu.Unlock()
	if !wasClosed {
		m.store.open.Add(-1)
	}
	return nil
}

// dropLocalLocks leaves lock records out of a recount when they are the
// node's own (Store.SetLocalLocks): they differ between replicas.
func (m *stateMachine) dropLocalLocks(s *mvcc.Stats) {
	if m.store.localLocks.Load() {
		s.LockBytes, s.LockCount = 0, 0
	}
}
