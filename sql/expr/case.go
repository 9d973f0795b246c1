package expr

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// When is one WHEN Cond THEN Result arm of a Case.
type When struct {
	Cond, Result Expr
}

// Case is CASE [Operand] WHEN ... THEN ... [ELSE ...] END. With an
// Operand, an arm matches when Operand = Cond (a NULL never matches);
// without one, when Cond is true. Arms are tried in order and only the
// chosen result is evaluated. Without a match the result is Else, or NULL
// when Else is nil. The Builder makes every result of type Typ (inserting
// Casts), so Eval returns results as they are.
type Case struct {
	Operand Expr // may be nil
	Whens   []When
	Else    Expr // may be nil
	Typ     types.Type
}

func (e *Case) Type() types.Type { return e.Typ }

func (e *Case) Eval(c *Context, row Row) (types.Value, error) {
	var ov types.Value
	if e.Operand != nil {
		var err error
		if ov, err = e.Operand.Eval(c, row); err != nil {
			return ov, err
		}
	}
	for _, w := range e.Whens {
		cv, err := w.Cond.Eval(c, row)
		if err != nil {
			return cv, err
		}
		var hit bool
		if e.Operand != nil {
			hit = !ov.IsNull() && !cv.IsNull() && types.Compare(ov, cv) == 0
		} else {
			b, null := truth(cv)
			hit = !null && b
		}
		if hit {
			return w.Result.Eval(c, row)
		}
	}
	if e.Else == nil {
		return types.NullValue, nil
	}
	return e.Else.Eval(c, row)
}

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if e.Operand != nil {
		b.WriteString(" " + e.Operand.String())
	}
	for _, w := range e.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if e.Else != nil {
		b.WriteString(" ELSE " + e.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

// Coalesce returns its first non-NULL argument, evaluating no further.
type Coalesce struct {
	Args []Expr
	Typ  types.Type
}

func (e *Coalesce) Type() types.Type { return e.Typ }

func (e *Coalesce) Eval(c *Context, row Row) (types.Value, error) {
	for _, a := range e.Args {
		v, err := a.Eval(c, row)
		if err != nil || !v.IsNull() {
			return v, err
		}
	}
	return types.NullValue, nil
}

func (e *Coalesce) String() string { return "coalesce(" + joinExprs(e.Args) + ")" }
