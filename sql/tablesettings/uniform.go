package tablesettings

import (
	"math/big"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// UniformPivots returns the pivots of UNIFORM_PARTITIONS = n on a first key
// column of type keyType (design.md §5): the values that cut the type's
// range [min, max] into n parts of equal width,
//
//	pivot_i = min + floor(R·i/n)   for i = 1 .. n−1, R = max − min + 1
//
// which is floor(2^64·i/n) for Uint64 and −2^63 + floor(2^64·i/n) for
// Int64, computed exactly with math/big. The empty pivot 0 is not part of
// the result, so shard 0 is [(), pivot_1) and holds the NULL keys too.
//
// When n exceeds R some pivots coincide; they are returned once, and a
// pivot equal to min is dropped (shard 0 already starts before it), so the
// result has at most R−1 pivots: one shard per value of the type. n = 1
// gives no pivots.
//
// Errors: 42P16 for a non-integral type, 22023 for n < 1 or n >
// MaxInitialPartitions.
func UniformPivots(keyType types.Type, n int64) ([]types.Value, error) {
	if err := checkUniform(keyType, n); err != nil {
		return nil, err
	}
	f := keyType.Family
	lo, hi := types.IntRange(f)
	minV := big.NewInt(lo)
	if f.IsUnsigned() {
		minV.SetInt64(0)
	}
	r := new(big.Int).SetUint64(hi)
	r.Sub(r, minV)
	r.Add(r, big.NewInt(1)) // R = max − min + 1

	bn := big.NewInt(n)
	out := make([]types.Value, 0, min(n-1, 1<<16))
	var prev, off, p big.Int
	prev.SetInt64(0) // offset 0 is min itself, never a pivot
	for i := int64(1); i < n; i++ {
		off.Mul(r, big.NewInt(i))
		off.Quo(&off, bn) // floor: both operands are positive
		if off.Cmp(&prev) == 0 {
			continue
		}
		prev.Set(&off)
		p.Add(minV, &off)
		if f.IsUnsigned() {
			out = append(out, types.NewUint(f, p.Uint64()))
		} else {
			out = append(out, types.NewInt(f, p.Int64()))
		}
	}
	return out, nil
}

// rangeSize returns the number of values of integer family f, when it fits
// an int64 (not for Int64 and Uint64).
func rangeSize(f types.Family) (int64, bool) {
	if f == types.Int64 || f == types.Uint64 || !f.IsInteger() {
		return 0, false
	}
	lo, hi := types.IntRange(f)
	if f.IsUnsigned() {
		lo = 0
	}
	return int64(hi) - lo + 1, true
}

// checkUniform validates UNIFORM_PARTITIONS = n for a first key column of
// type keyType.
func checkUniform(keyType types.Type, n int64) *sqlerr.Error {
	if n < 1 || n > MaxInitialPartitions {
		e := errorf(codeValue, 0, "Invalid partition count specified: %d", n)
		if n > MaxInitialPartitions {
			withHint(e, "A table is created with at most %d partitions.", MaxInitialPartitions)
		}
		return e
	}
	if !keyType.Family.IsInteger() {
		return withHint(errorf(codeTable, 0, "Unsupported first key column type %s, only integer types are supported",
			keyType), "UNIFORM_PARTITIONS splits the range of the first key column's integer type; "+
			"use PARTITION_AT_KEYS for other key types.")
	}
	return nil
}
