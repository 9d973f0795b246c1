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
// NULL), as in PostgreSQL 10 and later; with aggregates or window
// functions they run after those (srfPlacement). unnest of several arrays
// is FROM's (42883 here, as in PostgreSQL).
func (q *selectQuery) setReturning() error {
	f := &unnestFinder{}
	for _, field := range q.sel.Fields.Fields {
		if field.Expr != nil {
			field.Expr.Accept(f)
		}
	}
	switch {
	case f.inWindow:
		return sqlerr.New(sqlerr.FeatureNotSupported, "window function calls cannot contain set-returning function calls")
	case f.inAgg:
		return sqlerr.New(sqlerr.FeatureNotSupported, "aggregate function calls cannot contain set-returning function calls")
	case len(f.calls) == 0:
		return nil
	}
	// With aggregates or window functions the calls run after them, as in
	// PostgreSQL: the node goes over the Window nodes in finish, once the
	// width of its input is known (the Aggregate node grows while the
	// select list, HAVING and ORDER BY find aggregates).
	deferred := q.aggregating || q.win != nil
	in := q.input.Columns()
	ps := &planner.ProjectSet{Input: q.input, Cols: append([]planner.Column(nil), in...)}
	refs := map[ast.ExprNode]expr.Expr{}
	if deferred {
		ps.Input, ps.Cols = nil, nil
		q.srf = &srfPlacement{node: ps}
	}
	// add appends a column of the ProjectSet: the elements of array e.
	add := func(name string, e expr.Expr, t types.Type) *expr.ColumnRef {
		ps.Arrays = append(ps.Arrays, e)
		ref := &expr.ColumnRef{Index: len(in) + len(ps.Arrays) - 1, Name: name, Typ: t}
		if deferred {
			q.srf.cols = append(q.srf.cols, planner.Column{Name: name, Type: t})
			q.srf.refs = append(q.srf.refs, ref)
		} else {
			ps.Cols = append(ps.Cols, planner.Column{Name: name, Type: t})
		}
		return ref
	}
	for _, call := range f.calls {
		name := call.FnName.L
		if name == expandArray {
			e, err := q.expandArray(call, add)
			if err != nil {
				return err
			}
			refs[call] = e
			continue
		}
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
		refs[call] = add(name, e, e.Type().ElemType())
	}
	if !deferred {
		q.input = ps
	}
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

// expandArray is the name of information_schema._pg_expandarray, which
// pgjdbc's getPrimaryKeys and getIndexInfo call in a select list.
const expandArray = "_pg_expandarray"

// isSetReturning reports whether a call is one of the set-returning
// functions planned in a select list.
func isSetReturning(n *ast.FuncCallExpr) bool {
	switch n.FnName.L {
	case "unnest", "generate_subscripts":
		return true
	case expandArray:
		// Not on the search path in PostgreSQL: always qualified.
		return n.Schema.L == "information_schema"
	}
	return false
}

// expandArray plans information_schema._pg_expandarray(a): two columns
// in step, a's elements x and their positions n (expr.ExpandArrayFunc),
// and the call's value is the record (x, n) built from them, whose fields
// (call).x and (call).n select.
func (q *selectQuery) expandArray(call *ast.FuncCallExpr, add func(string, expr.Expr, types.Type) *expr.ColumnRef) (expr.Expr, error) {
	if len(call.Args) != 1 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function information_schema._pg_expandarray with %d arguments does not exist", len(call.Args))
	}
	b := q.a.builder(q.outScope, q.replace)
	e, err := b.BuildUntyped(call.Args[0])
	q.a.params = b.ParamTypes
	if err != nil {
		return nil, err
	}
	switch e.Type().Family {
	case types.Array:
	case types.Utf8:
		e = expr.TextArray(e) // the catalog's text form of an array
	case types.Unknown:
		return nil, sqlerr.New(sqlerr.IndeterminateDatatype, "could not determine polymorphic type because input has type unknown")
	default:
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function information_schema._pg_expandarray(%s) does not exist", expr.TypeName(e.Type()))
	}
	var fields []expr.Expr
	def := &types.RecordDef{}
	for _, col := range []string{"x", "n"} {
		arr, err := expr.NewFunc(expr.ExpandArrayFunc, []expr.Expr{e, &expr.Const{Value: types.NewUtf8(col), Typ: types.TypeUtf8}})
		if err != nil {
			return nil, err
		}
		t := arr.Type().ElemType()
		fields = append(fields, add(col, arr, t))
		def.Names = append(def.Names, col)
		def.Types = append(def.Types, t)
	}
	return &expr.RowExpr{Fields: fields, Typ: types.RecordOf(def)}, nil
}

// srfPlacement is a ProjectSet that goes over the grouped and windowed
// rows: place sets its input and points the calls' column references at
// its appended columns.
type srfPlacement struct {
	node *planner.ProjectSet
	cols []planner.Column
	refs []*expr.ColumnRef
}

// place puts the ProjectSet over input (nil s: input).
func (s *srfPlacement) place(input planner.Node) planner.Node {
	if s == nil {
		return input
	}
	in := input.Columns()
	s.node.Input = input
	s.node.Cols = append(append([]planner.Column(nil), in...), s.cols...)
	for k, ref := range s.refs {
		ref.Index = len(in) + k
	}
	return s.node
}

// isRef reports whether e is the column of a deferred set-returning call.
func (s *srfPlacement) isRef(e expr.Expr) bool {
	if s == nil {
		return false
	}
	for _, r := range s.refs {
		if r == e {
			return true
		}
	}
	return false
}

// unnestFinder collects the unnest(...) calls of an expression, not
// those inside subqueries or inside another unnest's argument. A call
// inside an aggregate or window function's arguments is PostgreSQL's
// 0A000 (inAgg, inWindow).
type unnestFinder struct {
	calls           []*ast.FuncCallExpr
	aggs, wins      int // aggregate and window calls entered
	inAgg, inWindow bool
}

func (v *unnestFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.FuncCallExpr:
		if isSetReturning(n) {
			switch {
			case v.wins > 0:
				v.inWindow = true
			case v.aggs > 0:
				v.inAgg = true
			default:
				v.calls = append(v.calls, n)
			}
			return n, true
		}
		if expr.IsAggregate(n.FnName.L) {
			v.aggs++
		}
	case *ast.AggregateFuncExpr:
		v.aggs++
	case *ast.WindowFuncExpr:
		v.wins++
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, false
}

func (v *unnestFinder) Leave(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.FuncCallExpr:
		if !isSetReturning(n) && expr.IsAggregate(n.FnName.L) {
			v.aggs--
		}
	case *ast.AggregateFuncExpr:
		v.aggs--
	case *ast.WindowFuncExpr:
		v.wins--
	}
	return n, true
}
