package expr

import (
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// BuildLiteral builds one item of a literal VALUES row that the dialect
// front read without TiDB's parser (parser.Statement.Values) exactly as
// BuildTyped(n, t) builds the node n TiDB makes of the same text: the
// literal or $n, then pivot_cast when it has a ::type, then unary minus
// when it has one, each folded, with the position of the node that fails
// (the literal's token for the literal and the cast, the minus for the
// negation). pos maps the item's byte offsets to positions (nil: none).
// DEFAULT items are the caller's. The sequence mirrors translate, literal,
// pivotCast, unary and BuildTyped; parser's TestLiteralValuesMatchFullParse
// (sql/bind) checks the two give the same expressions and errors.
func (b *Builder) BuildLiteral(l *parser.Literal, pos func(int) int, t types.Type) (Expr, error) {
	at := func(err error, off int32) error {
		if pos == nil {
			return err
		}
		return sqlerr.WithPosition(err, pos(int(off)))
	}
	// pivot_cast resolves its type name before it builds its argument.
	var ct types.Type
	var err error
	if l.Cast != "" {
		if ct, err = b.castType(l.Cast); err != nil {
			return nil, at(err, l.Off)
		}
	}
	var e Expr
	switch l.Kind {
	case parser.LitNull:
		e = NewConst(types.NullValue)
	case parser.LitBool:
		e = NewConst(types.NewBool(l.Int != 0))
	case parser.LitInt:
		e = intLiteral(l.Int)
	case parser.LitUint:
		e = NewConst(types.NewUint64(l.Uint))
	case parser.LitDouble:
		e = NewConst(types.NewDouble(l.Float))
	case parser.LitDecimal:
		e, err = decimalLiteral(l.Str)
	case parser.LitString:
		if err = b.growConst(l.Str); err == nil {
			e = NewConst(types.NewUnknown(l.Str))
		}
	case parser.LitParam:
		e, err = b.paramN(int(l.Int))
	default:
		err = sqlerr.New(sqlerr.InternalError, "expr: literal item of kind %d", l.Kind)
	}
	if err != nil {
		return nil, at(err, l.Off)
	}
	e = fold(e)
	top := l.Off
	if l.Cast != "" {
		if e, err = b.castTo(e, ct); err != nil {
			return nil, at(err, l.Off)
		}
		e = fold(e)
	}
	if l.Neg {
		top = l.SignOff
		if e, err = b.negate(e); err != nil {
			return nil, at(err, top)
		}
		e = fold(e)
	}
	b.fixParams(e) // BuildUntyped's, before BuildTyped looks at the type
	switch e.Type().Family {
	case types.Unknown:
		if e, err = b.resolve(e, t); err != nil {
			return nil, at(err, top)
		}
	case types.Null:
		if _, ok := e.(*Const); ok && t.Family != types.Unknown {
			e = NullOf(t)
		}
	}
	b.fixParams(e)
	return e, nil
}
