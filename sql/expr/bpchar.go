package expr

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// blankCompare prepares the sides of a comparison in which one side is
// char(n) (types/bpchar.go): trailing blanks do not count, so each char
// side is compared without them, as PostgreSQL's bpchar operators and its
// char-to-text cast do. Two char sides of one width are left alone for =
// and <>: their padded strings are equal exactly when the trimmed ones
// are, and a bare key column keeps its key ranges and index lookups.
func blankCompare(op CmpOp, l, r Expr) (Expr, Expr) {
	lt, rt := l.Type(), r.Type()
	if !lt.Blank && !rt.Blank || lt.Family != types.Utf8 || rt.Family != types.Utf8 {
		return l, r
	}
	if op == EQ || op == NE || op == NullSafeEQ {
		l, r = padConst(l, rt), padConst(r, lt)
		if l.Type() == r.Type() && l.Type().Width > 0 {
			return l, r
		}
	}
	if !lt.Blank && lt.Width > 0 || !rt.Blank && rt.Width > 0 {
		// char(n) against varchar(m) is a bpchar comparison in
		// PostgreSQL (both sides lose trailing blanks); against text it
		// is a text one (only the char side does).
		return trimAll(l), trimAll(r)
	}
	return trimBlank(l), trimBlank(r)
}

// trimAll is e with its trailing blanks dropped, whatever its string type.
func trimAll(e Expr) Expr {
	if e.Type().Family != types.Utf8 {
		return e
	}
	if e.Type().Blank {
		return trimBlank(e)
	}
	return newFunc("rtrim", types.TypeUtf8, []Expr{e}, true, func(_ *Context, a []types.Value) (types.Value, error) {
		return types.TrimBlanks(a[0]), nil
	})
}

// trimBlank is e as text when e is char(n), e itself otherwise.
func trimBlank(e Expr) Expr {
	if !e.Type().Blank {
		return e
	}
	return fold(&Cast{E: e, To: types.TypeUtf8})
}

// padConst is a constant char value padded to the width of the char(n)
// type t it is compared with, when it fits: 'a' next to a char(4) key
// becomes 'a   ' of type char(4), so the comparison stays a bare column
// against a constant (key ranges, index lookups). A constant that does
// not fit stays as it is and the comparison trims both sides.
func padConst(e Expr, t types.Type) Expr {
	k, ok := e.(*Const)
	if !ok || !k.Typ.Blank || !t.Blank || t.Width == 0 || k.Typ == t || k.Value.IsNull() {
		return e
	}
	v, err := types.ParseText(t, strings.TrimRight(k.Value.Str(), " "))
	if err != nil {
		return e
	}
	return &Const{Value: v, Typ: t}
}

// blankIn is blankCompare for x IN (list): constants padded to a char(n)
// x's width keep x bare; otherwise trailing blanks are dropped where the
// comparisons with each element would drop them.
func blankIn(e Expr, list []Expr) (Expr, []Expr) {
	et := e.Type()
	blank, varchar := et.Blank, !et.Blank && et.Width > 0
	for _, x := range list {
		xt := x.Type()
		blank = blank || xt.Blank
		varchar = varchar || !xt.Blank && xt.Width > 0 && xt.Family == types.Utf8
	}
	if !blank || et.Family != types.Utf8 {
		return e, list
	}
	same := et.Width > 0 && et.Blank
	for i, x := range list {
		list[i] = padConst(x, et)
		if xt := list[i].Type(); xt != et && xt.Family != types.Null {
			same = false
		}
	}
	if same {
		return e, list
	}
	trim := trimBlank
	if varchar {
		trim = trimAll
	}
	for i, x := range list {
		list[i] = trim(x)
	}
	return trim(e), list
}

// unifyBlank is the common type of two different character types one of
// which is char(n), chosen as PostgreSQL's select_common_type does: text,
// varchar and bpchar all convert to each other implicitly, so the first
// type stays (without its width).
func unifyBlank(a, b types.Type) types.Type {
	if a.Blank {
		return types.TypeBPChar
	}
	return types.TypeUtf8
}
