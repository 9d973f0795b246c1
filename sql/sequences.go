package sql

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Sequences: where each sequence stands, and nextval, currval, setval and
// lastval.
//
// A sequence's options are a catalog descriptor (catalog.Sequence); where
// it stands is one metadata record per sequence (meta.Sequence):
//
//	"seq/" <id BE8>  →  <next int64 BE8> <done byte>
//
// next is the first value not reserved yet; done says that no value is
// left before the bound (a CYCLE sequence then starts over from its
// MINVALUE, or MAXVALUE when it descends). nextval hands out values from
// a range reserved in memory; when the range is used up it reserves the
// next CACHE values by writing the record (a synced write) before it hands
// out the first of them. So writers do not queue on the disk for each
// value, and a crash loses at most the unused rest of a range — a gap, as
// in PostgreSQL — but never hands out a value twice: after a restart the
// sequence continues from the stored next.
//
// One range serves the whole server (PostgreSQL's CACHE is per session);
// a mutex per sequence orders nextval calls, which take microseconds
// except when they reserve. Values are not transactional: a value taken
// by a transaction that rolls back is not handed out again.

// seqState is where one sequence stands in memory.
type seqState struct {
	mu     sync.Mutex
	loaded bool
	// next and done mirror the stored record.
	next int64
	done bool
	// cur is the next value to hand out from the reserved range; left is
	// how many values of the range remain, cur included.
	cur  int64
	left int64
	// last and called are what the sequence shows as a relation
	// (position), once this server gave a value or ran setval; before,
	// they are derived from the record.
	last    int64
	called  bool
	tracked bool
}

// sequenceStore holds the in-memory state of the engine's sequences.
type sequenceStore struct {
	meta   *meta.Store
	mu     sync.Mutex
	states map[uint64]*seqState
	// holds are the sequences transaction blocks changed, by id
	// (sequence_txn.go).
	holds map[uint64]seqHold
}

func newSequenceStore(ms *meta.Store) *sequenceStore {
	return &sequenceStore{meta: ms, states: map[uint64]*seqState{}}
}

func sequenceKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), meta.Sequence...), id)
}

func encodeSequenceRecord(next int64, done bool) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(next))
	if done {
		return append(b, 1)
	}
	return append(b, 0)
}

// state returns the in-memory state of sequence id, creating it unloaded.
func (ss *sequenceStore) state(id uint64) *seqState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := ss.states[id]
	if st == nil {
		st = &seqState{}
		ss.states[id] = st
	}
	return st
}

// forget drops the in-memory state of a sequence (dropped, or changed by
// DDL): the next use reads the record again.
func (ss *sequenceStore) forget(id uint64) {
	ss.mu.Lock()
	delete(ss.states, id)
	ss.mu.Unlock()
}

// load reads the record of q into st (st.mu held).
func (ss *sequenceStore) load(q *catalog.Sequence, st *seqState) error {
	if st.loaded {
		return nil
	}
	v, ok, err := ss.meta.Get(sequenceKey(q.ID))
	if err != nil {
		return err
	}
	switch {
	case !ok:
		st.next, st.done = q.Start, false
	case len(v) != 9:
		return sqlerr.New(sqlerr.InternalError, "sql: corrupt record of sequence %q", q.Name)
	default:
		st.next, st.done = int64(binary.BigEndian.Uint64(v)), v[8] == 1
	}
	st.left = 0
	st.loaded = true
	return nil
}

// remaining counts the values from start to q's bound in steps of the
// increment, start included; 0 when start is past the bound.
func remaining(q *catalog.Sequence, start int64) uint64 {
	if q.Increment > 0 {
		if start > q.MaxValue || start < q.MinValue {
			return 0
		}
		return (uint64(q.MaxValue)-uint64(start))/uint64(q.Increment) + 1
	}
	if start < q.MinValue || start > q.MaxValue {
		return 0
	}
	step := uint64(-(q.Increment + 1)) + 1 // |increment|, also for MinInt64
	return (uint64(start)-uint64(q.MinValue))/step + 1
}

// nextval hands out the next value of q, unless a transaction block other
// than self holds it (blockedError; sequence_txn.go).
func (ss *sequenceStore) nextval(q *catalog.Sequence, self uint64) (int64, error) {
	st := ss.state(q.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if h, held := ss.heldBy(q.ID, self); held {
		return 0, blockedError{h}
	}
	if err := ss.load(q, st); err != nil {
		return 0, err
	}
	if st.left == 0 {
		if err := ss.reserve(q, st); err != nil {
			return 0, err
		}
	}
	v := st.cur
	st.left--
	if st.left > 0 {
		st.cur += q.Increment
	}
	st.last, st.called, st.tracked = v, true, true
	return v, nil
}

// reserve takes the next range of values of q and records its end before
// any value of it is handed out (st.mu held).
func (ss *sequenceStore) reserve(q *catalog.Sequence, st *seqState) error {
	start := st.next
	n := uint64(0)
	if !st.done {
		n = remaining(q, start)
	}
	if n == 0 {
		if !q.Cycle {
			return limitError(q)
		}
		start = q.MinValue
		if q.Increment < 0 {
			start = q.MaxValue
		}
		n = remaining(q, start)
	}
	take := uint64(max(q.Cache, 1))
	done := false
	if take >= n {
		take, done = n, true
	}
	// In two's complement, the wrapped sum is the right value whenever the
	// true one fits in an int64, which it does when the range stops short
	// of the bound.
	next := int64(uint64(start) + take*uint64(q.Increment))
	if done {
		next = start
	}
	b := ss.meta.NewBatch()
	defer b.Close()
	if err := b.Set(sequenceKey(q.ID), encodeSequenceRecord(next, done)); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	st.next, st.done = next, done
	st.cur, st.left = start, int64(take)
	return nil
}

// setval makes v the last value handed out (isCalled) or the next one,
// unless a transaction block other than self holds q (blockedError).
func (ss *sequenceStore) setval(q *catalog.Sequence, v int64, isCalled bool, self uint64) error {
	if err := checkSetval(q, v); err != nil {
		return err
	}
	st := ss.state(q.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	if h, held := ss.heldBy(q.ID, self); held {
		return blockedError{h}
	}
	next, done := setvalRecord(q, v, isCalled)
	b := ss.meta.NewBatch()
	defer b.Close()
	if err := b.Set(sequenceKey(q.ID), encodeSequenceRecord(next, done)); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	st.loaded, st.next, st.done, st.left = true, next, done, 0
	st.last, st.called, st.tracked = v, isCalled, true
	return nil
}

// sessionSequences is a session's memory of the values nextval gave it:
// currval per sequence and lastval. Several goroutines of one statement
// may call nextval, hence the mutex.
type sessionSequences struct {
	mu   sync.Mutex
	cur  map[uint64]int64
	last uint64 // sequence of lastval; 0 before the first nextval
}

// reset forgets the session's values (DISCARD SEQUENCES, DISCARD ALL).
func (ss *sessionSequences) reset() {
	ss.mu.Lock()
	ss.cur, ss.last = nil, 0
	ss.mu.Unlock()
}

// sessionSeqs serves the sequence functions for a session
// (expr.Sequences) in a statement whose context is ctx (a wait for a
// block that changed the sequence honours its lock_timeout).
type sessionSeqs struct {
	s   *Session
	ctx context.Context
}

// resolve finds the sequence a sequence function names: by name (text,
// optionally schema-qualified or double-quoted) or by OID.
func (s *Session) resolveSequence(v types.Value) (*catalog.Sequence, error) {
	snap := s.catalogSnap()
	if v.Family().IsInteger() {
		q, ok := snap.SequenceByID(uint64(v.Int()))
		if !ok || q.DatabaseID != s.db.ID {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "could not open relation with OID %d", v.Int())
		}
		return q, nil
	}
	name := v.Text()
	if schema, rest, ok := strings.Cut(name, "."); ok && !strings.HasPrefix(name, `"`) {
		if !strings.EqualFold(schema, "public") && !strings.EqualFold(schema, s.db.Name) {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		}
		name = rest
	}
	if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	}
	q, ok := snap.Sequence(s.db.ID, name)
	if !ok {
		if snap.RelationExists(s.db.ID, name) {
			return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is not a sequence", name)
		}
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	return q, nil
}

func (x sessionSeqs) Nextval(seq types.Value) (int64, error) {
	s := x.s
	if s.txnMode().ReadOnly {
		return 0, readOnlyViolation("nextval()")
	}
	q, err := s.resolveSequence(seq)
	if err != nil {
		return 0, err
	}
	snap := s.catalogSnap()
	if err := maySequence(s.access(snap), snap, q, false); err != nil {
		return 0, err
	}
	v, err := s.nextval(x.ctx, q)
	if err != nil {
		return 0, err
	}
	s.seqs.mu.Lock()
	if s.seqs.cur == nil {
		s.seqs.cur = map[uint64]int64{}
	}
	s.seqs.cur[q.ID] = v
	s.seqs.last = q.ID
	s.seqs.mu.Unlock()
	return v, nil
}

func (x sessionSeqs) Currval(seq types.Value) (int64, error) {
	s := x.s
	q, err := s.resolveSequence(seq)
	if err != nil {
		return 0, err
	}
	s.seqs.mu.Lock()
	defer s.seqs.mu.Unlock()
	v, ok := s.seqs.cur[q.ID]
	if !ok {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
			"currval of sequence %q is not yet defined in this session", q.Name)
	}
	return v, nil
}

func (x sessionSeqs) Setval(seq types.Value, v int64, isCalled bool) (int64, error) {
	s := x.s
	if s.txnMode().ReadOnly {
		return 0, readOnlyViolation("setval()")
	}
	q, err := s.resolveSequence(seq)
	if err != nil {
		return 0, err
	}
	snap := s.catalogSnap()
	if err := maySequence(s.access(snap), snap, q, true); err != nil {
		return 0, err
	}
	if err := s.setval(x.ctx, q, v, isCalled); err != nil {
		return 0, err
	}
	if isCalled {
		// As in PostgreSQL, setval with is_called sets currval (but not
		// lastval).
		s.seqs.mu.Lock()
		if s.seqs.cur == nil {
			s.seqs.cur = map[uint64]int64{}
		}
		s.seqs.cur[q.ID] = v
		s.seqs.mu.Unlock()
	}
	return v, nil
}

func (x sessionSeqs) Lastval() (int64, error) {
	s := x.s
	s.seqs.mu.Lock()
	defer s.seqs.mu.Unlock()
	if s.seqs.last == 0 {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	if _, ok := s.catalogSnap().SequenceByID(s.seqs.last); !ok {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	return s.seqs.cur[s.seqs.last], nil
}

// position is where q stands, as PostgreSQL's sequence relation shows it:
// the last value nextval gave (or setval set) and whether nextval gave it
// (called false: nextval gives last next). setval(seq, last, called)
// makes a copy stand the same, which is what pg_dump writes.
func (ss *sequenceStore) position(q *catalog.Sequence) (last int64, called bool, err error) {
	st := ss.state(q.ID)
	st.mu.Lock()
	defer st.mu.Unlock()
	return ss.positionLocked(q, st)
}

// positionLocked is position with st.mu held.
func (ss *sequenceStore) positionLocked(q *catalog.Sequence, st *seqState) (last int64, called bool, err error) {
	if err := ss.load(q, st); err != nil {
		return 0, false, err
	}
	if st.tracked {
		return st.last, st.called, nil
	}
	_, ok, err := ss.meta.Get(sequenceKey(q.ID))
	if err != nil {
		return 0, false, err
	}
	switch {
	case !ok:
		return q.Start, false, nil
	case !st.done:
		// Values reserved before a restart are gone (a gap): the next
		// value is the record's.
		return st.next - q.Increment, true, nil
	}
	n := remaining(q, st.next)
	if n == 0 {
		return st.next, true, nil
	}
	return int64(uint64(st.next) + (n-1)*uint64(q.Increment)), true, nil
}

// sequenceRow is the row sequence q reads as in FROM: last_value, log_cnt
// (always 0: values are reserved in the metadata store, not logged ahead)
// and is_called. Reading it needs what nextval needs.
func (s *Session) sequenceRow(q *catalog.Sequence) ([]types.Value, error) {
	snap := s.e.catalog.Snapshot()
	if err := maySequence(s.access(snap), snap, q, false); err != nil {
		return nil, err
	}
	last, called, err := s.seqPosition(q)
	if err != nil {
		return nil, err
	}
	return []types.Value{types.NewInt64(last), types.NewInt64(0), types.NewBool(called)}, nil
}
