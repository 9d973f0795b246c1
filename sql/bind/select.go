package bind

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// buildSelect plans a SELECT:
//
//	Scan/Values → (WHERE in the scan) → Aggregate → Filter (HAVING)
//	  → Project (visible columns, then hidden ORDER BY columns)
//	  → Distinct → Sort → Limit
//
// Hidden columns come last so that callers return row[:visible].
func (a *binder) buildSelect(sel *ast.SelectStmt) (planner.Node, error) {
	untyped := a.setOpArm
	a.setOpArm = false
	if err := selectForm(sel); err != nil {
		return nil, err
	}
	if sel.With != nil {
		pop, err := a.pushWith(sel.With)
		defer pop()
		if err != nil {
			return nil, err
		}
	}
	if sel.Kind == ast.SelectStmtKindValues {
		return a.buildValues(sel)
	}
	var on []ast.ExprNode
	sel, on = distinctOn(sel)
	q := &selectQuery{a: a, sel: sel, on: on}
	if err := q.from(); err != nil {
		return nil, err
	}
	if err := q.aggregation(); err != nil {
		return nil, err
	}
	if err := q.windows(); err != nil {
		return nil, err
	}
	if err := q.setReturning(); err != nil {
		return nil, err
	}
	if err := q.selectList(untyped); err != nil {
		return nil, err
	}
	if err := q.having(); err != nil {
		return nil, err
	}
	if err := q.orderBy(); err != nil {
		return nil, err
	}
	if err := q.distinctOn(); err != nil {
		return nil, err
	}
	return q.finish()
}

// selectForm refuses the forms of SELECT PivotDB does not have.
func selectForm(sel *ast.SelectStmt) error {
	switch {
	case sel.LockInfo != nil && sel.LockInfo.LockType != ast.SelectLockNone:
		return sqlerr.NotSupported("SELECT ... FOR UPDATE")
	case sel.Kind != ast.SelectStmtKindSelect && sel.Kind != ast.SelectStmtKindValues:
		return sqlerr.NotSupported("TABLE statements")
	}
	return nil
}

// selectQuery is one SELECT being bound, clause by clause, in the order
// the clauses' names become visible: FROM and WHERE, grouping, the select
// list, HAVING, ORDER BY, then DISTINCT and LIMIT around the projection.
type selectQuery struct {
	a   *binder
	sel *ast.SelectStmt

	input planner.Node
	sc    *scope // the columns of FROM
	// outScope resolves names after grouping (sc when not aggregating);
	// replace substitutes aggregates and grouped expressions.
	outScope    expr.Scope
	replace     replaceFn
	aggregating bool
	// win binds window function calls (nil: the query has none).
	win *windowing
	// srf is the select list's set-returning calls of a query with
	// aggregates or window functions (nil otherwise; projectset.go).
	srf *srfPlacement

	exprs   []expr.Expr // the projection: select list, then hidden ORDER BY columns
	cols    []planner.Column
	visible int // the select list's length
	keys    []planner.SortKey
	keyText []string // each ORDER BY item as text (DISTINCT ON's check)
	// on are the DISTINCT ON expressions, onIdx their columns.
	on    []ast.ExprNode
	onIdx []int
}

// from binds FROM and WHERE (a SELECT without FROM reads one empty row).
func (q *selectQuery) from() error {
	if q.sel.From != nil {
		var err error
		q.input, q.sc, err = q.a.buildFromWhere(q.sel.From.TableRefs, q.sel.Where)
		return err
	}
	q.input = &planner.Values{Rows: [][]expr.Expr{{}}}
	q.sc = &scope{}
	if q.sel.Where != nil {
		cond, err := q.a.buildCondition(q.sc, q.sel.Where, "WHERE")
		if err != nil {
			return err
		}
		q.input = &planner.Filter{Input: q.input, Cond: cond}
	}
	return nil
}

// aggregation sets up GROUP BY and aggregates, when the query has any.
func (q *selectQuery) aggregation() error {
	q.outScope = q.sc
	q.aggregating = q.sel.GroupBy != nil || q.sel.Having != nil || hasAggregate(q.sel.Fields.Fields, q.sel.OrderBy)
	if !q.aggregating {
		return nil
	}
	agg, err := q.a.newAggregation(q.sc, q.sel)
	if err != nil {
		return err
	}
	q.replace = agg.replace
	q.outScope = agg
	// Aggregates found later (select list, HAVING, ORDER BY) are added to
	// the node as they are built.
	q.input = agg.node(q.input)
	return nil
}

// windows sets up window function calls, when the query has any: they
// are bound over the grouped row, in the select list and ORDER BY.
func (q *selectQuery) windows() error {
	if !hasWindow(q.sel) {
		return nil
	}
	w, err := newWindowing(q)
	if err != nil {
		return err
	}
	q.win = w
	q.replace = w.replace(q.replace)
	return nil
}

// hasWindow reports whether the select list or ORDER BY calls a window
// function, or the query names windows.
func hasWindow(sel *ast.SelectStmt) bool {
	if sel.WindowSpecs != nil {
		return true
	}
	v := &windowFinder{}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if sel.OrderBy != nil {
		for _, item := range sel.OrderBy.Items {
			item.Expr.Accept(v)
		}
	}
	return v.found
}

// selectList binds the select list; untyped leaves literals untyped (the
// arm of a set operation).
func (q *selectQuery) selectList(untyped bool) error {
	for _, f := range q.sel.Fields.Fields {
		if f.WildCard != nil {
			if err := q.wildcard(f.WildCard); err != nil {
				return err
			}
			continue
		}
		e, err := q.a.buildMode(q.outScope, f.Expr, q.replace, untyped)
		if err != nil {
			return err
		}
		col := planner.Column{Name: outputName(f), Type: e.Type()}
		if ref, ok := e.(*expr.ColumnRef); ok && !q.aggregating && !q.win.isRef(ref) && !q.srf.isRef(ref) && ref.Index < len(q.sc.cols) {
			// (A select-list unnest reads a column past the scope's.)
			col = q.a.sourceColumn(q.input, ref.Index, q.sc.cols[ref.Index])
			col.Name = outputName(f)
		}
		q.exprs = append(q.exprs, e)
		q.cols = append(q.cols, col)
	}
	q.visible = len(q.exprs)
	return nil
}

// wildcard expands * or t.* to the visible columns of FROM.
func (q *selectQuery) wildcard(w *ast.WildCardField) error {
	n := 0
	for i, c := range q.sc.cols {
		if c.hidden || c.qualifiedOnly || (w.Table.O != "" && !strings.EqualFold(c.table, w.Table.O)) {
			continue
		}
		n++
		if q.aggregating {
			// Each column must be grouped or depend on the grouped
			// columns (a table grouped by its primary key).
			ref := &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(c.table), Name: ast.NewCIStr(c.name)}}
			e, err := q.a.build(q.outScope, ref, q.replace)
			if err != nil {
				return err
			}
			q.exprs = append(q.exprs, e)
			q.cols = append(q.cols, planner.Column{Name: c.name, Type: e.Type()})
			continue
		}
		q.exprs = append(q.exprs, &expr.ColumnRef{Index: i, Name: c.name, Typ: c.typ})
		q.cols = append(q.cols, q.a.sourceColumn(q.input, i, c))
	}
	if n == 0 && w.Table.O != "" {
		return sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", w.Table.O)
	}
	return nil
}

// having filters the groups.
func (q *selectQuery) having() error {
	if q.sel.Having == nil {
		return nil
	}
	replace := q.replace
	if q.win != nil {
		replace = q.win.inner // no window functions in HAVING
	}
	cond, err := q.a.buildConditionWith(q.outScope, q.sel.Having.Expr, "HAVING", replace)
	if err != nil {
		return err
	}
	q.input = &planner.Filter{Input: q.input, Cond: cond}
	return nil
}

// orderBy binds ORDER BY: ordinals and output names refer to the select
// list; other expressions become hidden columns of the projection.
func (q *selectQuery) orderBy() error {
	if q.sel.OrderBy == nil {
		return nil
	}
	items, err := q.a.orderItems(q.sel.OrderBy.Items)
	if err != nil {
		return err
	}
	for _, item := range items {
		idx, err := q.a.orderByTarget(item.Expr, q.sel.Fields.Fields, q.visible)
		if err != nil {
			return err
		}
		if idx < 0 {
			e, err := q.a.build(q.outScope, item.Expr, q.replace)
			if err != nil {
				return err
			}
			if q.sel.Distinct && q.on == nil {
				return sqlerr.New(sqlerr.InvalidColumnReference, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
			}
			idx = len(q.exprs)
			q.exprs = append(q.exprs, e)
			q.cols = append(q.cols, planner.Column{Name: "?order?", Type: e.Type(), Hidden: true})
		}
		q.keys = append(q.keys, planner.SortKey{Index: idx, Desc: item.Desc, NullsFirst: item.nullsFirst})
		q.keyText = append(q.keyText, strings.ToLower(restore(item.Expr)))
	}
	return nil
}

// finish stacks the projection, DISTINCT, the sort and LIMIT/OFFSET.
func (q *selectQuery) finish() (planner.Node, error) {
	var node planner.Node = &planner.Project{Input: q.srf.place(q.win.place(q.input)), Exprs: q.exprs, Cols: q.cols}
	if q.on != nil {
		// DISTINCT ON keeps the first row of each group in ORDER BY's
		// order: sort, then drop the later rows.
		if len(q.keys) > 0 {
			node = &planner.Sort{Input: node, Keys: q.keys}
		}
		node = &planner.Distinct{Input: node, N: q.visible, On: q.onIdx}
	} else if q.sel.Distinct {
		node = &planner.Distinct{Input: node, N: q.visible}
	}
	if len(q.keys) > 0 && q.on == nil {
		node = &planner.Sort{Input: node, Keys: q.keys}
	}
	if q.sel.Limit == nil {
		return node, nil
	}
	lim := &planner.Limit{Input: node}
	var err error
	if q.sel.Limit.Count != nil {
		if lim.Count, err = q.a.buildLimit(q.sel.Limit.Count); err != nil {
			return nil, err
		}
	}
	if q.sel.Limit.Offset != nil {
		if lim.Offset, err = q.a.buildLimit(q.sel.Limit.Offset); err != nil {
			return nil, err
		}
	}
	return lim, nil
}

// sourceColumn describes output column i of the input for RowDescription.
func (a *binder) sourceColumn(input planner.Node, i int, c scopeColumn) planner.Column {
	col := planner.Column{Name: c.name, Type: c.typ}
	if scan, ok := input.(*planner.Scan); ok {
		col.Table = scan.Table
		col.Index = i
	}
	return col
}

func (a *binder) buildLimit(n ast.ExprNode) (expr.Expr, error) {
	if v, ok := n.(*test_driver.ValueExpr); ok {
		if u, ok := v.GetValue().(uint64); ok {
			// A count beyond bigint (the rewriter's LIMIT 2^64-1 for an
			// OFFSET without LIMIT) stays a Uint64: the postgresql
			// dialect's numeric literals are for expressions.
			return expr.NewConst(types.NewUint64(u)), nil
		}
	}
	a.hintParam(n, types.TypeInt64)
	e, err := a.build(nil, n, nil)
	if err != nil {
		return nil, err
	}
	if f := e.Type().Family; !f.IsInteger() && f != types.Null {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of LIMIT must be type bigint, not type %s", e.Type().PGName())
	}
	return e, nil
}

func (a *binder) buildCondition(sc expr.Scope, n ast.ExprNode, clause string) (expr.Expr, error) {
	return a.buildConditionWith(sc, n, clause, nil)
}

func (a *binder) buildConditionWith(sc expr.Scope, n ast.ExprNode, clause string, replace func(ast.ExprNode) (expr.Expr, bool, error)) (expr.Expr, error) {
	a.hintParam(n, types.TypeBool)
	e, err := a.build(sc, n, replace)
	if err != nil {
		return nil, err
	}
	switch e.Type().Family {
	case types.Bool, types.Null:
		return e, nil
	case types.Unknown:
		return expr.NewCast(e, types.TypeBool)
	}
	return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", clause, e.Type().PGName())
}

// tableSource plans a table named in FROM: a system view or a table.
func (a *binder) tableSource(tn *ast.TableName, alias string) (planner.Node, *scope, error) {
	if node, sc, ok, err := a.cteSource(tn, alias); ok || err != nil {
		return node, sc, err
	}
	if node, sc, ok, err := a.systemTable(tn, alias); ok || err != nil {
		return node, sc, err
	}
	if node, sc, ok, err := a.viewSource(tn, alias); ok || err != nil {
		return node, sc, err
	}
	t, err := a.lookupTable(tn)
	if err != nil {
		return nil, nil, err
	}
	if err := a.requireTable(t, acl.Select); err != nil {
		return nil, nil, err
	}
	sc := tableScope(t, alias)
	cols := make([]planner.Column, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = planner.Column{Name: c.Name, Type: c.Type, Table: t, Index: i, Hidden: c.Hidden}
	}
	return &planner.Scan{Table: t, Cols: cols}, sc, nil
}

// outputName is the column name PostgreSQL gives a select-list item.
func outputName(f *ast.SelectField) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	return exprName(f.Expr)
}

func exprName(n ast.ExprNode) string {
	name, _ := exprNameStrength(n)
	return name
}

// exprNameStrength is PostgreSQL's FigureColnameInternal: the name of an
// expression and how strongly it holds — 2 for the name of a column,
// function or subquery column, 1 for a fallback such as "case" or a
// cast's type, 0 for "?column?". A cast is named after what it casts when
// that has a name of strength 2, else after its type.
func exprNameStrength(n ast.ExprNode) (string, int) {
	switch n := n.(type) {
	case *ast.ColumnNameExpr:
		return n.Name.Name.O, 2
	case *ast.AggregateFuncExpr:
		return strings.ToLower(n.F), 2
	case *ast.WindowFuncExpr:
		return strings.ToLower(n.Name), 2
	case *ast.FuncCallExpr:
		name := n.FnName.L
		if name == expr.ArraySubqueryFunc {
			return "array", 2
		}
		if plain, ok := parser.SequenceFuncs[name]; ok {
			return plain, 2
		}
		switch name {
		case parser.DivFunc:
			return "div", 2
		case parser.ModFunc:
			return "mod", 2
		}
		if (name == parser.ArrayElemFunc || name == parser.ArraySliceFunc) && len(n.Args) >= 2 {
			// a[i] is named after a, as in PostgreSQL.
			return exprNameStrength(n.Args[0])
		}
		if name == parser.ArrayCtorFunc {
			return "array", 2
		}
		if name == parser.ExtractFunc {
			return "extract", 2
		}
		if (name == "pivot_cast" || name == parser.RegCastFunc || name == parser.RegNameFunc) && len(n.Args) == 2 {
			if inner, strength := exprNameStrength(n.Args[0]); strength > 1 {
				return inner, strength
			}
			if v, ok := n.Args[1].(*test_driver.ValueExpr); ok {
				if name == "pivot_cast" {
					if t, err := types.ParseTypeName(v.GetString()); err == nil {
						return castTypeName(t), 1
					}
				}
				name, _, _ := strings.Cut(strings.TrimSuffix(v.GetString(), "[]"), "(")
				return strings.ToLower(strings.TrimSpace(name)), 1
			}
			return exprNameStrength(n.Args[0])
		}
		return name, 2
	case *ast.ParenthesesExpr:
		return exprNameStrength(n.Expr)
	case *ast.CaseExpr:
		return "case", 1
	case *ast.ExistsSubqueryExpr:
		return "exists", 2
	case *ast.SubqueryExpr:
		// PostgreSQL names a scalar subquery after its one column.
		if sel, ok := n.Query.(*ast.SelectStmt); ok && len(sel.Fields.Fields) == 1 && sel.Fields.Fields[0].WildCard == nil {
			if name := outputName(sel.Fields.Fields[0]); name != "?column?" {
				return name, 2
			}
		}
	}
	return "?column?", 0
}

// castTypeName is the name PostgreSQL gives a column that casts a value
// without a name of its own to t: the type's pg_type name (typname), as
// its grammar spells the type (x::integer is int4, x::text text). An
// array cast is named after its element type. (PostgreSQL keeps varchar
// and name as written; PivotDB reads both as text.)
func castTypeName(t types.Type) string {
	switch t.Family {
	case types.Array:
		return castTypeName(t.ElemType())
	case types.Enum:
		if t.Enum != nil {
			return t.Enum.Name
		}
	case types.Bool:
		return "bool"
	case types.Uint8, types.Uint16, types.Uint32, types.Uint64:
		// YQL's unsigned types have no PostgreSQL name of their own: a
		// cast to one is named after the type as YQL spells it.
		return strings.ToLower(t.Family.String())
	case types.Int8, types.Int16:
		return "int2"
	case types.Int32:
		return "int4"
	case types.Int64:
		return "int8"
	case types.Decimal:
		return "numeric"
	case types.Float:
		return "float4"
	case types.Double:
		return "float8"
	case types.String:
		return "bytea"
	case types.Utf8:
		switch {
		case t.Blank:
			return "bpchar"
		case t.Width > 0:
			return "varchar"
		}
		return "text"
	case types.Datetime, types.Timestamp:
		return "timestamp"
	case types.TimestampTZ:
		return "timestamptz"
	case types.Interval:
		return "interval"
	case types.Time:
		return "time"
	case types.TimeTZ:
		return "timetz"
	}
	return strings.ToLower(t.Family.String())
}

// orderByTarget resolves an ORDER BY item that names a select-list entry
// (an ordinal or an output column name); -1 means "an expression".
func (a *binder) orderByTarget(n ast.ExprNode, fields []*ast.SelectField, visible int) (int, error) {
	switch n := n.(type) {
	case *ast.PositionExpr:
		if n.P != nil {
			return -1, nil
		}
		if n.N < 1 || n.N > visible {
			return 0, sqlerr.New(sqlerr.InvalidColumnReference, "ORDER BY position %d is not in select list", n.N)
		}
		return n.N - 1, nil
	case *ast.ColumnNameExpr:
		if n.Name.Table.O != "" {
			return -1, nil
		}
		pos := 0
		for _, f := range fields {
			if f.WildCard != nil {
				// Names under a wildcard resolve as input columns instead.
				return -1, nil
			}
			if f.AsName.O != "" && strings.EqualFold(f.AsName.O, n.Name.Name.O) {
				return pos, nil
			}
			pos++
		}
	}
	return -1, nil
}

// hasAggregate reports whether any select-list or ORDER BY expression calls
// an aggregate function (outside subqueries).
func hasAggregate(fields []*ast.SelectField, orderBy *ast.OrderByClause) bool {
	v := &aggFinder{}
	for _, f := range fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if orderBy != nil {
		for _, item := range orderBy.Items {
			item.Expr.Accept(v)
		}
	}
	return v.found
}

type aggFinder struct{ found bool }

func (v *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AggregateFuncExpr:
		v.found = true
		return n, true
	case *ast.FuncCallExpr:
		// Aggregates TiDB does not know (string_agg, bool_and, ...).
		if expr.IsAggregate(n.(*ast.FuncCallExpr).FnName.L) {
			v.found = true
			return n, true
		}
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, v.found
}

func (v *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// aggregation builds an Aggregate node: its rows are the GROUP BY values
// followed by one value per aggregate call. It is also the scope of the
// expressions above it, in which a bare column that is not grouped is an
// error.
type aggregation struct {
	a        *binder
	input    *scope
	groupAST []ast.ExprNode
	groupKey []string
	groups   []expr.Expr
	aggs     []*expr.AggSpec
	aggKeys  []string
	agg      *planner.Aggregate
	// sets are the grouping sets (indexes into groups); nil for a plain
	// GROUP BY (grouping_sets.go).
	sets [][]int
}

func (a *binder) newAggregation(sc *scope, sel *ast.SelectStmt) (*aggregation, error) {
	g := &aggregation{a: a, input: sc}
	if sel.GroupBy != nil {
		if sets, ok := groupingSets(sel.GroupBy); ok {
			return g, g.bindSets(sets, sel)
		}
		for _, item := range sel.GroupBy.Items {
			if _, err := g.addGroup(item.Expr, sel); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// addGroup binds one GROUP BY expression (once: an expression grouped
// twice is one column) and returns its index in groups.
func (g *aggregation) addGroup(n ast.ExprNode, sel *ast.SelectStmt) (int, error) {
	a, sc := g.a, g.input
	// GROUP BY 2 and GROUP BY alias refer to the select list.
	if p, ok := n.(*ast.PositionExpr); ok && p.P == nil {
		if p.N < 1 || p.N > len(sel.Fields.Fields) || sel.Fields.Fields[p.N-1].WildCard != nil {
			return 0, sqlerr.New(sqlerr.InvalidColumnReference, "GROUP BY position %d is not in select list", p.N)
		}
		n = sel.Fields.Fields[p.N-1].Expr
	} else if c, ok := n.(*ast.ColumnNameExpr); ok && c.Name.Table.O == "" {
		if _, _, err := sc.ResolveColumn("", c.Name.Name.O); err != nil {
			for _, f := range sel.Fields.Fields {
				if f.AsName.O != "" && strings.EqualFold(f.AsName.O, c.Name.Name.O) {
					n = f.Expr
					break
				}
			}
		}
	}
	k := g.key(n)
	for i, gk := range g.groupKey {
		if gk == k {
			return i, nil
		}
	}
	e, err := a.build(sc, n, nil)
	if err != nil {
		return 0, err
	}
	g.groupAST = append(g.groupAST, n)
	g.groupKey = append(g.groupKey, k)
	g.groups = append(g.groups, e)
	return len(g.groups) - 1, nil
}

// key identifies an expression for matching select-list expressions with
// GROUP BY ones: a column by its resolved position, anything else by text.
func (g *aggregation) key(n ast.ExprNode) string {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		if i, _, err := g.input.ResolveColumn(c.Name.Table.O, c.Name.Name.O); err == nil {
			return "#" + strconv.Itoa(i)
		}
	}
	return strings.ToLower(restore(n))
}

func (g *aggregation) replace(n ast.ExprNode) (expr.Expr, bool, error) {
	k := g.key(n)
	for i, gk := range g.groupKey {
		if gk == k {
			return &expr.ColumnRef{Index: i, Name: exprName(n), Typ: g.groups[i].Type()}, true, nil
		}
	}
	switch n := n.(type) {
	case *ast.AggregateFuncExpr:
		for i, ak := range g.aggKeys {
			if ak == k {
				return &expr.ColumnRef{Index: len(g.groups) + i, Name: strings.ToLower(n.F), Typ: g.aggs[i].Typ}, true, nil
			}
		}
		var arg expr.Expr
		var mods aggMods
		star := false
		if len(n.Args) > 1 {
			return nil, false, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", strings.ToLower(n.F), len(n.Args))
		}
		var argNode ast.ExprNode
		if len(n.Args) == 1 {
			v := &aggFinder{}
			n.Args[0].Accept(v)
			if v.found {
				return nil, false, sqlerr.New(sqlerr.GroupingError, "aggregate function calls cannot be nested")
			}
			var err error
			if argNode, mods, err = takeAggMods(n.Args[0]); err != nil {
				return nil, false, err
			}
			if arg, err = g.a.build(g.input, argNode, nil); err != nil {
				return nil, false, err
			}
		} else {
			star = true
		}
		spec, err := expr.NewAggSpec(strings.ToLower(n.F), n.Distinct, star, arg)
		if err != nil {
			return nil, false, err
		}
		if err := g.applyMods(spec, mods, []ast.ExprNode{argNode}); err != nil {
			return nil, false, err
		}
		g.aggs = append(g.aggs, spec)
		g.aggKeys = append(g.aggKeys, k)
		if g.agg != nil {
			g.agg.Aggs = g.aggs
			g.agg.Cols = append(g.agg.Cols, planner.Column{Name: strings.ToLower(n.F), Type: spec.Typ})
		}
		return &expr.ColumnRef{Index: len(g.groups) + len(g.aggs) - 1, Name: strings.ToLower(n.F), Typ: spec.Typ}, true, nil
	case *ast.FuncCallExpr:
		if n.FnName.L == "grouping" {
			return g.grouping(n, k)
		}
		if !expr.IsAggregate(n.FnName.L) {
			break
		}
		// string_agg(x, sep), bool_and(x), ...: built by expr.BuildAgg.
		for i, ak := range g.aggKeys {
			if ak == k {
				return &expr.ColumnRef{Index: len(g.groups) + i, Name: n.FnName.L, Typ: g.aggs[i].Typ}, true, nil
			}
		}
		for _, arg := range n.Args {
			v := &aggFinder{}
			arg.Accept(v)
			if v.found {
				return nil, false, sqlerr.New(sqlerr.GroupingError, "aggregate function calls cannot be nested")
			}
		}
		// The ORDER BY and FILTER markers come off the first argument
		// (after the DISTINCT marker).
		call := *n
		call.Args = append([]ast.ExprNode(nil), n.Args...)
		first := 0
		if len(call.Args) > 1 {
			if m, ok := call.Args[0].(*ast.FuncCallExpr); ok && m.FnName.L == parser.AggDistinctFunc {
				first = 1
			}
		}
		var mods aggMods
		if first < len(call.Args) {
			var err error
			if call.Args[first], mods, err = takeAggMods(call.Args[first]); err != nil {
				return nil, false, err
			}
		}
		b := g.a.builder(g.input, nil)
		spec, err := b.BuildAgg(&call)
		g.a.params = b.ParamTypes
		if err != nil {
			return nil, false, err
		}
		if err := g.applyMods(spec, mods, call.Args[first:]); err != nil {
			return nil, false, err
		}
		g.aggs = append(g.aggs, spec)
		g.aggKeys = append(g.aggKeys, k)
		if g.agg != nil {
			g.agg.Aggs = g.aggs
			g.agg.Cols = append(g.agg.Cols, planner.Column{Name: n.FnName.L, Type: spec.Typ})
		}
		return &expr.ColumnRef{Index: len(g.groups) + len(g.aggs) - 1, Name: n.FnName.L, Typ: spec.Typ}, true, nil
	case *ast.ColumnNameExpr:
		i, _, err := g.input.ResolveColumn(n.Name.Table.O, n.Name.Name.O)
		if err != nil {
			return nil, false, err
		}
		if g.dependsOnGroups(i) {
			return g.dependentColumn(i, k)
		}
		name := n.Name.Name.O
		if n.Name.Table.O != "" {
			name = n.Name.Table.O + "." + name
		}
		return nil, false, sqlerr.New(sqlerr.GroupingError,
			"column %q must appear in the GROUP BY clause or be used in an aggregate function", name)
	}
	return nil, false, nil
}

// ResolveColumn is reached only for columns replace did not handle, which
// replace already rejected; it exists so aggregation is a Scope.
func (g *aggregation) ResolveColumn(table, name string) (int, types.Type, error) {
	return 0, types.Type{}, sqlerr.New(sqlerr.GroupingError,
		"column %q must appear in the GROUP BY clause or be used in an aggregate function", name)
}

// node creates the Aggregate plan node over input. Aggregates found later
// (in the select list, HAVING, ORDER BY) are appended to it as they are
// built.
func (g *aggregation) node(input planner.Node) planner.Node {
	g.agg = &planner.Aggregate{Input: input, GroupBy: g.groups, Aggs: g.aggs, Sets: g.sets}
	for i, e := range g.groups {
		g.agg.Cols = append(g.agg.Cols, planner.Column{Name: exprName(g.groupAST[i]), Type: e.Type()})
	}
	return g.agg
}

// distinctOn takes the DISTINCT ON expressions off a SELECT: the dialect
// front spells DISTINCT ON (a, b) as a first select-list item
// pivot_distinct_on(a, b). The statement's tree is left as it is (it is
// bound again when the catalog changes); the SELECT returned is a copy.
func distinctOn(sel *ast.SelectStmt) (*ast.SelectStmt, []ast.ExprNode) {
	if !sel.Distinct || sel.Fields == nil || len(sel.Fields.Fields) < 2 {
		return sel, nil
	}
	call, ok := sel.Fields.Fields[0].Expr.(*ast.FuncCallExpr)
	if !ok || call.FnName.L != parser.DistinctOnFunc {
		return sel, nil
	}
	cp := *sel
	cp.Fields = &ast.FieldList{Fields: sel.Fields.Fields[1:]}
	return &cp, call.Args
}

// distinctOn binds the DISTINCT ON expressions (output names and
// positions as in ORDER BY, other expressions as hidden columns) and
// checks PostgreSQL's rule that ORDER BY starts with them.
func (q *selectQuery) distinctOn() error {
	if q.on == nil {
		return nil
	}
	var onText []string
	for _, n := range q.on {
		if v, ok := n.(*test_driver.ValueExpr); ok {
			// DISTINCT ON (1): the function-call spelling made the
			// position a literal.
			switch v.Kind() {
			case test_driver.KindInt64, test_driver.KindUint64:
				n = &ast.PositionExpr{N: int(v.GetInt64())}
			}
		}
		idx, err := q.a.orderByTarget(n, q.sel.Fields.Fields, q.visible)
		if err != nil {
			return err
		}
		if idx < 0 {
			e, err := q.a.build(q.outScope, n, q.replace)
			if err != nil {
				return err
			}
			idx = len(q.exprs)
			q.exprs = append(q.exprs, e)
			q.cols = append(q.cols, planner.Column{Name: "?distinct?", Type: e.Type(), Hidden: true})
		}
		q.onIdx = append(q.onIdx, idx)
		onText = append(onText, strings.ToLower(restore(n)))
	}
	for k := 0; k < len(q.keys) && k < len(q.on); k++ {
		match := false
		for j := range q.on {
			if q.keys[k].Index == q.onIdx[j] || q.keyText[k] == onText[j] {
				match = true
				break
			}
		}
		if !match {
			return sqlerr.New(sqlerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		}
	}
	return nil
}

// dependsOnGroups reports whether FROM column i is functionally dependent
// on the GROUP BY columns (PostgreSQL's rule): its table's primary key
// columns, of the same FROM item, are all grouped as plain columns. Each
// group then holds one row of that table, so any of its columns has one
// value per group.
func (g *aggregation) dependsOnGroups(i int) bool {
	if g.agg == nil {
		return false
	}
	in := g.agg.Input.Columns()
	if i >= len(in) || in[i].Table == nil || len(in[i].Table.PrimaryKey) == 0 {
		return false
	}
	t, item := in[i].Table, g.input.cols[i].table
	for _, pk := range t.PrimaryKey {
		grouped := false
		for _, e := range g.groups {
			ref, ok := e.(*expr.ColumnRef)
			if ok && ref.Index < len(in) && in[ref.Index].Table == t && in[ref.Index].Index == pk && g.input.cols[ref.Index].table == item {
				grouped = true
				break
			}
		}
		if !grouped {
			return false
		}
	}
	return true
}

// dependentColumn reads a column that depends on the grouped ones: as
// min(column), which over a group of one row of its table is the value.
func (g *aggregation) dependentColumn(i int, key string) (expr.Expr, bool, error) {
	c := g.input.cols[i]
	key = "fd" + key
	for j, ak := range g.aggKeys {
		if ak == key {
			return &expr.ColumnRef{Index: len(g.groups) + j, Name: c.name, Typ: g.aggs[j].Typ}, true, nil
		}
	}
	spec, err := expr.NewAggSpec("min", false, false, &expr.ColumnRef{Index: i, Name: c.name, Typ: c.typ})
	if err != nil {
		return nil, false, sqlerr.New(sqlerr.GroupingError,
			"column %q must appear in the GROUP BY clause or be used in an aggregate function", c.name)
	}
	g.aggs = append(g.aggs, spec)
	g.aggKeys = append(g.aggKeys, key)
	g.agg.Aggs = g.aggs
	g.agg.Cols = append(g.agg.Cols, planner.Column{Name: c.name, Type: spec.Typ})
	return &expr.ColumnRef{Index: len(g.groups) + len(g.aggs) - 1, Name: c.name, Typ: spec.Typ}, true, nil
}
