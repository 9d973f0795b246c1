package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
)

// insertMode is the write semantics of design.md §3.3.
type insertMode int

const (
	modeInsert  insertMode = iota // fail on an existing key (23505)
	modeUpsert                    // update only the listed columns of an existing row
	modeReplace                   // overwrite the whole row
)

func (m insertMode) verb() string {
	return [...]string{"INSERT", "UPSERT", "REPLACE"}[m]
}

// insertPlan writes rows produced by a VALUES list or a query.
type insertPlan struct {
	table  *catalog.Table
	mode   insertMode
	target []int // table column of each source column
	source planner.Node
	// defaults[i] computes column i when it is not a target (nil: NULL).
	defaults []expr.Expr
	// computed[i] is the expression of computed column i (nil otherwise).
	computed []expr.Expr
}

func (a *analyser) planInsert(n *ast.InsertStmt) (statementPlan, error) {
	switch {
	case n.OnDuplicate != nil:
		return nil, sqlerr.NotSupported("INSERT ... ON DUPLICATE KEY UPDATE (use UPSERT)")
	case n.Setlist:
		return nil, sqlerr.NotSupported("INSERT ... SET")
	case n.IgnoreErr:
		return nil, sqlerr.NotSupported("INSERT IGNORE")
	case len(n.PartitionNames) > 0:
		return nil, sqlerr.NotSupported("INSERT into named partitions")
	}
	ts, ok := n.Table.TableRefs.Left.(*ast.TableSource)
	if !ok || n.Table.TableRefs.Right != nil {
		return nil, sqlerr.NotSupported("INSERT into this target")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, sqlerr.NotSupported("INSERT into this target")
	}
	t, err := a.lookupTable(tn)
	if err != nil {
		return nil, err
	}
	p := &insertPlan{table: t, mode: modeInsert}
	switch {
	case a.stmt.Upsert:
		p.mode = modeUpsert
	case n.IsReplace:
		p.mode = modeReplace
	}

	// Target columns: the listed ones, or every visible column in order.
	if len(n.Columns) > 0 {
		seen := map[int]bool{}
		for _, c := range n.Columns {
			i := t.ColumnIndex(c.Name.O)
			if i < 0 || t.Columns[i].Hidden {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", c.Name.O, t.Name)
			}
			if seen[i] {
				return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", c.Name.O)
			}
			if t.Columns[i].Computed != "" {
				return nil, computedWriteError(t.Columns[i].Name)
			}
			seen[i] = true
			p.target = append(p.target, i)
		}
	} else {
		for i, c := range t.Columns {
			if !c.Hidden && c.Computed == "" {
				p.target = append(p.target, i)
			}
		}
	}

	if n.Select != nil {
		switch src := n.Select.(type) {
		case *ast.SelectStmt:
			if src.Kind == ast.SelectStmtKindValues {
				return nil, sqlerr.NotSupported("VALUES statement as INSERT source")
			}
			node, err := a.buildSelect(src)
			if err != nil {
				return nil, err
			}
			if got := len(resultColumns(node.Columns())); got != len(p.target) {
				return nil, insertArityError(got, len(p.target))
			}
			p.source = node
		case *ast.SetOprStmt:
			node, err := a.buildSetOpr(src)
			if err != nil {
				return nil, err
			}
			if got := len(resultColumns(node.Columns())); got != len(p.target) {
				return nil, insertArityError(got, len(p.target))
			}
			p.source = node
		default:
			return nil, sqlerr.NotSupported("this INSERT source")
		}
	} else {
		rows := make([][]expr.Expr, len(n.Lists))
		for r, list := range n.Lists {
			if len(list) != len(p.target) {
				return nil, insertArityError(len(list), len(p.target))
			}
			rows[r] = make([]expr.Expr, len(list))
			for i, item := range list {
				col := t.Columns[p.target[i]]
				if _, ok := item.(*ast.DefaultExpr); ok {
					d, err := a.columnDefault(col)
					if err != nil {
						return nil, err
					}
					rows[r][i] = d
					continue
				}
				a.hintParam(item, col.Type)
				e, err := a.build(nil, item, nil)
				if err != nil {
					return nil, err
				}
				rows[r][i] = e
			}
		}
		cols := make([]planner.Column, len(p.target))
		for i, ti := range p.target {
			cols[i] = planner.Column{Name: t.Columns[ti].Name, Type: t.Columns[ti].Type}
		}
		p.source = &planner.Values{Rows: rows, Cols: cols}
	}

	var err2 error
	if p.computed, err2 = a.computedExprs(t); err2 != nil {
		return nil, err2
	}
	p.defaults = make([]expr.Expr, len(t.Columns))
	for i, c := range t.Columns {
		if c.Default != "" {
			d, err := a.columnDefault(c)
			if err != nil {
				return nil, err
			}
			p.defaults[i] = d
		}
	}
	return p, nil
}

func insertArityError(got, want int) error {
	if got > want {
		return sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	return sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
}

// columnDefault builds a column's DEFAULT expression (NULL when none).
func (a *analyser) columnDefault(c catalog.Column) (expr.Expr, error) {
	if c.Default == "" {
		return expr.NullOf(c.Type), nil
	}
	n, err := parseExpr(c.Default)
	if err != nil {
		return nil, err
	}
	return a.buildStored(nil, n)
}

func (p *insertPlan) columns() []ResultColumn { return nil }

func (p *insertPlan) execute(ctx context.Context, s *Session, params []types.Value) (Result, error) {
	count := 0
	err := s.writeTxn(ctx, func(t *txn.Txn) error {
		ec := &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: t.Reader(), Shards: s.e.shards,
			RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.e.opts.MaxQueryMemory}
		// The source is read completely before writing, so INSERT INTO t
		// SELECT ... FROM t never reads its own writes.
		it, err := exec.Build(ec, p.source)
		if err != nil {
			return err
		}
		rows, err := exec.Drain(ec, it)
		if err != nil {
			return err
		}
		w := &rowWriter{ctx: ctx, t: t, table: p.table, computed: p.computed, eval: ec.Eval,
			expiry: ttl.At(p.table, ec.Now())}
		w.indexes = newIndexMaintainer(ctx, t, p.table, w.expiry)
		for _, src := range rows {
			row := make([]types.Value, len(p.table.Columns))
			listed := make([]bool, len(p.table.Columns))
			for i, ti := range p.target {
				row[ti] = src[i]
				listed[ti] = true
			}
			for i, d := range p.defaults {
				if !listed[i] && d != nil {
					v, err := d.Eval(ec.Eval, nil)
					if err != nil {
						return err
					}
					row[i] = v
				}
			}
			if err := w.write(row, listed, p.mode); err != nil {
				return err
			}
			count++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: fmt.Sprintf("INSERT 0 %d", count)}, nil
}

// rowWriter validates and writes rows of one table inside a transaction.
type rowWriter struct {
	ctx      context.Context
	t        *txn.Txn
	table    *catalog.Table
	computed []expr.Expr // per column; nil when the table has none
	eval     *expr.Context
	// expiry is the table's TTL at the statement's time (nil: none): an
	// expired row that the TTL runner has not deleted yet counts as absent.
	expiry *ttl.Expiry
	// indexes maintains the table's secondary indexes.
	indexes *indexMaintainer
	buf     []byte
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

// computedWriteError refuses a value for a computed column: writers never
// supply one (YTsaurus), the server computes it.
func computedWriteError(col string) error {
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
		Message: fmt.Sprintf("cannot write a value into computed column %q", col),
		Detail:  "Computed columns are computed from the other columns on every write."}
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
		if row[i], err = types.Cast(v, w.table.Columns[i].Type); err != nil {
			return err
		}
	}
	return nil
}

// coerce casts every value to its column's type.
func (w *rowWriter) coerce(row []types.Value) error {
	for i, c := range w.table.Columns {
		v, err := types.Cast(row[i], c.Type)
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

// write inserts, upserts or replaces one row. listed marks the columns the
// statement supplied (UPSERT keeps the others of an existing row).
func (w *rowWriter) write(row []types.Value, listed []bool, mode insertMode) error {
	hidden := hiddenKeyColumn(w.table)
	for attempt := 0; ; attempt++ {
		if hidden >= 0 {
			// A table without PRIMARY KEY keys rows by a random 64-bit value,
			// which spreads inserts uniformly over the key space.
			row[hidden] = types.NewUint64(rand.Uint64())
		}
		if err := w.coerce(row); err != nil {
			return err
		}
		if err := w.compute(row, true); err != nil {
			return err
		}
		key := rowenc.EncodeKey(w.table, row)
		if err := w.t.Lock(w.ctx, key); err != nil {
			return err
		}
		// present: the key holds a row; exists: a live one. An expired row
		// is overwritten as if absent (the statistics still see a
		// replacement).
		old, present, err := w.t.Get(key)
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
			case mode == modeInsert:
				return w.duplicateKey(row)
			case mode == modeUpsert:
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
		if err := w.checkNotNull(row); err != nil {
			return err
		}
		if err := w.indexes.update(prev, row); err != nil {
			return err
		}
		w.buf = rowenc.EncodeValue(w.buf[:0], w.table, row)
		return w.t.PutRow(w.table.ID, key, w.buf, present, len(old))
	}
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

func hiddenKeyColumn(t *catalog.Table) int {
	if len(t.PrimaryKey) == 1 && t.Columns[t.PrimaryKey[0]].Hidden {
		return t.PrimaryKey[0]
	}
	return -1
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

// modifyPlan is UPDATE or DELETE: find the rows with a scan, then lock,
// re-read and re-check each one before changing it, so that a row changed
// by a concurrent transaction since the scan is judged as it is now.
type modifyPlan struct {
	scan     *planner.Scan
	assign   []int       // UPDATE: column indexes
	values   []expr.Expr // UPDATE: new values, evaluated on the old row
	computed []expr.Expr // UPDATE: computed columns, recomputed on the new row
	updates  bool
}

func (a *analyser) modifyTarget(refs *ast.TableRefsClause) (*planner.Scan, *scope, error) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return nil, nil, sqlerr.NotSupported("multi-table UPDATE and DELETE")
	}
	ts, ok := refs.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, nil, sqlerr.NotSupported("UPDATE or DELETE of this target")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, nil, sqlerr.NotSupported("UPDATE or DELETE of this target")
	}
	t, err := a.lookupTable(tn)
	if err != nil {
		return nil, nil, err
	}
	cols := make([]planner.Column, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = planner.Column{Name: c.Name, Type: c.Type, Table: t, Index: i}
	}
	return &planner.Scan{Table: t, Cols: cols}, tableScope(t, ts.AsName.O), nil
}

func (a *analyser) planWhere(scan *planner.Scan, sc *scope, where ast.ExprNode) error {
	if where == nil {
		return nil
	}
	cond, err := a.buildCondition(sc, where, "WHERE")
	if err != nil {
		return err
	}
	return a.setScanCondition(scan, cond)
}

// setScanCondition makes cond the scan's filter and compiles its key
// ranges, computed key columns included.
func (a *analyser) setScanCondition(scan *planner.Scan, cond expr.Expr) error {
	scan.Filter = cond
	computed, err := a.computedExprs(scan.Table)
	if err != nil {
		return err
	}
	var byIndex map[int]expr.Expr
	for i, e := range computed {
		if e != nil {
			if byIndex == nil {
				byIndex = map[int]expr.Expr{}
			}
			byIndex[i] = e
		}
	}
	scan.Ranges = planner.CompileRanges(scan.Table, cond, byIndex)
	scan.Index, scan.IndexEntries, scan.IndexRanges = nil, nil, nil
	if ic, ok := planner.ChooseIndex(scan.Table, cond, scan.Ranges); ok {
		scan.Index, scan.IndexEntries, scan.IndexRanges = ic.Index, ic.Entries, ic.Ranges
	}
	return nil
}

func (a *analyser) planUpdate(n *ast.UpdateStmt) (statementPlan, error) {
	if n.Order != nil || n.Limit != nil {
		return nil, sqlerr.NotSupported("UPDATE with ORDER BY or LIMIT")
	}
	scan, sc, err := a.modifyTarget(n.TableRefs)
	if err != nil {
		return nil, err
	}
	p := &modifyPlan{scan: scan, updates: true}
	t := scan.Table
	seen := map[int]bool{}
	for _, as := range n.List {
		i := t.ColumnIndex(as.Column.Name.O)
		if i < 0 || t.Columns[i].Hidden {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", as.Column.Name.O, t.Name)
		}
		if seen[i] {
			return nil, sqlerr.New(sqlerr.SyntaxError, "multiple assignments to same column %q", as.Column.Name.O)
		}
		if t.Columns[i].Computed != "" {
			return nil, computedWriteError(t.Columns[i].Name)
		}
		seen[i] = true
		var e expr.Expr
		if _, ok := as.Expr.(*ast.DefaultExpr); ok {
			if e, err = a.columnDefault(t.Columns[i]); err != nil {
				return nil, err
			}
		} else {
			a.hintParam(as.Expr, t.Columns[i].Type)
			if e, err = a.build(sc, as.Expr, nil); err != nil {
				return nil, err
			}
		}
		p.assign = append(p.assign, i)
		p.values = append(p.values, e)
	}
	if err := a.planWhere(scan, sc, n.Where); err != nil {
		return nil, err
	}
	if p.computed, err = a.computedExprs(t); err != nil {
		return nil, err
	}
	return p, nil
}

func (a *analyser) planDelete(n *ast.DeleteStmt) (statementPlan, error) {
	if n.IsMultiTable || n.Order != nil || n.Limit != nil {
		return nil, sqlerr.NotSupported("DELETE with several tables, ORDER BY or LIMIT")
	}
	scan, sc, err := a.modifyTarget(n.TableRefs)
	if err != nil {
		return nil, err
	}
	if err := a.planWhere(scan, sc, n.Where); err != nil {
		return nil, err
	}
	return &modifyPlan{scan: scan}, nil
}

func (p *modifyPlan) columns() []ResultColumn { return nil }

func (p *modifyPlan) hasSubquery() bool {
	if p.scan.Filter != nil && exec.HasSubquery(p.scan.Filter) {
		return true
	}
	for _, v := range p.values {
		if exec.HasSubquery(v) {
			return true
		}
	}
	return false
}

func (p *modifyPlan) execute(ctx context.Context, s *Session, params []types.Value) (Result, error) {
	count := 0
	t := p.scan.Table
	err := s.writeTxn(ctx, func(tx *txn.Txn) error {
		ec := &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: tx.Reader(), Shards: s.e.shards,
			RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.e.opts.MaxQueryMemory}
		if p.hasSubquery() {
			// Subqueries read the transaction as it was when the statement
			// started, never the rows this statement has already changed.
			view, err := s.e.storage.NewBatchCopy(tx.Batch())
			if err != nil {
				return err
			}
			defer view.Close()
			ec.SubReader = view
		}
		it, err := exec.Build(ec, p.scan)
		if err != nil {
			return err
		}
		// Collect the keys first: writing while scanning would let an
		// UPDATE that moves a row forward in key order meet it again.
		var keys [][]byte
		for {
			row, err := it.Next()
			if err != nil {
				it.Close()
				return err
			}
			if row == nil {
				break
			}
			keys = append(keys, rowenc.EncodeKey(t, row))
		}
		it.Close()
		w := &rowWriter{ctx: ctx, t: tx, table: t, computed: p.computed, eval: ec.Eval,
			expiry: ttl.At(t, ec.Now())}
		w.indexes = newIndexMaintainer(ctx, tx, t, w.expiry)
		for _, key := range keys {
			if err := tx.Lock(ctx, key); err != nil {
				return err
			}
			val, ok, err := tx.Get(key)
			if err != nil {
				return err
			}
			if !ok {
				continue // deleted meanwhile
			}
			row, err := rowenc.DecodeRow(t, key, val)
			if err != nil {
				return err
			}
			if w.expiry != nil && w.expiry.Expired(row) {
				continue // expired: as good as deleted
			}
			if p.scan.Filter != nil {
				v, err := p.scan.Filter.Eval(ec.Eval, row)
				if err != nil {
					return err
				}
				if v.IsNull() || !v.Bool() {
					continue // changed meanwhile and no longer matches
				}
			}
			if !p.updates {
				if err := w.indexes.update(row, nil); err != nil {
					return err
				}
				if err := tx.DeleteRow(t.ID, key, len(val)); err != nil {
					return err
				}
				count++
				continue
			}
			newRow := append([]types.Value(nil), row...)
			for i, col := range p.assign {
				v, err := p.values[i].Eval(ec.Eval, row)
				if err != nil {
					return err
				}
				newRow[col] = v
			}
			if err := w.coerce(newRow); err != nil {
				return err
			}
			if err := w.compute(newRow, true); err != nil {
				return err
			}
			if err := w.compute(newRow, false); err != nil {
				return err
			}
			if err := w.checkNotNull(newRow); err != nil {
				return err
			}
			newKey := rowenc.EncodeKey(t, newRow)
			if string(newKey) != string(key) {
				// The primary key changed: the row moves.
				if err := tx.Lock(ctx, newKey); err != nil {
					return err
				}
				old, present, err := tx.Get(newKey)
				if err != nil {
					return err
				}
				if present {
					if live, err := w.live(newKey, old); err != nil {
						return err
					} else if live {
						return w.duplicateKey(newRow)
					}
					// An expired row is overwritten: its entries go too.
					if len(t.Indexes) > 0 {
						dead, err := rowenc.DecodeRow(t, newKey, old)
						if err != nil {
							return err
						}
						if err := w.indexes.update(dead, nil); err != nil {
							return err
						}
					}
				}
				if err := w.indexes.update(row, newRow); err != nil {
					return err
				}
				if err := tx.DeleteRow(t.ID, key, len(val)); err != nil {
					return err
				}
				if err := tx.PutRow(t.ID, newKey, rowenc.EncodeValue(w.buf[:0], t, newRow), present, len(old)); err != nil {
					return err
				}
				count++
				continue
			}
			if err := w.indexes.update(row, newRow); err != nil {
				return err
			}
			w.buf = rowenc.EncodeValue(w.buf[:0], t, newRow)
			if err := tx.PutRow(t.ID, newKey, w.buf, true, len(val)); err != nil {
				return err
			}
			count++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	verb := "DELETE"
	if p.updates {
		verb = "UPDATE"
	}
	return &tagResult{tag: fmt.Sprintf("%s %d", verb, count)}, nil
}

// iterate starts a query plan on the session's current view.
func (s *Session) iterate(ctx context.Context, node planner.Node, params []types.Value) (exec.Iter, error) {
	ec := &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: s.reader(),
		Shards: s.e.shards, Concurrent: s.txn == nil, RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.e.opts.MaxQueryMemory}
	return exec.Build(ec, node)
}
