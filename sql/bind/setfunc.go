package bind

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Set-returning SQL functions (RETURNS SETOF type, RETURNS TABLE (...))
// called in FROM. The dialect front spells FROM f(args) as the derived
// table (SELECT pivot_table_func(f(args))); fromFunction plans the
// function's body, a query, as that derived table, the way a view is
// planned: parsed again, bound by this binder, its parameters ($n and
// the argument names, where no column of the body has the name) replaced
// by the call's arguments cast to the declared types (setFuncArgs), its
// columns cast to the declared result types. A STRICT function returns no
// rows when an argument is NULL. A scalar SQL function in FROM is one row.

// setFuncArgs are the arguments of the function whose body is being
// planned; binder.builder substitutes them.
type setFuncArgs struct {
	fn   *catalog.Function
	args []expr.Expr
}

// replace wraps inner with the substitution of the function's parameters.
func (fa *setFuncArgs) replace(a *binder, sc expr.Scope, inner replaceFn) replaceFn {
	return func(n ast.ExprNode) (expr.Expr, bool, error) {
		switch x := n.(type) {
		case *test_driver.ParamMarkerExpr:
			k := a.paramNumber(x)
			if k < 1 || k > len(fa.args) {
				return nil, true, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", k)
			}
			return fa.args[k-1], true, nil
		case *ast.ColumnNameExpr:
			table := x.Name.Table.O
			if table != "" && !strings.EqualFold(table, fa.fn.Name) {
				break
			}
			if inner != nil {
				e, ok, err := inner(n)
				if ok || err != nil && !isUndefinedColumn(err) {
					return e, ok, err
				}
			}
			if _, _, err := sc.ResolveColumn(table, x.Name.Name.O); err == nil || !isUndefinedColumn(err) {
				// A column of the body wins over an argument, as in
				// PostgreSQL.
				return nil, false, nil
			}
			for i, arg := range fa.fn.Args {
				if arg.Name != "" && strings.EqualFold(arg.Name, x.Name.Name.O) {
					return fa.args[i], true, nil
				}
			}
			return nil, false, nil
		}
		if inner != nil {
			return inner(n)
		}
		return nil, false, nil
	}
}

// tableFuncCall returns the call of FROM f(args), which the dialect front
// spells as the derived table (SELECT pivot_table_func(f(args))), or nil.
func tableFuncCall(n ast.ResultSetNode) *ast.FuncCallExpr {
	sel, ok := n.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil ||
		sel.OrderBy != nil || sel.Limit != nil || sel.Distinct || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
		return nil
	}
	m, ok := sel.Fields.Fields[0].Expr.(*ast.FuncCallExpr)
	if !ok || m.FnName.L != parser.TableFunc || len(m.Args) != 1 {
		return nil
	}
	call, _ := m.Args[0].(*ast.FuncCallExpr)
	return call
}

// pickFunction chooses among fs the function for arguments of the given
// expressions (nil when none takes them): an exact match of the argument
// types is preferred to one that needs casts.
func pickFunction(fs []*catalog.Function, args []expr.Expr) *catalog.Function {
	var pick *catalog.Function
	exact := false
	for _, f := range fs {
		if len(f.Args) != len(args) {
			continue
		}
		ok, ex := true, true
		for i, arg := range f.Args {
			at := args[i].Type()
			if at.Family == types.Unknown || at.Family == types.Null {
				continue
			}
			if !expr.CastAllowed(at, arg.Type) {
				ok = false
				break
			}
			if expr.BaseType(at) != expr.BaseType(arg.Type) {
				ex = false
			}
		}
		if ok && (pick == nil || ex && !exact) {
			pick, exact = f, ex
		}
	}
	return pick
}

func noSuchFunction(name string, args []expr.Expr) error {
	ts := make([]types.Type, len(args))
	for i, e := range args {
		ts[i] = e.Type()
	}
	return &sqlerr.Error{Code: sqlerr.UndefinedFunction,
		Message: fmt.Sprintf("function %s does not exist", FunctionSignature(name, ts)),
		Hint:    "No function matches the given name and argument types. You might need to add explicit type casts."}
}

// fromFunction plans FROM f(args) [AS alias [(names)]] of a SQL function.
func (a *binder) fromFunction(call *ast.FuncCallExpr, alias string, names []string) (*fromItem, error) {
	name := call.FnName.L
	args := make([]expr.Expr, len(call.Args))
	for i, n := range call.Args {
		b := a.builder(nil, nil)
		e, err := b.BuildUntyped(n)
		a.params = b.ParamTypes
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	pick := pickFunction(a.snap.Functions(a.env.Database.ID, name), args)
	if pick == nil {
		return nil, noSuchFunction(name, args)
	}
	b := a.builder(nil, nil)
	cast := make([]expr.Expr, len(args))
	for i, arg := range pick.Args {
		var err error
		if cast[i], err = b.CastTo(args[i], arg.Type); err != nil {
			return nil, err
		}
	}
	a.params = b.ParamTypes
	var node planner.Node
	var cols []planner.Column
	if pick.SetOf {
		var err error
		if node, err = a.planSetFunction(pick, cast); err != nil {
			return nil, err
		}
		cols = node.Columns()
	} else {
		// A scalar function in FROM is a relation of one row.
		e, err := a.inlineFunction(b, pick, cast)
		if err != nil {
			return nil, err
		}
		cols = []planner.Column{{Name: pick.Name, Type: e.Type()}}
		node = &planner.Values{Rows: [][]expr.Expr{{e}}, Cols: cols}
	}
	table := pick.Name
	if alias != "" {
		table = alias
		if len(cols) == 1 && (!pick.SetOf || len(pick.Columns) == 0) {
			// A function of one unnamed column: the column is named after
			// the alias, as in PostgreSQL.
			cols[0].Name = alias
		}
	}
	if len(names) > len(cols) {
		return nil, sqlerr.New(sqlerr.InvalidColumnReference, "table \"%s\" has %d columns available but %d columns specified", table, len(cols), len(names))
	}
	exprs := make([]expr.Expr, len(cols))
	out := make([]planner.Column, len(cols))
	sc := &scope{}
	for i, c := range cols {
		if i < len(names) {
			c.Name = names[i]
		}
		exprs[i] = &expr.ColumnRef{Index: i, Name: c.Name, Typ: c.Type}
		out[i] = planner.Column{Name: c.Name, Type: c.Type}
		sc.cols = append(sc.cols, scopeColumn{table: strings.ToLower(table), name: c.Name, typ: c.Type})
	}
	node = &planner.Project{Input: node, Exprs: exprs, Cols: out}
	return &fromItem{node: node, sc: sc}, nil
}

// planSetFunction plans the body of the set-returning function f over the
// argument expressions args (cast to the argument types): its rows, with
// f's result columns.
func (a *binder) planSetFunction(f *catalog.Function, args []expr.Expr) (planner.Node, error) {
	stmts, err := a.parseFunctionBody(f)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, sqlerr.NotSupported("SQL function bodies of several statements (function %s)", f.Name)
	}
	var q ast.ResultSetNode
	switch n := stmts[0].AST.(type) {
	case *ast.SelectStmt:
		q = n
	case *ast.SetOprStmt:
		q = n
	}
	if q == nil || stmts[0].Locking != nil || stmts[0].WithDML != nil {
		return nil, sqlerr.NotSupported("a set-returning SQL function whose body is not a query (function %s)", f.Name)
	}
	saved, savedOuter, savedArgs := a.stmt, a.outer, a.fnArgs
	a.stmt, a.outer, a.fnArgs = &stmts[0], nil, &setFuncArgs{fn: f, args: args}
	a.funcDepth++
	node, err := a.buildQuery(q)
	a.funcDepth--
	a.stmt, a.outer, a.fnArgs = saved, savedOuter, savedArgs
	if err != nil {
		return nil, err
	}
	var vis []int
	for i, c := range node.Columns() {
		if !c.Hidden {
			vis = append(vis, i)
		}
	}
	want := f.Columns
	if len(want) == 0 {
		want = []catalog.FunctionArg{{Name: f.Name, Type: f.Returns}}
	}
	mismatch := func(detail string) error {
		return &sqlerr.Error{Code: sqlerr.InvalidFunctionDefinition,
			Message: fmt.Sprintf("return type mismatch in function declared to return %s", setFuncResultName(f)), Detail: detail}
	}
	switch {
	case len(vis) > len(want):
		return nil, mismatch("Final statement returns too many columns.")
	case len(vis) < len(want):
		return nil, mismatch("Final statement returns too few columns.")
	}
	cols := node.Columns()
	exprs := make([]expr.Expr, len(want))
	out := make([]planner.Column, len(want))
	b := a.builder(nil, nil)
	for i, w := range want {
		c := cols[vis[i]]
		var e expr.Expr = &expr.ColumnRef{Index: vis[i], Name: c.Name, Typ: c.Type}
		switch f := c.Type.Family; {
		case c.Type == w.Type:
		case f == types.Unknown || f == types.Null:
			if e, err = b.CastTo(e, w.Type); err != nil {
				return nil, err
			}
		case !expr.CastAllowed(c.Type, w.Type):
			return nil, mismatch(fmt.Sprintf("Final statement returns %s instead of %s at column %d.",
				expr.TypeName(c.Type), expr.TypeName(w.Type), i+1))
		default:
			if e, err = b.CastTo(e, w.Type); err != nil {
				return nil, err
			}
		}
		exprs[i] = e
		out[i] = planner.Column{Name: w.Name, Type: w.Type}
	}
	a.params = b.ParamTypes
	var result planner.Node = &planner.Project{Input: node, Exprs: exprs, Cols: out}
	if f.Strict && len(args) > 0 {
		// No rows when an argument is NULL.
		var anyNull expr.Expr
		for _, c := range args {
			var isNull expr.Expr = &expr.IsNull{E: c}
			if anyNull == nil {
				anyNull = isNull
			} else {
				anyNull = &expr.Or{L: anyNull, R: isNull}
			}
		}
		result = &planner.Filter{Input: result, Cond: &expr.Not{E: anyNull}}
	}
	return result, nil
}

// setFuncResultName is how PostgreSQL's messages name a set-returning
// function's result type: SETOF integer, or record for RETURNS TABLE.
func setFuncResultName(f *catalog.Function) string {
	if len(f.Columns) > 0 {
		return "record"
	}
	return "SETOF " + expr.TypeName(f.Returns)
}
