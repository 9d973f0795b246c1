package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// truncate runs TRUNCATE t, ...: every table named, and its indexes, are
// emptied in one schema change. As CockroachDB does, a truncated table is
// replaced by an empty copy under a new id (new index ids too) whose shard
// map has the old one's pivots, and the old key spans are deleted by range
// in the same batch. So TRUNCATE costs the same whatever the table holds,
// the shard statistics start at zero with the new shard maps, and a
// transaction that wrote the old table fails at commit (the shard map it
// wrote to is gone) instead of writing rows into the emptied table.
func (s *Session) truncate(ctx context.Context, p *bind.Truncate) (Result, error) {
	var restart []uint64
	if p.RestartIdentity {
		snap := s.catalogSnap()
		for _, parts := range p.Tables {
			if t, ok := s.truncateTarget(snap, parts); ok {
				restart = append(restart, ownedSequenceIDs(snap, s.db.ID, []*catalog.Table{t})...)
			}
		}
	}
	var fresh map[uint64]uint64
	err := s.withDDLLock(true, func() error { return s.truncateLocked(ctx, p, restart, &fresh) })
	if err != nil {
		return nil, err
	}
	for _, id := range fresh {
		s.noteFreshTable(id)
	}
	return &tagResult{tag: "TRUNCATE TABLE"}, nil
}

// truncateLocked is truncate holding the schema-change lock and gate.
func (s *Session) truncateLocked(ctx context.Context, p *bind.Truncate, restart []uint64, fresh *map[uint64]uint64) error {
	return s.seqDDL(restart, func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		seen := map[uint64]bool{}
		var tables []*catalog.Table
		for _, parts := range p.Tables {
			name := parts[len(parts)-1]
			if len(parts) == 2 && !strings.EqualFold(parts[0], "pg_temp") && !strings.EqualFold(parts[0], s.db.Name) && !strings.EqualFold(parts[0], "public") {
				return sqlerr.NotSupported("truncating a table of another database (%s)", parts[0])
			}
			t, ok := s.truncateTarget(ch.Snapshot(), parts)
			if !ok {
				if _, isView := ch.Snapshot().View(s.db.ID, name); isView {
					return sqlerr.New(sqlerr.WrongObjectType, "%q is not a table", name)
				}
				return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
			}
			if !s.access(ch.Snapshot()).Has(&t.Owned, acl.Table, acl.Truncate) {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table %s", t.Name)
			}
			if !seen[t.ID] {
				seen[t.ID] = true
				tables = append(tables, t)
			}
		}
		tables, err := s.truncateReferencing(ch.Snapshot(), tables, seen, p.Cascade)
		if err != nil {
			return err
		}
		var seqs []*catalog.Sequence
		newIDs := map[uint64]uint64{}
		for _, t := range tables {
			seqs = append(seqs, ch.Snapshot().OwnedSequences(s.db.ID, t.ID)...)
			id, err := s.truncateTable(ctx, ch, pch, b, t)
			if err != nil {
				return err
			}
			newIDs[t.ID] = id
		}
		relinkForeignKeys(ch, newIDs)
		*fresh = newIDs
		if p.RestartIdentity {
			for _, q := range seqs {
				if !slices.Contains(restart, q.ID) {
					// Owned since the locks were taken: retry.
					return sqlerr.New(sqlerr.SerializationFailure,
						"could not serialize access: sequence %q changed owner during TRUNCATE", q.Name)
				}
			}
			return s.restartOwnedSequences(ch, b, seqs)
		}
		return nil
	})
}

// truncateTarget resolves a name TRUNCATE lists: the session's temporary
// table of that name hides a permanent one, as in PostgreSQL's search
// path; pg_temp.name is only the temporary one.
func (s *Session) truncateTarget(snap *catalog.Snapshot, parts []string) (*catalog.Table, bool) {
	name := parts[len(parts)-1]
	if s.tempPrefix != "" {
		if t, ok := snap.Table(s.db.ID, s.tempPrefix+name); ok {
			return t, true
		}
	}
	if len(parts) == 2 && strings.EqualFold(parts[0], "pg_temp") {
		return nil, false
	}
	return snap.Table(s.db.ID, name)
}

// truncateReferencing checks the foreign keys that reference the tables
// to truncate: as in PostgreSQL, a table referenced by another one that is
// not truncated too cannot be truncated (0A000), unless CASCADE, which
// adds the referencing tables (transitively) to the list.
func (s *Session) truncateReferencing(snap *catalog.Snapshot, tables []*catalog.Table, seen map[uint64]bool, cascade bool) ([]*catalog.Table, error) {
	for i := 0; i < len(tables); i++ {
		t := tables[i]
		refs, _ := snap.ReferencingKeys(t.ID)
		for _, rt := range refs {
			if seen[rt.ID] {
				continue
			}
			if !cascade {
				if !slices.ContainsFunc(tables, func(x *catalog.Table) bool { return x.ID == rt.ID }) {
					return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
						Message: "cannot truncate a table referenced in a foreign key constraint",
						Detail:  fmt.Sprintf("Table %q references %q.", rt.Name, t.Name),
						Hint:    fmt.Sprintf("Truncate table %q at the same time, or use TRUNCATE ... CASCADE.", rt.Name)}
				}
				continue
			}
			if !s.access(snap).Has(&rt.Owned, acl.Table, acl.Truncate) {
				return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table %s", rt.Name)
			}
			s.notice("NOTICE", sqlerr.SuccessfulCompletion, "truncate cascades to table %q", rt.Name)
			seen[rt.ID] = true
			tables = append(tables, rt)
		}
	}
	return tables, nil
}

// relinkForeignKeys points the foreign keys that reference a truncated
// table (all of them truncated with it, or a reference to itself) at its
// new id.
func relinkForeignKeys(ch *catalog.Change, newIDs map[uint64]uint64) {
	for _, id := range newIDs {
		t, ok := ch.Snapshot().TableByID(id)
		if !ok {
			continue
		}
		var nt *catalog.Table
		for i, fk := range t.ForeignKeys {
			if to, ok := newIDs[fk.RefTable]; ok {
				if nt == nil {
					c := *t
					c.ForeignKeys = append([]catalog.ForeignKey(nil), t.ForeignKeys...)
					nt = &c
				}
				nt.ForeignKeys[i].RefTable = to
			}
		}
		if nt != nil {
			ch.PutTable(nt)
		}
	}
}

// truncateTable replaces t with an empty copy under a new id, which it
// returns.
func (s *Session) truncateTable(ctx context.Context, ch *catalog.Change, pch *partition.Change, b *storage.Batch, t *catalog.Table) (uint64, error) {
	nt := *t
	nt.ID = ch.NewID()
	oldPrefix, newPrefix := storage.TablePrefix(t.ID), storage.TablePrefix(nt.ID)
	var splits [][]byte
	if m := s.e.shards.Map(t.ID); m != nil {
		for _, sp := range m.Splits() {
			splits = append(splits, append(append([]byte(nil), newPrefix...), sp[len(oldPrefix):]...))
		}
	}
	if err := s.dropTableData(pch, b, t); err != nil {
		return 0, err
	}
	s.e.creating.Store(nt.ID, &nt)
	defer s.e.creating.Delete(nt.ID)
	if err := pch.Create(s.e.meta.With(b), nt.ID, splits); err != nil {
		return 0, err
	}
	nt.Indexes = append([]catalog.Index(nil), t.Indexes...)
	for i := range nt.Indexes {
		nt.Indexes[i].ID = ch.NewID()
		if err := s.createIndexData(ctx, pch, b, &nt, &nt.Indexes[i], false); err != nil {
			return 0, err
		}
	}
	ch.DropTable(t)
	ch.PutTable(&nt)
	for _, q := range ch.Snapshot().OwnedSequences(s.db.ID, t.ID) {
		owned := *q
		owned.OwnerTable = nt.ID
		ch.PutSequence(&owned)
	}
	return nt.ID, nil
}
