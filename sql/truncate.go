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
		snap := s.e.catalog.Snapshot()
		for _, parts := range p.Tables {
			if t, ok := snap.Table(s.db.ID, parts[len(parts)-1]); ok {
				restart = append(restart, ownedSequenceIDs(snap, s.db.ID, []*catalog.Table{t})...)
			}
		}
	}
	unlock := s.e.txns.LockSchema()
	defer unlock()
	err := s.seqDDL(restart, func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		seen := map[uint64]bool{}
		var tables []*catalog.Table
		for _, parts := range p.Tables {
			name := parts[len(parts)-1]
			if len(parts) == 2 && !strings.EqualFold(parts[0], s.db.Name) && !strings.EqualFold(parts[0], "public") {
				return sqlerr.NotSupported("truncating a table of another database (%s)", parts[0])
			}
			t, ok := ch.Snapshot().Table(s.db.ID, name)
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
		var seqs []*catalog.Sequence
		for _, t := range tables {
			seqs = append(seqs, ch.Snapshot().OwnedSequences(s.db.ID, t.ID)...)
			if err := s.truncateTable(ctx, ch, pch, b, t); err != nil {
				return err
			}
		}
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
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "TRUNCATE TABLE"}, nil
}

// truncateTable replaces t with an empty copy under a new id.
func (s *Session) truncateTable(ctx context.Context, ch *catalog.Change, pch *partition.Change, b *storage.Batch, t *catalog.Table) error {
	nt := *t
	nt.ID = ch.NewID()
	oldPrefix, newPrefix := storage.TablePrefix(t.ID), storage.TablePrefix(nt.ID)
	var splits [][]byte
	if m := s.e.shards.Map(t.ID); m != nil {
		for _, sp := range m.Splits() {
			splits = append(splits, append(append([]byte(nil), newPrefix...), sp[len(oldPrefix):]...))
		}
	}
	if err := s.e.dropTableData(pch, b, t); err != nil {
		return err
	}
	s.e.creating.Store(nt.ID, &nt)
	defer s.e.creating.Delete(nt.ID)
	if err := pch.Create(s.e.meta.With(b), nt.ID, splits); err != nil {
		return err
	}
	nt.Indexes = append([]catalog.Index(nil), t.Indexes...)
	for i := range nt.Indexes {
		nt.Indexes[i].ID = ch.NewID()
		if err := s.createIndexData(ctx, pch, b, &nt, &nt.Indexes[i], false); err != nil {
			return err
		}
	}
	ch.DropTable(t)
	ch.PutTable(&nt)
	for _, q := range ch.Snapshot().OwnedSequences(s.db.ID, t.ID) {
		owned := *q
		owned.OwnerTable = nt.ID
		ch.PutSequence(&owned)
	}
	return nil
}
