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
// that writers are held back only for the second, and only for as long as
// the rows they changed meanwhile take:
//
//  1. holding only SHARE UPDATE EXCLUSIVE on the table (which keeps other
//     schema changes off, not writers; statementLocks), it registers a
//     tracker of the keys commits write to the table and takes a storage
//     snapshot, both under the transaction gate (so a commit is either in
//     the snapshot or tracked; altertrack.go). It converts the snapshot's
//     rows under a new table id (and new index ids), allocated up front,
//     validating each (NOT NULL, CHECK, duplicate keys and unique values),
//     commits them in chunks — invisible, as no committed catalog names
//     the new ids, whose shard maps it created first; a failed rewrite
//     drops them, dropOrphans after a crash — and logs what it wrote per
//     row. It yields the CPU to the table's writers (rewritePace);
//  2. under the schema gate and the change locks (no commit goes on), the
//     rows whose keys were tracked are converted again: what phase 1
//     wrote for them is deleted and the rows as committed now are
//     converted, validated and put; the old table is dropped and the new
//     one swapped in, all in one small commit. When the tracker
//     overflowed (a bulk load), the whole table is compared with the
//     snapshot instead. It takes ACCESS EXCLUSIVE first (lockForSwap), so
//     LOCK TABLE's holders end before the old rows go.
//
// Inside a transaction block there is no phase 1: phase 2 converts every
// row as the transaction sees it (its own writes included) into the
// transaction's batch, so the new table commits with the block and
// vanishes with it; the old rows are dropped after the commit (txnddl.go).

// afterRewritePhase1, when set (tests), runs between the phases of a
// rewrite.
var afterRewritePhase1 func()

// rewriter converts the rows of one rewrite and validates the new table
// as it fills. Its scratch row and keys are reused from row to row.
type rewriter struct {
	p       *bind.AlterTable
	old, nt *catalog.Table
	entries []*catalog.Table // IndexTable of each index of nt
	unique  []bool           // per index
	ec      *expr.Context
	notNull []int
	// keys are the new primary keys of the rows converted, uniq the value
	// tuples of each unique index: a second row with one is 23505.
	keys keySet
	uniq []keySet
	// written: what phase 1 put for each old row (rewriteLog).
	written rewriteLog

	// The row converted last.
	orow, row []types.Value
	newKey    []byte
	ents      [][]byte // index entry keys
	plens     []int    // per entry, its unique value prefix length (0: none)
	val       []byte
}

func newRewriter(ec *expr.Context, p *bind.AlterTable, nt *catalog.Table) *rewriter {
	r := &rewriter{p: p, old: p.Old, nt: nt, ec: ec,
		orow: make([]types.Value, len(p.Old.Columns)), row: make([]types.Value, len(nt.Columns)),
		ents: make([][]byte, len(nt.Indexes)), plens: make([]int, len(nt.Indexes)),
		unique: make([]bool, len(nt.Indexes)), uniq: make([]keySet, len(nt.Indexes))}
	for i := range nt.Indexes {
		r.entries = append(r.entries, nt.IndexTable(&nt.Indexes[i]))
		r.unique[i] = nt.Indexes[i].Unique
	}
	for i, c := range nt.Columns {
		if c.NotNull {
			r.notNull = append(r.notNull, i)
		}
	}
	return r
}

// convert computes the new row, key and index entries of a stored row.
func (r *rewriter) convert(oldKey, oldVal []byte) error {
	clear(r.orow)
	if err := rowenc.DecodeKey(r.old, oldKey, r.orow); err != nil {
		return err
	}
	if err := rowenc.DecodeValue(r.old, oldVal, r.orow); err != nil {
		return err
	}
	if err := convertRow(r.ec, r.p.Rewrite, r.nt, r.orow, r.row); err != nil {
		return err
	}
	r.newKey = appendRowKey(r.newKey[:0], r.nt, r.nt.PrimaryKey, r.row)
	for i, et := range r.entries {
		// The entry key is the unique value prefix (the index's
		// columns) followed by the primary key columns not among them.
		ix := &r.nt.Indexes[i]
		k := appendRowKey(r.ents[i][:0], et, ix.Columns, r.row)
		r.plens[i] = 0
		if r.unique[i] && !slices.ContainsFunc(ix.Columns, func(c int) bool { return r.row[c].IsNull() }) {
			r.plens[i] = len(k)
		}
		for _, c := range et.PrimaryKey[len(ix.Columns):] {
			k = rowenc.AppendKeyValue(k, r.row[c])
		}
		r.ents[i] = k
	}
	return nil
}

// appendRowKey appends t's key prefix and the key encodings of cols of row.
func appendRowKey(buf []byte, t *catalog.Table, cols []int, row []types.Value) []byte {
	buf = storage.AppendTablePrefix(buf, t.ID)
	for _, c := range cols {
		buf = rowenc.AppendKeyValue(buf, row[c])
	}
	return buf
}

// admit validates the converted row against the new table's constraints
// and the rows admitted before it (NOT NULL, CHECK, duplicate key or
// unique value), and counts it in.
func (r *rewriter) admit() error {
	for _, i := range r.notNull {
		if r.row[i].IsNull() {
			return containsNulls(r.nt, i)
		}
	}
	if err := checkRow(r.ec, r.nt, r.p.Checks, r.row); err != nil {
		return err
	}
	if !r.keys.add(r.newKey) {
		return duplicated(r.nt, r.nt.Name+"_pkey", r.nt.PrimaryKey, r.row)
	}
	for i, plen := range r.plens {
		if plen > 0 && !r.uniq[i].add(r.ents[i][:plen]) {
			return duplicated(r.nt, r.nt.Indexes[i].Name, r.nt.Indexes[i].Columns, r.row)
		}
	}
	return nil
}

// put writes the converted row and its index entries.
func (r *rewriter) put(b *storage.Batch) error {
	r.val = rowenc.EncodeValue(r.val[:0], r.nt, r.row)
	if err := b.Set(r.newKey, r.val); err != nil {
		return err
	}
	for _, k := range r.ents {
		if err := b.Set(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// unwrite takes back what phase 1 wrote for the old row with key oldKey,
// if anything: its new row and entries are deleted from b and no longer
// count as taken.
func (r *rewriter) unwrite(b *storage.Batch, oldKey []byte) error {
	i, ok := r.written.find(oldKey)
	if !ok {
		return nil
	}
	newKey, ents, plens := r.written.record(i, len(r.entries), nil, nil)
	if err := b.Delete(newKey); err != nil {
		return err
	}
	r.keys.remove(newKey)
	for j, k := range ents {
		if err := b.Delete(k); err != nil {
			return err
		}
		if plens[j] > 0 {
			r.uniq[j].remove(k[:plens[j]])
		}
	}
	return nil
}

func (s *Session) alterRewrite(ctx context.Context, p *bind.AlterTable) (_ Result, err error) {
	old, rw := p.Old, p.Rewrite
	ids, err := s.allocIDs(1 + len(p.New.Indexes))
	if err != nil {
		return nil, err
	}
	nt := *p.New
	nt.Columns = slices.Clone(p.New.Columns)
	nt.Indexes = slices.Clone(p.New.Indexes)
	nt.ID = ids[0]
	for i := range nt.Indexes {
		nt.Indexes[i].ID = ids[i+1]
	}
	r := newRewriter(s.evalContext(ctx, nil), p, &nt)

	// Inside a transaction block (txnddl.go) the rows are read through the
	// transaction, with its own writes, and the new table's rows go into
	// its batch in phase 2: they commit with it and vanish with it (and
	// with a ROLLBACK TO a savepoint before the statement).
	inBlock := s.inTxnBlock()
	if inBlock && s.txn == nil {
		// The implicit block of a query string starts with its first
		// schema change or write (as in ddlInto).
		s.txn = s.beginTxn()
		s.txn.StartStatement()
	}

	var tracker *rewriteTracker
	var snap *storage.Snapshot
	if !inBlock {
		// Phase 1: convert a snapshot's rows, writers going on. The new
		// table's shard maps are created first and its rows commit in
		// chunks as they are converted, all invisible until the swap
		// (no committed catalog names the new ids); a rewrite that fails
		// drops them, and a crash leaves them to dropOrphans.
		s.e.creating.Store(nt.ID, &nt)
		defer s.e.creating.Delete(nt.ID)
		for _, et := range r.entries {
			s.e.creating.Store(et.ID, et)
			defer s.e.creating.Delete(et.ID)
		}
		if err := s.createRewriteSpaces(r, encodePivots(&nt, rw.Pivots)); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				s.dropRewriteSpaces(ids)
			}
		}()
		// The tracker and the snapshot are taken under the gate: a
		// commit is in the snapshot or noted by the tracker.
		tracker = &rewriteTracker{}
		unlock := s.e.txns.LockSchema()
		stop := s.e.shards.Observe(old.ID, tracker.note)
		s.e.rewrites.Store(old.ID, tracker)
		snap = s.e.storage.NewSnapshot()
		unlock()
		defer stop()
		defer s.e.rewrites.CompareAndDelete(old.ID, tracker)
		defer snap.Close()
		if err = s.rewriteSnapshot(ctx, r, snap, newRewritePace(tracker)); err != nil {
			return nil, err
		}
	}
	b := s.e.storage.NewBatch()
	defer b.Close()

	if afterRewritePhase1 != nil {
		afterRewritePhase1()
	}

	// Phase 2: catch up with the writes since, swap — holding ACCESS
	// EXCLUSIVE from here (phase 1 ran under SHARE UPDATE EXCLUSIVE,
	// statementLocks), taken before the schema gate.
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
		if inBlock {
			s.e.creating.Store(nt.ID, &nt)
			defer s.e.creating.Delete(nt.ID)
			if err := pch.Create(s.e.meta.With(b), nt.ID, encodePivots(&nt, rw.Pivots)); err != nil {
				return err
			}
			for i, et := range r.entries {
				s.e.creating.Store(et.ID, et)
				defer s.e.creating.Delete(et.ID)
				if err := pch.Create(s.e.meta.With(b), nt.Indexes[i].ID, nil); err != nil {
					return err
				}
			}
		}
		// The rows to convert (again): keys whose committed value now
		// may differ from the snapshot's, with that value (nil: none).
		var fresh kvList
		var err error
		if inBlock {
			err = s.rewriteAll(r, &fresh)
		} else if keys, overflow := tracker.keys(); !overflow {
			err = s.rewriteTracked(r, b, keys, &fresh)
		} else {
			err = s.rewriteCompare(r, b, snap, &fresh)
		}
		if err != nil {
			return err
		}
		// Every row is validated before any is put into a block's
		// transaction (a failed statement leaves its batch as it was),
		// after every take-back of phase 1's rows (a row changed since
		// may keep its new key), and put after every delete: a deleted
		// key may be another row's new key.
		var puts kvList
		if err := fresh.each(func(key, val []byte) error {
			if err := r.convert(key, val); err != nil {
				return err
			}
			if err := r.admit(); err != nil {
				return err
			}
			r.val = rowenc.EncodeValue(r.val[:0], r.nt, r.row)
			puts.add(r.newKey, r.val)
			for _, k := range r.ents {
				puts.add(k, nil)
			}
			return nil
		}); err != nil {
			return err
		}
		into := b
		if inBlock {
			into = s.txn.Batch()
			s.tddl.recount = append(s.tddl.recount, ids...)
		}
		if err := puts.each(into.Set); err != nil {
			return err
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

// rewriteSnapshot is phase 1 of a rewrite outside a block: every row of
// the snapshot is converted, validated and put into b, and logged.
func (s *Session) rewriteSnapshot(ctx context.Context, r *rewriter, snap *storage.Snapshot, pace *rewritePace) error {
	it, err := snap.NewIter(storage.TableSpan(r.old.ID))
	if err != nil {
		return err
	}
	defer it.Close()
	b := s.e.storage.NewBatch()
	defer func() { b.Close() }()
	work := jobWorkFrom(ctx)
	work.expect(s.tableRows(r.old.ID))
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			work.advance(progressEvery)
		}
		pace.row(n)
		if err := r.convert(it.Key(), it.Value()); err != nil {
			return err
		}
		if err := r.admit(); err != nil {
			return err
		}
		if err := r.put(b); err != nil {
			return err
		}
		r.written.add(it.Key(), r.newKey, r.ents, r.plens)
		if b.Len() >= rewriteChunkBytes {
			if err := b.Commit(); err != nil {
				return err
			}
			b.Close()
			b = s.e.storage.NewBatch()
		}
	}
	work.advance(int64(n % progressEvery))
	if err := it.Error(); err != nil {
		return err
	}
	return b.Commit()
}

// rewriteChunkBytes is the size of the batches phase 1 of a rewrite
// commits its rows in (a variable for tests).
var rewriteChunkBytes = 4 << 20

// createRewriteSpaces creates the shard maps of a rewrite's new table and
// indexes, committed at once but named by no committed catalog yet.
func (s *Session) createRewriteSpaces(r *rewriter, pivots [][]byte) error {
	b := s.e.storage.NewBatch()
	defer b.Close()
	pch := s.e.shards.Begin()
	if err := pch.Create(s.e.meta.With(b), r.nt.ID, pivots); err != nil {
		pch.Abort()
		return err
	}
	for _, et := range r.entries {
		if err := pch.Create(s.e.meta.With(b), et.ID, nil); err != nil {
			pch.Abort()
			return err
		}
	}
	if err := b.Commit(); err != nil {
		pch.Abort()
		return err
	}
	pch.Install()
	return nil
}

// dropRewriteSpaces drops what a failed rewrite created: the spaces of
// ids that the committed catalog does not name (all of them, unless the
// swap committed and only its statement failed after).
func (s *Session) dropRewriteSpaces(ids []uint64) {
	snap := s.e.catalog.Snapshot()
	var spaces []uint64
	for _, id := range ids {
		if _, ok := snap.TableByID(id); !ok {
			spaces = append(spaces, id)
		}
	}
	if err := s.e.dropSpaces(spaces, nil, s.e.dropgc.pending); err != nil {
		s.notice("WARNING", sqlerr.InternalError, "a failed rewrite's data was not removed (it is at the next start): %v", err)
	}
}

// rewriteTracked takes back what phase 1 wrote for each key commits wrote
// since its snapshot, and lists the rows these keys hold now.
func (s *Session) rewriteTracked(r *rewriter, b *storage.Batch, keys [][]byte, fresh *kvList) error {
	for _, k := range keys {
		if err := r.unwrite(b, k); err != nil {
			return err
		}
	}
	rd := s.ddlReader()
	for _, k := range keys {
		val, ok, err := rd.Get(k)
		if err != nil {
			return err
		}
		if ok {
			fresh.add(k, val)
		}
	}
	return nil
}

// rewriteCompare is rewriteTracked when the tracker overflowed: the rows
// committed now are compared with the snapshot's, both in key order.
func (s *Session) rewriteCompare(r *rewriter, b *storage.Batch, snap *storage.Snapshot, fresh *kvList) error {
	span := storage.TableSpan(r.old.ID)
	was, err := snap.NewIter(span)
	if err != nil {
		return err
	}
	defer was.Close()
	now, err := s.ddlReader().NewIter(span)
	if err != nil {
		return err
	}
	defer now.Close()
	okWas, okNow := was.First(), now.First()
	for okWas || okNow {
		c := -1 // the snapshot's row comes first: deleted since
		switch {
		case !okWas:
			c = 1 // added since
		case okNow:
			c = bytes.Compare(was.Key(), now.Key())
		}
		switch {
		case c < 0:
			if err := r.unwrite(b, was.Key()); err != nil {
				return err
			}
			okWas = was.Next()
		case c > 0:
			fresh.add(now.Key(), now.Value())
			okNow = now.Next()
		default:
			if !bytes.Equal(was.Value(), now.Value()) {
				if err := r.unwrite(b, was.Key()); err != nil {
					return err
				}
				fresh.add(now.Key(), now.Value())
			}
			okWas, okNow = was.Next(), now.Next()
		}
	}
	if err := was.Error(); err != nil {
		return err
	}
	return now.Error()
}

// rewriteAll lists every row as the block's transaction sees it.
func (s *Session) rewriteAll(r *rewriter, fresh *kvList) error {
	it, err := s.ddlReader().NewIter(storage.TableSpan(r.old.ID))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		fresh.add(it.Key(), it.Value())
	}
	return it.Error()
}

// kvList is a list of key-value pairs in one arena.
type kvList struct {
	arena []byte
}

func (l *kvList) add(k, v []byte) {
	l.arena = appendLenBytes(appendLenBytes(l.arena, k), v)
}

func (l *kvList) each(fn func(k, v []byte) error) error {
	for b := l.arena; len(b) > 0; {
		var k, v []byte
		k, b = readLenBytes(b)
		v, b = readLenBytes(b)
		if err := fn(k, v); err != nil {
			return err
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

// convertRow computes into row a row of the rewritten table from a stored
// row of the old one.
func convertRow(ec *expr.Context, rw *bind.Rewrite, nt *catalog.Table, orow, row []types.Value) error {
	for i, c := range nt.Columns {
		var v types.Value
		switch {
		case rw.Using[i] != nil:
			var err error
			if v, err = rw.Using[i].Eval(ec, orow); err != nil {
				return err
			}
		case rw.From[i] >= 0:
			v = orow[rw.From[i]]
		}
		cv, err := types.Cast(v, c.Type)
		if err != nil {
			return err
		}
		row[i] = cv
	}
	return nil
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
