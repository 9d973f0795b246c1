package expr

import (
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The result types of integer arithmetic. PostgreSQL keeps the width of its
// operands (int2 + int2 is int2, int4 * int4 is int4, mixed widths give the
// wider) and raises 22003 when a result does not fit that width; PivotDB
// follows it for the signed families and extends the rule to YQL's Int8 and
// unsigned families the way YDB types them:
//
//	signed   op signed     the wider signed family (Int8 op Int8 is Int8)
//	unsigned op unsigned   the wider unsigned family (Uint32 - Uint32 is
//	                       Uint32, so 1 - 2 on them is 22003, never a wrap)
//	signed   op unsigned   the narrowest signed family that holds both
//	                       operands' ranges: Int8 op Uint8 is Int16, Int32
//	                       op Uint32 is Int64; with Uint64 it is Int64 (no
//	                       signed family holds Uint64: results beyond
//	                       Int64 are 22003, the arithmetic itself is exact)
//	- x                    the signed family of x's width for signed x; for
//	                       unsigned x the signed family twice as wide
//	                       (Uint64: Int64)
//	abs(x)                 x's family (abs of the smallest value is 22003)
//
// Every result is computed exactly in sign-magnitude form (intmath.go) and
// checked against its family's range; nothing wraps.

// intResult is the family of l op r for two integer families.
func intResult(l, r types.Family) types.Family {
	switch {
	case l.IsUnsigned() == r.IsUnsigned():
		if intBits(l) >= intBits(r) {
			return l
		}
		return r
	case l.IsUnsigned():
		l, r = r, l
	}
	// l signed, r unsigned.
	return signedOfBits(min(64, max(intBits(l), 2*intBits(r))))
}

// negResult is the family of -x for an integer family.
func negResult(f types.Family) types.Family {
	if f.IsUnsigned() {
		return signedOfBits(min(64, 2*intBits(f)))
	}
	return f
}

// intOutOfRange is the 22003 error of an integer result that does not fit
// its family, worded as PostgreSQL words it for its types ("integer out of
// range") and with the YQL name for the others ("Uint32 out of range").
func intOutOfRange(f types.Family) error {
	name := f.String()
	switch f {
	case types.Int16:
		name = "smallint"
	case types.Int32:
		name = "integer"
	case types.Int64:
		name = "bigint"
	}
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", name)
}
