package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// ALTER TABLE's column and constraint actions (bind.AlterTable). Most are
// catalog changes only: rows are keyed by column id, so added columns
// read NULL or their DEFAULT (Column.Missing) and dropped ones are
// skipped by readers. SET NOT NULL and ADD CHECK scan the stored rows,
// ADD UNIQUE fills a new unique index, and ALTER COLUMN TYPE and ADD
// PRIMARY KEY write every row again under a new table id, with every
// index rebuilt, and drop the old rows — all in the schema change's batch.
//
// Every ALTER TABLE bumps Table.Version, which writers record with the
// index ids (indexVersion), and runs under the transaction manager's
// schema gate: a transaction that wrote rows under the old definition
// fails at commit with 40001 rather than store a row the new one forbids.
// Readers are never blocked (they read the catalog snapshot they started
// with); writers wait for the gate while a rewrite or scan runs.

func (s *Session) alterTable(ctx context.Context, p *bind.AlterTable) (Result, error) {
	var recount []uint64
	err := s.indexDDL(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		recount = nil
		if cur, ok := ch.Snapshot().TableByID(p.Old.ID); !ok || cur != p.Old {
			return sqlerr.New(sqlerr.SerializationFailure,
				"could not serialize access: relation %q changed during ALTER TABLE", p.Old.Name)
		}
		if err := ownTable(s.access(ch.Snapshot()), p.Old); err != nil {
			return err
		}
		nt := *p.New
		nt.Columns = slices.Clone(p.New.Columns)
		nt.Indexes = slices.Clone(p.New.Indexes)
		for i := range nt.Columns {
			if v, ok := p.Missing[nt.Columns[i].ID]; ok {
				nt.Columns[i].Missing = rowenc.EncodeMissing(nt.Columns[i].ID, v)
			}
		}
		if p.Rewrite != nil {
			ids, err := s.rewriteTable(ctx, ch, pch, b, p, &nt)
			recount = ids
			return err
		}
		if len(p.NotNull) > 0 || len(p.Validate) > 0 {
			if err := s.validateRows(ctx, p, &nt); err != nil {
				return err
			}
		}
		if err := s.validateForeignKeys(&nt, ch.Snapshot(), p.ValidateFKs); err != nil {
			return err
		}
		if err := bumpReferenced(ch, &nt, p.Old); err != nil {
			return err
		}
		for _, ix := range p.Old.Indexes {
			if !slices.ContainsFunc(nt.Indexes, func(x catalog.Index) bool { return x.ID == ix.ID }) {
				if err := s.e.dropIndexData(pch, b, ix.ID); err != nil {
					return err
				}
			}
		}
		for i := range nt.Indexes {
			ix := &nt.Indexes[i]
			if ix.ID != 0 {
				continue
			}
			ix.ID = ch.NewID()
			if err := s.createIndexData(ctx, pch, b, &nt, ix, true); err != nil {
				return err
			}
			recount = append(recount, ix.ID)
		}
		ch.PutTable(&nt)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, n := range p.Notices {
		s.notice("NOTICE", sqlerr.SuccessfulCompletion, "%s", n)
	}
	for _, id := range recount {
		s.recountIndex(id)
	}
	return &tagResult{tag: "ALTER TABLE"}, nil
}

// validateRows checks the stored rows of a table against the NOT NULL
// columns and CHECK constraints an ALTER TABLE adds.
func (s *Session) validateRows(ctx context.Context, p *bind.AlterTable, t *catalog.Table) error {
	notNull := make([]int, 0, len(p.NotNull))
	for _, id := range p.NotNull {
		if i := slices.IndexFunc(t.Columns, func(c catalog.Column) bool { return c.ID == id }); i >= 0 {
			notNull = append(notNull, i)
		}
	}
	ec := s.evalContext(ctx, nil)
	it, err := s.e.storage.NewIter(storage.TableSpan(t.ID))
	if err != nil {
		return err
	}
	defer it.Close()
	row := make([]types.Value, len(t.Columns))
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		clear(row)
		if err := rowenc.DecodeKey(t, it.Key(), row); err != nil {
			return err
		}
		if err := rowenc.DecodeValue(t, it.Value(), row); err != nil {
			return err
		}
		for _, i := range notNull {
			if row[i].IsNull() {
				return containsNulls(t, i)
			}
		}
		for _, c := range p.Validate {
			v, err := c.Expr.Eval(ec, row)
			if err != nil {
				return err
			}
			if !v.IsNull() && !v.Bool() {
				return sqlerr.New(sqlerr.CheckViolation, "check constraint %q of relation %q is violated by some row", c.Name, t.Name)
			}
		}
	}
	return it.Error()
}

func containsNulls(t *catalog.Table, i int) error {
	return sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", t.Columns[i].Name, t.Name)
}

// rewriteTable writes every stored row of p.Old again as a row of nt under
// a new table id, with every index rebuilt under new ids, and drops the
// old rows, indexes and shard maps — all in b. It returns the new ids,
// whose statistics are counted after the commit.
func (s *Session) rewriteTable(ctx context.Context, ch *catalog.Change, pch *partition.Change, b *storage.Batch, p *bind.AlterTable, nt *catalog.Table) ([]uint64, error) {
	old, rw := p.Old, p.Rewrite
	nt.ID = ch.NewID()
	ids := []uint64{nt.ID}
	s.e.creating.Store(nt.ID, nt)
	defer s.e.creating.Delete(nt.ID)
	if err := pch.Create(s.e.meta.With(b), nt.ID, nil); err != nil {
		return nil, err
	}
	entries := make([]*catalog.Table, len(nt.Indexes))
	uniq := make([]map[string]bool, len(nt.Indexes))
	for i := range nt.Indexes {
		ix := &nt.Indexes[i]
		ix.ID = ch.NewID()
		ids = append(ids, ix.ID)
		entries[i] = nt.IndexTable(ix)
		s.e.creating.Store(ix.ID, entries[i])
		defer s.e.creating.Delete(ix.ID)
		if err := pch.Create(s.e.meta.With(b), ix.ID, nil); err != nil {
			return nil, err
		}
		if ix.Unique {
			uniq[i] = map[string]bool{}
		}
	}
	notNull := make([]int, 0, len(nt.Columns))
	for i, c := range nt.Columns {
		if c.NotNull {
			notNull = append(notNull, i)
		}
	}
	ec := s.evalContext(ctx, nil)
	it, err := s.e.storage.NewIter(storage.TableSpan(old.ID))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	keys := map[string]bool{}
	orow := make([]types.Value, len(old.Columns))
	var val []byte
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(orow)
		if err := rowenc.DecodeKey(old, it.Key(), orow); err != nil {
			return nil, err
		}
		if err := rowenc.DecodeValue(old, it.Value(), orow); err != nil {
			return nil, err
		}
		row, err := convertRow(ec, rw, nt, orow)
		if err != nil {
			return nil, err
		}
		for _, i := range notNull {
			if row[i].IsNull() {
				return nil, containsNulls(nt, i)
			}
		}
		if err := checkRow(ec, nt, p.Checks, row); err != nil {
			return nil, err
		}
		key := rowenc.EncodeKey(nt, row)
		if keys[string(key)] {
			return nil, duplicated(nt, nt.Name+"_pkey", nt.PrimaryKey, row)
		}
		keys[string(key)] = true
		val = rowenc.EncodeValue(val[:0], nt, row)
		if err := b.Set(key, val); err != nil {
			return nil, err
		}
		for i, et := range entries {
			ix := &nt.Indexes[i]
			if uniq[i] != nil && !slices.ContainsFunc(ix.Columns, func(c int) bool { return row[c].IsNull() }) {
				vals := make([]types.Value, len(ix.Columns))
				for k, c := range ix.Columns {
					vals[k] = row[c]
				}
				prefix := string(rowenc.EncodeKeyPrefix(et, vals))
				if uniq[i][prefix] {
					return nil, duplicated(nt, ix.Name, ix.Columns, row)
				}
				uniq[i][prefix] = true
			}
			if err := b.Set(rowenc.EncodeKey(et, row), nil); err != nil {
				return nil, err
			}
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if err := s.e.dropTableData(pch, b, old); err != nil {
		return nil, err
	}
	ch.DropTable(old)
	ch.PutTable(nt)
	return ids, nil
}

// convertRow computes a row of the rewritten table from a stored row of
// the old one.
func convertRow(ec *expr.Context, rw *bind.Rewrite, nt *catalog.Table, orow []types.Value) ([]types.Value, error) {
	row := make([]types.Value, len(nt.Columns))
	for i, c := range nt.Columns {
		var v types.Value
		switch {
		case rw.Using[i] != nil:
			var err error
			if v, err = rw.Using[i].Eval(ec, orow); err != nil {
				return nil, err
			}
		case rw.From[i] >= 0:
			v = orow[rw.From[i]]
		}
		cv, err := types.Cast(v, c.Type)
		if err != nil {
			return nil, err
		}
		row[i] = cv
	}
	return row, nil
}

// duplicated is the error of a key or unique index that two rows share
// while it is being built.
func duplicated(t *catalog.Table, name string, cols []int, row []types.Value) error {
	names := make([]string, len(cols))
	texts := make([]string, len(cols))
	for i, c := range cols {
		names[i], texts[i] = t.Columns[c].Name, row[c].Text()
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation,
		Message: fmt.Sprintf("could not create unique index %q", name),
		Detail:  fmt.Sprintf("Key (%s)=(%s) is duplicated.", strings.Join(names, ", "), strings.Join(texts, ", "))}
}
