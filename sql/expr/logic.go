package expr

import (
	"github.com/pivotdb/pivotdb/sql/types"
)

// The boolean connectives use SQL's three-valued logic: NULL is "unknown",
// FALSE AND NULL is FALSE, TRUE OR NULL is TRUE, NOT NULL is NULL. The right
// operand is not evaluated when the left one decides the result, so
// `x <> 0 AND 10 / x > 1` never divides by zero (it would yield NULL
// anyway, but a failing function would not run).

// truth reads a value in a boolean context: isNull for NULL, else whether
// it is true. Non-Bool values only reach here from nodes built outside the
// Builder; numbers count as true when non-zero, as in SQLite.
func truth(v types.Value) (val, isNull bool) {
	switch f := v.Family(); {
	case f == types.Null:
		return false, true
	case f == types.Bool || f.IsInteger():
		return v.Int() != 0, false
	case f.IsNumeric():
		return v.AsFloat() != 0, false
	case f == types.Unknown || f.IsStringLike():
		b, err := types.ParseText(types.TypeBool, v.Str())
		if err != nil {
			return false, true
		}
		return b.Bool(), false
	}
	return false, true
}

// And is L AND R.
type And struct{ L, R Expr }

func (e *And) Type() types.Type { return types.TypeBool }

func (e *And) Eval(c *Context, row Row) (types.Value, error) {
	l, err := e.L.Eval(c, row)
	if err != nil {
		return l, err
	}
	lv, lnull := truth(l)
	if !lnull && !lv {
		return types.NewBool(false), nil
	}
	r, err := e.R.Eval(c, row)
	if err != nil {
		return r, err
	}
	rv, rnull := truth(r)
	switch {
	case !rnull && !rv:
		return types.NewBool(false), nil
	case lnull || rnull:
		return types.NullValue, nil
	}
	return types.NewBool(true), nil
}

func (e *And) String() string { return operand(e.L) + " AND " + operand(e.R) }

// Or is L OR R.
type Or struct{ L, R Expr }

func (e *Or) Type() types.Type { return types.TypeBool }

func (e *Or) Eval(c *Context, row Row) (types.Value, error) {
	l, err := e.L.Eval(c, row)
	if err != nil {
		return l, err
	}
	lv, lnull := truth(l)
	if !lnull && lv {
		return types.NewBool(true), nil
	}
	r, err := e.R.Eval(c, row)
	if err != nil {
		return r, err
	}
	rv, rnull := truth(r)
	switch {
	case !rnull && rv:
		return types.NewBool(true), nil
	case lnull || rnull:
		return types.NullValue, nil
	}
	return types.NewBool(false), nil
}

func (e *Or) String() string { return operand(e.L) + " OR " + operand(e.R) }

// Not is NOT E.
type Not struct{ E Expr }

func (e *Not) Type() types.Type { return types.TypeBool }

func (e *Not) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil {
		return v, err
	}
	b, null := truth(v)
	if null {
		return types.NullValue, nil
	}
	return types.NewBool(!b), nil
}

func (e *Not) String() string { return "NOT " + operand(e.E) }

// IsNull is E IS NULL, or E IS NOT NULL when Negate. It is never NULL.
type IsNull struct {
	E      Expr
	Negate bool
}

func (e *IsNull) Type() types.Type { return types.TypeBool }

func (e *IsNull) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil {
		return v, err
	}
	return types.NewBool(v.IsNull() != e.Negate), nil
}

func (e *IsNull) String() string {
	if e.Negate {
		return operand(e.E) + " IS NOT NULL"
	}
	return operand(e.E) + " IS NULL"
}

// IsTruth is E IS [NOT] TRUE / E IS [NOT] FALSE: E IS TRUE is true when E
// is true and false when E is false or NULL. It is never NULL.
type IsTruth struct {
	E      Expr
	Truth  bool // TRUE or FALSE
	Negate bool
}

func (e *IsTruth) Type() types.Type { return types.TypeBool }

func (e *IsTruth) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil {
		return v, err
	}
	b, null := truth(v)
	is := !null && b == e.Truth
	return types.NewBool(is != e.Negate), nil
}

func (e *IsTruth) String() string {
	s := operand(e.E) + " IS "
	if e.Negate {
		s += "NOT "
	}
	if e.Truth {
		return s + "TRUE"
	}
	return s + "FALSE"
}
