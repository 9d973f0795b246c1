package expr

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// ArrayAssignFunc is the dialect front's spelling of PostgreSQL's array
// element and slice assignment (parser.ArrayAssignFunc): UPDATE t SET
// a[i][j] = v is SET a = pivot_array_assign(a, -1, i, j, (v)), and
// a[lo:hi] = v is SET a = pivot_array_assign(a, mask, lo, hi, (v)), the
// mask marking omitted bounds as in pivot_array_slice.
const ArrayAssignFunc = "pivot_array_assign"

// maxAssignElems is PostgreSQL's MaxArraySize: an assignment that would
// make a larger array fails before anything is allocated.
const maxAssignElems = 1<<27 - 1

// ArrayAssign is Arr with the element at Subs (Slice false) or the slice
// given by Subs's lo/hi pairs (Slice true; Omit as in ArraySlice) replaced
// by Value, with PostgreSQL's rules: a NULL or empty array becomes one
// that holds just the new elements, at the given subscripts; a
// one-dimensional array grows to take a subscript outside its bounds
// (the gap filled with NULLs); the subscripts of a multidimensional array
// must be inside its bounds. A slice takes the first elements of the
// source array in row-major order; a NULL source leaves the array as it
// was.
type ArrayAssign struct {
	Arr   Expr
	Subs  []Expr
	Slice bool
	Omit  int
	Value Expr // of the element type, or of the array type for a slice
}

func (e *ArrayAssign) Type() types.Type { return e.Arr.Type() }

func (e *ArrayAssign) Children() []Expr {
	return append(append([]Expr{e.Arr}, e.Subs...), e.Value)
}

func (e *ArrayAssign) WithChildren(ch []Expr) (Expr, error) {
	if len(ch) != len(e.Subs)+2 {
		return nil, sqlerr.New(sqlerr.InternalError, "expr: ArrayAssign takes %d children, got %d", len(e.Subs)+2, len(ch))
	}
	return &ArrayAssign{Arr: ch[0], Subs: ch[1 : len(ch)-1], Slice: e.Slice, Omit: e.Omit, Value: ch[len(ch)-1]}, nil
}

func (e *ArrayAssign) String() string {
	var sb strings.Builder
	sb.WriteString(operand(e.Arr))
	if e.Slice {
		for k := 0; k+1 < len(e.Subs); k += 2 {
			sb.WriteByte('[')
			if e.Omit&(1<<k) == 0 {
				sb.WriteString(e.Subs[k].String())
			}
			sb.WriteByte(':')
			if e.Omit&(1<<(k+1)) == 0 {
				sb.WriteString(e.Subs[k+1].String())
			}
			sb.WriteByte(']')
		}
	} else {
		for _, x := range e.Subs {
			sb.WriteString("[" + x.String() + "]")
		}
	}
	return sb.String() + " := " + e.Value.String()
}

func nullSubscript() error {
	return sqlerr.New(sqlerr.NullValueNotAllowed, "array subscript in assignment must not be null")
}

func arraySubscriptError(msg string) error { return sqlerr.New(sqlerr.ArraySubscriptError, "%s", msg) }

func (e *ArrayAssign) Eval(c *Context, row Row) (types.Value, error) {
	a, err := e.Arr.Eval(c, row)
	if err != nil {
		return a, err
	}
	subs := make([]int64, len(e.Subs))
	for k, x := range e.Subs {
		if e.Slice && e.Omit&(1<<k) != 0 {
			continue
		}
		v, err := x.Eval(c, row)
		if err != nil {
			return v, err
		}
		if v.IsNull() {
			return types.Value{}, nullSubscript()
		}
		subs[k] = v.Int()
	}
	v, err := e.Value.Eval(c, row)
	if err != nil {
		return v, err
	}
	et := e.Arr.Type().ElemType()
	if a.IsNull() {
		a = types.NewArray(et, nil)
	}
	if e.Slice {
		return assignSlice(a, et, subs, e.Omit, v)
	}
	return assignElem(a, et, subs, v)
}

// assignElem sets the element at subs of a to v.
func assignElem(a types.Value, et types.Type, subs []int64, v types.Value) (types.Value, error) {
	dims, lower := a.ArrayDims(), a.ArrayLower()
	if len(dims) == 0 {
		// A new array of one element per dimension, at the subscripts.
		nd := make([]int, len(subs))
		nl := make([]int, len(subs))
		for k, s := range subs {
			nd[k], nl[k] = 1, int(s)
			if s != int64(int32(s)) {
				return types.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "array upper bound is too large")
			}
		}
		return types.NewArrayDims(et, nd, nl, []types.Value{v})
	}
	if len(subs) != len(dims) {
		return types.Value{}, arraySubscriptError("wrong number of array subscripts")
	}
	src := a.ArrayElems()
	if len(dims) == 1 {
		lo, hi := int64(lower[0]), int64(lower[0])+int64(dims[0])-1
		s := subs[0]
		if s >= lo && s <= hi {
			out := append([]types.Value(nil), src...)
			out[s-lo] = v
			return types.NewArrayDims(et, dims, lower, out)
		}
		nlo, nhi := min(lo, s), max(hi, s)
		if nhi-nlo+1 > maxAssignElems {
			return types.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", maxAssignElems)
		}
		out := make([]types.Value, nhi-nlo+1) // zero Values are NULLs
		copy(out[lo-nlo:], src)
		out[s-nlo] = v
		return types.NewArrayDims(et, []int{len(out)}, []int{int(nlo)}, out)
	}
	off := 0
	for k, s := range subs {
		if s < int64(lower[k]) || s >= int64(lower[k])+int64(dims[k]) {
			return types.Value{}, arraySubscriptError("array subscript out of range")
		}
		off = off*dims[k] + int(s-int64(lower[k]))
	}
	out := append([]types.Value(nil), src...)
	out[off] = v
	return types.NewArrayDims(et, dims, lower, out)
}

// assignSlice replaces the slice of a given by the lo/hi pairs in subs
// (omitted bounds marked in omit) with the first elements of src.
func assignSlice(a types.Value, et types.Type, subs []int64, omit int, src types.Value) (types.Value, error) {
	if src.IsNull() {
		return a, nil
	}
	np := len(subs) / 2
	lo, hi := make([]int64, np), make([]int64, np)
	for k := 0; k < np; k++ {
		lo[k], hi[k] = subs[2*k], subs[2*k+1]
	}
	hasLo := func(k int) bool { return omit&(1<<(2*k)) == 0 }
	hasHi := func(k int) bool { return omit&(1<<(2*k+1)) == 0 }
	items := src.ArrayElems()
	dims, lower := a.ArrayDims(), a.ArrayLower()
	if len(dims) == 0 {
		nd := make([]int, np)
		nl := make([]int, np)
		n := int64(1)
		for k := 0; k < np; k++ {
			if !hasLo(k) || !hasHi(k) {
				err := sqlerr.New(sqlerr.ArraySubscriptError, "array slice subscript must provide both boundaries")
				err.Detail = "When assigning to a slice of an empty array value, slice boundaries must be fully specified."
				return types.Value{}, err
			}
			if lo[k] > hi[k] {
				return types.Value{}, arraySubscriptError("upper bound cannot be less than lower bound")
			}
			if n *= hi[k] - lo[k] + 1; n > maxAssignElems {
				return types.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", maxAssignElems)
			}
			nd[k], nl[k] = int(hi[k]-lo[k]+1), int(lo[k])
		}
		if int64(len(items)) < n {
			return types.Value{}, arraySubscriptError("source array too small")
		}
		return types.NewArrayDims(et, nd, nl, append([]types.Value(nil), items[:n]...))
	}
	if np > len(dims) {
		return types.Value{}, arraySubscriptError("wrong number of array subscripts")
	}
	nd := append([]int(nil), dims...)
	nl := append([]int(nil), lower...)
	sl, sh := make([]int64, len(dims)), make([]int64, len(dims))
	for k := range dims {
		l, h := int64(lower[k]), int64(lower[k])+int64(dims[k])-1
		if k < np {
			if hasLo(k) {
				l = lo[k]
			}
			if hasHi(k) {
				h = hi[k]
			}
		}
		if l > h {
			return types.Value{}, arraySubscriptError("upper bound cannot be less than lower bound")
		}
		if len(dims) > 1 && (l < int64(lower[k]) || h >= int64(lower[k])+int64(dims[k])) {
			return types.Value{}, arraySubscriptError("array subscript out of range")
		}
		sl[k], sh[k] = l, h
	}
	if len(dims) == 1 {
		// A one-dimensional array grows to take the slice.
		nlo := min(sl[0], int64(lower[0]))
		nhi := max(sh[0], int64(lower[0])+int64(dims[0])-1)
		if nhi-nlo+1 > maxAssignElems {
			return types.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", maxAssignElems)
		}
		nd[0], nl[0] = int(nhi-nlo+1), int(nlo)
	}
	n := int64(1)
	for k := range dims {
		n *= sh[k] - sl[k] + 1
	}
	if int64(len(items)) < n {
		return types.Value{}, arraySubscriptError("source array too small")
	}
	total := 1
	for _, d := range nd {
		total *= d
	}
	out := make([]types.Value, total)
	// The old elements at their places in the (possibly grown) array.
	old := a.ArrayElems()
	shift := lower[0] - nl[0]
	if len(dims) == 1 {
		copy(out[shift:], old)
	} else {
		copy(out, old)
	}
	// The slice's elements, row-major.
	idx := make([]int64, len(dims))
	copy(idx, sl)
	for _, item := range items[:n] {
		off := 0
		for k := range nd {
			off = off*nd[k] + int(idx[k]-int64(nl[k]))
		}
		out[off] = item
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] <= sh[k] {
				break
			}
			idx[k] = sl[k]
		}
	}
	return types.NewArrayDims(et, nd, nl, out)
}

// buildArrayAssign builds pivot_array_assign(a, mask, subscripts..., (v)).
func (b *Builder) buildArrayAssign(n *ast.FuncCallExpr) (Expr, error) {
	if len(n.Args) < 4 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes an array, a mask, subscripts and a value", ArrayAssignFunc)
	}
	arr, err := b.BuildUntyped(n.Args[0])
	if err != nil {
		return nil, err
	}
	column := "?column?"
	if c, ok := n.Args[0].(*ast.ColumnNameExpr); ok {
		column = c.Name.Name.O
	}
	if arr.Type().Family != types.Array {
		return nil, b.withPos(sqlerr.New(sqlerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", TypeName(arr.Type())), n.Args[0])
	}
	mk, err := b.BuildUntyped(n.Args[1])
	if err != nil {
		return nil, err
	}
	k, ok := mk.(*Const)
	if !ok || !k.Value.Family().IsInteger() {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s: the mask must be an integer constant", ArrayAssignFunc)
	}
	e := &ArrayAssign{Arr: arr, Slice: k.Value.Int() >= 0}
	if e.Slice {
		e.Omit = int(k.Value.Int())
	}
	subs := n.Args[2 : len(n.Args)-1]
	if e.Slice && len(subs)%2 != 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s: a slice takes bound pairs", ArrayAssignFunc)
	}
	for _, s := range subs {
		x, err := b.BuildUntyped(s)
		if err != nil {
			return nil, err
		}
		if x, err = b.subscript(x); err != nil {
			return nil, b.withPos(err, s)
		}
		e.Subs = append(e.Subs, x)
	}
	target := arr.Type().ElemType()
	if e.Slice {
		target = arr.Type()
	}
	vn := n.Args[len(n.Args)-1]
	v, err := b.BuildTyped(vn, target)
	if err != nil {
		return nil, err
	}
	if !AssignmentAllowed(v.Type(), target) {
		return nil, b.withPos(sqlerr.New(codeDatatypeMismatch, "subscripted assignment to %q requires type %s but expression is of type %s",
			column, TypeName(target), TypeName(v.Type())), vn)
	}
	if e.Value, err = b.Coerce(v, target); err != nil {
		return nil, b.withPos(err, vn)
	}
	return e, nil
}
