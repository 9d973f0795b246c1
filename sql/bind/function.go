package bind

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// SQL functions (CREATE FUNCTION ... LANGUAGE sql). A call is inlined into
// the calling expression, as PostgreSQL inlines a SQL function whose body
// is a single SELECT of an expression: the body is parsed again, its
// parameters ($n or the argument names) replaced by the call's arguments
// (cast to the declared types), and the result cast to the declared
// return type; a STRICT function becomes CASE WHEN an argument IS NULL
// THEN NULL ELSE body END. Bodies of another shape (FROM, WHERE, several
// statements) are 0A000 when the function is created.

// maxFunctionDepth bounds nested inlining (a function calling itself).
const maxFunctionDepth = 32

// FunctionDDL is CREATE [OR REPLACE] FUNCTION or DROP FUNCTION, with the
// argument and result types resolved (the session checks names against
// the catalog it changes, sql/function_ddl.go).
type FunctionDDL struct {
	noRows
	*parser.FunctionStmt
	// Function is CREATE's new function (ID unset).
	Function *catalog.Function
	// DropArgs are DROP's argument types per function dropped (nil: no
	// list given), in the order of the statement.
	DropArgs [][]types.Type
}

func (a *binder) planFunction(st *parser.FunctionStmt) (Statement, error) {
	out := &FunctionDDL{FunctionStmt: st}
	if st.Drop {
		all := append([]parser.FunctionStmt{{Name: st.Name, Args: st.Args, ArgsGiven: st.ArgsGiven}}, st.Drops...)
		for _, f := range all {
			var ts []types.Type
			if f.ArgsGiven {
				ts = []types.Type{}
				for _, arg := range f.Args {
					t, err := a.resolveType(arg.Type)
					if err != nil {
						return nil, err
					}
					ts = append(ts, t)
				}
			}
			out.DropArgs = append(out.DropArgs, ts)
		}
		return out, nil
	}
	f := &catalog.Function{DatabaseID: a.env.Database.ID, Name: st.Name, Strict: st.Strict,
		Volatility: string(st.Volatility), Body: st.Body}
	if a.pg() {
		f.Dialect = sessionvars.DialectPostgreSQL
	}
	if err := a.functionResult(st, f); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, arg := range st.Args {
		t, err := a.resolveType(arg.Type)
		if err != nil {
			return nil, err
		}
		if arg.Name != "" {
			if seen[arg.Name] {
				return nil, sqlerr.New(sqlerr.InvalidFunctionDefinition, "parameter name %q used more than once", arg.Name)
			}
			seen[arg.Name] = true
		}
		f.Args = append(f.Args, catalog.FunctionArg{Name: arg.Name, Type: t})
	}
	// Check the body now, as PostgreSQL does (check_function_bodies):
	// inline it over typed NULL arguments.
	args := make([]expr.Expr, len(f.Args))
	for i, arg := range f.Args {
		args[i] = &expr.Const{Value: types.NullValue, Typ: arg.Type}
	}
	if f.SetOf {
		if _, err := a.planSetFunction(f, args); err != nil {
			return nil, err
		}
		out.Function = f
		return out, nil
	}
	b := a.builder(nil, nil)
	if _, err := a.inlineFunction(b, f, args); err != nil {
		return nil, err
	}
	a.params = b.ParamTypes
	out.Function = f
	return out, nil
}

// functionResult sets f's result: RETURNS type, RETURNS SETOF type (or
// SETOF table, the table's columns) or RETURNS TABLE (...).
func (a *binder) functionResult(st *parser.FunctionStmt, f *catalog.Function) error {
	f.SetOf = st.SetOf
	if len(st.Table) > 0 {
		for _, c := range st.Table {
			t, err := a.resolveType(c.Type)
			if err != nil {
				return err
			}
			f.Columns = append(f.Columns, catalog.FunctionArg{Name: c.Name, Type: t})
		}
		f.Returns = f.Columns[0].Type
		return nil
	}
	t, err := a.resolveType(st.Returns)
	if err != nil && st.SetOf && st.Returns.IsUserTypeRef() {
		// SETOF a table: its row type, the table's visible columns.
		if tab, ok := a.snap.Table(a.env.Database.ID, st.Returns.Enum.Name); ok {
			for _, c := range tab.Columns {
				if !c.Hidden {
					f.Columns = append(f.Columns, catalog.FunctionArg{Name: c.Name, Type: c.Type})
				}
			}
			f.Returns, f.RowType = f.Columns[0].Type, tab.Name
			return nil
		}
	}
	f.Returns = t
	return err
}

// FunctionSignature spells a function's name and argument types as
// PostgreSQL's messages do: add(integer, integer).
func FunctionSignature(name string, ts []types.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = expr.TypeName(t)
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// userFunction inlines a call of a SQL function of the database; ok is
// false when the database has no function of that name.
func (a *binder) userFunction(b *expr.Builder, name string, args []expr.Expr) (expr.Expr, bool, error) {
	fs := a.snap.Functions(a.env.Database.ID, name)
	if len(fs) == 0 {
		return nil, false, nil
	}
	pick := pickFunction(fs, args)
	if pick == nil {
		return nil, true, noSuchFunction(name, args)
	}
	if pick.SetOf {
		return nil, true, sqlerr.NotSupported("set-returning function %s() outside FROM (call it in FROM)", pick.Name)
	}
	e, err := a.inlineFunction(b, pick, args)
	return e, true, err
}

// inlineFunction builds f's body over the argument expressions args.
func (a *binder) inlineFunction(outer *expr.Builder, f *catalog.Function, args []expr.Expr) (expr.Expr, error) {
	stmts, err := a.parseFunctionBody(f)
	if err != nil {
		return nil, err
	}
	notInlinable := func() error {
		return sqlerr.NotSupported("SQL function bodies other than a single SELECT of an expression (function %s)", f.Name)
	}
	if len(stmts) != 1 {
		return nil, notInlinable()
	}
	sel, ok := stmts[0].AST.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil ||
		sel.Limit != nil || sel.Distinct || sel.WindowSpecs != nil || sel.With != nil || sel.Fields == nil ||
		len(sel.Fields.Fields) != 1 || sel.Fields.Fields[0].WildCard != nil {
		if ok && sel.Fields != nil && len(sel.Fields.Fields) > 1 {
			return nil, &sqlerr.Error{Code: sqlerr.InvalidFunctionDefinition,
				Message: fmt.Sprintf("return type mismatch in function declared to return %s", expr.TypeName(f.Returns)),
				Detail:  "Final statement must return exactly one column."}
		}
		return nil, notInlinable()
	}
	cast := make([]expr.Expr, len(args))
	for i, arg := range f.Args {
		if cast[i], err = outer.CastTo(args[i], arg.Type); err != nil {
			return nil, err
		}
	}
	b := &expr.Builder{Scope: &scope{}, ParamIndex: stmts[0].ParamIndex, Types: a.resolveType,
		StrictDivision: f.Dialect == sessionvars.DialectPostgreSQL, IntegerDateDiff: f.Dialect == sessionvars.DialectPostgreSQL, CaretPower: f.Dialect == sessionvars.DialectPostgreSQL,
		Mem: a.env.Mem, Funcs: outer.Funcs, NumericLiterals: f.Dialect == sessionvars.DialectPostgreSQL}
	b.Replace = func(n ast.ExprNode) (expr.Expr, bool, error) {
		switch n := n.(type) {
		case *test_driver.ParamMarkerExpr:
			k := n.Order + 1
			if b.ParamIndex != nil && n.Order >= 0 && n.Order < len(b.ParamIndex) {
				k = b.ParamIndex[n.Order]
			}
			if k < 1 || k > len(cast) {
				return nil, true, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", k)
			}
			return cast[k-1], true, nil
		case *ast.ColumnNameExpr:
			if n.Name.Table.O != "" && !strings.EqualFold(n.Name.Table.O, f.Name) {
				break
			}
			for i, arg := range f.Args {
				if arg.Name != "" && strings.EqualFold(arg.Name, n.Name.Name.O) {
					return cast[i], true, nil
				}
			}
		}
		return nil, false, nil
	}
	a.funcDepth++
	body, err := b.BuildUntyped(sel.Fields.Fields[0].Expr)
	a.funcDepth--
	if err != nil {
		return nil, err
	}
	if body.Type().Family == types.Unknown || body.Type().Family == types.Null {
		body, err = b.Resolve(body, f.Returns)
	} else if !expr.CastAllowed(body.Type(), f.Returns) {
		return nil, &sqlerr.Error{Code: sqlerr.InvalidFunctionDefinition,
			Message: fmt.Sprintf("return type mismatch in function declared to return %s", expr.TypeName(f.Returns)),
			Detail:  fmt.Sprintf("Actual return type is %s.", expr.TypeName(body.Type()))}
	} else {
		body, err = b.CastTo(body, f.Returns)
	}
	if err != nil {
		return nil, err
	}
	if !f.Strict || len(cast) == 0 {
		return body, nil
	}
	var anyNull expr.Expr
	for _, c := range cast {
		var isNull expr.Expr = &expr.IsNull{E: c}
		if anyNull == nil {
			anyNull = isNull
		} else {
			anyNull = &expr.Or{L: anyNull, R: isNull}
		}
	}
	return &expr.Case{Whens: []expr.When{{Cond: anyNull, Result: &expr.Const{Value: types.NullValue, Typ: f.Returns}}},
		Else: body, Typ: f.Returns}, nil
}

// parseFunctionBody parses f's body in the dialect it was created in,
// refusing functions nested deeper than maxFunctionDepth.
func (a *binder) parseFunctionBody(f *catalog.Function) ([]parser.Statement, error) {
	if a.funcDepth >= maxFunctionDepth {
		return nil, sqlerr.New(sqlerr.StatementTooComplex, "SQL functions nested more than %d deep (function %s)", maxFunctionDepth, f.Name)
	}
	d := parser.DialectYQL
	if f.Dialect == sessionvars.DialectPostgreSQL {
		d = parser.DialectPostgreSQL
	}
	stmts, err := parser.ParseDialect(f.Body, d)
	if err != nil {
		return nil, &sqlerr.Error{Code: sqlerr.InvalidFunctionDefinition, Message: fmt.Sprintf("function %s: %v", f.Name, err)}
	}
	return stmts, nil
}
