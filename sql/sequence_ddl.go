package sql

import (
	"context"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// Schema changes of sequences: CREATE, ALTER and DROP SEQUENCE, and the
// sequences that CREATE TABLE, DROP TABLE, DROP DATABASE and TRUNCATE
// create, drop, re-own or restart. A schema change that rewrites where a
// sequence stands holds the sequence's in-memory lock until its batch
// committed (seqDDL), so that no nextval reserves a range in between and
// overwrites the record the change wrote. Inside a transaction block the
// change writes no record: it holds the sequence and keeps where it
// stands pending until the block ends (sequence_txn.go).

// seqDDL runs a schema change that rewrites the records of the sequences
// ids: their in-memory states are locked around it and reloaded from the
// records afterwards.
func (s *Session) seqDDL(ids []uint64, fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	// The schema-change lock first: a transaction holding it may be
	// waiting for a sequence's lock (nextval) that this change holds.
	return s.withDDLLock(false, func() error { return s.seqDDLLocked(ids, fn) })
}

func (s *Session) seqDDLLocked(ids []uint64, fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	states := make([]*seqState, len(ids))
	for i, id := range ids {
		states[i] = s.e.seqs.state(id)
		states[i].mu.Lock()
	}
	// Inside a block the change leaves the shared state as it is (it
	// writes no record; sequence_txn.go).
	inBlock := s.inTxnBlock()
	s.seqAfter = map[uint64]*seqPending{}
	defer func() { s.seqAfter = nil }()
	err := s.ddl(fn)
	for i, st := range states {
		if err == nil && !inBlock {
			// Where the change left it (setPending), or read again.
			st.loaded, st.left = false, 0
			if p := s.seqAfter[ids[i]]; p != nil {
				st.loaded, st.next, st.done = true, p.next, p.done
				st.last, st.called, st.tracked = p.last, p.called, true
			}
		}
		st.mu.Unlock()
	}
	return err
}

// putSequenceRecord writes where sequence id stands into a DDL batch.
func (e *Engine) putSequenceRecord(b *storage.Batch, id uint64, next int64, done bool) error {
	return e.meta.With(b).Set(sequenceKey(id), encodeSequenceRecord(next, done))
}

// createSequenceIn adds sequence q (ID unset) to a schema change, with its
// record at its start.
func (s *Session) createSequenceIn(ch *catalog.Change, b *storage.Batch, q *catalog.Sequence) error {
	if ch.Snapshot().RelationExists(q.DatabaseID, q.Name) {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", q.Name)
	}
	q.ID = ch.NewID()
	ch.PutSequence(q)
	return s.e.putSequenceRecord(b, q.ID, q.Start, false)
}

// dropSequenceIn removes sequence q and its record in a schema change.
func (s *Session) dropSequenceIn(ch *catalog.Change, b *storage.Batch, q *catalog.Sequence) error {
	ch.DropSequence(q)
	if s.inTxnDDL() {
		s.tddl.droppedSeqs = append(s.tddl.droppedSeqs, q.ID)
		return nil
	}
	return s.e.meta.With(b).Delete(sequenceKey(q.ID))
}

func (s *Session) createSequence(ctx context.Context, p *bind.CreateSequence) (Result, error) {
	var created uint64
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		snap := ch.Snapshot()
		if err := mayCreateIn(s.access(snap), s.currentDB(snap)); err != nil {
			return err
		}
		q := *p.Sequence
		q.Owned = catalog.Owned{Owner: s.user}
		if ch.Snapshot().RelationExists(s.db.ID, q.Name) && p.IfNotExists {
			s.notice("NOTICE", sqlerr.DuplicateTable, "relation %q already exists, skipping", q.Name)
			return nil
		}
		if p.OwnedBy != nil {
			if err := s.sequenceOwner(ch.Snapshot(), &q, p.OwnedBy); err != nil {
				return err
			}
		}
		if err := s.createSequenceIn(ch, b, &q); err != nil {
			return err
		}
		created = q.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	if created != 0 {
		s.e.seqs.forget(created)
	}
	return &tagResult{tag: "CREATE SEQUENCE"}, nil
}

// sequenceOwner resolves OWNED BY [schema.]table.column into q.
func (s *Session) sequenceOwner(snap *catalog.Snapshot, q *catalog.Sequence, parts []string) error {
	if len(parts) == 3 {
		if !strings.EqualFold(parts[0], "public") && !strings.EqualFold(parts[0], s.db.Name) {
			return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", parts[0], parts[1])
		}
		parts = parts[1:]
	}
	t, ok := snap.Table(s.db.ID, parts[0])
	if !ok {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", parts[0])
	}
	i := t.ColumnIndex(parts[1])
	if i < 0 || t.Columns[i].Hidden {
		return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", parts[1], t.Name)
	}
	q.OwnerTable, q.OwnerColumn = t.ID, t.Columns[i].Name
	return nil
}

func (s *Session) alterSequence(ctx context.Context, p *bind.AlterSequence) (Result, error) {
	q, ok := s.catalogSnap().Sequence(s.db.ID, p.Name)
	if !ok {
		if p.IfExists {
			s.notice("NOTICE", sqlerr.UndefinedTable, "relation %q does not exist, skipping", p.Name)
			return &tagResult{tag: "ALTER SEQUENCE"}, nil
		}
		return nil, s.notSequence(p.Name)
	}
	err := s.seqDDL([]uint64{q.ID}, func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		cur, ok := ch.Snapshot().SequenceByID(q.ID)
		if !ok {
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", p.Name)
		}
		if err := ownSequence(s.access(ch.Snapshot()), cur); err != nil {
			return err
		}
		nq, err := bind.SequenceOptions(cur, p.Options, false)
		if err != nil {
			return err
		}
		switch {
		case p.Options.OwnedByNone:
			nq.OwnerTable, nq.OwnerColumn = 0, ""
		case p.Options.OwnedBy != nil:
			if err := s.sequenceOwner(ch.Snapshot(), nq, p.Options.OwnedBy); err != nil {
				return err
			}
		}
		// Where the sequence stands (seqDDL holds the state's lock):
		// restarted, or kept — as in PostgreSQL the next value is the
		// last one handed out plus the new increment (or the last one,
		// when nextval did not give it).
		np, err := s.pendSequence(cur)
		if err != nil {
			return err
		}
		if p.Options.Restart {
			v := nq.Start
			if p.Options.RestartWith != nil {
				v = *p.Options.RestartWith
			}
			np = restartPending(v)
		} else {
			np.next, np.done = setvalRecord(nq, np.last, np.called)
		}
		ch.PutSequence(nq)
		return s.setPending(b, q.ID, np)
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "ALTER SEQUENCE"}, nil
}

// notSequence is the error for a name that is not a sequence.
func (s *Session) notSequence(name string) error {
	if s.catalogSnap().RelationExists(s.db.ID, name) {
		return sqlerr.New(sqlerr.WrongObjectType, "%q is not a sequence", name)
	}
	return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

func (s *Session) dropSequences(ctx context.Context, p *bind.DropSequences) (Result, error) {
	var ids []uint64
	snap := s.catalogSnap()
	for _, name := range p.Names {
		if q, ok := snap.Sequence(s.db.ID, name); ok {
			ids = append(ids, q.ID)
		}
	}
	err := s.seqDDL(ids, func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		for _, name := range p.Names {
			q, ok := ch.Snapshot().Sequence(s.db.ID, name)
			if !ok {
				if p.IfExists && !ch.Snapshot().RelationExists(s.db.ID, name) {
					s.notice("NOTICE", sqlerr.UndefinedTable, "sequence %q does not exist, skipping", name)
					continue
				}
				if ch.Snapshot().RelationExists(s.db.ID, name) {
					return sqlerr.New(sqlerr.WrongObjectType, "%q is not a sequence", name)
				}
				return sqlerr.New(sqlerr.UndefinedTable, "sequence %q does not exist", name)
			}
			if err := ownSequence(s.access(ch.Snapshot()), q); err != nil {
				return err
			}
			if t, ok := ch.Snapshot().TableByID(q.OwnerTable); ok {
				if i := t.ColumnIndex(q.OwnerColumn); i >= 0 && strings.Contains(t.Columns[i].Default, "'"+q.Name+"'") {
					return &sqlerr.Error{Code: sqlerr.DependentObjectsStillExist,
						Message: "cannot drop sequence " + q.Name + " because other objects depend on it",
						Detail:  "default value for column " + q.OwnerColumn + " of table " + t.Name + " depends on sequence " + q.Name,
						Hint:    "Drop the table, or drop the column's default first."}
				}
			}
			if err := s.dropSequenceIn(ch, b, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		s.e.seqs.forget(id)
	}
	return &tagResult{tag: "DROP SEQUENCE"}, nil
}

// restartOwnedSequences sets the sequences owned by tables back to their
// start (TRUNCATE ... RESTART IDENTITY); the caller holds their states
// (seqDDL).
func (s *Session) restartOwnedSequences(ch *catalog.Change, b *storage.Batch, seqs []*catalog.Sequence) error {
	for _, q := range seqs {
		if _, err := s.pendSequence(q); err != nil {
			return err
		}
		if err := s.setPending(b, q.ID, restartPending(q.Start)); err != nil {
			return err
		}
	}
	return nil
}

// ownedSequenceIDs lists the ids of the sequences owned by tables.
func ownedSequenceIDs(snap *catalog.Snapshot, dbID uint64, tables []*catalog.Table) []uint64 {
	var ids []uint64
	for _, t := range tables {
		for _, q := range snap.OwnedSequences(dbID, t.ID) {
			ids = append(ids, q.ID)
		}
	}
	return ids
}

// ownSequence fails with 42501 unless the session's role owns q.
func ownSequence(acc *catalog.Access, q *catalog.Sequence) error {
	if acc.Owns(&q.Owned) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of sequence %s", q.Name)
}

// maySequence fails with 42501 unless the session's role may take values
// from q (nextval) or set it (setval, with write true): its owner, or,
// for a sequence a column owns, a role that may insert into the table
// (update it, for setval). PivotDB has no GRANT on sequences; this rule
// lets whoever may write a table with a serial column write it.
func maySequence(acc *catalog.Access, snap *catalog.Snapshot, q *catalog.Sequence, write bool) error {
	if acc.Owns(&q.Owned) {
		return nil
	}
	if t, ok := snap.TableByID(q.OwnerTable); ok {
		need := acl.Insert
		if write {
			need = acl.Update
		}
		if acc.Has(&t.Owned, acl.Table, need) || (!write && acc.Has(&t.Owned, acl.Table, acl.Update)) {
			return nil
		}
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for sequence %s", q.Name)
}
