package sql

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/jobs"
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
// with); writers wait for the gate while a validating scan runs, and for
// a rewrite only while it catches up (alterRewrite).

func (s *Session) alterTable(ctx context.Context, p *bind.AlterTable) (Result, error) {
	if p.Old == nil { // IF EXISTS, and it does not
		return s.alterDone(p, nil), nil
	}
	if !alterReadsRows(p) {
		return s.alterTableRun(ctx, p)
	}
	// An ALTER TABLE that goes through the rows runs as a cancelable job
	// (sys.jobs) reporting its progress.
	var res Result
	err := s.runJob(ctx, jobs.KindAlterTable, true, func(ctx context.Context) (err error) {
		res, err = s.alterTableRun(ctx, p)
		return err
	})
	return res, err
}

// alterReadsRows reports whether an ALTER TABLE reads the stored rows: a
// rewrite, a validation of NOT NULL, CHECK or FOREIGN KEY, an index build.
func alterReadsRows(p *bind.AlterTable) bool {
	if p.Rewrite != nil || len(p.NotNull) > 0 || len(p.Validate) > 0 || len(p.ValidateFKs) > 0 {
		return true
	}
	return slices.ContainsFunc(p.New.Indexes, func(ix catalog.Index) bool { return ix.ID == 0 })
}

func (s *Session) alterTableRun(ctx context.Context, p *bind.AlterTable) (Result, error) {
	if p.Rewrite != nil {
		return s.alterRewrite(ctx, p)
	}
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
				if err := s.dropIndexData(pch, b, ix.ID); err != nil {
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
		return repointOwnedSequences(ch, p.Old, &nt)
	})
	if err != nil {
		return nil, err
	}
	return s.alterDone(p, recount), nil
}

// alterDone finishes a committed ALTER TABLE: it sends the notices the
// binder collected, recounts the indexes it built (after the commit, so
// the counts see the new data), and gives the command tag.
func (s *Session) alterDone(p *bind.AlterTable, recount []uint64) Result {
	for _, n := range p.Notices {
		s.notice("NOTICE", sqlerr.SuccessfulCompletion, "%s", n)
	}
	for _, id := range recount {
		s.recountIndex(id)
	}
	return &tagResult{tag: "ALTER TABLE"}
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
	it, err := s.ddlReader().NewIter(storage.TableSpan(t.ID))
	if err != nil {
		return err
	}
	defer it.Close()
	row := make([]types.Value, len(t.Columns))
	work := jobWorkFrom(ctx)
	work.expect(s.tableRows(t.ID))
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			work.advance(progressEvery)
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
	work.advance(int64(n % progressEvery))
	return it.Error()
}

func containsNulls(t *catalog.Table, i int) error {
	return sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", t.Columns[i].Name, t.Name)
}

// A rewrite (ALTER COLUMN TYPE, ADD PRIMARY KEY) runs in two phases so
// that writers are held back only for the second:
//
//  1. holding only SHARE UPDATE EXCLUSIVE on the table (which keeps other
//     schema changes off, not writers; statementLocks), the rows of a
//     storage snapshot are converted and put into the schema change's
//     batch under a new table id (and new index ids), allocated up front;
//  2. under the schema gate and the change locks, the table's rows as
//     committed now are compared with the snapshot's: rows changed,
//     added or deleted since are converted again (their stale new rows
//     and entries deleted), every row is validated (NOT NULL, CHECK,
//     duplicate keys), the old table is dropped and the new one swapped
//     in, all in the batch's one commit. It takes ACCESS EXCLUSIVE first
//     (lockForSwap), so LOCK TABLE's holders end before the old rows go.
//
// Inside a transaction block the same two phases read through the
// transaction (its own writes included); phase 1 only converts, and
// phase 2 puts every row into the transaction's batch, so the new table
// commits with the block and vanishes with it; the old rows are dropped
// after the commit (txnddl.go).

// prepRow is a row converted in phase 1.
type prepRow struct {
	oldKey, oldVal []byte
	newKey         []byte
	entries        [][]byte // index entry keys
	row            []types.Value
	fresh          bool // converted in phase 2, not yet in the batch
}

func (s *Session) alterRewrite(ctx context.Context, p *bind.AlterTable) (Result, error) {
	old, rw := p.Old, p.Rewrite
	ids, err := s.allocIDs(1 + len(p.New.Indexes))
	if err != nil {
		return nil, err
	}
	nt := *p.New
	nt.Columns = slices.Clone(p.New.Columns)
	nt.Indexes = slices.Clone(p.New.Indexes)
	nt.ID = ids[0]
	entries := make([]*catalog.Table, len(nt.Indexes))
	for i := range nt.Indexes {
		nt.Indexes[i].ID = ids[i+1]
		entries[i] = nt.IndexTable(&nt.Indexes[i])
	}
	ec := s.evalContext(ctx, nil)
	prepare := func(oldKey, oldVal []byte) (prepRow, error) {
		orow := make([]types.Value, len(old.Columns))
		if err := rowenc.DecodeKey(old, oldKey, orow); err != nil {
			return prepRow{}, err
		}
		if err := rowenc.DecodeValue(old, oldVal, orow); err != nil {
			return prepRow{}, err
		}
		row, err := convertRow(ec, rw, &nt, orow)
		if err != nil {
			return prepRow{}, err
		}
		pr := prepRow{oldKey: append([]byte(nil), oldKey...), oldVal: append([]byte(nil), oldVal...),
			newKey: rowenc.EncodeKey(&nt, row), row: row}
		for _, et := range entries {
			pr.entries = append(pr.entries, rowenc.EncodeKey(et, row))
		}
		return pr, nil
	}
	put := func(b *storage.Batch, pr prepRow) error {
		if err := b.Set(pr.newKey, rowenc.EncodeValue(nil, &nt, pr.row)); err != nil {
			return err
		}
		for _, k := range pr.entries {
			if err := b.Set(k, nil); err != nil {
				return err
			}
		}
		return nil
	}

	// Inside a transaction block (txnddl.go) the rows are read through the
	// transaction, with its own writes, and the new table's rows go into
	// its batch in phase 2: they commit with it and vanish with it (and
	// with a ROLLBACK TO a savepoint before the statement). Phase 1 writes
	// nothing then, so phase 2 puts every row and deletes none.
	inBlock := s.inTxnBlock()
	if inBlock && s.txn == nil {
		// The implicit block of a query string starts with its first
		// schema change or write (as in ddlInto).
		s.txn = s.beginTxn()
		s.txn.StartStatement()
	}

	// Phase 1: convert a snapshot's rows, writers going on.
	b := s.e.storage.NewBatch()
	defer b.Close()
	var prep []prepRow
	{
		var snap interface {
			NewIter(storage.Span) (*storage.Iterator, error)
			Close() error
		}
		if inBlock {
			snap = noClose{s.txn.LatestReader()}
		} else {
			snap = s.e.storage.NewSnapshot()
		}
		it, err := snap.NewIter(storage.TableSpan(old.ID))
		if err != nil {
			snap.Close()
			return nil, err
		}
		work := jobWorkFrom(ctx)
		work.expect(s.tableRows(old.ID))
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if n++; n%progressEvery == 0 {
				if err := ctx.Err(); err != nil {
					it.Close()
					snap.Close()
					return nil, err
				}
				work.advance(progressEvery)
			}
			pr, err := prepare(it.Key(), it.Value())
			if err == nil && !inBlock {
				err = put(b, pr)
			}
			if err != nil {
				it.Close()
				snap.Close()
				return nil, err
			}
			prep = append(prep, pr)
		}
		work.advance(int64(n % progressEvery))
		err = it.Error()
		it.Close()
		snap.Close()
		if err != nil {
			return nil, err
		}
	}

	// Phase 2: catch up with the writes since, validate, swap — holding
	// ACCESS EXCLUSIVE from here (phase 1 ran under SHARE UPDATE
	// EXCLUSIVE, statementLocks), taken before the schema gate.
	if err := s.lockForSwap(ctx, old); err != nil {
		return nil, err
	}
	err = s.indexDDLInto(b, func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		if cur, ok := ch.Snapshot().TableByID(old.ID); !ok || cur != old {
			return sqlerr.New(sqlerr.SerializationFailure,
				"could not serialize access: relation %q changed during ALTER TABLE", old.Name)
		}
		if err := ownTable(s.access(ch.Snapshot()), old); err != nil {
			return err
		}
		s.e.creating.Store(nt.ID, &nt)
		defer s.e.creating.Delete(nt.ID)
		if err := pch.Create(s.e.meta.With(b), nt.ID, encodePivots(&nt, rw.Pivots)); err != nil {
			return err
		}
		for i, et := range entries {
			s.e.creating.Store(et.ID, et)
			defer s.e.creating.Delete(et.ID)
			if err := pch.Create(s.e.meta.With(b), nt.Indexes[i].ID, nil); err != nil {
				return err
			}
		}
		// The rows committed now against the snapshot's, both in key
		// order (the gate holds writers back, so this is final).
		it, err := s.ddlReader().NewIter(storage.TableSpan(old.ID))
		if err != nil {
			return err
		}
		defer it.Close()
		deleted := map[string]bool{}
		stale := func(pr prepRow) error {
			if inBlock {
				return nil // phase 1 wrote nothing
			}
			deleted[string(pr.newKey)] = true
			if err := b.Delete(pr.newKey); err != nil {
				return err
			}
			for _, k := range pr.entries {
				deleted[string(k)] = true
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}
		var final []prepRow
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			key := it.Key()
			for ; i < len(prep) && bytes.Compare(prep[i].oldKey, key) < 0; i++ {
				if err := stale(prep[i]); err != nil { // deleted since
					return err
				}
			}
			if i < len(prep) && bytes.Equal(prep[i].oldKey, key) {
				i++
				if bytes.Equal(prep[i-1].oldVal, it.Value()) {
					final = append(final, prep[i-1])
					continue
				}
				if err := stale(prep[i-1]); err != nil { // changed since
					return err
				}
			}
			pr, err := prepare(key, it.Value())
			if err != nil {
				return err
			}
			pr.fresh = true
			final = append(final, pr)
		}
		if err := it.Error(); err != nil {
			return err
		}
		for ; i < len(prep); i++ {
			if err := stale(prep[i]); err != nil {
				return err
			}
		}
		// Validated before any put of a block's transaction (a failed
		// statement leaves its batch as it was). Puts after every delete:
		// a stale key may be another row's key.
		if err := validateRewrite(ec, p, &nt, entries, final); err != nil {
			return err
		}
		into := b
		if inBlock {
			into = s.txn.Batch()
			s.tddl.recount = append(s.tddl.recount, ids...)
		}
		for _, pr := range final {
			again := inBlock || pr.fresh || deleted[string(pr.newKey)]
			for _, k := range pr.entries {
				again = again || deleted[string(k)]
			}
			if again {
				if err := put(into, pr); err != nil {
					return err
				}
			}
		}
		// In a block the old rows are dropped after the commit.
		if err := s.dropTableData(pch, b, old); err != nil {
			return err
		}
		ch.DropTable(old)
		ch.PutTable(&nt)
		return repointOwnedSequences(ch, p.Old, &nt)
	})
	if err != nil {
		return nil, err
	}
	return s.alterDone(p, ids), nil
}

// noClose gives a reader the Close of a snapshot (the transaction's
// reader is closed with the transaction).
type noClose struct{ storage.Reader }

func (noClose) Close() error { return nil }

// validateRewrite checks the rows of a rewritten table: NOT NULL, CHECK,
// and no two rows with the same key or unique index values.
func validateRewrite(ec *expr.Context, p *bind.AlterTable, nt *catalog.Table, entries []*catalog.Table, final []prepRow) error {
	notNull := make([]int, 0, len(nt.Columns))
	for i, c := range nt.Columns {
		if c.NotNull {
			notNull = append(notNull, i)
		}
	}
	keys := make(map[string]bool, len(final))
	uniq := make([]map[string]bool, len(nt.Indexes))
	for i := range nt.Indexes {
		if nt.Indexes[i].Unique {
			uniq[i] = map[string]bool{}
		}
	}
	for _, pr := range final {
		row := pr.row
		for _, i := range notNull {
			if row[i].IsNull() {
				return containsNulls(nt, i)
			}
		}
		if err := checkRow(ec, nt, p.Checks, row); err != nil {
			return err
		}
		if keys[string(pr.newKey)] {
			return duplicated(nt, nt.Name+"_pkey", nt.PrimaryKey, row)
		}
		keys[string(pr.newKey)] = true
		for i, et := range entries {
			ix := &nt.Indexes[i]
			if uniq[i] == nil || slices.ContainsFunc(ix.Columns, func(c int) bool { return row[c].IsNull() }) {
				continue
			}
			vals := make([]types.Value, len(ix.Columns))
			for k, c := range ix.Columns {
				vals[k] = row[c]
			}
			prefix := string(rowenc.EncodeKeyPrefix(et, vals))
			if uniq[i][prefix] {
				return duplicated(nt, ix.Name, ix.Columns, row)
			}
			uniq[i][prefix] = true
		}
	}
	return nil
}

// allocIDs allocates n object ids in a schema change of their own, so
// that a rewrite can write rows under them before it takes the change
// locks. Ids of a rewrite that fails are never used.
func (s *Session) allocIDs(n int) ([]uint64, error) {
	ids := make([]uint64, n)
	ch := s.e.catalog.Begin()
	for i := range ids {
		ids[i] = ch.NewID()
	}
	b := s.e.storage.NewBatch()
	defer b.Close()
	if err := ch.Write(s.e.meta.With(b)); err != nil {
		ch.Abort()
		return nil, err
	}
	if err := b.Commit(); err != nil {
		ch.Abort()
		return nil, err
	}
	ch.Install()
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

// repointOwnedSequences keeps the sequences that columns of old own
// attached to the same columns of nt, which may have been renamed or
// moved to a new table id by a rewrite (binding refused to drop them or
// change their type).
func repointOwnedSequences(ch *catalog.Change, old, nt *catalog.Table) error {
	for _, q := range ch.Snapshot().OwnedSequences(old.DatabaseID, old.ID) {
		i := old.ColumnIndex(q.OwnerColumn)
		if i < 0 {
			continue
		}
		id := old.Columns[i].ID
		j := slices.IndexFunc(nt.Columns, func(c catalog.Column) bool { return c.ID == id })
		if j < 0 {
			return sqlerr.New(sqlerr.SerializationFailure,
				"could not serialize access: sequence %q changed owner during ALTER TABLE", q.Name)
		}
		if nt.ID != old.ID || nt.Columns[j].Name != q.OwnerColumn {
			nq := *q
			nq.OwnerTable, nq.OwnerColumn = nt.ID, nt.Columns[j].Name
			ch.PutSequence(&nq)
		}
	}
	return nil
}
