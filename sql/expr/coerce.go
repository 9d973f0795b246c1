package expr

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Type resolution follows PostgreSQL's rules, with YQL's families:
//
//   - A string literal is untyped (types.Unknown) until its context decides:
//     compared with a Date column it parses as a Date at build time, so a
//     malformed literal fails the statement with 22007/22P02 before any row
//     is read. A parameter without a declared type is typed the same way,
//     and its type is recorded in Builder.ParamTypes for Describe.
//   - Comparisons need comparable families (Comparable); numbers of any
//     families compare exactly without conversions.
//   - Where values of several types meet in one result (CASE, COALESCE,
//     greatest/least, IF), CommonType picks the type and Casts convert.

// BaseType strips a type's modifiers (varchar width, decimal precision):
// literals compared with a varchar(3) or Decimal(5,2) column are parsed as
// text or unconstrained decimals, so that comparing with a longer string or
// a more precise number is simply false instead of an error or a rounding.
func BaseType(t types.Type) types.Type {
	if t.Family == types.Array {
		return types.ArrayOf(BaseType(t.ElemType()))
	}
	if t.Family == types.Enum {
		return t
	}
	return types.T(t.Family)
}

// Comparable reports whether values of types a and b can be compared with
// = and <. NULL compares with everything (and yields NULL).
func Comparable(a, b types.Type) bool {
	af, bf := a.Family, b.Family
	switch {
	case af == types.Null || bf == types.Null:
		return true
	case af.IsNumeric() && bf.IsNumeric():
		return true
	case (af == types.Utf8 || af == types.String) && (bf == types.Utf8 || bf == types.String):
		return true
	case af.IsTime() && bf.IsTime():
		return true
	case af == types.Array && bf == types.Array:
		return Comparable(a.ElemType(), b.ElemType())
	case af == types.Enum && bf == types.Enum:
		// Values of one enum type only (PostgreSQL's anyenum operators).
		return a.Enum != nil && b.Enum != nil && a.Enum.ID == b.Enum.ID
	case af == bf:
		return af == types.Bool || af == types.Interval || af == types.Unknown || af == types.Uuid || af == types.Time || af == types.TimeTZ
	}
	return false
}

// CommonType returns the type that values of types ts are converted to
// when they meet in one result. context names the construct in the error
// (PostgreSQL: "CASE types integer and text cannot be matched", 42804).
//
// Untyped literals and NULLs take the others' type (text when there is no
// other); numbers widen (ints to the widest int, signed and unsigned mixed
// to a signed type that holds both or Decimal for Uint64, any Decimal makes
// Decimal, any Float or Double makes Double); Date/Datetime/Timestamp mix
// to Timestamp; Utf8 and String mix to String. Modifiers survive only when
// every type has the same ones.
func CommonType(context string, ts ...types.Type) (types.Type, error) {
	var res types.Type
	have, sawUnknown := false, false
	for _, t := range ts {
		switch t.Family {
		case types.Null:
			continue
		case types.Unknown:
			sawUnknown = true
			continue
		}
		if !have {
			res, have = t, true
			continue
		}
		u, ok := unify(res, t)
		if !ok {
			return types.Type{}, sqlerr.New(codeDatatypeMismatch, "%s types %s and %s cannot be matched",
				context, TypeName(res), TypeName(t))
		}
		res = u
	}
	switch {
	case have && sawUnknown:
		// The literals are parsed as the others' type, but not cut to
		// their width or scale.
		return resolveTarget(res), nil
	case have:
		return res, nil
	case sawUnknown:
		return types.TypeUtf8, nil
	}
	return types.TypeNull, nil
}

func unify(a, b types.Type) (types.Type, bool) {
	if a == b {
		return a, true
	}
	af, bf := a.Family, b.Family
	switch {
	case af == types.Array && bf == types.Array:
		e, ok := unify(a.ElemType(), b.ElemType())
		return types.ArrayOf(e), ok
	case af == types.Array || bf == types.Array:
		return types.Type{}, false
	case af == types.Enum || bf == types.Enum:
		if Comparable(a, b) {
			return a, true
		}
		return types.Type{}, false
	case af == types.Utf8 && bf == types.Utf8 && (a.Blank || b.Blank):
		return unifyBlank(a, b), true
	case af == bf:
		return types.T(af), true
	case af.IsNumeric() && bf.IsNumeric():
		return unifyNumeric(af, bf), true
	case af.IsTime() && bf.IsTime():
		if af == types.TimestampTZ || bf == types.TimestampTZ {
			return types.TypeTimestampTZ, true
		}
		return types.TypeTimestamp, true
	case (af == types.Utf8 || af == types.String) && (bf == types.Utf8 || bf == types.String):
		return types.TypeString, true
	}
	return types.Type{}, false
}

// intBits is the width of an integer family.
func intBits(f types.Family) int {
	switch f {
	case types.Int8, types.Uint8:
		return 8
	case types.Int16, types.Uint16:
		return 16
	case types.Int32, types.Uint32:
		return 32
	}
	return 64
}

func signedOfBits(n int) types.Family {
	switch n {
	case 8:
		return types.Int8
	case 16:
		return types.Int16
	case 32:
		return types.Int32
	}
	return types.Int64
}

func unifyNumeric(a, b types.Family) types.Type {
	switch {
	case a.IsFloat() || b.IsFloat():
		return types.TypeDouble
	case a == types.Decimal || b == types.Decimal:
		return types.TypeDecimal
	case a.IsUnsigned() && b.IsUnsigned():
		if intBits(a) >= intBits(b) {
			return types.T(a)
		}
		return types.T(b)
	case !a.IsUnsigned() && !b.IsUnsigned():
		if intBits(a) >= intBits(b) {
			return types.T(a)
		}
		return types.T(b)
	}
	s, u := a, b
	if a.IsUnsigned() {
		s, u = b, a
	}
	if intBits(u) == 64 {
		return types.TypeDecimal
	}
	return types.T(signedOfBits(max(intBits(s), 2*intBits(u))))
}

// AssignmentAllowed reports whether a value of type from may be stored in
// a column of type to without an explicit cast (INSERT, UPDATE SET): the
// same family, numbers into numbers (range-checked), times into times, and
// anything into text or bytes (rendered as text), as PostgreSQL's
// assignment casts allow.
func AssignmentAllowed(from, to types.Type) bool {
	ff, tf := from.Family, to.Family
	switch {
	case ff == types.Array && tf == types.Array:
		return AssignmentAllowed(from.ElemType(), to.ElemType())
	case ff == types.Array || tf == types.Array:
		// Arrays store only into arrays (and text into an array column
		// only through an untyped literal), as in PostgreSQL.
		return ff == types.Null || ff == types.Unknown || tf == types.Utf8 && ff == types.Array
	case ff == tf, ff == types.Null, ff == types.Unknown:
		return true
	case ff.IsNumeric() && tf.IsNumeric():
		return true
	case ff.IsTime() && tf.IsTime():
		return true
	case tf == types.Time:
		// PostgreSQL's assignment casts to time: timestamp's and
		// timestamptz's time of day, interval's time part.
		return ff == types.Timestamp || ff == types.Datetime || ff == types.TimestampTZ || ff == types.Interval ||
			ff == types.TimeTZ
	case ff == types.Time && tf == types.Interval:
		return true
	case tf == types.TimeTZ:
		// PostgreSQL's casts to timetz: time's (implicit) and
		// timestamptz's (assignment), both in the session's zone.
		return ff == types.Time || ff == types.TimestampTZ
	case tf == types.Utf8 || tf == types.String:
		return true
	}
	return false
}

// AssignCast converts e for storing into column `column` of type t:
// untyped literals parse as t, NULL becomes a typed NULL, other types
// convert with a Cast when AssignmentAllowed, else 42804 as PostgreSQL
// words it.
func (b *Builder) AssignCast(e Expr, t types.Type, column string) (Expr, error) {
	if !AssignmentAllowed(e.Type(), t) {
		return nil, sqlerr.New(codeDatatypeMismatch, "column %q is of type %s but expression is of type %s",
			column, TypeName(t), TypeName(e.Type()))
	}
	return b.Coerce(e, t)
}

// Coerce converts e to type t: untyped literals and parameters are
// resolved as t, a NULL becomes a NULL of t, and other types get a Cast
// (42846 when no cast exists). Constant results are folded.
func (b *Builder) Coerce(e Expr, t types.Type) (Expr, error) {
	et := e.Type()
	switch {
	case t.Family == types.Null || t.Family == types.Unknown:
		return e, nil
	case et.Family == types.Unknown:
		return b.resolve(e, t)
	case et == t:
		return e, nil
	case et.Family == types.Array || t.Family == types.Array:
		// Element types differ: a Cast below.
	case et.Family == t.Family && t.Plain() && (t.Blank || !et.Blank):
		// (A char(n) value becoming text or varchar loses its padding,
		// which takes a Cast.)
		return e, nil
	}
	if k, ok := e.(*Const); ok && k.Value.IsNull() {
		return NullOf(t), nil
	}
	c, err := NewCast(e, t)
	if err != nil {
		return nil, err
	}
	return fold(c), nil
}

// resolve gives an untyped literal or parameter the type t (a no-op for
// typed expressions and for t Unknown or Null). A literal is parsed now,
// so that malformed input fails at build time.
func (b *Builder) resolve(e Expr, t types.Type) (Expr, error) {
	if t.Family == types.Unknown || t.Family == types.Null || e.Type().Family != types.Unknown {
		return e, nil
	}
	switch n := e.(type) {
	case *Const:
		v, err := types.ParseText(t, n.Value.Str())
		if err != nil && !types.OrderDependent(t, n.Value.Str()) && !types.IntervalStyleDependent(t, n.Value.Str()) {
			return nil, err
		}
		if t.Family == types.TimestampTZ || t.Family == types.Array && t.Elem == types.TimestampTZ || t.Family == types.TimeTZ ||
			t.Family == types.Time && strings.EqualFold(strings.TrimSpace(n.Value.Str()), "now") ||
			types.OrderDependent(t, n.Value.Str()) || types.IntervalStyleDependent(t, n.Value.Str()) {
			// Text without an offset names a wall-clock time in the
			// session's zone when the statement runs, '01/02/03' is
			// read in the session's DateStyle order then, and '-1
			// 2:03' in its IntervalStyle (zone.go).
			return &Cast{E: n, To: t}, nil
		}
		return &Const{Value: v, Typ: t}, nil
	case *Param:
		n.Typ = t
		b.setParamType(n.N, t)
		return n, nil
	case *ArrayElem:
		if t.Family == types.Utf8 || t.Family == types.String || CastAllowed(types.TypeUtf8, t) {
			return &ArrayElem{Arr: n.Arr, Index: n.Index, Elem: t}, nil
		}
	}
	return e, nil
}

// resolvePair resolves untyped operands of a binary operator against each
// other: an untyped side takes the other's base type, two untyped sides
// become text.
func (b *Builder) resolvePair(l, r Expr) (Expr, Expr, error) {
	lu, ru := l.Type().Family == types.Unknown, r.Type().Family == types.Unknown
	var err error
	switch {
	case lu && ru:
		if l, err = b.resolve(l, types.TypeUtf8); err != nil {
			return nil, nil, err
		}
		r, err = b.resolve(r, types.TypeUtf8)
	case lu:
		l, err = b.resolve(l, resolveTarget(r.Type()))
	case ru:
		r, err = b.resolve(r, resolveTarget(l.Type()))
	}
	if err != nil {
		return l, r, err
	}
	// time meets timetz through PostgreSQL's implicit cast of the time
	// (the session zone's offset today).
	switch lf, rf := l.Type().Family, r.Type().Family; {
	case lf == types.Time && rf == types.TimeTZ:
		l = &Cast{E: l, To: types.TypeTimeTZ}
	case lf == types.TimeTZ && rf == types.Time:
		r = &Cast{E: r, To: types.TypeTimeTZ}
	}
	return l, r, err
}

// resolveTarget is the type an untyped operand takes next to an operand
// of type t: t without modifiers, or text next to a NULL.
func resolveTarget(t types.Type) types.Type {
	if t.Family == types.Null {
		return types.TypeUtf8
	}
	if t.Blank {
		// Next to char(n) a literal is bpchar, as in PostgreSQL.
		return types.TypeBPChar
	}
	return BaseType(t)
}
