package pgcatalog

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// arrayToString is array_to_string(a, delimiter [, null_string]) over the
// text form of an array.
func arrayToString(a []types.Value) (types.Value, error) {
	elems, err := expr.ParseArrayText(a[0].Str())
	if err != nil {
		return types.Value{}, err
	}
	var out []string
	for _, e := range elems {
		if e == nil {
			if len(a) > 2 {
				out = append(out, a[2].Str())
			}
			continue
		}
		out = append(out, *e)
	}
	return types.NewUtf8(strings.Join(out, a[1].Str())), nil
}

// arrayElemType returns the element type of the cast x::T[] that e is,
// ok false when e is no such cast.
func arrayElemType(e expr.Expr) (types.Type, bool) {
	f, isFunc := e.(*expr.Func)
	if !isFunc || f.Name != parser.ArrayCastFunc || len(f.Args) != 2 {
		return types.Type{}, false
	}
	c, isConst := f.Args[1].(*expr.Const)
	if !isConst {
		return types.Type{}, false
	}
	t, err := types.ParseTypeName(c.Value.Str())
	return t, err == nil
}

// buildArrayCast is x::T[] (pivot_array_cast(x, 'T')): the text form of
// the array with every element read as a T (22P02 / 22003 for one that is
// not) and written back in T's text form.
func buildArrayCast(_ *View, args []expr.Expr) (expr.Expr, error) {
	c, isConst := args[1].(*expr.Const)
	if !isConst {
		return nil, sqlerr.New(sqlerr.SyntaxError, "the type of %s must be a string literal", parser.ArrayCastFunc)
	}
	t, err := types.ParseTypeName(c.Value.Str())
	if err != nil {
		return nil, err
	}
	switch {
	case t.Family.IsInteger(), t.Family == types.Utf8, t.Family == types.String, t.Family == types.Bool:
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "arrays of %s are not supported yet", t.PGName())
	}
	return perRow(parser.ArrayCastFunc, tText, func(a []types.Value) (types.Value, error) {
		elems, err := expr.ParseArrayText(a[0].Str())
		if err != nil {
			return types.Value{}, err
		}
		for i, e := range elems {
			if e == nil {
				continue
			}
			v, err := types.ParseText(t, *e)
			if err != nil {
				return types.Value{}, err
			}
			txt := v.Text()
			elems[i] = &txt
		}
		return types.NewUtf8(expr.FormatArrayText(elems)), nil
	})(nil, args)
}

// buildArrayElem is the subscript a[i] (pivot_array_elem(a, i)), typed as
// the element type of a cast a::T[], and otherwise as the context decides
// (expr.ArrayElem).
func buildArrayElem(_ *View, args []expr.Expr) (expr.Expr, error) {
	t, ok := arrayElemType(args[0])
	if !ok {
		t = types.TypeUnknown
	}
	return &expr.ArrayElem{Arr: args[0], Index: args[1], Elem: t}, nil
}

// arrayBound is array_upper (upper set) and array_lower of a
// one-dimensional array: 1 and its length for dimension 1, NULL for an
// empty array and any other dimension, as in PostgreSQL.
func arrayBound(name string, upper bool) func(*View, []expr.Expr) (expr.Expr, error) {
	return perRow(name, types.TypeInt32, func(a []types.Value) (types.Value, error) {
		elems, err := expr.ParseArrayText(a[0].Str())
		if err != nil {
			return types.Value{}, err
		}
		if a[1].Int() != 1 || len(elems) == 0 {
			return types.NullValue, nil
		}
		if upper {
			return types.NewInt(types.Int32, int64(len(elems))), nil
		}
		return types.NewInt(types.Int32, 1), nil
	})
}

// arrayRemove is array_remove(a, x) over the text form of an array: a
// without the elements equal to x (a NULL argument gives NULL: session
// functions are strict).
func arrayRemove(a []types.Value) (types.Value, error) {
	elems, err := expr.ParseArrayText(a[0].Str())
	if err != nil {
		return types.Value{}, err
	}
	out := elems[:0]
	for _, e := range elems {
		if e != nil && *e == a[1].Str() {
			continue
		}
		out = append(out, e)
	}
	return types.NewUtf8(expr.FormatArrayText(out)), nil
}
