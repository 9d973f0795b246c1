package expr

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// ColumnRef reads position Index of the input row.
type ColumnRef struct {
	Index int
	Name  string // for EXPLAIN and error messages
	Typ   types.Type
}

func (e *ColumnRef) Type() types.Type { return e.Typ }

func (e *ColumnRef) Eval(_ *Context, row Row) (types.Value, error) {
	if e.Index < 0 || e.Index >= len(row) {
		return types.Value{}, sqlerr.New(sqlerr.InternalError,
			"expr: column %s at index %d is outside a row of %d values", e.Name, e.Index, len(row))
	}
	return row[e.Index], nil
}

func (e *ColumnRef) String() string {
	if e.Name == "" {
		return "#" + strconv.Itoa(e.Index)
	}
	return e.Name
}

// Const is a constant. Typ gives the type of a typed NULL or a constrained
// type (Decimal(p,s)); when Typ is the zero Type the type is the value's
// family.
type Const struct {
	Value types.Value
	Typ   types.Type
}

// NewConst returns a constant of the value's own type.
func NewConst(v types.Value) *Const { return &Const{Value: v} }

// NullOf returns a NULL constant of type t.
func NullOf(t types.Type) *Const { return &Const{Typ: t} }

func (e *Const) Type() types.Type {
	if e.Typ.Family != types.Null {
		return e.Typ
	}
	if e.Value.Family() == types.Array {
		return e.Value.ArrayType()
	}
	return types.T(e.Value.Family())
}

func (e *Const) Eval(*Context, Row) (types.Value, error) { return e.Value, nil }

func (e *Const) String() string { return Literal(e.Value) }

// Literal renders a value as a literal that PivotDB's dialect reads back
// to the same value: numbers plainly, strings quoted with ” for a quote,
// times and intervals as YQL typed literals (Date("2024-01-01")).
func Literal(v types.Value) string {
	f := v.Family()
	switch {
	case f == types.Null:
		return "NULL"
	case f == types.Bool:
		if v.Bool() {
			return "true"
		}
		return "false"
	case f.IsNumeric():
		return v.Text()
	case f == types.Utf8 || f == types.Unknown:
		return quoteString(v.Str())
	case f == types.Array:
		return quoteString(v.Text()) + "::" + v.ArrayType().String()
	case f == types.String:
		if utf8.ValidString(v.Str()) && isPrintable(v.Str()) {
			return "String(" + quoteString(v.Str()) + ")"
		}
		return "String('" + v.Text() + "')"
	}
	return types.T(f).String() + "(" + quoteString(v.Text()) + ")"
}

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func isPrintable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// Param is the statement parameter $N. Typ is its inferred type (Unknown
// when nothing decided it: the value is then passed through as it arrives).
type Param struct {
	N   int // 1-based
	Typ types.Type
}

func (e *Param) Type() types.Type { return e.Typ }

func (e *Param) Eval(c *Context, _ Row) (types.Value, error) {
	if c == nil || e.N < 1 || e.N > len(c.Params) {
		return types.Value{}, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", e.N)
	}
	return e.Coerce(c, c.Params[e.N-1])
}

// Coerce is the value Eval gives when v is bound to the parameter: v
// converted to the parameter's type. Decorrelated subqueries (package
// exec, SubHash) read an outer value this way without building a
// parameter list per outer row.
func (e *Param) Coerce(c *Context, v types.Value) (types.Value, error) {
	f := v.Family()
	if f == types.Null || e.Typ.Family == types.Unknown || e.Typ.Family == types.Null ||
		(f == e.Typ.Family && e.Typ.Plain()) {
		return v, nil
	}
	// A text-format parameter (Unknown) parses as the inferred type; a
	// binary one of another family converts with cast semantics.
	if r, ok, err := zoneCast(v, e.Typ, c.zone(), c.style()); ok {
		return r, err
	}
	return types.Cast(v, e.Typ)
}

func (e *Param) String() string { return "$" + strconv.Itoa(e.N) }
