package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Set operations: UNION [ALL], EXCEPT [ALL], INTERSECT [ALL].
//
// TiDB's parser returns a flat list of arms, each (after the first) with
// the operator that joins it to what precedes. As in PostgreSQL and the
// SQL standard, INTERSECT binds tighter than UNION and EXCEPT, which
// associate to the left: a UNION b INTERSECT c EXCEPT d is
// (a UNION (b INTERSECT c)) EXCEPT d. Parenthesized arms are their own
// lists. The arms' columns are matched by position (42601 when their
// numbers differ) and converted to a common type (42804 when there is
// none); names come from the first arm. ORDER BY on the result may name
// result columns or give their positions; expressions are 0A000, as in
// PostgreSQL.

func (a *binder) buildSetOpr(stmt *ast.SetOprStmt) (planner.Node, error) {
	if stmt.With != nil {
		pop, err := a.pushWith(stmt.With)
		defer pop()
		if err != nil {
			return nil, err
		}
	}
	node, err := a.buildSetList(stmt.SelectList)
	if err != nil {
		return nil, err
	}
	return a.setOpOrderLimit(node, stmt.OrderBy, stmt.Limit)
}

func (a *binder) buildSetList(list *ast.SetOprSelectList) (planner.Node, error) {
	if list.With != nil {
		pop, err := a.pushWith(list.With)
		defer pop()
		if err != nil {
			return nil, err
		}
	}
	var terms []planner.Node
	var ops []*ast.SetOprType
	for i, item := range list.Selects {
		var node planner.Node
		var op *ast.SetOprType
		var err error
		switch item := item.(type) {
		case *ast.SelectStmt:
			op = item.AfterSetOperator
			a.setOpArm = true
			node, err = a.buildSelect(item)
		case *ast.SetOprSelectList:
			op = item.AfterSetOperator
			if node, err = a.buildSetList(item); err == nil {
				node, err = a.setOpOrderLimit(node, item.OrderBy, item.Limit)
			}
		default:
			return nil, sqlerr.NotSupported("set operation arm %T", item)
		}
		if err != nil {
			return nil, err
		}
		if i == 0 {
			terms = append(terms, node)
			continue
		}
		if op == nil {
			return nil, sqlerr.New(sqlerr.InternalError, "sql: set operation arm %d without operator", i)
		}
		if *op == ast.Intersect || *op == ast.IntersectAll {
			last := len(terms) - 1
			if terms[last], err = a.combineSetOp(terms[last], node, *op); err != nil {
				return nil, err
			}
			continue
		}
		terms = append(terms, node)
		ops = append(ops, op)
	}
	node := terms[0]
	for i, op := range ops {
		var err error
		if node, err = a.combineSetOp(node, terms[i+1], *op); err != nil {
			return nil, err
		}
	}
	if len(terms) == 1 && len(list.Selects) == 1 {
		// A lone arm (a parenthesized SELECT) gets the types a plain
		// SELECT would give it.
		return convertArm(node, typedColumns(visibleColumns(node)))
	}
	return node, nil
}

func (a *binder) combineSetOp(l, r planner.Node, op ast.SetOprType) (planner.Node, error) {
	n := &planner.SetOp{Left: l, Right: r}
	switch op {
	case ast.Union, ast.UnionAll:
		n.Kind = planner.Union
	case ast.Except, ast.ExceptAll:
		n.Kind = planner.Except
	case ast.Intersect, ast.IntersectAll:
		n.Kind = planner.Intersect
	}
	n.All = op == ast.UnionAll || op == ast.ExceptAll || op == ast.IntersectAll
	lc, rc := visibleColumns(l), visibleColumns(r)
	if len(lc) != len(rc) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each %s query must have the same number of columns", n.Kind)
	}
	for i := range lc {
		t, err := expr.CommonType(n.Kind.String(), lc[i].Type, rc[i].Type)
		if err != nil {
			return nil, err
		}
		if t.Family == types.Null || t.Family == types.Unknown {
			// Only NULLs and literals: text, as PostgreSQL resolves them.
			t = types.TypeUtf8
		}
		n.Cols = append(n.Cols, planner.Column{Name: lc[i].Name, Type: t})
	}
	var err error
	if n.Left, err = convertArm(l, n.Cols); err != nil {
		return nil, err
	}
	if n.Right, err = convertArm(r, n.Cols); err != nil {
		return nil, err
	}
	return n, nil
}

// convertArm projects an arm to the result columns: hidden columns are
// dropped and values converted to the result types.
func convertArm(n planner.Node, cols []planner.Column) (planner.Node, error) {
	in := n.Columns()
	same := len(in) == len(cols)
	exprs := make([]expr.Expr, len(cols))
	b := &expr.Builder{}
	for i, c := range cols {
		ref := &expr.ColumnRef{Index: i, Name: in[i].Name, Typ: in[i].Type}
		var e expr.Expr = ref
		var err error
		if f := in[i].Type.Family; f == types.Unknown || f == types.Null {
			// An arm's untyped literal or NULL: a literal that does not
			// fit the result type fails when it is read, as in a cast.
			if f == types.Null || c.Type.Family != types.Unknown {
				e, err = expr.NewCast(ref, c.Type)
			}
		} else {
			e, err = b.Coerce(ref, c.Type)
		}
		if err != nil {
			return nil, err
		}
		if e != expr.Expr(ref) {
			same = false
		}
		exprs[i] = e
	}
	if same {
		return n, nil
	}
	out := make([]planner.Column, len(cols))
	for i, c := range cols {
		out[i] = planner.Column{Name: in[i].Name, Type: c.Type}
	}
	return &planner.Project{Input: n, Exprs: exprs, Cols: out}, nil
}

// typedColumns gives untyped columns the type text.
func typedColumns(cols []planner.Column) []planner.Column {
	out := make([]planner.Column, len(cols))
	for i, c := range cols {
		out[i] = c
		if f := c.Type.Family; f == types.Null || f == types.Unknown {
			out[i].Type = types.TypeUtf8
		}
	}
	return out
}

// setOpOrderLimit applies ORDER BY and LIMIT to a set operation's result.
func (a *binder) setOpOrderLimit(node planner.Node, orderBy *ast.OrderByClause, limit *ast.Limit) (planner.Node, error) {
	if orderBy != nil {
		cols := node.Columns()
		var keys []planner.SortKey
		items, err := a.orderItems(orderBy.Items)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			idx := -1
			switch e := item.Expr.(type) {
			case *ast.PositionExpr:
				if e.P == nil {
					if e.N < 1 || e.N > len(cols) {
						return nil, sqlerr.New(sqlerr.InvalidColumnReference, "ORDER BY position %d is not in select list", e.N)
					}
					idx = e.N - 1
				}
			case *ast.ColumnNameExpr:
				if e.Name.Table.O != "" {
					return nil, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", e.Name.Table.O)
				}
				for i, c := range cols {
					if strings.EqualFold(c.Name, e.Name.Name.O) {
						idx = i
						break
					}
				}
				if idx < 0 {
					return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", e.Name.Name.O)
				}
			}
			if idx < 0 {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "invalid UNION/INTERSECT/EXCEPT ORDER BY clause: only result column names can be used, not expressions or functions")
			}
			keys = append(keys, planner.SortKey{Index: idx, Desc: item.Desc, NullsFirst: item.nullsFirst})
		}
		node = &planner.Sort{Input: node, Keys: keys}
	}
	if limit != nil {
		lim := &planner.Limit{Input: node}
		var err error
		if limit.Count != nil {
			if lim.Count, err = a.buildLimit(limit.Count); err != nil {
				return nil, err
			}
		}
		if limit.Offset != nil {
			if lim.Offset, err = a.buildLimit(limit.Offset); err != nil {
				return nil, err
			}
		}
		node = lim
	}
	return node, nil
}
