package sql

import (
	"context"
	"slices"
	"sync"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// ALTER SEQUENCE and TRUNCATE ... RESTART IDENTITY inside a transaction
// block. PostgreSQL (since 10) makes both fully transactional: the change
// writes the sequence's state into a new relfilenode that only the
// transaction sees, so a ROLLBACK brings back where the sequence stood
// before the change, and other sessions' nextval and setval wait for the
// transaction to end (its lock on the sequence conflicts with theirs).
// PivotDB does the same with two pieces:
//
//   - a pending position (seqPending) per sequence the block changed, in
//     its txnDDL: the block's own nextval, setval and reads of the
//     sequence use it, and nothing of it reaches the store before the
//     COMMIT, which writes it as the sequence's record in the
//     transaction's batch (with the catalog) and then loads it into the
//     shared in-memory state (applySeqPending);
//   - a hold on the sequence (sequenceStore.holds), taken under the
//     sequence's state lock before its position is read: the nextval and
//     setval of other sessions find it under that lock and wait for the
//     block's end in the transaction wait-for graph (deadlocks 40P01,
//     lock_timeout 55P03), then look again. Reads of the sequence as a
//     relation (SELECT * FROM seq) do not wait and see the committed
//     position, as PostgreSQL's ACCESS SHARE does not wait.
//
// nextval and setval stay non-transactional otherwise: values the block
// takes from a sequence it did not change are gone when it rolls back, as
// in PostgreSQL, and those it takes after changing one are its pending
// position's, gone with it (PostgreSQL's new relfilenode goes too).
//
// Savepoints: each change makes a new pending position (a new relfilenode
// in PostgreSQL); a savepoint keeps the map of them, so ROLLBACK TO one
// set before a change brings back the position the sequence had then,
// while nextval calls after the savepoint on a position made before it
// stay, as in PostgreSQL. The hold lasts to the block's end.

// seqPending is where a sequence stands for the block that changed it.
type seqPending struct {
	mu sync.Mutex
	// next and done are the record to write at COMMIT (see sequences.go);
	// last and called are what the sequence shows as a relation.
	next   int64
	done   bool
	last   int64
	called bool
}

// seqHold is a transaction block's hold on a sequence: end is closed when
// the block ends.
type seqHold struct {
	owner uint64
	end   chan struct{}
}

// blockTxnSeqs is what a transaction block changed of sequences (part of
// txnDDL).
type blockTxnSeqs struct {
	// seqs are the pending positions, by sequence id.
	seqs map[uint64]*seqPending
	// seqHeld lists the sequences the block holds (seqOwner its
	// transaction); seqEnd is closed when the block ends.
	seqHeld  []uint64
	seqOwner uint64
	seqEnd   chan struct{}
}

// holdSequence registers the hold of transaction owner on sequence id.
func (ss *sequenceStore) holdSequence(id, owner uint64, end chan struct{}) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.holds == nil {
		ss.holds = map[uint64]seqHold{}
	}
	ss.holds[id] = seqHold{owner: owner, end: end}
}

// heldBy returns the hold on sequence id, if a transaction other than self
// has one.
func (ss *sequenceStore) heldBy(id, self uint64) (seqHold, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	h, ok := ss.holds[id]
	if !ok || h.owner == self {
		return seqHold{}, false
	}
	return h, true
}

// releaseHolds ends the holds of transaction owner on ids.
func (ss *sequenceStore) releaseHolds(owner uint64, ids []uint64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, id := range ids {
		if h, ok := ss.holds[id]; ok && h.owner == owner {
			delete(ss.holds, id)
		}
	}
}

// blockedError is returned by the sequence store's nextval and setval
// (with the state's lock released) when another transaction holds the
// sequence: the caller waits for hold.end and tries again.
type blockedError struct{ hold seqHold }

func (blockedError) Error() string { return "sql: sequence held by a transaction block" }

// seqSelf is the transaction whose holds do not block the session: its
// own.
func (s *Session) seqSelf() uint64 {
	if s.txn != nil {
		return s.txn.ID()
	}
	return 0
}

// pendingSeq returns the block's pending position of sequence id, nil if
// the block did not change it.
func (s *Session) pendingSeq(id uint64) *seqPending {
	if s.tddl == nil {
		return nil
	}
	return s.tddl.seqs[id]
}

// waitSeqHold runs op until it does not find the sequence held by
// another transaction, waiting for the holder's end in between.
func (s *Session) waitSeqHold(ctx context.Context, id uint64, op func() error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	for {
		err := op()
		be, ok := err.(blockedError)
		if !ok {
			return err
		}
		var pid uint32
		if s.backend != nil {
			pid = s.backend.PID
		}
		// (The statement's context carries lock_timeout.)
		if err := s.e.txns.WaitFor(ctx, s.lockOwner(), be.hold.owner, pid, sequenceKey(id), be.hold.end); err != nil {
			return err
		}
	}
}

// nextval hands out the next value of q for the session: from its
// block's pending position, or from the shared state once no other block
// holds the sequence.
func (s *Session) nextval(ctx context.Context, q *catalog.Sequence) (int64, error) {
	if p := s.pendingSeq(q.ID); p != nil {
		return p.nextval(q)
	}
	var v int64
	err := s.waitSeqHold(ctx, q.ID, func() (err error) {
		v, err = s.e.seqs.nextval(q, s.seqSelf())
		return err
	})
	return v, err
}

// setval is sequenceStore.setval for the session (see nextval).
func (s *Session) setval(ctx context.Context, q *catalog.Sequence, v int64, isCalled bool) error {
	if err := checkSetval(q, v); err != nil {
		return err
	}
	if p := s.pendingSeq(q.ID); p != nil {
		p.mu.Lock()
		p.next, p.done = setvalRecord(q, v, isCalled)
		p.last, p.called = v, isCalled
		p.mu.Unlock()
		return nil
	}
	return s.waitSeqHold(ctx, q.ID, func() error { return s.e.seqs.setval(q, v, isCalled, s.seqSelf()) })
}

// seqPosition is sequenceStore.position for the session: its block's
// pending one when it changed the sequence.
func (s *Session) seqPosition(q *catalog.Sequence) (last int64, called bool, err error) {
	if p := s.pendingSeq(q.ID); p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.last, p.called, nil
	}
	return s.e.seqs.position(q)
}

// nextval takes the next value from a pending position. No range is
// reserved: nothing of it is stored before the COMMIT.
func (p *seqPending) nextval(q *catalog.Sequence) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := p.next
	n := uint64(0)
	if !p.done {
		n = remaining(q, start)
	}
	if n == 0 {
		if !q.Cycle {
			return 0, limitError(q)
		}
		start = q.MinValue
		if q.Increment < 0 {
			start = q.MaxValue
		}
		n = remaining(q, start)
	}
	if n == 1 {
		p.next, p.done = start, true
	} else {
		p.next, p.done = start+q.Increment, false
	}
	p.last, p.called = start, true
	return start, nil
}

// pendSequence is where a schema change of sequence q starts from
// (seqDDL holds the state's lock): a copy of the block's pending position
// when the block changed q before, else of where the shared state stands.
// Inside a block it takes the block's hold on q first, so that no nextval
// of another session moves it afterwards. The caller edits the copy and
// installs it with setPending.
func (s *Session) pendSequence(q *catalog.Sequence) (*seqPending, error) {
	if s.inTxnDDL() {
		d := s.tddl
		if d.seqEnd == nil {
			d.seqEnd, d.seqOwner = make(chan struct{}), s.txn.ID()
		}
		if !slices.Contains(d.seqHeld, q.ID) {
			s.e.seqs.holdSequence(q.ID, d.seqOwner, d.seqEnd)
			d.seqHeld = append(d.seqHeld, q.ID)
		}
		if p := s.pendingSeq(q.ID); p != nil {
			p.mu.Lock()
			defer p.mu.Unlock()
			return &seqPending{next: p.next, done: p.done, last: p.last, called: p.called}, nil
		}
	}
	st := s.e.seqs.state(q.ID)
	last, called, err := s.e.seqs.positionLocked(q, st)
	if err != nil {
		return nil, err
	}
	np := &seqPending{next: st.next, done: st.done, last: last, called: called}
	if st.left > 0 {
		// The reserved range's values not handed out yet come next.
		np.next, np.done = st.cur, false
	}
	return np, nil
}

// setPending makes p where sequence id stands after the running schema
// change: inside a block its pending position (a new one for each change:
// savepoints keep the older ones); otherwise its record, written into the
// change's batch, and its state once the change committed (seqDDL).
func (s *Session) setPending(b *storage.Batch, id uint64, p *seqPending) error {
	if !s.inTxnDDL() {
		s.seqAfter[id] = p
		return s.e.putSequenceRecord(b, id, p.next, p.done)
	}
	if s.tddl.seqs == nil {
		s.tddl.seqs = map[uint64]*seqPending{}
	}
	s.tddl.seqs[id] = p
	return nil
}

// restartPending is the pending position of a sequence restarted at v
// (ALTER SEQUENCE ... RESTART, TRUNCATE ... RESTART IDENTITY): as in
// PostgreSQL it shows last_value v, not called.
func restartPending(v int64) *seqPending {
	return &seqPending{next: v, last: v}
}

// writeSeqPending puts the pending positions of the sequences the
// committing catalog keeps into the commit's batch.
func (s *Session) writeSeqPending(d *txnDDL, w interface{ Set(key, value []byte) error }) error {
	snap := d.pending.Snapshot()
	for id, p := range d.seqs {
		if _, ok := snap.SequenceByID(id); !ok {
			continue
		}
		p.mu.Lock()
		rec := encodeSequenceRecord(p.next, p.done)
		p.mu.Unlock()
		if err := w.Set(sequenceKey(id), rec); err != nil {
			return err
		}
	}
	return nil
}

// applySeqPending loads the pending positions of a committed block into
// the shared states. commitTxn calls it before it lets the next schema
// change read the catalog (ddlApply), and finishTxnDDL releases the holds
// after it, so neither a schema change nor a nextval that waited for the
// block reads a state from before the commit.
func (s *Session) applySeqPending(d *txnDDL) {
	snap := s.e.catalog.Snapshot()
	for id, p := range d.seqs {
		if _, ok := snap.SequenceByID(id); !ok {
			continue // dropped by the block
		}
		st := s.e.seqs.state(id)
		st.mu.Lock()
		p.mu.Lock()
		st.loaded, st.next, st.done, st.left = true, p.next, p.done, 0
		st.last, st.called, st.tracked = p.last, p.called, true
		p.mu.Unlock()
		st.mu.Unlock()
	}
}

// releaseSeqHolds ends a block's holds on sequences: the nextval and
// setval calls waiting for it go on.
func (s *Session) releaseSeqHolds(d *txnDDL) {
	if d.seqEnd != nil {
		s.e.seqs.releaseHolds(d.seqOwner, d.seqHeld)
		close(d.seqEnd)
		d.seqEnd = nil
	}
}

// checkSetval fails with 22003 when v is outside q's bounds.
func checkSetval(q *catalog.Sequence, v int64) error {
	if v < q.MinValue || v > q.MaxValue {
		return sqlerr.New(sqlerr.NumericValueOutOfRange,
			"setval: value %d is out of bounds for sequence %q (%d..%d)", v, q.Name, q.MinValue, q.MaxValue)
	}
	return nil
}

// setvalRecord is the record setval(q, v, isCalled) leaves.
func setvalRecord(q *catalog.Sequence, v int64, isCalled bool) (next int64, done bool) {
	next = v
	if isCalled {
		next = v + q.Increment
		// Past the bound (or past the int64 range): no value is left.
		if (q.Increment > 0 && (next < v || next > q.MaxValue)) || (q.Increment < 0 && (next > v || next < q.MinValue)) {
			next, done = v, true
		}
	}
	return next, done
}

// limitError is nextval's error at the end of a sequence without CYCLE.
func limitError(q *catalog.Sequence) error {
	if q.Increment > 0 {
		return sqlerr.New(sqlerr.SequenceGeneratorLimitExceeded,
			"nextval: reached maximum value of sequence %q (%d)", q.Name, q.MaxValue)
	}
	return sqlerr.New(sqlerr.SequenceGeneratorLimitExceeded,
		"nextval: reached minimum value of sequence %q (%d)", q.Name, q.MinValue)
}
