package expr

import (
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// PostgreSQL's array functions. Their array argument may also be the
// catalog's text form of an array (arrayValue), read as text[] unless
// another argument says the element type.

func init() {
	register(&funcDef{2, 2, buildArrayLength}, "array_length")
	register(&funcDef{1, 1, buildCardinality}, "cardinality")
	register(&funcDef{1, 1, buildArrayNdims}, "array_ndims")
	register(&funcDef{1, 1, buildArrayDims}, "array_dims")
	register(&funcDef{2, 2, buildArrayBound}, "array_lower", "array_upper")
	register(&funcDef{2, 2, buildArrayAppend}, "array_append")
	register(&funcDef{2, 2, buildArrayPrepend}, "array_prepend")
	register(&funcDef{2, 2, buildArrayCat}, "array_cat")
	register(&funcDef{2, 3, buildArrayPosition}, "array_position")
	register(&funcDef{2, 2, buildArrayPositions}, "array_positions")
	register(&funcDef{2, 2, buildArrayRemove}, "array_remove")
	register(&funcDef{3, 3, buildArrayReplace}, "array_replace")
	register(&funcDef{2, 3, buildArrayToString}, "array_to_string")
	register(&funcDef{2, 3, buildStringToArray}, "string_to_array")
	register(&funcDef{2, 3, buildSubscripts}, SubscriptsFunc)
	register(&funcDef{2, 2, buildExpandArray}, ExpandArrayFunc)
}

// ExpandArrayFunc(a, 'x') and ExpandArrayFunc(a, 'n') are the two columns
// of information_schema._pg_expandarray(a), which PostgreSQL defines as
//
//	SELECT $1[s], s - array_lower($1, 1) + 1
//	FROM generate_series(array_lower($1, 1), array_upper($1, 1)) AS g(s)
//
// as arrays that the binder unnests in step (bind/projectset.go): the
// elements a[s] along the first dimension (NULL for each when a has more
// than one: a[s] of a 2-D array is NULL) and their positions 1, 2, ....
// A NULL or empty array makes no rows.
const ExpandArrayFunc = "pivot_expandarray"

func buildExpandArray(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	k, ok := args[1].(*Const)
	if !ok || k.Value.Str() != "x" && k.Value.Str() != "n" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes an array and 'x' or 'n'", ExpandArrayFunc)
	}
	positions := k.Value.Str() == "n"
	t := types.ArrayOf(types.TypeInt32)
	if !positions {
		t = args[0].Type()
	}
	return newFunc(name, t, args[:1], true, func(_ *Context, a []types.Value) (types.Value, error) {
		dims := a[0].ArrayDims()
		if len(dims) == 0 {
			return types.NullValue, nil
		}
		out := make([]types.Value, dims[0])
		for i := range out {
			switch {
			case positions:
				out[i] = int4(i + 1)
			case len(dims) == 1:
				out[i] = a[0].ArrayElems()[i]
			}
		}
		if positions {
			return types.NewArray(types.TypeInt32, out), nil
		}
		return types.NewArray(a[0].ArrayElemType(), out), nil
	}), nil
}

// SubscriptsFunc(a, dim [, reverse]) is the int4[] of a's subscripts in
// dimension dim (descending when reverse), NULL when a has no such
// dimension: the binder plans generate_subscripts(...) in a select list
// as unnest(SubscriptsFunc(...)), which makes no rows for NULL, as
// PostgreSQL's generate_subscripts does.
const SubscriptsFunc = "pivot_subscripts"

func buildSubscripts(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	if err := b.intArg(args, 1); err != nil {
		return nil, err
	}
	if len(args) == 3 {
		var err error
		if args[2], err = b.resolve(args[2], types.TypeBool); err != nil {
			return nil, err
		}
		if args[2].Type().Family != types.Bool {
			return nil, errSignature
		}
	}
	return newFunc(name, types.ArrayOf(types.TypeInt32), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		d := a[1].Int()
		dims, lower := a[0].ArrayDims(), a[0].ArrayLower()
		if d < 1 || d > int64(len(dims)) {
			return types.NullValue, nil
		}
		n, lo := dims[d-1], lower[d-1]
		out := make([]types.Value, n)
		for i := range out {
			if len(a) == 3 && a[2].Bool() {
				out[i] = int4(lo + n - 1 - i)
			} else {
				out[i] = int4(lo + i)
			}
		}
		return types.NewArray(types.TypeInt32, out), nil
	}), nil
}

// arrayArg checks that args[i] is an array (or the catalog's text form,
// or an untyped literal, which becomes elem[] — text[] without elem).
func (b *Builder) arrayArg(args []Expr, i int, elem types.Type) error {
	if args[i].Type().Family == types.Unknown {
		if elem.Family == types.Unknown || elem.Family == types.Null {
			elem = types.TypeUtf8
		}
		var err error
		args[i], err = b.resolve(args[i], types.ArrayOf(resolveTarget(elem)))
		return err
	}
	switch args[i].Type().Family {
	case types.Array, types.Null:
		return nil
	case types.Utf8:
		// The catalog's text form of an array: read as text[].
		args[i] = TextArray(args[i])
		return nil
	}
	return errSignature
}

// elemOf is the element type of an array argument (text for NULL).
func elemOf(e Expr) types.Type {
	if t := e.Type(); t.Family == types.Array {
		return t.ElemType()
	}
	return types.TypeUtf8
}

// arrayAndElem types f(array, element): the element takes the array's
// element type (an untyped array takes the element's).
func (b *Builder) arrayAndElem(args []Expr, ai, ei int) (types.Type, error) {
	var err error
	if args[ai].Type().Family == types.Unknown {
		if args[ei], err = b.resolve(args[ei], types.TypeUtf8); err != nil {
			return types.Type{}, err
		}
	}
	if err = b.arrayArg(args, ai, args[ei].Type()); err != nil {
		return types.Type{}, err
	}
	at := args[ai].Type()
	if at.Family == types.Null {
		et := args[ei].Type()
		if et.Family == types.Null || et.Family == types.Unknown {
			et = types.TypeUtf8
		}
		at = types.ArrayOf(et)
		args[ai] = NullOf(at)
	}
	et := at.ElemType()
	if args[ei], err = b.resolve(args[ei], et); err != nil {
		return types.Type{}, err
	}
	if args[ei].Type().Family == types.Array {
		return types.Type{}, errSignature
	}
	if args[ei].Type().Family != types.Null && !Comparable(args[ei].Type(), et) {
		return types.Type{}, errSignature
	}
	if args[ei], err = b.Coerce(args[ei], et); err != nil {
		return types.Type{}, err
	}
	return at, nil
}

func int4(n int) types.Value { return types.NewInt(types.Int32, int64(n)) }

func buildArrayLength(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	if err := b.intArg(args, 1); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeInt32, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		d := a[1].Int()
		dims := a[0].ArrayDims()
		if d < 1 || d > int64(len(dims)) {
			return types.NullValue, nil
		}
		return int4(dims[d-1]), nil
	}), nil
}

func buildCardinality(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeInt32, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		return int4(len(a[0].ArrayElems())), nil
	}), nil
}

func buildArrayNdims(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeInt32, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		if len(a[0].ArrayDims()) == 0 {
			return types.NullValue, nil
		}
		return int4(len(a[0].ArrayDims())), nil
	}), nil
}

func buildArrayDims(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeUtf8, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		dims, lower := a[0].ArrayDims(), a[0].ArrayLower()
		if len(dims) == 0 {
			return types.NullValue, nil
		}
		var sb strings.Builder
		for k := range dims {
			sb.WriteString("[" + strconv.Itoa(lower[k]) + ":" + strconv.Itoa(lower[k]+dims[k]-1) + "]")
		}
		return types.NewUtf8(sb.String()), nil
	}), nil
}

func buildArrayBound(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	if err := b.intArg(args, 1); err != nil {
		return nil, err
	}
	upper := name == "array_upper"
	return newFunc(name, types.TypeInt32, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		d := a[1].Int()
		dims, lower := a[0].ArrayDims(), a[0].ArrayLower()
		if d < 1 || d > int64(len(dims)) {
			return types.NullValue, nil
		}
		if upper {
			return int4(lower[d-1] + dims[d-1] - 1), nil
		}
		return int4(lower[d-1]), nil
	}), nil
}

// oneDim is PostgreSQL's refusal of a multidimensional array where a
// function works on one dimension.
func oneDim(a types.Value, what string) error {
	if len(a.ArrayDims()) > 1 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s in multidimensional arrays is not supported", what)
	}
	return nil
}

// appendElem returns a one-dimensional array with e added at the end (or
// the start), keeping the lower bound as PostgreSQL does.
func appendElem(a types.Value, e types.Value, et types.Type, front bool) (types.Value, error) {
	if len(a.ArrayDims()) > 1 {
		return types.Value{}, sqlerr.New(sqlerr.DataException, "argument must be empty or one-dimensional array")
	}
	elems := make([]types.Value, 0, len(a.ArrayElems())+1)
	lo := 1
	if len(a.ArrayDims()) == 1 {
		lo = a.ArrayLower()[0]
	}
	if front {
		// The lower bound stays the input's, as in PostgreSQL.
		elems = append(append(elems, e), a.ArrayElems()...)
	} else {
		elems = append(append(elems, a.ArrayElems()...), e)
	}
	return types.NewArrayDims(et, []int{len(elems)}, []int{lo}, elems)
}

func buildArrayAppend(b *Builder, name string, args []Expr) (Expr, error) {
	return b.arrayWithElem(name, args, false)
}

func buildArrayPrepend(b *Builder, name string, args []Expr) (Expr, error) {
	return b.arrayWithElem(name, args, true)
}

// arrayWithElem is array_append(arr, e) or, prepend set, array_prepend(e,
// arr): a NULL array is an empty one.
func (b *Builder) arrayWithElem(name string, args []Expr, prepend bool) (Expr, error) {
	arrIdx, elemIdx := 0, 1
	if prepend {
		arrIdx, elemIdx = 1, 0
	}
	at, err := b.arrayAndElem(args, arrIdx, elemIdx)
	if err != nil {
		return nil, err
	}
	return newFunc(name, at, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		arr := a[arrIdx]
		if arr.IsNull() {
			arr = types.NewArray(at.ElemType(), nil)
		}
		return appendElem(arr, a[elemIdx], at.ElemType(), prepend)
	}), nil
}

func buildArrayCat(b *Builder, name string, args []Expr) (Expr, error) {
	l, r, err := b.resolveArrays(args[0], args[1])
	if err != nil {
		return nil, err
	}
	return b.arrayCatExprs(name, l, r)
}

// arrayCatExprs types array_cat(l, r) and array || array.
func (b *Builder) arrayCatExprs(name string, l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.Family == types.Null {
		lt = rt
	}
	if rt.Family == types.Null {
		rt = lt
	}
	if lt.Family != types.Array || rt.Family != types.Array {
		return nil, errSignature
	}
	t, err := CommonType("array_cat", lt, rt)
	if err != nil {
		return nil, err
	}
	if l, err = b.Coerce(l, t); err != nil {
		return nil, err
	}
	if r, err = b.Coerce(r, t); err != nil {
		return nil, err
	}
	return newFunc(name, t, []Expr{l, r}, false, func(_ *Context, a []types.Value) (types.Value, error) {
		switch {
		case a[0].IsNull():
			return a[1], nil
		case a[1].IsNull():
			return a[0], nil
		}
		return catArrays(a[0], a[1], t.ElemType())
	}), nil
}

// catArrays concatenates as PostgreSQL's array_cat: arrays of the same
// dimensions along the first one (sub-arrays must match), or an N-1
// dimensional array as one more element of the first dimension.
func catArrays(x, y types.Value, et types.Type) (types.Value, error) {
	xd, yd := x.ArrayDims(), y.ArrayDims()
	switch {
	case len(xd) == 0:
		return y, nil
	case len(yd) == 0:
		return x, nil
	}
	elems := append(append([]types.Value(nil), x.ArrayElems()...), y.ArrayElems()...)
	mismatch := func() (types.Value, error) {
		e := sqlerr.New(sqlerr.ArraySubscriptError, "cannot concatenate incompatible arrays")
		e.Detail = "Arrays with differing dimensions are not compatible for concatenation."
		return types.Value{}, e
	}
	switch {
	case len(xd) == len(yd):
		if !sameInts(xd[1:], yd[1:]) {
			return mismatch()
		}
		dims := append([]int{xd[0] + yd[0]}, xd[1:]...)
		return types.NewArrayDims(et, dims, x.ArrayLower(), elems)
	case len(xd) == len(yd)+1:
		if !sameInts(xd[1:], yd) {
			return mismatch()
		}
		dims := append([]int{xd[0] + 1}, xd[1:]...)
		return types.NewArrayDims(et, dims, x.ArrayLower(), elems)
	case len(xd)+1 == len(yd):
		if !sameInts(xd, yd[1:]) {
			return mismatch()
		}
		dims := append([]int{yd[0] + 1}, yd[1:]...)
		return types.NewArrayDims(et, dims, y.ArrayLower(), elems)
	}
	e := sqlerr.New(sqlerr.ArraySubscriptError, "cannot concatenate incompatible arrays")
	e.Detail = "Arrays of " + strconv.Itoa(len(xd)) + " and " + strconv.Itoa(len(yd)) + " dimensions are not compatible for concatenation."
	return types.Value{}, e
}

// arrayConcat builds a || b where a side is an array: array || array is
// array_cat, array || element array_append, element || array
// array_prepend. An untyped side next to an array is an array, as in
// PostgreSQL.
func (b *Builder) arrayConcat(l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	var err error
	switch {
	case lt.Family == types.Array && (rt.Family == types.Array || rt.Family == types.Unknown || rt.Family == types.Null):
		if l, r, err = b.resolveArrays(l, r); err != nil {
			return nil, err
		}
		e, err := b.arrayCatExprs("array_cat", l, r)
		if err == errSignature {
			return nil, opNotExist("||", lt, rt)
		}
		return e, err
	case rt.Family == types.Array && (lt.Family == types.Unknown || lt.Family == types.Null):
		if l, r, err = b.resolveArrays(l, r); err != nil {
			return nil, err
		}
		e, err := b.arrayCatExprs("array_cat", l, r)
		if err == errSignature {
			return nil, opNotExist("||", lt, rt)
		}
		return e, err
	case lt.Family == types.Array:
		e, err := buildArrayAppend(b, "array_append", []Expr{l, r})
		if err == errSignature {
			return nil, opNotExist("||", lt, rt)
		}
		return e, err
	}
	e, err := buildArrayPrepend(b, "array_prepend", []Expr{l, r})
	if err == errSignature {
		return nil, opNotExist("||", lt, rt)
	}
	return e, err
}

// notDistinct is IS NOT DISTINCT FROM, the comparison array_position,
// array_remove and array_replace use.
func notDistinct(a, b types.Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull()
	}
	return types.Compare(a, b) == 0
}

func buildArrayPosition(b *Builder, name string, args []Expr) (Expr, error) {
	if _, err := b.arrayAndElem(args, 0, 1); err != nil {
		return nil, err
	}
	if len(args) == 3 {
		if err := b.intArg(args, 2); err != nil {
			return nil, err
		}
	}
	return newFunc(name, types.TypeInt32, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if a[0].IsNull() {
			return types.NullValue, nil
		}
		if err := oneDim(a[0], "searching for elements"); err != nil {
			return types.Value{}, err
		}
		lo := 1
		if len(a[0].ArrayLower()) == 1 {
			lo = a[0].ArrayLower()[0]
		}
		start := 0
		if len(a) == 3 {
			if a[2].IsNull() {
				return types.Value{}, sqlerr.New(sqlerr.NullValueNotAllowed, "initial position must not be null")
			}
			start = int(max(a[2].Int()-int64(lo), 0))
		}
		elems := a[0].ArrayElems()
		for i := start; i < len(elems); i++ {
			if notDistinct(elems[i], a[1]) {
				return int4(i + lo), nil
			}
		}
		return types.NullValue, nil
	}), nil
}

func buildArrayPositions(b *Builder, name string, args []Expr) (Expr, error) {
	if _, err := b.arrayAndElem(args, 0, 1); err != nil {
		return nil, err
	}
	return newFunc(name, types.ArrayOf(types.TypeInt32), args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if a[0].IsNull() {
			return types.NullValue, nil
		}
		if err := oneDim(a[0], "searching for elements"); err != nil {
			return types.Value{}, err
		}
		lo := 1
		if len(a[0].ArrayLower()) == 1 {
			lo = a[0].ArrayLower()[0]
		}
		var out []types.Value
		for i, e := range a[0].ArrayElems() {
			if notDistinct(e, a[1]) {
				out = append(out, int4(i+lo))
			}
		}
		return types.NewArray(types.TypeInt32, out), nil
	}), nil
}

func buildArrayRemove(b *Builder, name string, args []Expr) (Expr, error) {
	at, err := b.arrayAndElem(args, 0, 1)
	if err != nil {
		return nil, err
	}
	return newFunc(name, at, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if a[0].IsNull() {
			return types.NullValue, nil
		}
		if err := oneDim(a[0], "removing elements"); err != nil {
			return types.Value{}, err
		}
		var out []types.Value
		for _, e := range a[0].ArrayElems() {
			if !notDistinct(e, a[1]) {
				out = append(out, e)
			}
		}
		if len(out) == len(a[0].ArrayElems()) {
			return a[0], nil
		}
		return types.NewArray(at.ElemType(), out), nil
	}), nil
}

func buildArrayReplace(b *Builder, name string, args []Expr) (Expr, error) {
	at, err := b.arrayAndElem(args, 0, 1)
	if err != nil {
		return nil, err
	}
	if args[2], err = b.resolve(args[2], at.ElemType()); err != nil {
		return nil, err
	}
	if args[2].Type().Family == types.Array || (args[2].Type().Family != types.Null && !Comparable(args[2].Type(), at.ElemType())) {
		return nil, errSignature
	}
	if args[2], err = b.Coerce(args[2], at.ElemType()); err != nil {
		return nil, err
	}
	return newFunc(name, at, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if a[0].IsNull() {
			return types.NullValue, nil
		}
		elems := a[0].ArrayElems()
		out := make([]types.Value, len(elems))
		for i, e := range elems {
			if notDistinct(e, a[1]) {
				e = a[2]
			}
			out[i] = e
		}
		return types.NewArrayDims(at.ElemType(), a[0].ArrayDims(), a[0].ArrayLower(), out)
	}), nil
}

func buildArrayToString(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.arrayArg(args, 0, types.TypeUnknown); err != nil {
		return nil, err
	}
	for i := 1; i < len(args); i++ {
		if err := b.textArg(args, i); err != nil {
			return nil, err
		}
	}
	return newFunc(name, types.TypeUtf8, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if a[0].IsNull() || a[1].IsNull() {
			return types.NullValue, nil
		}
		var sb strings.Builder
		first := true
		for _, e := range a[0].ArrayElems() {
			if e.IsNull() && (len(a) < 3 || a[2].IsNull()) {
				continue
			}
			if !first {
				sb.WriteString(a[1].Str())
			}
			first = false
			if e.IsNull() {
				sb.WriteString(a[2].Str())
			} else {
				sb.WriteString(e.Text())
			}
		}
		return types.NewUtf8(sb.String()), nil
	}), nil
}

func buildStringToArray(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		if err := b.textArg(args, i); err != nil {
			return nil, err
		}
	}
	return newFunc(name, types.ArrayOf(types.TypeUtf8), args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if a[0].IsNull() {
			return types.NullValue, nil
		}
		s := a[0].Str()
		if s == "" {
			return types.NewArray(types.TypeUtf8, nil), nil
		}
		var parts []string
		switch {
		case a[1].IsNull():
			for _, r := range s {
				parts = append(parts, string(r))
			}
		case a[1].Str() == "":
			parts = []string{s}
		default:
			parts = strings.Split(s, a[1].Str())
		}
		out := make([]types.Value, len(parts))
		for i, p := range parts {
			if len(a) == 3 && !a[2].IsNull() && p == a[2].Str() {
				continue
			}
			out[i] = types.NewUtf8(p)
		}
		return types.NewArray(types.TypeUtf8, out), nil
	}), nil
}
