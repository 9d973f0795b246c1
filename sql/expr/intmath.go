package expr

import (
	"math/bits"

	"github.com/pivotdb/pivotdb/sql/types"
)

// smInt is an integer in sign-magnitude form. Every value of every integer
// family (from -2^63 to 2^64-1) has a magnitude that fits a uint64, so the
// four operations can be done exactly here, with overflow detected only
// when the result is converted back to Int64 or Uint64. This is what makes
// mixed signed/unsigned arithmetic exact (2^64-1 - 2^63 is fine although
// neither operand fits the other's type).
type smInt struct {
	neg bool // never set for zero
	mag uint64
}

func smFromValue(v types.Value) smInt {
	if v.Family().IsUnsigned() {
		return smInt{mag: v.Uint()}
	}
	i := v.Int()
	if i < 0 {
		return smInt{neg: true, mag: uint64(-(i + 1)) + 1}
	}
	return smInt{mag: uint64(i)}
}

func smNorm(neg bool, mag uint64) smInt { return smInt{neg: neg && mag != 0, mag: mag} }

// smAdd returns a+b; ok is false when the magnitude exceeds 2^64-1 (which
// fits no result type).
func smAdd(a, b smInt) (smInt, bool) {
	if a.neg == b.neg {
		s, carry := bits.Add64(a.mag, b.mag, 0)
		return smNorm(a.neg, s), carry == 0
	}
	if a.mag >= b.mag {
		return smNorm(a.neg, a.mag-b.mag), true
	}
	return smNorm(b.neg, b.mag-a.mag), true
}

func smSub(a, b smInt) (smInt, bool) {
	return smAdd(a, smNorm(!b.neg, b.mag))
}

func smMul(a, b smInt) (smInt, bool) {
	hi, lo := bits.Mul64(a.mag, b.mag)
	return smNorm(a.neg != b.neg, lo), hi == 0
}

// smQuo truncates toward zero; b must not be zero.
func smQuo(a, b smInt) smInt { return smNorm(a.neg != b.neg, a.mag/b.mag) }

// smRem has the sign of the dividend; b must not be zero.
func smRem(a, b smInt) smInt { return smNorm(a.neg, a.mag%b.mag) }

// toFamily converts to integer family f, reporting whether it fits.
func (x smInt) toFamily(f types.Family) (types.Value, bool) {
	lo, hi := types.IntRange(f)
	if x.neg {
		// lo is -2^(bits-1) (or 0 for unsigned families).
		if lo == 0 || x.mag > uint64(-(lo+1))+1 {
			return types.Value{}, false
		}
		return types.NewInt(f, int64(-x.mag)), true
	}
	if x.mag > hi {
		return types.Value{}, false
	}
	if f.IsUnsigned() {
		return types.NewUint(f, x.mag), true
	}
	return types.NewInt(f, int64(x.mag)), true
}

// i128 is a two's-complement 128-bit accumulator for sum() over integers:
// no sum of fewer than 2^64 values of the integer families overflows it.
type i128 struct {
	hi int64
	lo uint64
}

func (a *i128) add(v types.Value) {
	x := smFromValue(v)
	var hi int64
	lo := x.mag
	if x.neg {
		// -mag in 128 bits.
		lo = -x.mag
		hi = -1
		if x.mag == 0 {
			hi = 0
		}
	}
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, lo, 0)
	a.hi = a.hi + hi + int64(carry)
}

// value returns the sum as a value of integer family f if it fits.
func (a i128) value(f types.Family) (types.Value, bool) {
	switch {
	case a.hi == 0:
		return smInt{mag: a.lo}.toFamily(f)
	case a.hi == -1 && a.lo != 0:
		return smInt{neg: true, mag: -a.lo}.toFamily(f)
	}
	return types.Value{}, false
}

func (a i128) float() float64 {
	return float64(a.hi)*(1<<64) + float64(a.lo)
}
