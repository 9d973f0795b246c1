package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
)

func (s *Session) insert(ctx context.Context, p *bind.Insert, params []types.Value) (Result, error) {
	count := 0
	var returned [][]types.Value
	err := s.writeTxn(ctx, func(t *txn.Txn) error {
		count, returned = 0, nil
		ec := &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: t.Reader(), Shards: s.e.shards,
			RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.memLimit(), Scans: &s.e.tableActivity}
		// The source is read completely before writing, so INSERT INTO t
		// SELECT ... FROM t never reads its own writes; under
		// data-modifying WITH queries it reads the tables as they were
		// when the statement started (with_dml.go).
		src := ec
		if s.readView != nil {
			c := *ec
			c.Reader = s.readView
			src = &c
		}
		rows, err := insertSource(src, p.Source)
		if err != nil {
			return err
		}
		if len(rows) > 1 && insertWriteHolds {
			// In a block (INSERT ... SELECT, many VALUES), the rows'
			// locks are memory holds until the block's next flush turns
			// them into its intents, as COPY's (sql/txn's write holds):
			// no lock record written, and deleted again, per row. The
			// rows they guard are in the block's memory until then too,
			// so a crash loses nothing a record would have kept. No
			// effect on a one-phase (autocommit) transaction.
			t.SetWriteHolds(true)
			defer t.SetWriteHolds(false)
		}
		w := newRowWriter(ctx, t, p.Table, p.Computed, ec)
		w.checks = p.Checks
		if p.FK != nil {
			w.fk, w.fkt = newFKWriter(ctx, t, ec.Eval), p.FK.Root
		}
		var cw *conflictWriter
		if p.Conflict != nil {
			cw = newConflictWriter(w, p, ec, len(rows))
		}
		// The rows go in chunks: each chunk's rows are placed in the
		// table's columns, their keys read as one batch (insertbatch.go),
		// then written in order. A row that cannot be placed fails the
		// statement after the rows before it were written, as row by row.
		listed := insertListed(p)
		placed := make([][]types.Value, 0, min(len(rows), preReadChunk))
		width := len(p.Table.Columns)
		for start := 0; start < len(rows); start += preReadChunk {
			placed = placed[:0]
			var placeErr error
			chunk := rows[start:min(start+preReadChunk, len(rows))]
			// A chunk's rows are placed in one allocation, fresh for each
			// chunk: what a write keeps of its row (RETURNING, a foreign
			// key's check) stays valid.
			slab := make([]types.Value, width*len(chunk))
			for j, src := range chunk {
				row, err := placeRowInto(slab[j*width:(j+1)*width:(j+1)*width], ec, p, src, listed)
				if err != nil {
					placeErr = err
					break
				}
				placed = append(placed, row)
			}
			if cw == nil {
				if err := w.preRead(placed); err != nil {
					return err
				}
			}
			for j, row := range placed {
				var err error
				w.usePre(j)
				if row, err = w.insertOne(ctx, cw, row, listed, p.Mode); err != nil {
					return err
				}
				if row == nil {
					continue // DO NOTHING, or DO UPDATE ... WHERE false
				}
				count++
				if returned, err = returnRow(ec, p.Returning, returned, row); err != nil {
					return err
				}
			}
			if placeErr != nil {
				return placeErr
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.e.tableActivity.countWrites(p.Table.ID, int64(count), 0, 0)
	if p.Returning == nil && count == 1 {
		return insertedOne, nil
	}
	return writeResult(p.Returning, insertTag(count), returned), nil
}

// insertWriteHolds turns the write holds of multi-row INSERTs on (off:
// BenchmarkInsertSelectBlock's "records" case, the old way).
var insertWriteHolds = true

// insertedOne is the result of a one-row INSERT without RETURNING, shared:
// a tagResult never changes.
var insertedOne Result = &tagResult{tag: "INSERT 0 1"}

// insertSource reads an INSERT's source rows: a single row of constants
// and parameters directly (exec.OneValuesRow), anything else through the
// executor.
func insertSource(c *exec.Context, source planner.Node) ([]expr.Row, error) {
	if row, ok, err := exec.OneValuesRow(c, source); ok {
		if err != nil {
			return nil, err
		}
		return []expr.Row{row}, nil
	}
	it, err := exec.Build(c, source)
	if err != nil {
		return nil, err
	}
	return exec.Drain(c, it)
}

// insertTag is INSERT's command tag; the one-row tag is a constant.
func insertTag(count int) string {
	if count == 1 {
		return "INSERT 0 1"
	}
	return "INSERT 0 " + strconv.Itoa(count)
}

// insertOne writes one placed row of an INSERT, through ON CONFLICT's
// writer when the statement has one, and returns the row written (nil:
// none, under DO NOTHING or DO UPDATE ... WHERE false).
func (w *rowWriter) insertOne(ctx context.Context, cw *conflictWriter, row []types.Value, listed []bool, mode bind.InsertMode) ([]types.Value, error) {
	if cw != nil {
		return cw.write(ctx, row, listed)
	}
	return row, w.write(row, listed, mode)
}

// returnRow appends the RETURNING row of the written row (nothing without
// RETURNING).
func returnRow(ec *exec.Context, r *bind.Returning, out [][]types.Value, row []types.Value) ([][]types.Value, error) {
	if r == nil {
		return out, nil
	}
	vals := make([]types.Value, len(r.Exprs))
	for i, e := range r.Exprs {
		v, err := e.Eval(ec.Eval, row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return append(out, vals), nil
}

// writeResult is the result of a write: its command tag, and the rows of
// RETURNING when it has one. The rows are sent after the transaction
// wrote them, so a client never sees a row of a write that failed.
func writeResult(r *bind.Returning, tag string, rows [][]types.Value) Result {
	if r == nil {
		return &tagResult{tag: tag}
	}
	return staticRows(resultColumns(r.Cols), rows, tag)
}

// insertListed marks the columns an INSERT supplies: the same for every
// row, so a statement computes it once and its rows share it (nothing
// writes to it).
func insertListed(p *bind.Insert) []bool {
	listed := make([]bool, len(p.Table.Columns))
	for _, ti := range p.Target {
		listed[ti] = true
	}
	return listed
}

// placeRow places a source row's values in the table's columns and fills
// the others from their defaults; listed marks the columns the statement
// supplied (insertListed).
func placeRow(ec *exec.Context, p *bind.Insert, src []types.Value, listed []bool) (row []types.Value, err error) {
	return placeRowInto(make([]types.Value, len(p.Table.Columns)), ec, p, src, listed)
}

// placeRowInto is placeRow into row, a zeroed slice of the table's width.
func placeRowInto(row []types.Value, ec *exec.Context, p *bind.Insert, src []types.Value, listed []bool) (_ []types.Value, err error) {
	for i, ti := range p.Target {
		row[ti] = src[i]
	}
	for i, d := range p.Defaults {
		if !listed[i] && d != nil {
			if row[i], err = d.Eval(ec.Eval, nil); err != nil {
				return nil, err
			}
		}
	}
	return row, nil
}

// newRowWriter writes rows of table in transaction t, with the table's TTL
// and secondary indexes as of the statement's time.
func newRowWriter(ctx context.Context, t *txn.Txn, table *catalog.Table, computed []expr.Expr, ec *exec.Context) *rowWriter {
	w := &rowWriter{ctx: ctx, t: t, table: table, computed: computed, eval: ec.Eval, expiry: ttl.At(table, ec.Now()), preNext: -1}
	w.indexes = newIndexMaintainer(ctx, t, table, w.expiry)
	return w
}

// rowWriter validates and writes rows of one table inside a transaction.
type rowWriter struct {
	ctx      context.Context
	t        *txn.Txn
	table    *catalog.Table
	computed []expr.Expr // per column; nil when the table has none
	checks   []bind.Check
	// fk keeps the table's foreign keys (nil: none); fkt is the table's
	// place in the statement's bind.FKGraph.
	fk   *fkWriter
	fkt  *bind.FKTable
	eval *expr.Context
	// expiry is the table's TTL at the statement's time (nil: none): an
	// expired row that the TTL runner has not deleted yet counts as absent.
	expiry *ttl.Expiry
	// indexes maintains the table's secondary indexes.
	indexes *indexMaintainer
	buf     []byte
	// peeked is a read of a row key that the next write of that key may
	// use instead of reading it again (ON CONFLICT looked the key up
	// under its lock just before).
	peeked struct {
		key, val []byte
		present  bool
	}
	// pre holds, per row of the chunk being written, its key and the
	// key's value read ahead by preRead (insertbatch.go); preNext is the
	// row write writes next (-1: none). The others are preRead's reused
	// scratch.
	pre          []preRead
	preNext      int
	preOrder     []int32
	preLocked    [][]byte
	preLockedRow []int32
}

// peek records a read of key made under its lock.
func (w *rowWriter) peek(key, val []byte, present bool) {
	w.peeked.key, w.peeked.val, w.peeked.present = key, val, present
}

// get reads key in the transaction, or takes the read peek recorded.
func (w *rowWriter) get(key []byte) ([]byte, bool, error) {
	if p := &w.peeked; p.key != nil {
		k := p.key
		p.key = nil
		if string(k) == string(key) {
			return p.val, p.present, nil
		}
	}
	return w.t.Get(key)
}

// live reports whether the stored row key → val is visible: present and
// not expired under the table's TTL.
func (w *rowWriter) live(key, val []byte) (bool, error) {
	if w.expiry == nil {
		return true, nil
	}
	row, err := rowenc.DecodeRow(w.table, key, val)
	if err != nil {
		return false, err
	}
	return !w.expiry.Expired(row), nil
}

// compute fills the computed columns of row; keys selects the key columns
// (computed first, because the key locates the row) or the others.
func (w *rowWriter) compute(row []types.Value, keys bool) error {
	for i, e := range w.computed {
		if e == nil || w.table.IsKeyColumn(i) != keys {
			continue
		}
		v, err := e.Eval(w.eval, row)
		if err != nil {
			return err
		}
		if row[i], err = expr.CastInZone(w.eval, v, w.table.Columns[i].Type); err != nil {
			return err
		}
	}
	return nil
}

// coerce casts every value to its column's type.
func (w *rowWriter) coerce(row []types.Value) error {
	for i, c := range w.table.Columns {
		v, err := expr.CastInZone(w.eval, row[i], c.Type)
		if err != nil {
			return err
		}
		row[i] = v
	}
	return nil
}

// checkNotNull enforces NOT NULL on a complete row.
func (w *rowWriter) checkNotNull(row []types.Value) error {
	for i, c := range w.table.Columns {
		if row[i].IsNull() && c.NotNull {
			return &sqlerr.Error{Code: sqlerr.NotNullViolation,
				Message: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", c.Name, w.table.Name),
				Detail:  "Failing row contains " + rowText(row) + "."}
		}
	}
	return nil
}

// checkNotNullAndChecks enforces NOT NULL, then the CHECK constraints, on
// a complete row.
func (w *rowWriter) checkNotNullAndChecks(row []types.Value) error {
	if err := w.checkNotNull(row); err != nil {
		return err
	}
	return checkRow(w.eval, w.table, w.checks, row)
}

// checkRow fails with 23514 when row makes a CHECK constraint false
// (NULL passes, as in PostgreSQL).
func checkRow(ec *expr.Context, t *catalog.Table, checks []bind.Check, row []types.Value) error {
	for _, c := range checks {
		v, err := c.Expr.Eval(ec, row)
		if err != nil {
			return err
		}
		if !v.IsNull() && !v.Bool() {
			return &sqlerr.Error{Code: sqlerr.CheckViolation,
				Message: fmt.Sprintf("new row for relation %q violates check constraint %q", t.Name, c.Name),
				Detail:  "Failing row contains " + rowText(visibleColumns(t, row)) + "."}
		}
	}
	return nil
}

// visibleColumns drops the hidden key from a row, as PostgreSQL's
// "Failing row contains" shows only the table's own columns.
func visibleColumns(t *catalog.Table, row []types.Value) []types.Value {
	h := t.HiddenKeyColumn()
	if h < 0 {
		return row
	}
	out := append([]types.Value(nil), row[:h]...)
	return append(out, row[h+1:]...)
}

// write inserts, upserts or replaces one row. listed marks the columns the
// statement supplied (UPSERT keeps the others of an existing row).
func (w *rowWriter) write(row []types.Value, listed []bool, mode bind.InsertMode) error {
	hidden := w.table.HiddenKeyColumn()
	for attempt := 0; ; attempt++ {
		if hidden >= 0 {
			// A table without PRIMARY KEY keys rows by a random 64-bit value,
			// which spreads inserts uniformly over the key space.
			row[hidden] = types.NewUint64(rand.Uint64())
		}
		// present: the key holds a row; exists: a live one. An expired row
		// is overwritten as if absent (the statistics still see a
		// replacement).
		key, old, present, err := w.locate(row, attempt)
		if err != nil {
			return err
		}
		exists := present
		if present {
			if exists, err = w.live(key, old); err != nil {
				return err
			}
		}
		// prev is the stored row (live or expired) whose index entries
		// this write replaces.
		var prev []types.Value
		if present && !(exists && hidden >= 0 && attempt < 8) && len(w.table.Indexes) > 0 {
			if prev, err = rowenc.DecodeRow(w.table, key, old); err != nil {
				return err
			}
		}
		if exists {
			switch {
			case hidden >= 0 && attempt < 8:
				continue // a generated key collided: draw another
			case mode == bind.ModeInsert:
				return w.duplicateKey(row)
			case mode == bind.ModeUpsert:
				cur, err := rowenc.DecodeRow(w.table, key, old)
				if err != nil {
					return err
				}
				for i := range row {
					if !listed[i] {
						row[i] = cur[i]
					}
				}
			}
		}
		if err := w.compute(row, false); err != nil {
			return err
		}
		if err := w.checkNotNullAndChecks(row); err != nil {
			return err
		}
		if w.fk != nil {
			if err := w.fk.checkParents(w.fkt, nil, row); err != nil {
				return err
			}
		}
		if err := w.indexes.update(prev, row); err != nil {
			return err
		}
		w.buf = rowenc.EncodeValue(w.buf[:0], w.table, row)
		return w.t.PutRow(w.table.ID, key, w.buf, present, len(old))
	}
}

// locate coerces row, computes its key columns, encodes its key, locks
// it and reads it, or takes all that from preRead (attempt 0 only: a
// retry draws a new key).
func (w *rowWriter) locate(row []types.Value, attempt int) (key, old []byte, present bool, err error) {
	if p := w.takePre(); p != nil && attempt == 0 {
		if p.read {
			return p.key, p.val, p.present, nil
		}
		// Locked by another transaction at preRead's time, or a later row
		// of a key: lock (or find it held) and read it now.
		key = p.key
	} else {
		if err := w.coerce(row); err != nil {
			return nil, nil, false, err
		}
		if err := w.compute(row, true); err != nil {
			return nil, nil, false, err
		}
		key = rowenc.EncodeKey(w.table, row)
	}
	if err := w.t.Lock(w.ctx, key); err != nil {
		return nil, nil, false, err
	}
	old, present, err = w.get(key)
	return key, old, present, err
}

func (w *rowWriter) duplicateKey(row []types.Value) error {
	var vals []string
	for _, k := range w.table.PrimaryKey {
		vals = append(vals, row[k].Text())
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation,
		Message: fmt.Sprintf("duplicate key value violates unique constraint %q", w.table.Name+"_pkey"),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.",
			strings.Join(w.table.KeyColumnNames(), ", "), strings.Join(vals, ", "))}
}

func rowText(row []types.Value) string {
	parts := make([]string, len(row))
	for i, v := range row {
		if v.IsNull() {
			parts[i] = "null"
		} else {
			parts[i] = v.Text()
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func (s *Session) modify(ctx context.Context, p *bind.Modify, params []types.Value) (Result, error) {
	count := 0
	var returned [][]types.Value
	err := s.writeTxn(ctx, func(tx *txn.Txn) error {
		count, returned = 0, nil
		ec, done, err := s.modifyContext(ctx, tx, p, params)
		if err != nil {
			return err
		}
		defer done()
		scan := ec
		if s.readView != nil {
			// Under data-modifying WITH queries the rows to change are
			// found in the tables as they were when the statement
			// started (with_dml.go); each is then re-read as it is now.
			c := *ec
			c.Reader = s.readView
			scan = &c
		}
		keys, more, err := matchingKeys(scan, p, modifyKeysLimit)
		if err != nil {
			return err
		}
		m := &modifier{p: p, tx: tx, ec: ec, w: newRowWriter(ctx, tx, p.Scan.Table, p.Computed, ec)}
		m.w.checks = p.Checks
		if p.FK != nil {
			m.w.fk, m.w.fkt = newFKWriter(ctx, tx, ec.Eval), p.FK.Root
		}
		change := func(key []byte) error {
			row, err := m.row(ctx, key)
			if err != nil || row == nil {
				return err
			}
			count++
			returned, err = returnRow(ec, p.Returning, returned, row)
			return err
		}
		if more {
			// Too many rows to hold their keys: scan again, from a view
			// of the statement's start, and change each row as the scan
			// finds it (streamKeys).
			keys = nil
			return streamKeys(scan, tx, p, s.readView != nil, change)
		}
		for _, key := range keys {
			if err := change(key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	verb := "DELETE"
	if p.Update {
		verb = "UPDATE"
		s.e.tableActivity.countWrites(p.Scan.Table.ID, 0, int64(count), 0)
	} else {
		s.e.tableActivity.countWrites(p.Scan.Table.ID, 0, 0, int64(count))
	}
	return writeResult(p.Returning, verb+" "+strconv.Itoa(count), returned), nil
}

// modifyContext is the execution context of UPDATE or DELETE: reads see
// the transaction, and subqueries the transaction as it was when the
// statement started, never the rows it has already changed. Call done
// when the statement ends.
func (s *Session) modifyContext(ctx context.Context, tx *txn.Txn, p *bind.Modify, params []types.Value) (ec *exec.Context, done func(), err error) {
	ec = &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: tx.Reader(), Shards: s.e.shards,
		RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.memLimit(), Scans: &s.e.tableActivity}
	if !modifyHasSubquery(p) {
		return ec, func() {}, nil
	}
	if s.readView != nil {
		ec.SubReader = s.readView
		return ec, func() {}, nil
	}
	view, done, err := tx.NewReadView()
	if err != nil {
		return nil, nil, err
	}
	ec.SubReader = view
	return ec, done, nil
}

// modifyKeysLimit is how many keys an UPDATE or DELETE collects before it
// writes (matchingKeys); past it, it streams (streamKeys). A variable for
// tests.
var modifyKeysLimit = 1 << 16

// modifyStreams counts the UPDATE and DELETE statements that streamed
// (for tests).
var modifyStreams atomic.Int64

// matchingKeys collects the keys of the rows the scan finds, up to limit
// (more: the scan has more). They are collected before anything is
// written: writing while scanning the transaction's own reader would let
// an UPDATE that moves a row forward in key order meet it again (a scan
// of several shards opens an iterator on each as it gets there).
func matchingKeys(ec *exec.Context, p *bind.Modify, limit int) (keys [][]byte, more bool, err error) {
	it, err := exec.Build(ec, p.Scan)
	if err != nil {
		return nil, false, err
	}
	defer it.Close()
	for {
		row, err := it.Next()
		if err != nil || row == nil {
			return keys, false, err
		}
		if len(keys) == limit {
			return keys, true, nil
		}
		keys = append(keys, rowenc.EncodeKey(p.Scan.Table, row))
	}
}

// streamKeys runs change on the key of each row the scan finds, without
// holding them: the scan reads a view of the transaction as the statement
// found it (Txn.NewReadView: nothing of the statement has been written
// yet; the view sees none of the writes made meanwhile, flushed to
// intents or not), so no changed row is met again, and change re-reads
// each row under its lock as it does for collected keys. So an UPDATE or
// DELETE of millions of rows in a block keeps its memory flat. onView:
// scan reads such a view already (data-modifying WITH queries).
func streamKeys(scan *exec.Context, tx *txn.Txn, p *bind.Modify, onView bool, change func(key []byte) error) error {
	modifyStreams.Add(1)
	if !onView {
		view, done, err := tx.NewReadView()
		if err != nil {
			return err
		}
		defer done()
		c := *scan
		c.Reader = view
		scan = &c
	}
	it, err := exec.Build(scan, p.Scan)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		row, err := it.Next()
		if err != nil || row == nil {
			return err
		}
		if err := change(rowenc.EncodeKey(p.Scan.Table, row)); err != nil {
			return err
		}
	}
}

// modifier changes the rows of one UPDATE or DELETE, one key at a time.
type modifier struct {
	p  *bind.Modify
	tx *txn.Txn
	ec *exec.Context
	w  *rowWriter
}

// row locks the row at key, re-reads and re-checks it, and deletes or
// updates it. It returns the row deleted or the new row; nil when the row
// is gone, expired or no longer matches (a concurrent transaction changed
// it since the scan).
func (m *modifier) row(ctx context.Context, key []byte) ([]types.Value, error) {
	t := m.p.Scan.Table
	if err := m.tx.LockStrength(ctx, key, m.rowLockStrength()); err != nil {
		return nil, err
	}
	val, ok, err := m.tx.Get(key)
	if err != nil || !ok {
		return nil, err // !ok: deleted meanwhile
	}
	row, err := rowenc.DecodeRow(t, key, val)
	if err != nil {
		return nil, err
	}
	if match, err := m.stillMatches(row); err != nil || !match {
		return nil, err
	}
	if !m.p.Update {
		if err := m.w.indexes.update(row, nil); err != nil {
			return nil, err
		}
		if err := m.tx.DeleteRow(t.ID, key, len(val)); err != nil {
			return nil, err
		}
		if m.w.fk != nil {
			// After the delete, so that a row referencing itself is gone.
			return row, m.w.fk.parentChanged(m.w.fkt, row, nil)
		}
		return row, nil
	}
	return m.update(ctx, key, len(val), row, row)
}

// update writes the new version of the row at key (its stored value is
// oldLen bytes): the assignments evaluated on input, which is the row
// itself for UPDATE and the row followed by the proposed row for ON
// CONFLICT DO UPDATE. It returns the new row.
func (m *modifier) update(ctx context.Context, key []byte, oldLen int, row, input []types.Value) ([]types.Value, error) {
	t := m.p.Scan.Table
	newRow, err := m.updated(row, input)
	if err != nil {
		return nil, err
	}
	if m.w.fk != nil {
		if err := m.w.fk.checkParents(m.w.fkt, row, newRow); err != nil {
			return nil, err
		}
	}
	if m.keyMayChange() {
		if newKey := rowenc.EncodeKey(t, newRow); string(newKey) != string(key) {
			if err := m.move(ctx, key, oldLen, row, newKey, newRow); err != nil {
				return nil, err
			}
			if m.w.fk != nil {
				return newRow, m.w.fk.parentChanged(m.w.fkt, row, newRow)
			}
			return newRow, nil
		}
	}
	newKey := key
	if err := m.w.indexes.update(row, newRow); err != nil {
		return nil, err
	}
	m.w.buf = rowenc.EncodeValue(m.w.buf[:0], t, newRow)
	return newRow, m.tx.PutRow(t.ID, newKey, m.w.buf, true, oldLen)
}

// keyMayChange reports whether the assignments can change the row's key:
// they assign a key column, or the table has a computed key column.
func (m *modifier) keyMayChange() bool {
	t := m.p.Scan.Table
	for _, i := range m.p.Assign {
		if t.IsKeyColumn(i) {
			return true
		}
	}
	for i, e := range m.p.Computed {
		if e != nil && t.IsKeyColumn(i) {
			return true
		}
	}
	return false
}

// stillMatches reports whether the re-read row is live and still satisfies
// the statement's condition.
func (m *modifier) stillMatches(row []types.Value) (bool, error) {
	if m.w.expiry != nil && m.w.expiry.Expired(row) {
		return false, nil // expired: as good as deleted
	}
	if m.p.Scan.Filter == nil {
		return true, nil
	}
	v, err := m.p.Scan.Filter.Eval(m.ec.Eval, row)
	if err != nil {
		return false, err
	}
	return !v.IsNull() && v.Bool(), nil
}

// updated computes the new row of an UPDATE: the assignments evaluated on
// the old row, cast, computed columns recomputed, NOT NULL checked.
func (m *modifier) updated(row, input []types.Value) ([]types.Value, error) {
	newRow := append([]types.Value(nil), row...)
	for i, col := range m.p.Assign {
		v, err := m.p.Values[i].Eval(m.ec.Eval, input)
		if err != nil {
			return nil, err
		}
		newRow[col] = v
	}
	if err := m.w.coerce(newRow); err != nil {
		return nil, err
	}
	if err := m.w.compute(newRow, true); err != nil {
		return nil, err
	}
	if err := m.w.compute(newRow, false); err != nil {
		return nil, err
	}
	return newRow, m.w.checkNotNullAndChecks(newRow)
}

// move writes an updated row whose primary key changed: the row at newKey
// must be absent or expired (then it is overwritten, index entries too),
// the old key is deleted.
func (m *modifier) move(ctx context.Context, key []byte, oldLen int, row []types.Value, newKey []byte, newRow []types.Value) error {
	t := m.p.Scan.Table
	if err := m.tx.Lock(ctx, newKey); err != nil {
		return err
	}
	old, present, err := m.tx.Get(newKey)
	if err != nil {
		return err
	}
	if present {
		if err := m.overwriteExpired(newKey, old, newRow); err != nil {
			return err
		}
	}
	if err := m.w.indexes.update(row, newRow); err != nil {
		return err
	}
	if err := m.tx.DeleteRow(t.ID, key, oldLen); err != nil {
		return err
	}
	return m.tx.PutRow(t.ID, newKey, rowenc.EncodeValue(m.w.buf[:0], t, newRow), present, len(old))
}

// overwriteExpired refuses to move a row onto a live row's key (23505) and
// drops the index entries of an expired one it overwrites.
func (m *modifier) overwriteExpired(newKey, old []byte, newRow []types.Value) error {
	t := m.p.Scan.Table
	if live, err := m.w.live(newKey, old); err != nil {
		return err
	} else if live {
		return m.w.duplicateKey(newRow)
	}
	if len(t.Indexes) == 0 {
		return nil
	}
	dead, err := rowenc.DecodeRow(t, newKey, old)
	if err != nil {
		return err
	}
	return m.w.indexes.update(dead, nil)
}

// modifyHasSubquery reports whether the condition or a new value holds a
// subquery, which must read the data as it was before the statement.
func modifyHasSubquery(m *bind.Modify) bool {
	if m.Scan.Filter != nil && exec.HasSubquery(m.Scan.Filter) {
		return true
	}
	for _, v := range m.Values {
		if exec.HasSubquery(v) {
			return true
		}
	}
	return false
}
