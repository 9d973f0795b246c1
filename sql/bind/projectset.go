package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// setReturning plans unnest(a) and generate_subscripts(a, dim [,
// reverse]) calls in the select list (SELECT
// unnest(tags), id FROM t): a planner.ProjectSet under the projection
// expands each row into one row per element, and the calls read its
// appended columns. Several calls run in step (the shorter padded with
// NULL), as in PostgreSQL 10 and later. Not with aggregates or window
// functions in the same query (0A000); unnest of several arrays is FROM's
// (42883 here, as in PostgreSQL).
func (q *selectQuery) setReturning() error {
	f := &unnestFinder{}
	for _, field := range q.sel.Fields.Fields {
		if field.Expr != nil {
			field.Expr.Accept(f)
		}
	}
	if len(f.calls) == 0 {
		return nil
	}
	if q.aggregating || q.win != nil {
		return sqlerr.NotSupported("unnest() in the select list of a query with aggregates or window functions")
	}
	in := q.input.Columns()
	ps := &planner.ProjectSet{Input: q.input, Cols: append([]planner.Column(nil), in...)}
	refs := map[ast.ExprNode]expr.Expr{}
	for k, call := range f.calls {
		name := call.FnName.L
		var arg ast.ExprNode
		switch {
		case name == "generate_subscripts":
			// generate_subscripts(a, dim [, reverse]) is the unnest of
			// a's subscripts in that dimension.
			if len(call.Args) < 2 || len(call.Args) > 3 {
				return sqlerr.New(sqlerr.UndefinedFunction, "function generate_subscripts with %d arguments does not exist", len(call.Args))
			}
			arg = &ast.FuncCallExpr{FnName: ast.NewCIStr(expr.SubscriptsFunc), Args: call.Args}
		case len(call.Args) != 1:
			return sqlerr.New(sqlerr.UndefinedFunction, "function unnest with %d arguments does not exist in the select list (use FROM unnest(...))", len(call.Args))
		default:
			arg = call.Args[0]
		}
		b := q.a.builder(q.outScope, q.replace)
		e, err := b.BuildUntyped(arg)
		q.a.params = b.ParamTypes
		if err != nil {
			return err
		}
		switch e.Type().Family {
		case types.Array:
		case types.Utf8:
			e = expr.TextArray(e) // the catalog's text form of an array
		case types.Unknown:
			return sqlerr.New(sqlerr.IndeterminateDatatype, "could not determine polymorphic type because input has type unknown")
		default:
			return sqlerr.New(sqlerr.UndefinedFunction, "function unnest(%s) does not exist", expr.TypeName(e.Type()))
		}
		t := e.Type().ElemType()
		ps.Arrays = append(ps.Arrays, e)
		ps.Cols = append(ps.Cols, planner.Column{Name: name, Type: t})
		refs[call] = &expr.ColumnRef{Index: len(in) + k, Name: name, Typ: t}
	}
	q.input = ps
	prev := q.replace
	q.replace = func(n ast.ExprNode) (expr.Expr, bool, error) {
		if r, ok := refs[n]; ok {
			return r, true, nil
		}
		if prev != nil {
			return prev(n)
		}
		return nil, false, nil
	}
	return nil
}

// unnestFinder collects the unnest(...) calls of an expression, not
// those inside subqueries or inside another unnest's argument.
type unnestFinder struct{ calls []*ast.FuncCallExpr }

func (v *unnestFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.FuncCallExpr:
		if n.FnName.L == "unnest" || n.FnName.L == "generate_subscripts" {
			v.calls = append(v.calls, n)
			return n, true
		}
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, false
}

func (v *unnestFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
