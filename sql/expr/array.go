package expr

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// PivotDB has no array type. The system catalog's array columns
// (pg_index.indkey, pg_statistic_ext.stxkind, ...) hold PostgreSQL's text
// form of an array, and x op ANY (array) / x op ALL (array) compare with
// its elements, as psql's and drivers' catalog queries do. The dialect
// front spells them x op pivot_array_any(array) and pivot_array_all.

// ArrayAnyFunc and ArrayAllFunc are the names the dialect front gives
// op ANY (array) and op ALL (array).
const (
	ArrayAnyFunc = "pivot_array_any"
	ArrayAllFunc = "pivot_array_all"
)

// ArraySubqueryFunc is the dialect front's spelling of ARRAY(SELECT ...):
// pivot_array_subquery((SELECT ...)). The builder hands the call to
// Builder.Subquery; its value is the text form of an array of the
// subquery's one column (FormatArrayText).
const ArraySubqueryFunc = "pivot_array_subquery"

// FormatArrayText renders a one-dimensional array in PostgreSQL's text
// form: '{a,"b c",NULL}', '{}' for no elements. nil elements are NULL. An
// element is double-quoted when it is empty, is the word NULL, or holds
// a character that the syntax gives a meaning (braces, comma, quote,
// backslash, white space); quotes and backslashes inside are escaped
// with a backslash. ParseArrayText reads it back.
func FormatArrayText(elems []*string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			sb.WriteByte(',')
		}
		if e == nil {
			sb.WriteString("NULL")
			continue
		}
		if !arrayElemNeedsQuotes(*e) {
			sb.WriteString(*e)
			continue
		}
		sb.WriteByte('"')
		for j := 0; j < len(*e); j++ {
			c := (*e)[j]
			if c == '"' || c == '\\' {
				sb.WriteByte('\\')
			}
			sb.WriteByte(c)
		}
		sb.WriteByte('"')
	}
	sb.WriteByte('}')
	return sb.String()
}

func arrayElemNeedsQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "NULL") {
		return true
	}
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

// ParseArrayText reads PostgreSQL's text form of a one-dimensional array,
// '{a,"b c",NULL}', or an int2vector/oidvector's '1 2 3'. nil elements are
// NULL.
func ParseArrayText(s string) ([]*string, error) {
	if !strings.HasPrefix(s, "{") {
		var out []*string
		for _, f := range strings.Fields(s) {
			out = append(out, &f)
		}
		return out, nil
	}
	if !strings.HasSuffix(s, "}") {
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
	}
	body := s[1 : len(s)-1]
	var out []*string
	if body == "" {
		return out, nil
	}
	var cur strings.Builder
	quoted, inQuote := false, false
	flush := func() {
		e := cur.String()
		if !quoted && strings.EqualFold(e, "NULL") {
			out = append(out, nil)
		} else {
			out = append(out, &e)
		}
		cur.Reset()
		quoted = false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			cur.WriteByte(body[i])
		case c == '"':
			inQuote = !inQuote
			quoted = true
		case c == ',' && !inQuote:
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	if inQuote {
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
	}
	flush()
	return out, nil
}

// ArrayCompare is L op ANY (Arr), or L op ALL (Arr) when All. Arr is an
// array in text form; its elements are read as L's type. As in
// PostgreSQL: ANY is true if some comparison is true, else NULL if some is
// NULL, else false (so ANY of an empty array is false); ALL is false if
// some comparison is false, else NULL if some is NULL, else true.
type ArrayCompare struct {
	Op  CmpOp
	L   Expr
	Arr Expr
	All bool
}

func (e *ArrayCompare) Type() types.Type { return types.TypeBool }

func (e *ArrayCompare) Eval(c *Context, row Row) (types.Value, error) {
	l, err := e.L.Eval(c, row)
	if err != nil {
		return l, err
	}
	a, err := e.Arr.Eval(c, row)
	if err != nil || a.IsNull() {
		return types.NullValue, err
	}
	elems, err := ParseArrayText(a.Str())
	if err != nil {
		return types.Value{}, err
	}
	sawNull := false
	for _, el := range elems {
		r := types.NullValue
		if el != nil {
			if r, err = types.ParseText(e.L.Type(), *el); err != nil {
				return types.Value{}, err
			}
		}
		v := compareValues(e.Op, l, r)
		switch {
		case v.IsNull():
			sawNull = true
		case v.Bool() != e.All:
			// A true comparison decides ANY, a false one ALL.
			return types.NewBool(!e.All), nil
		}
	}
	if sawNull {
		return types.NullValue, nil
	}
	return types.NewBool(e.All), nil
}

func (e *ArrayCompare) String() string {
	q := "ANY"
	if e.All {
		q = "ALL"
	}
	return operand(e.L) + " " + e.Op.String() + " " + q + " (" + e.Arr.String() + ")"
}

// arrayCompare builds l op ANY/ALL (array) when rn is the dialect front's
// spelling of it; ok is false otherwise.
func (b *Builder) arrayCompare(op CmpOp, ln, rn ast.ExprNode) (Expr, bool, error) {
	call, isCall := unparen(rn).(*ast.FuncCallExpr)
	if !isCall || (call.FnName.L != ArrayAnyFunc && call.FnName.L != ArrayAllFunc) || len(call.Args) != 1 {
		return nil, false, nil
	}
	l, err := b.build(ln)
	if err != nil {
		return nil, true, err
	}
	if l, err = b.resolve(l, types.TypeUtf8); err != nil {
		return nil, true, err
	}
	arr, err := b.build(call.Args[0])
	if err != nil {
		return nil, true, err
	}
	if arr, err = b.resolve(arr, types.TypeUtf8); err != nil {
		return nil, true, err
	}
	if f := arr.Type().Family; f != types.Utf8 && f != types.Null {
		return nil, true, sqlerr.New(sqlerr.DatatypeMismatch, "op ANY/ALL (array) requires array on right side")
	}
	if op == NullSafeEQ {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "IS DISTINCT FROM ANY is not supported")
	}
	return &ArrayCompare{Op: op, L: l, Arr: arr, All: call.FnName.L == ArrayAllFunc}, true, nil
}

// ArrayElem is the subscript a[i] of the text form of an array: the i-th
// element, counting from 1; NULL when i is out of range, the element is
// NULL, or either operand is NULL. Elem is the element's type: known from
// a cast a::T[], and otherwise Unknown, like an untyped literal, until the
// context decides it (attnum = prattrs[s] compares integers); Unknown
// left over reads as text.
type ArrayElem struct {
	Arr, Index Expr
	Elem       types.Type
}

func (e *ArrayElem) Type() types.Type { return e.Elem }

func (e *ArrayElem) Eval(c *Context, row Row) (types.Value, error) {
	a, err := e.Arr.Eval(c, row)
	if err != nil || a.IsNull() {
		return types.NullValue, err
	}
	iv, err := e.Index.Eval(c, row)
	if err != nil || iv.IsNull() {
		return types.NullValue, err
	}
	elems, err := ParseArrayText(a.Str())
	if err != nil {
		return types.Value{}, err
	}
	i := iv.Int()
	if i < 1 || i > int64(len(elems)) || elems[i-1] == nil {
		return types.NullValue, nil
	}
	switch e.Elem.Family {
	case types.Unknown, types.Utf8:
		return types.NewUtf8(*elems[i-1]), nil
	}
	return types.ParseText(e.Elem, *elems[i-1])
}

func (e *ArrayElem) String() string { return operand(e.Arr) + "[" + e.Index.String() + "]" }

// Children and WithChildren make the operands visible to Walk and
// Transform (outer references, parameters).
func (e *ArrayElem) Children() []Expr { return []Expr{e.Arr, e.Index} }

func (e *ArrayElem) WithChildren(ch []Expr) (Expr, error) {
	if len(ch) != 2 {
		return nil, sqlerr.New(sqlerr.InternalError, "expr: ArrayElem takes 2 children, got %d", len(ch))
	}
	return &ArrayElem{Arr: ch[0], Index: ch[1], Elem: e.Elem}, nil
}
