package expr

import (
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Cast is CAST(E AS To), with types.Cast semantics: range-checked numeric
// conversions (22003), text parsing (22P02/22007), any value to text.
type Cast struct {
	E  Expr
	To types.Type
}

// NewCast checks that a cast from E's type to `to` exists (42846
// otherwise, at build time as in PostgreSQL).
func NewCast(e Expr, to types.Type) (*Cast, error) {
	if !CastAllowed(e.Type(), to) {
		return nil, sqlerr.New(codeCannotCoerce, "cannot cast type %s to %s", TypeName(e.Type()), TypeName(to))
	}
	return &Cast{E: e, To: to}, nil
}

func (e *Cast) Type() types.Type { return e.To }

func (e *Cast) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil {
		return v, err
	}
	if e.To.Family == types.Utf8 && !e.To.Blank && e.E.Type().Blank {
		// char(n) as text loses its padding (types/bpchar.go).
		v = types.TrimBlanks(v)
	}
	if !v.IsNull() {
		if r, ok, err := zoneCast(v, e.To, c.zone(), c.style()); ok {
			return r, err
		}
	}
	return types.Cast(v, e.To)
}

func (e *Cast) String() string { return "CAST(" + e.E.String() + " AS " + e.To.String() + ")" }

// CastAllowed reports whether types.Cast converts values of type from to
// type to.
func CastAllowed(from, to types.Type) bool {
	ff, tf := from.Family, to.Family
	switch {
	case ff == types.Array && tf == types.Array:
		return CastAllowed(from.ElemType(), to.ElemType())
	case tf == types.Array:
		return ff == types.Null || ff == types.Unknown || ff == types.Utf8
	case ff == types.Array:
		return tf == types.Utf8
	case ff == types.Enum && tf == types.Enum:
		return Comparable(from, to)
	case tf == types.Enum:
		return ff == types.Null || ff == types.Unknown || ff == types.Utf8
	case ff == tf, ff == types.Null, ff == types.Unknown:
		return true
	case tf == types.Utf8 || tf == types.String:
		return true
	case ff == types.Utf8 || ff == types.String:
		return tf != types.Null && tf != types.Unknown
	case tf == types.Bool:
		return ff.IsInteger()
	case ff == types.Bool:
		return tf.IsInteger() || tf.IsFloat()
	case ff.IsNumeric() && tf.IsNumeric():
		return true
	case ff.IsTime() && tf.IsTime():
		return true
	case tf == types.Time:
		// timestamp::time, timestamptz::time, interval::time, timetz::time.
		return ff == types.Timestamp || ff == types.Datetime || ff == types.TimestampTZ || ff == types.Interval ||
			ff == types.TimeTZ
	case ff == types.Time:
		return tf == types.Interval || tf == types.TimeTZ
	case tf == types.TimeTZ:
		// timestamptz::timetz (the session zone's clock and offset).
		return ff == types.TimestampTZ
	}
	return false
}
