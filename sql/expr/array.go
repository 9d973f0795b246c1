package expr

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Arrays (types/array.go) reach the builder in the dialect front's
// spellings (parser.ArrayCtorFunc and its siblings): ARRAY[...] is
// pivot_array(...), a[i] pivot_array_elem(a, i), a[i:j]
// pivot_array_slice(a, i, j, mask), x op ANY (a) x op pivot_array_any(a),
// and a @> b, a <@ b, a && b a = pivot_array_contains(b), ... .
//
// The system catalog's array columns (pg_index.indkey, ...) still hold
// PostgreSQL's text form of an array; where an array is expected and a
// text value comes, the operators and functions here read the text
// form, so psql's and drivers' catalog queries keep working.

// The dialect front's function names (parser.Array*Func).
const (
	ArrayAnyFunc       = "pivot_array_any"
	ArrayAllFunc       = "pivot_array_all"
	ArrayCtorFunc      = "pivot_array"
	ArrayElemFunc      = "pivot_array_elem"
	ArraySliceFunc     = "pivot_array_slice"
	ArrayContainsFunc  = "pivot_array_contains"
	ArrayContainedFunc = "pivot_array_contained"
	ArrayOverlapFunc   = "pivot_array_overlap"
)

// ArraySubqueryFunc is the dialect front's spelling of ARRAY(SELECT ...):
// pivot_array_subquery((SELECT ...)). The builder hands the call to
// Builder.Subquery; its value is an array of the subquery's one column.
const ArraySubqueryFunc = "pivot_array_subquery"

// FormatArrayText renders a one-dimensional array of texts in
// PostgreSQL's text form: '{a,"b c",NULL}', '{}' for no elements. nil
// elements are NULL.
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
		types.AppendArrayElemText(&sb, *e)
	}
	sb.WriteByte('}')
	return sb.String()
}

// ParseArrayText reads PostgreSQL's text form of an array,
// '{a,"b c",NULL}' (every dimension flattened), or an int2vector's or
// oidvector's '1 2 3'. nil elements are NULL.
func ParseArrayText(s string) ([]*string, error) {
	if t := strings.TrimSpace(s); !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		var out []*string
		for _, f := range strings.Fields(s) {
			out = append(out, &f)
		}
		return out, nil
	}
	_, _, elems, err := types.ParseArrayLiteral(s)
	return elems, err
}

// arrayValue returns v as an array of elem: v itself when it is one, the
// parse of its text form when it is text (the catalog's arrays).
func arrayValue(v types.Value, elem types.Type) (types.Value, error) {
	switch v.Family() {
	case types.Array:
		return v, nil
	case types.Utf8, types.Unknown:
		if elem.Family == types.Unknown || elem.Family == types.Null {
			elem = types.TypeUtf8
		}
		s := v.Str()
		if t := strings.TrimSpace(s); !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
			// int2vector / oidvector: '1 2 3'.
			var es []types.Value
			for _, f := range strings.Fields(s) {
				e, err := types.ParseText(elem, f)
				if err != nil {
					return types.Value{}, err
				}
				es = append(es, e)
			}
			return types.NewArray(elem, es), nil
		}
		return types.ParseText(types.ArrayOf(elem), s)
	}
	return types.Value{}, sqlerr.New(sqlerr.DatatypeMismatch, "expected an array, got %s", v.Family())
}

// TextArray reads a text expression holding the text form of an array
// (the catalog's arrays: '{a,b}', or an int2vector's '1 2') as text[].
func TextArray(e Expr) Expr {
	return newFunc("text_array", types.ArrayOf(types.TypeUtf8), []Expr{e}, true,
		func(_ *Context, a []types.Value) (types.Value, error) {
			return arrayValue(a[0], types.TypeUtf8)
		})
}

// isArrayLike reports whether t can stand where an array is expected:
// an array, text (the catalog's text form), NULL or an untyped literal.
func isArrayLike(t types.Type) bool {
	switch t.Family {
	case types.Array, types.Utf8, types.Null, types.Unknown:
		return true
	}
	return false
}

// ArrayCtor is ARRAY[e1, e2, ...]. When the elements are arrays
// themselves, the result has one more dimension (ARRAY[[1,2],[3,4]]);
// they must then all have the same dimensions (2202E otherwise).
type ArrayCtor struct {
	Elems []Expr
	Typ   types.Type // the array type
}

func (e *ArrayCtor) Type() types.Type { return e.Typ }

func (e *ArrayCtor) Eval(c *Context, row Row) (types.Value, error) {
	vals := make([]types.Value, len(e.Elems))
	nested := false
	for i, x := range e.Elems {
		v, err := x.Eval(c, row)
		if err != nil {
			return v, err
		}
		vals[i] = v
		if x.Type().Family == types.Array {
			nested = true
		}
	}
	return MakeArray(e.Typ.ElemType(), vals, nested)
}

// MakeArray builds an array of elements of type et from vals; when
// nested, vals are arrays themselves (or NULL), which become the
// sub-arrays of an array with one more dimension (ARRAY[[1,2],[3,4]],
// ARRAY(SELECT array_column ...)).
func MakeArray(et types.Type, vals []types.Value, nested bool) (types.Value, error) {
	if !nested {
		return types.NewArray(et, vals), nil
	}
	// Sub-arrays: all the same shape; a NULL or empty one makes the
	// others empty too in PostgreSQL only when all are, else 2202E.
	var dims, lower []int
	var elems []types.Value
	empty := 0
	for _, v := range vals {
		if v.IsNull() || len(v.ArrayDims()) == 0 {
			empty++
			continue
		}
		if dims == nil {
			dims, lower = v.ArrayDims(), v.ArrayLower()
		} else if !sameInts(dims, v.ArrayDims()) || !sameInts(lower, v.ArrayLower()) || empty > 0 {
			return types.Value{}, mismatchedDims()
		}
		elems = append(elems, v.ArrayElems()...)
	}
	if dims == nil {
		return types.NewArray(et, nil), nil
	}
	if empty > 0 {
		return types.Value{}, mismatchedDims()
	}
	nd := append([]int{len(vals)}, dims...)
	nl := append([]int{1}, lower...)
	return types.NewArrayDims(et, nd, nl, elems)
}

func mismatchedDims() error {
	return sqlerr.New(sqlerr.ArraySubscriptError, "multidimensional arrays must have array expressions with matching dimensions")
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (e *ArrayCtor) String() string { return "ARRAY[" + joinExprs(e.Elems) + "]" }

func (e *ArrayCtor) Children() []Expr { return e.Elems }

func (e *ArrayCtor) WithChildren(ch []Expr) (Expr, error) {
	return &ArrayCtor{Elems: ch, Typ: e.Typ}, nil
}

// buildArrayCtor types ARRAY[...]: the elements' common type (text for
// untyped literals only); elements that are arrays make a
// multidimensional array. An empty ARRAY[] needs a cast (42P18), which
// castTo supplies.
func (b *Builder) buildArrayCtor(n *ast.FuncCallExpr) (Expr, error) {
	if len(n.Args) == 0 {
		e := sqlerr.New(sqlerr.IndeterminateDatatype, "cannot determine type of empty array")
		e.Hint = "Explicitly cast to the desired type, for example ARRAY[]::integer[]."
		return nil, e
	}
	args, err := b.buildList(n.Args)
	if err != nil {
		return nil, err
	}
	return b.arrayCtorOf(args)
}

func (b *Builder) arrayCtorOf(args []Expr) (Expr, error) {
	nested := false
	for _, a := range args {
		if a.Type().Family == types.Array {
			nested = true
		}
	}
	ts := exprTypes(args)
	if nested {
		for i, t := range ts {
			switch t.Family {
			case types.Array, types.Null, types.Unknown:
				continue
			}
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "ARRAY types %s and %s cannot be matched", TypeName(ts[0]), TypeName(ts[i]))
		}
	}
	t, err := CommonType("ARRAY", ts...)
	if err != nil {
		return nil, err
	}
	if t.Family == types.Null {
		t = types.TypeUtf8
	}
	for i := range args {
		if args[i], err = b.Coerce(args[i], t); err != nil {
			return nil, err
		}
	}
	return &ArrayCtor{Elems: args, Typ: types.ArrayOf(t)}, nil
}

// emptyArrayCtor reports whether n is ARRAY[] (which only a cast types).
func emptyArrayCtor(n ast.ExprNode) bool {
	call, ok := unparen(n).(*ast.FuncCallExpr)
	return ok && call.FnName.L == ArrayCtorFunc && len(call.Args) == 0
}

// ArrayCompare is L op ANY (Arr), or L op ALL (Arr) when All. As in
// PostgreSQL: ANY is true if some comparison is true, else NULL if some
// is NULL, else false (so ANY of an empty array is false); ALL is false
// if some comparison is false, else NULL if some is NULL, else true. Arr
// may be the text form of an array (the catalog's), read as L's type.
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
	if a, err = arrayValue(a, e.L.Type()); err != nil {
		return types.Value{}, err
	}
	sawNull := false
	for _, r := range a.ArrayElems() {
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

func (e *ArrayCompare) Children() []Expr { return []Expr{e.L, e.Arr} }

func (e *ArrayCompare) WithChildren(ch []Expr) (Expr, error) {
	return &ArrayCompare{Op: e.Op, L: ch[0], Arr: ch[1], All: e.All}, nil
}

// arrayCompare builds l op ANY/ALL (array), and a @> b, a <@ b, a && b,
// when rn is the dialect front's spelling of them; ok is false otherwise.
func (b *Builder) arrayCompare(op CmpOp, ln, rn ast.ExprNode) (Expr, bool, error) {
	call, isCall := unparen(rn).(*ast.FuncCallExpr)
	if !isCall || len(call.Args) != 1 {
		return nil, false, nil
	}
	switch call.FnName.L {
	case ArrayAnyFunc, ArrayAllFunc:
	case ArrayContainsFunc, ArrayContainedFunc, ArrayOverlapFunc:
		e, err := b.arrayContains(call.FnName.L, ln, call.Args[0])
		return e, true, err
	default:
		return nil, false, nil
	}
	l, err := b.build(ln)
	if err != nil {
		return nil, true, err
	}
	arr, err := b.build(call.Args[0])
	if err != nil {
		return nil, true, err
	}
	at := arr.Type()
	switch at.Family {
	case types.Array:
		if l, err = b.resolve(l, resolveTarget(at.ElemType())); err != nil {
			return nil, true, err
		}
	case types.Unknown:
		// '{1,2}' or $1: an array of the left side's type.
		if l, err = b.resolve(l, types.TypeUtf8); err != nil {
			return nil, true, err
		}
		if arr, err = b.resolve(arr, types.ArrayOf(resolveTarget(l.Type()))); err != nil {
			return nil, true, err
		}
	case types.Utf8, types.Null:
		// The catalog's text form, read as the left side's type.
		if l, err = b.resolve(l, types.TypeUtf8); err != nil {
			return nil, true, err
		}
	default:
		return nil, true, sqlerr.New(sqlerr.WrongObjectType, "op ANY/ALL (array) requires array on right side")
	}
	if arr.Type().Family == types.Array && !Comparable(l.Type(), arr.Type().ElemType()) {
		sym := op.String()
		return nil, true, opNotExist(sym, l.Type(), arr.Type().ElemType())
	}
	if op == NullSafeEQ {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "IS DISTINCT FROM ANY is not supported")
	}
	return &ArrayCompare{Op: op, L: l, Arr: arr, All: call.FnName.L == ArrayAllFunc}, true, nil
}

// ArrayContains is L @> R (Op "@>"), L <@ R ("<@") or L && R ("&&"). As
// in PostgreSQL, elements compare with =, so a NULL element is never
// contained in anything, and dimensions do not matter.
type ArrayContains struct {
	Op   string
	L, R Expr
}

func (e *ArrayContains) Type() types.Type { return types.TypeBool }

func (e *ArrayContains) Eval(c *Context, row Row) (types.Value, error) {
	l, err := e.L.Eval(c, row)
	if err != nil || l.IsNull() {
		return types.NullValue, err
	}
	r, err := e.R.Eval(c, row)
	if err != nil || r.IsNull() {
		return types.NullValue, err
	}
	if l, err = arrayValue(l, e.R.Type().ElemType()); err != nil {
		return types.Value{}, err
	}
	if r, err = arrayValue(r, e.L.Type().ElemType()); err != nil {
		return types.Value{}, err
	}
	switch e.Op {
	case "@>":
		return types.NewBool(arrayContainsAll(l.ArrayElems(), r.ArrayElems())), nil
	case "<@":
		return types.NewBool(arrayContainsAll(r.ArrayElems(), l.ArrayElems())), nil
	}
	for _, x := range l.ArrayElems() {
		if !x.IsNull() && arrayHas(r.ArrayElems(), x) {
			return types.NewBool(true), nil
		}
	}
	return types.NewBool(false), nil
}

// arrayContainsAll reports whether every element of sub is in super.
func arrayContainsAll(super, sub []types.Value) bool {
	for _, x := range sub {
		if x.IsNull() || !arrayHas(super, x) {
			return false
		}
	}
	return true
}

func arrayHas(elems []types.Value, x types.Value) bool {
	for _, y := range elems {
		if !y.IsNull() && types.Compare(x, y) == 0 {
			return true
		}
	}
	return false
}

func (e *ArrayContains) String() string { return operand(e.L) + " " + e.Op + " " + operand(e.R) }

func (e *ArrayContains) Children() []Expr { return []Expr{e.L, e.R} }

func (e *ArrayContains) WithChildren(ch []Expr) (Expr, error) {
	return &ArrayContains{Op: e.Op, L: ch[0], R: ch[1]}, nil
}

func (b *Builder) arrayContains(fn string, ln, rn ast.ExprNode) (Expr, error) {
	op := map[string]string{ArrayContainsFunc: "@>", ArrayContainedFunc: "<@", ArrayOverlapFunc: "&&"}[fn]
	l, err := b.build(ln)
	if err != nil {
		return nil, err
	}
	r, err := b.build(rn)
	if err != nil {
		return nil, err
	}
	if l, r, err = b.resolveArrays(l, r); err != nil {
		return nil, err
	}
	lt, rt := l.Type(), r.Type()
	if !isArrayLike(lt) || !isArrayLike(rt) || (lt.Family == types.Array && rt.Family == types.Array && !Comparable(lt.ElemType(), rt.ElemType())) ||
		(lt.Family != types.Array && rt.Family != types.Array) {
		return nil, opNotExist(op, lt, rt)
	}
	return &ArrayContains{Op: op, L: l, R: r}, nil
}

// resolveArrays resolves untyped operands of an array operator: an
// untyped side takes the other side's array type (text[] when both are
// untyped).
func (b *Builder) resolveArrays(l, r Expr) (Expr, Expr, error) {
	lu, ru := l.Type().Family == types.Unknown, r.Type().Family == types.Unknown
	var err error
	switch {
	case lu && ru:
		if l, err = b.resolve(l, types.ArrayOf(types.TypeUtf8)); err != nil {
			return nil, nil, err
		}
		r, err = b.resolve(r, types.ArrayOf(types.TypeUtf8))
	case lu && r.Type().Family == types.Array:
		l, err = b.resolve(l, resolveTarget(r.Type()))
	case ru && l.Type().Family == types.Array:
		r, err = b.resolve(r, resolveTarget(l.Type()))
	}
	return l, r, err
}

// ArrayElem is the subscript a[i] (a[i][j] for a multidimensional
// array): the element, or NULL when a subscript is out of range, their
// number is not the array's dimensions, or an operand is NULL, as in
// PostgreSQL. Elem is the element's type. An operand of type text is
// the catalog's text form of an array: its element type is Unknown, like
// an untyped literal, until the context decides it (attnum =
// prattrs[s] compares integers); Unknown left over reads as text.
type ArrayElem struct {
	Arr   Expr
	Index []Expr
	Elem  types.Type
}

func (e *ArrayElem) Type() types.Type { return e.Elem }

func (e *ArrayElem) Eval(c *Context, row Row) (types.Value, error) {
	a, err := e.Arr.Eval(c, row)
	if err != nil || a.IsNull() {
		return types.NullValue, err
	}
	idx := make([]int64, len(e.Index))
	for k, x := range e.Index {
		iv, err := x.Eval(c, row)
		if err != nil || iv.IsNull() {
			return types.NullValue, err
		}
		idx[k] = iv.Int()
	}
	if a.Family() != types.Array {
		// The catalog's text form: one dimension, elements as text until
		// the context typed them.
		elems, err := ParseArrayText(a.Str())
		if err != nil {
			return types.Value{}, err
		}
		if len(idx) != 1 || idx[0] < 1 || idx[0] > int64(len(elems)) || elems[idx[0]-1] == nil {
			return types.NullValue, nil
		}
		s := *elems[idx[0]-1]
		switch e.Elem.Family {
		case types.Unknown, types.Utf8:
			return types.NewUtf8(s), nil
		}
		return types.ParseText(e.Elem, s)
	}
	dims, lower := a.ArrayDims(), a.ArrayLower()
	if len(idx) != len(dims) {
		return types.NullValue, nil
	}
	off := int64(0)
	for k, d := range dims {
		i := idx[k] - int64(lower[k])
		if i < 0 || i >= int64(d) {
			return types.NullValue, nil
		}
		off = off*int64(d) + i
	}
	return a.ArrayElems()[off], nil
}

func (e *ArrayElem) String() string {
	var sb strings.Builder
	sb.WriteString(operand(e.Arr))
	for _, x := range e.Index {
		sb.WriteString("[" + x.String() + "]")
	}
	return sb.String()
}

func (e *ArrayElem) Children() []Expr { return append([]Expr{e.Arr}, e.Index...) }

func (e *ArrayElem) WithChildren(ch []Expr) (Expr, error) {
	if len(ch) < 2 {
		return nil, sqlerr.New(sqlerr.InternalError, "expr: ArrayElem takes at least 2 children, got %d", len(ch))
	}
	return &ArrayElem{Arr: ch[0], Index: ch[1:], Elem: e.Elem}, nil
}

func (b *Builder) buildArrayElem(n *ast.FuncCallExpr) (Expr, error) {
	if len(n.Args) < 2 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes an array and subscripts", ArrayElemFunc)
	}
	args, err := b.buildList(n.Args)
	if err != nil {
		return nil, err
	}
	arr := args[0]
	if arr, err = b.resolve(arr, types.TypeUtf8); err != nil {
		return nil, err
	}
	for i := 1; i < len(args); i++ {
		if args[i], err = b.subscript(args[i]); err != nil {
			return nil, err
		}
	}
	switch t := arr.Type(); t.Family {
	case types.Array:
		return &ArrayElem{Arr: arr, Index: args[1:], Elem: t.ElemType()}, nil
	case types.Utf8, types.Null:
		if c, ok := arr.(*Cast); ok && c.To.Family == types.Utf8 {
			// (x::text)[i] of the catalog: still the text form.
			arr = c
		}
		return &ArrayElem{Arr: arr, Index: args[1:], Elem: types.TypeUnknown}, nil
	default:
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", TypeName(t))
	}
}

// subscript checks an array subscript: an integer (42804 otherwise).
func (b *Builder) subscript(e Expr) (Expr, error) {
	e, err := b.resolve(e, types.TypeInt32)
	if err != nil {
		return nil, err
	}
	switch f := e.Type().Family; {
	case f.IsInteger(), f == types.Null:
		return e, nil
	case f.IsNumeric():
		// PostgreSQL converts a numeric subscript to integer (rounding).
		return NewCast(e, types.TypeInt32)
	}
	return nil, sqlerr.New(sqlerr.DatatypeMismatch, "array subscript must have type integer")
}

// ArraySlice is a[lo:hi] (one pair per dimension; Omit has bit 2k set
// when the lower bound of pair k was left out, 2k+1 for the upper): the
// elements inside the bounds, clamped to the array's, as a new array with
// lower bounds 1; empty when nothing is inside. Dimensions without a
// pair are taken whole.
type ArraySlice struct {
	Arr    Expr
	Bounds []Expr
	Omit   int
}

func (e *ArraySlice) Type() types.Type { return e.Arr.Type() }

func (e *ArraySlice) Eval(c *Context, row Row) (types.Value, error) {
	a, err := e.Arr.Eval(c, row)
	if err != nil || a.IsNull() {
		return types.NullValue, err
	}
	bounds := make([]int64, len(e.Bounds))
	for k, x := range e.Bounds {
		if e.Omit&(1<<k) != 0 {
			continue
		}
		v, err := x.Eval(c, row)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		bounds[k] = v.Int()
	}
	dims, lower := a.ArrayDims(), a.ArrayLower()
	et := e.Arr.Type().ElemType()
	np := len(bounds) / 2
	if len(dims) == 0 || np > len(dims) {
		return types.NewArray(et, nil), nil
	}
	lo := make([]int, len(dims))
	hi := make([]int, len(dims))
	for k := range dims {
		l, h := int64(lower[k]), int64(lower[k]+dims[k]-1)
		if k < np {
			if e.Omit&(1<<(2*k)) == 0 {
				l = max(l, bounds[2*k])
			}
			if e.Omit&(1<<(2*k+1)) == 0 {
				h = min(h, bounds[2*k+1])
			}
		}
		if h < l {
			return types.NewArray(et, nil), nil
		}
		lo[k], hi[k] = int(l-int64(lower[k])), int(h-int64(lower[k]))
	}
	nd := make([]int, len(dims))
	nl := make([]int, len(dims))
	for k := range dims {
		nd[k], nl[k] = hi[k]-lo[k]+1, 1
	}
	src := a.ArrayElems()
	var out []types.Value
	var rec func(k, base int)
	rec = func(k, base int) {
		for i := lo[k]; i <= hi[k]; i++ {
			off := base*dims[k] + i
			if k+1 == len(dims) {
				out = append(out, src[off])
			} else {
				rec(k+1, off)
			}
		}
	}
	rec(0, 0)
	return types.NewArrayDims(et, nd, nl, out)
}

func (e *ArraySlice) String() string {
	var sb strings.Builder
	sb.WriteString(operand(e.Arr))
	for k := 0; k+1 < len(e.Bounds); k += 2 {
		sb.WriteByte('[')
		if e.Omit&(1<<k) == 0 {
			sb.WriteString(e.Bounds[k].String())
		}
		sb.WriteByte(':')
		if e.Omit&(1<<(k+1)) == 0 {
			sb.WriteString(e.Bounds[k+1].String())
		}
		sb.WriteByte(']')
	}
	return sb.String()
}

func (e *ArraySlice) Children() []Expr { return append([]Expr{e.Arr}, e.Bounds...) }

func (e *ArraySlice) WithChildren(ch []Expr) (Expr, error) {
	return &ArraySlice{Arr: ch[0], Bounds: ch[1:], Omit: e.Omit}, nil
}

// buildArraySlice builds pivot_array_slice(a, lo1, hi1, ..., mask).
func (b *Builder) buildArraySlice(n *ast.FuncCallExpr) (Expr, error) {
	if len(n.Args) < 4 || len(n.Args)%2 != 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes an array, bound pairs and a mask", ArraySliceFunc)
	}
	args, err := b.buildList(n.Args)
	if err != nil {
		return nil, err
	}
	mk, ok := args[len(args)-1].(*Const)
	if !ok || !mk.Value.Family().IsInteger() {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s: the mask must be an integer constant", ArraySliceFunc)
	}
	arr := args[0]
	if arr, err = b.resolve(arr, types.TypeUtf8); err != nil {
		return nil, err
	}
	if arr.Type().Family == types.Utf8 {
		// The catalog's text form: a text[] slice of it.
		arr = TextArray(arr)
	}
	if f := arr.Type().Family; f != types.Array && f != types.Null {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", TypeName(arr.Type()))
	}
	bounds := args[1 : len(args)-1]
	for i := range bounds {
		if bounds[i], err = b.subscript(bounds[i]); err != nil {
			return nil, err
		}
	}
	return &ArraySlice{Arr: arr, Bounds: bounds, Omit: int(mk.Value.Int())}, nil
}
