package expr

import (
	"github.com/pivotdb/pivotdb/sql/types"
)

// Concat is L || R. It is NULL when either side is NULL (PostgreSQL's ||;
// the concat() function ignores NULLs instead). Operands that are not
// strings are rendered as text. The result is String (bytes) when either
// operand is String, as in YQL, else Utf8.
type Concat struct {
	L, R Expr
	Typ  types.Type
}

// ConcatType is the result type of a || b.
func ConcatType(a, b types.Type) types.Type {
	if a.Family == types.String || b.Family == types.String {
		return types.TypeString
	}
	return types.TypeUtf8
}

func (e *Concat) Type() types.Type { return e.Typ }

func (e *Concat) Eval(c *Context, row Row) (types.Value, error) {
	l, err := e.L.Eval(c, row)
	if err != nil || l.IsNull() {
		return types.NullValue, err
	}
	r, err := e.R.Eval(c, row)
	if err != nil || r.IsNull() {
		return types.NullValue, err
	}
	s := textOf(l) + textOf(r)
	if e.Typ.Family == types.String {
		return types.NewString(s), nil
	}
	return types.NewUtf8(s), nil
}

func (e *Concat) String() string { return operand(e.L) + " || " + operand(e.R) }

// textOf renders a value as the string functions see it: strings as they
// are (String bytes raw), everything else in its text output form.
func textOf(v types.Value) string {
	if f := v.Family(); f.IsStringLike() || f == types.Unknown {
		return v.Str()
	}
	return v.Text()
}
