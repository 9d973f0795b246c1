package planner

import (
	"math"

	"github.com/pivotdb/pivotdb/sql/types"
)

// intDomain is the value domain of an integer or Bool key column, mapped
// order-preservingly onto uint64 (signed values with the sign bit flipped,
// as in their key encoding), so that intervals of either signedness can be
// counted and enumerated with one arithmetic.
type intDomain struct {
	fam      types.Family
	signed   bool
	min, max uint64 // mapped
}

// smallEnum is the largest number of values of an integer interval that
// the walk turns into points when a constraint on the following columns
// hangs below it (a BETWEEN 1 AND 3 AND b = 5 gives three exact points
// rather than one range that loses b = 5).
const smallEnum = 16

func domainOf(t types.Type) (intDomain, bool) {
	f := t.Family
	switch {
	case f == types.Bool:
		return intDomain{fam: f, min: 0, max: 1}, true
	case f.IsUnsigned():
		_, hi := types.IntRange(f)
		return intDomain{fam: f, min: 0, max: hi}, true
	case f.IsInteger():
		lo, hi := types.IntRange(f)
		return intDomain{fam: f, signed: true, min: uint64(lo) ^ 1<<63, max: hi ^ 1<<63}, true
	}
	return intDomain{}, false
}

func (d intDomain) mapped(v types.Value) uint64 {
	if d.signed {
		return uint64(v.Int()) ^ 1<<63
	}
	return v.Uint()
}

func (d intDomain) value(u uint64) types.Value {
	switch {
	case d.fam == types.Bool:
		return types.NewBool(u != 0)
	case d.signed:
		return types.NewInt(d.fam, int64(u^1<<63))
	}
	return types.NewUint(d.fam, u)
}

// span returns the non-NULL values of the segment [lo, hi) as the mapped
// interval [a, b] (ints false when there are none) and whether NULL is in
// it. The cuts' values are of the column's family.
func (d intDomain) span(lo, hi cut) (a, b uint64, ints, null bool) {
	null = compareCuts(lo, afterNull) < 0 && compareCuts(hi, afterNull) >= 0
	ints = true
	switch {
	case lo.kind == cutPosInf:
		ints = false
	case lo.rank() == 0 || (lo.kind == cutAfter && lo.v.IsNull()):
		a = d.min
	case lo.kind == cutBefore:
		a = d.mapped(lo.v)
	default: // after a value
		if m := d.mapped(lo.v); m >= d.max {
			ints = false
		} else {
			a = m + 1
		}
	}
	switch {
	case hi.kind == cutPosInf:
		b = d.max
	case hi.rank() == 0 || hi.v.IsNull():
		ints = false
	case hi.kind == cutAfter:
		b = d.mapped(hi.v)
	default: // before a value
		if m := d.mapped(hi.v); m <= d.min {
			ints = false
		} else {
			b = m - 1
		}
	}
	if ints && a > b {
		ints = false
	}
	return a, b, ints, null
}

// enumerate lists the values of the segment (NULL first) when there are at
// most n of them.
func (d intDomain) enumerate(s *seg, n int) ([]types.Value, bool) {
	a, b, ints, null := d.span(s.lo, s.hi)
	count := 0
	if null {
		count++
	}
	if ints {
		if b-a >= uint64(n) {
			return nil, false
		}
		count += int(b-a) + 1
	}
	if count > n {
		return nil, false
	}
	out := make([]types.Value, 0, count)
	if null {
		out = append(out, types.NullValue)
	}
	if ints {
		for x := a; ; x++ {
			out = append(out, d.value(x))
			if x == b {
				break
			}
		}
	}
	return out, true
}

// quotEnd returns the largest mapped value y >= x whose quotient by the
// divisor magnitude dv (truncating toward zero, as PivotDB's integer
// division) equals x's: the end of x's piece in a quotient enumeration.
func (d intDomain) quotEnd(x, dv uint64) uint64 {
	if dv <= 1 {
		return x
	}
	if !d.signed {
		start := x / dv * dv
		if start > math.MaxUint64-(dv-1) {
			return math.MaxUint64
		}
		return start + dv - 1
	}
	xi := int64(x ^ 1<<63)
	if dv > math.MaxInt64 {
		// Only MinInt64 has a non-zero quotient by 2^63.
		if xi == math.MinInt64 {
			return x
		}
		return math.MaxUint64
	}
	di := int64(dv)
	q := xi / di
	var end int64
	switch {
	case xi >= 0:
		start := q * di
		if start > math.MaxInt64-(di-1) {
			end = math.MaxInt64
		} else {
			end = start + di - 1
		}
	case q == 0:
		end = di - 1 // -(d-1) .. d-1 all have quotient 0
	default:
		end = q * di
	}
	return uint64(end) ^ 1<<63
}

// quotientCount returns the number of distinct quotients by the divisor
// magnitude dv (truncating toward zero) of the mapped values a..b (a <= b).
// Truncating division is monotonic and changes by at most one between
// neighbours, so the quotients are every integer from a's to b's.
func (d intDomain) quotientCount(a, b, dv uint64) uint64 {
	if dv <= 1 {
		return satAdd(b-a, 1)
	}
	if !d.signed {
		return b/dv - a/dv + 1
	}
	xa, xb := int64(a^1<<63), int64(b^1<<63)
	if dv > math.MaxInt64 {
		// Only MinInt64 has a non-zero quotient (-1) by 2^63.
		if xa == math.MinInt64 && xb > math.MinInt64 {
			return 2
		}
		return 1
	}
	qa, qb := xa/int64(dv), xb/int64(dv)
	return uint64(qb-qa) + 1
}
