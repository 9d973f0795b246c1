package expr

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	tidbtypes "github.com/pingcap/tidb/pkg/parser/types"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// CastFuncName is the function the dialect front rewrites casts into:
// x::T, CAST(x AS T) and YQL typed literals such as Interval("PT1H")
// become pivot_cast(x, 'T').
const CastFuncName = "pivot_cast"

// NullsFirstFunc and NullsLastFunc are the marker items the dialect front
// writes after an ORDER BY item for NULLS FIRST and NULLS LAST
// (parser.NullsFirstFunc, parser.NullsLastFunc).
const (
	NullsFirstFunc = "pivot_nulls_first"
	NullsLastFunc  = "pivot_nulls_last"
)

func (b *Builder) funcCall(n *ast.FuncCallExpr) (Expr, error) {
	name := n.FnName.L
	switch name {
	case CastFuncName:
		return b.pivotCast(n)
	case NullsFirstFunc, NullsLastFunc:
		// The marker the dialect front writes for NULLS FIRST/LAST; the
		// binder consumes it in ORDER BY lists and index columns, so here
		// it stood somewhere else, where PostgreSQL has no such clause.
		return nil, b.withPos(sqlerr.New(sqlerr.SyntaxError, `syntax error at or near "NULLS"`), n)
	case ArrayCtorFunc:
		return b.buildArrayCtor(n)
	case ArrayElemFunc:
		return b.buildArrayElem(n)
	case FieldSelectFunc:
		return b.buildFieldSelect(n)
	case ArraySliceFunc:
		return b.buildArraySlice(n)
	case ArrayAssignFunc:
		return b.buildArrayAssign(n)
	case ArrayAnyFunc, ArrayAllFunc, ArrayContainsFunc, ArrayContainedFunc, ArrayOverlapFunc:
		return nil, b.withPos(sqlerr.New(sqlerr.SyntaxError, "syntax error: %s stands only on the right of a comparison", name), n)
	case "unnest":
		// A set-returning function: planned in FROM and at the top of a
		// select list (the binder takes those calls before they get here).
		return nil, b.withPos(sqlerr.NotSupported("unnest() here (it is planned in FROM and in a select list without aggregates)"), n)
	case ArraySubqueryFunc:
		if len(n.Args) == 1 {
			if _, ok := unparen(n.Args[0]).(*ast.SubqueryExpr); ok {
				return b.subquery(n)
			}
		}
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes one subquery", ArraySubqueryFunc)
	case ast.DateLiteral:
		return b.typedLiteral(n, types.T(types.Date))
	case ast.TimestampLiteral:
		return b.typedLiteral(n, types.TypeTimestamp)
	case ast.TimeLiteral:
		return nil, notSupported("type time")
	case ast.Concat:
		if isPipes(n) {
			return b.pipes(n)
		}
	case "trim":
		if len(n.Args) == 3 {
			if dir, ok := n.Args[2].(*ast.TrimDirectionExpr); ok {
				switch dir.Direction {
				case ast.TrimLeading:
					name = "ltrim"
				case ast.TrimTrailing:
					name = "rtrim"
				default:
					name = "btrim"
				}
				n = &ast.FuncCallExpr{FnName: n.FnName, Args: n.Args[:2]}
			}
		}
	}
	if IsAggregate(name) {
		return nil, aggNotAllowed(name)
	}
	args, err := b.buildList(n.Args)
	if err != nil {
		return nil, err
	}
	if b.Funcs != nil {
		e, ok, err := b.Funcs(name, args)
		if err != nil {
			return nil, b.withPos(err, n)
		}
		if ok {
			return e, nil
		}
	}
	return b.callFunc(name, n.FnName.O, args)
}

// NewSessionFunc returns a call of a function that a Builder's Funcs
// supplies. It is strict (NULL in, NULL out) and never folded, since what
// it reads (the session, the catalog) is not part of the expression.
func NewSessionFunc(name string, typ types.Type, args []Expr, eval func(args []types.Value) (types.Value, error)) *Func {
	return &Func{Name: name, Args: args, Typ: typ, impl: &funcImpl{strict: true,
		eval: func(_ *Context, a []types.Value) (types.Value, error) { return eval(a) }}}
}

// Resolve gives an untyped argument (a string literal or parameter) type
// t; typed arguments are returned as they are. Builder.Funcs uses it.
func (b *Builder) Resolve(e Expr, t types.Type) (Expr, error) {
	if e.Type().Family != types.Unknown && e.Type().Family != types.Null {
		return e, nil
	}
	return b.resolve(e, t)
}

// isPipes tells a || b from a call concat(a, b): TiDB parses both into
// FuncCallExpr "concat", but the operator's node starts where its first
// operand starts, while a call's arguments start after "concat(".
func isPipes(n *ast.FuncCallExpr) bool {
	return n.FnName.O == ast.Concat && len(n.Args) == 2 &&
		n.OriginTextPosition() == n.Args[0].OriginTextPosition()
}

// pipes builds a || b: NULL-propagating concatenation; one side must be a
// string (or untyped), the other is rendered as text.
func (b *Builder) pipes(n *ast.FuncCallExpr) (Expr, error) {
	l, err := b.build(n.Args[0])
	if err != nil {
		return nil, err
	}
	r, err := b.build(n.Args[1])
	if err != nil {
		return nil, err
	}
	if l.Type().Family == types.Array || r.Type().Family == types.Array {
		return b.arrayConcat(l, r)
	}
	isStr := func(t types.Type) bool {
		f := t.Family
		return f == types.Utf8 || f == types.String || f == types.Unknown
	}
	if !isStr(l.Type()) && !isStr(r.Type()) {
		return nil, opNotExist("||", l.Type(), r.Type())
	}
	target := types.TypeUtf8
	if l.Type().Family == types.String || r.Type().Family == types.String {
		target = types.TypeString
	}
	if l, err = b.resolve(l, target); err != nil {
		return nil, err
	}
	if r, err = b.resolve(r, target); err != nil {
		return nil, err
	}
	// || is text's operator: a char(n) side loses its padding.
	l, r = trimBlank(l), trimBlank(r)
	return &Concat{L: l, R: r, Typ: ConcatType(l.Type(), r.Type())}, nil
}

// pivotCast builds pivot_cast(x, 'Type'). Casting a literal parses it now,
// so `'abc'::Int32` fails at build time with 22P02, as in PostgreSQL.
func (b *Builder) pivotCast(n *ast.FuncCallExpr) (Expr, error) {
	if len(n.Args) != 2 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes an expression and a type name", CastFuncName)
	}
	tv, ok := n.Args[1].(*test_driver.ValueExpr)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s: the type must be a string literal", CastFuncName)
	}
	name, ok := tv.GetValue().(string)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s: the type must be a string literal", CastFuncName)
	}
	t, err := b.castType(name)
	if err != nil {
		return nil, err
	}
	if emptyArrayCtor(n.Args[0]) {
		// ARRAY[]::T[]: the cast gives the empty array its type.
		if t.Family != types.Array {
			return nil, sqlerr.New(codeCannotCoerce, "cannot cast type %s to %s", "text[]", TypeName(t))
		}
		return &Const{Value: types.NewArray(t.ElemType(), nil), Typ: t}, nil
	}
	e, err := b.build(n.Args[0])
	if err != nil {
		return nil, err
	}
	return b.castTo(e, t)
}

// castType resolves the type name of pivot_cast(x, 'name').
func (b *Builder) castType(name string) (types.Type, error) {
	t, err := types.ParseTypeName(name)
	if err != nil {
		return types.Type{}, err
	}
	return b.userType(t)
}

// CastTo is CAST(e AS t) on a built expression.
func (b *Builder) CastTo(e Expr, t types.Type) (Expr, error) { return b.castTo(e, t) }

func (b *Builder) castTo(e Expr, t types.Type) (Expr, error) {
	if t.Family == types.Utf8 && t.Width > 0 && e.Type().Family != types.Null {
		return b.castToWidth(e, t)
	}
	switch e.Type().Family {
	case types.Unknown:
		return b.resolve(e, t)
	case types.Null:
		if _, ok := e.(*Const); ok {
			return NullOf(t), nil
		}
	}
	return NewCast(e, t)
}

// castToWidth is an explicit cast to varchar(n) or char(n): unlike
// storing a value, which is 22001 when it does not fit, the cast cuts the
// text to n characters, as PostgreSQL's does (char(n) then pads it).
func (b *Builder) castToWidth(e Expr, t types.Type) (Expr, error) {
	text, err := b.castTo(e, types.TypeUtf8)
	if err != nil {
		return nil, err
	}
	return fold(newFunc("truncate", t, []Expr{text}, true,
		func(_ *Context, a []types.Value) (types.Value, error) {
			return types.ParseText(t, types.TruncateChars(a[0].Str(), t.Width))
		})), nil
}

// typedLiteral builds DATE '...' and TIMESTAMP '...'.
func (b *Builder) typedLiteral(n *ast.FuncCallExpr, t types.Type) (Expr, error) {
	if len(n.Args) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "malformed %s literal", t)
	}
	e, err := b.build(n.Args[0])
	if err != nil {
		return nil, err
	}
	return b.castTo(e, t)
}

// funcCast builds TiDB's own CAST(x AS type) when the dialect front left
// one: MySQL cast types map to the nearest family.
func (b *Builder) funcCast(n *ast.FuncCastExpr) (Expr, error) {
	t, err := mysqlCastType(n.Tp)
	if err != nil {
		return nil, err
	}
	e, err := b.build(n.Expr)
	if err != nil {
		return nil, err
	}
	return b.castTo(e, t)
}

func mysqlCastType(ft *tidbtypes.FieldType) (types.Type, error) {
	unsigned := ft.GetFlag()&mysql.UnsignedFlag != 0
	switch ft.GetType() {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLonglong:
		if unsigned {
			return types.TypeUint64, nil
		}
		return types.TypeInt64, nil
	case mysql.TypeNewDecimal:
		// TiDB gives a bare DECIMAL MySQL's default (10,0); PivotDB reads
		// it as PostgreSQL's unconstrained numeric instead.
		if p := ft.GetFlen(); p > 0 && p != tidbtypes.UnspecifiedLength && !(p == 10 && ft.GetDecimal() == 0) {
			d := max(ft.GetDecimal(), 0)
			return types.Type{Family: types.Decimal, Precision: p, Scale: d}, nil
		}
		return types.TypeDecimal, nil
	case mysql.TypeFloat:
		return types.T(types.Float), nil
	case mysql.TypeDouble:
		return types.TypeDouble, nil
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString, mysql.TypeBlob,
		mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if ft.GetCharset() == charset.CharsetBin {
			return types.TypeString, nil
		}
		return types.TypeUtf8, nil
	case mysql.TypeDate:
		return types.T(types.Date), nil
	case mysql.TypeDatetime:
		return types.T(types.Datetime), nil
	case mysql.TypeTimestamp:
		return types.TypeTimestamp, nil
	case mysql.TypeJSON:
		return types.T(types.Json), nil
	}
	return types.Type{}, notSupported("CAST to " + ft.String())
}
