package expr

import "github.com/pivotdb/pivotdb/sql/types"

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
	if lt == rt && (op == EQ || op == NE || op == NullSafeEQ) {
		return l, r
	}
	return trimBlank(l), trimBlank(r)
}

// trimBlank is e as text when e is char(n), e itself otherwise.
func trimBlank(e Expr) Expr {
	if !e.Type().Blank {
		return e
	}
	return fold(&Cast{E: e, To: types.TypeUtf8})
}
