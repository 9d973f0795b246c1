package bind

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Subqueries.
//
// A subquery in an expression is planned like any query and becomes an
// exec.Subquery node. While it is planned, the queries around it are
// outer levels (binder.outer, innermost last): a column the subquery's
// own FROM does not have is looked up in them, innermost first, as
// PostgreSQL does. Such an outer reference becomes a hidden parameter $N
// (N beyond the statement's own parameters) inside the subquery, and the
// subquery node of the level where the column was found computes the
// column's value on its row and binds it to $N when it runs. Nested
// subqueries inherit the parameters of the runs around them, so a
// reference may skip any number of levels. Because they are parameters,
// key-range inference treats outer values as constants: a correlated
// `WHERE inner.k = outer.x` reads one key per outer row.

type replaceFn = func(ast.ExprNode) (expr.Expr, bool, error)

// outerLevel is a query enclosing the subquery being planned: the scope and
// replace function of the expression the subquery appears in, and the
// outer values the subquery node must bind.
type outerLevel struct {
	sc      expr.Scope
	replace replaceFn
	binds   []expr.Expr
	slots   []int
	keys    map[string]int // bind key → slot
	// inherited are the slots bound by enclosing subqueries that this
	// subquery (or one inside it) reads: its result depends on them, so
	// they are part of its cache key.
	inherited []int
}

func (lv *outerLevel) inherit(slot int) {
	for _, s := range lv.inherited {
		if s == slot {
			return
		}
	}
	lv.inherited = append(lv.inherited, slot)
}

// hiddenSlot allocates a parameter number for an outer reference. The
// statement's own parameters are fixed before binding (Statement.NumParams
// or the declared count), so numbers after them are free.
func (a *binder) hiddenSlot() int {
	if a.hiddenBase == 0 {
		a.hiddenBase = len(a.params) + 1
	}
	n := a.hiddenBase + a.hiddenN
	a.hiddenN++
	return n
}

func isUndefinedColumn(err error) bool {
	c := sqlerr.Code(err)
	return c == sqlerr.UndefinedColumn || c == sqlerr.UndefinedTable
}

// outerReplace extends replace so that a column unknown in sc is looked up
// in the enclosing queries.
func (a *binder) outerReplace(sc expr.Scope, replace replaceFn) replaceFn {
	if len(a.outer) == 0 {
		return replace
	}
	outer := a.outer
	return func(n ast.ExprNode) (expr.Expr, bool, error) {
		c, isCol := n.(*ast.ColumnNameExpr)
		var firstErr error
		if replace != nil {
			e, ok, err := replace(n)
			if !isCol || err == nil || !isUndefinedColumn(err) {
				return e, ok, err
			}
			firstErr = err
		} else {
			if !isCol {
				return nil, false, nil
			}
			_, _, err := sc.ResolveColumn(c.Name.Table.O, c.Name.Name.O)
			if err == nil || !isUndefinedColumn(err) {
				return nil, false, nil
			}
			firstErr = err
		}
		e, err := a.outerColumn(outer, c)
		if err != nil {
			return nil, false, err
		}
		if e == nil {
			return nil, false, firstErr
		}
		return e, true, nil
	}
}

// outerColumn resolves c in the enclosing queries (nil when none has it).
func (a *binder) outerColumn(outer []*outerLevel, c *ast.ColumnNameExpr) (expr.Expr, error) {
	for i := len(outer) - 1; i >= 0; i-- {
		lv := outer[i]
		var e expr.Expr
		if lv.replace != nil {
			r, ok, err := lv.replace(c)
			if err != nil {
				if isUndefinedColumn(err) {
					continue
				}
				if sqlerr.Code(err) == sqlerr.GroupingError {
					name := c.Name.Name.O
					if c.Name.Table.O != "" {
						name = c.Name.Table.O + "." + name
					}
					return nil, sqlerr.New(sqlerr.GroupingError, "subquery uses ungrouped column %q from outer query", name)
				}
				return nil, err
			}
			if ok {
				e = r
			}
		}
		if e == nil {
			idx, t, err := lv.sc.ResolveColumn(c.Name.Table.O, c.Name.Name.O)
			if err != nil {
				if isUndefinedColumn(err) {
					continue
				}
				return nil, err
			}
			name := c.Name.Name.O
			if c.Name.Table.O != "" {
				name = c.Name.Table.O + "." + name
			}
			e = &expr.ColumnRef{Index: idx, Name: name, Typ: t}
		}
		key := e.String()
		if ref, ok := e.(*expr.ColumnRef); ok {
			key = "#" + strconv.Itoa(ref.Index)
		}
		if lv.keys == nil {
			lv.keys = map[string]int{}
		}
		slot, ok := lv.keys[key]
		if !ok {
			slot = a.hiddenSlot()
			lv.keys[key] = slot
			lv.binds = append(lv.binds, e)
			lv.slots = append(lv.slots, slot)
		}
		for _, inner := range outer[i+1:] {
			inner.inherit(slot)
		}
		return &expr.Param{N: slot, Typ: e.Type()}, nil
	}
	return nil, nil
}

// buildQuery plans a SELECT or a set operation (a subquery's body).
func (a *binder) buildQuery(q ast.ResultSetNode) (planner.Node, error) {
	switch q := q.(type) {
	case *ast.SelectStmt:
		return a.buildSelect(q)
	case *ast.SetOprStmt:
		return a.buildSetOpr(q)
	case *ast.SubqueryExpr:
		return a.buildQuery(q.Query)
	}
	return nil, sqlerr.NotSupported("this kind of subquery")
}

// visibleColumns returns the columns of a plan that a client sees (hidden
// ORDER BY columns come last and are cut).
func visibleColumns(n planner.Node) []planner.Column {
	var out []planner.Column
	for _, c := range n.Columns() {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

// subquery builds a subquery node for the expression builder b working in
// scope sc (with replace); see expr.Builder.Subquery for the node kinds.
func (a *binder) subquery(b *expr.Builder, sc expr.Scope, replace replaceFn, n ast.ExprNode) (expr.Expr, error) {
	node := &exec.Subquery{Typ: types.TypeBool}
	var q ast.ExprNode
	var left []ast.ExprNode
	notExists := false
	switch n := n.(type) {
	case *ast.SubqueryExpr:
		node.Kind = exec.SubScalar
		q = n
	case *ast.FuncCallExpr:
		// ARRAY(SELECT ...), spelled pivot_array_subquery((SELECT ...)).
		if n.FnName.L != expr.ArraySubqueryFunc || len(n.Args) != 1 {
			return nil, sqlerr.NotSupported("subquery form %s", n.FnName.O)
		}
		node.Kind = exec.SubArray
		q = n.Args[0]
	case *ast.ExistsSubqueryExpr:
		node.Kind = exec.SubExists
		q = n.Sel
		notExists = n.Not
	case *ast.PatternInExpr:
		node.Kind = exec.SubIn
		node.Negate = n.Not
		q = n.Sel
		left = rowItems(n.Expr)
	case *ast.CompareSubqueryExpr:
		node.Kind = exec.SubAny
		if n.All {
			node.Kind = exec.SubAll
		}
		op, ok := subqueryCmpOp(n.Op)
		if !ok || op == expr.NullSafeEQ {
			return nil, sqlerr.NotSupported("operator %s with ANY/ALL", n.Op)
		}
		node.Op = op
		q = n.R
		left = rowItems(n.L)
		if len(left) != 1 {
			return nil, sqlerr.NotSupported("a row compared with ANY/ALL (subquery)")
		}
	case *ast.BinaryOperationExpr:
		// (a, b) op (SELECT x, y ...), or the subquery on the left.
		node.Kind = exec.SubRow
		op, ok := subqueryCmpOp(n.Op)
		if !ok {
			return nil, sqlerr.NotSupported("operator %s between a row and a subquery", n.Op)
		}
		l, r := n.L, n.R
		if _, isSub := unparenExpr(l).(*ast.SubqueryExpr); isSub {
			l, r, op = r, l, op.Commute()
		}
		node.Op = op
		q = r
		left = rowItems(l)
	default:
		return nil, sqlerr.NotSupported("subquery form %T", n)
	}
	for {
		p, ok := q.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		q = p.Expr
	}
	sub, ok := q.(*ast.SubqueryExpr)
	if !ok {
		return nil, sqlerr.NotSupported("subquery form %T", q)
	}

	lv := &outerLevel{sc: sc, replace: replace}
	a.outer = append(a.outer, lv)
	plan, err := a.buildQuery(sub.Query)
	a.outer = a.outer[:len(a.outer)-1]
	if err != nil {
		return nil, err
	}
	cols := visibleColumns(plan)
	node.Plan = plan
	node.Width = len(cols)
	node.Binds = lv.binds
	node.Slots = lv.slots
	node.Inherited = lv.inherited
	node.Text = restorePlain(sub.Query)
	if err := a.hashSubquery(node, notExists); err != nil {
		return nil, err
	}

	switch node.Kind {
	case exec.SubArray:
		if len(cols) != 1 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column")
		}
		et := cols[0].Type
		if et.Family == types.Unknown || et.Family == types.Null {
			et = types.TypeUtf8
		}
		node.Typ = types.ArrayOf(et)
	case exec.SubScalar:
		if len(cols) != 1 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery must return only one column")
		}
		node.Typ = cols[0].Type
		if node.Typ.Family == types.Unknown {
			node.Typ = types.TypeUtf8
		}
	case exec.SubIn, exec.SubAny, exec.SubAll, exec.SubRow:
		if len(cols) > len(left) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too many columns")
		}
		if len(cols) < len(left) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery has too few columns")
		}
		opName := "="
		if node.Kind != exec.SubIn {
			opName = node.Op.String()
		}
		for i, l := range left {
			e, err := b.BuildTyped(l, expr.BaseType(cols[i].Type))
			if err != nil {
				return nil, err
			}
			if !expr.Comparable(e.Type(), cols[i].Type) {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s",
					expr.TypeName(e.Type()), opName, expr.TypeName(cols[i].Type))
			}
			if lt, rt := e.Type(), cols[i].Type; (lt.Blank || rt.Blank) && lt != rt {
				// The executor compares the values as they are, which for
				// char(n) (kept padded) is right only at one width.
				return nil, sqlerr.NotSupported("comparing %s with a subquery's %s column", lt.PGName(), rt.PGName())
			}
			node.L = append(node.L, e)
		}
	}
	if notExists {
		return &expr.Not{E: node}, nil
	}
	return node, nil
}

func unparenExpr(n ast.ExprNode) ast.ExprNode {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			return n
		}
		n = p.Expr
	}
}

// restorePlain renders a node as SQL without quoting names (EXPLAIN).
func restorePlain(n ast.Node) string {
	var sb strings.Builder
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase
	if err := n.Restore(format.NewRestoreCtx(flags, &sb)); err != nil {
		return restore(n)
	}
	return sb.String()
}

// rowItems returns the values of a row expression, or n alone.
func rowItems(n ast.ExprNode) []ast.ExprNode {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	if r, ok := n.(*ast.RowExpr); ok {
		return r.Values
	}
	return []ast.ExprNode{n}
}

func subqueryCmpOp(op opcode.Op) (expr.CmpOp, bool) {
	switch op {
	case opcode.EQ:
		return expr.EQ, true
	case opcode.NE:
		return expr.NE, true
	case opcode.LT:
		return expr.LT, true
	case opcode.LE:
		return expr.LE, true
	case opcode.GT:
		return expr.GT, true
	case opcode.GE:
		return expr.GE, true
	case opcode.NullEQ:
		return expr.NullSafeEQ, true
	}
	return 0, false
}
