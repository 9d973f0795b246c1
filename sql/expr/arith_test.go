package expr

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// randomInt draws integers that hit the interesting edges often.
func randomInt(rng *rand.Rand) types.Value {
	edges := []int64{0, 1, -1, 2, -2, 3, 7, -7, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1,
		math.MaxInt32, math.MinInt32, 1 << 32, -(1 << 32), 3037000499, 3037000500, -3037000500}
	uedges := []uint64{0, 1, 2, math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1, 1<<63 + 1, 1 << 32, 4294967296 - 1}
	switch rng.IntN(6) {
	case 0:
		return types.NewInt64(edges[rng.IntN(len(edges))])
	case 1:
		return types.NewUint64(uedges[rng.IntN(len(uedges))])
	case 2:
		return types.NewUint64(rng.Uint64())
	case 3:
		return types.NewInt64(rng.Int64N(201) - 100)
	case 4:
		return types.NewInt(types.Int32, int64(int32(rng.Uint32())))
	}
	return types.NewInt64(int64(rng.Uint64()))
}

// TestIntArithAgainstBig compares integer Arith with math/big: the result
// must be exact when it fits the result family and 22003 exactly when it
// does not; / truncates, % follows the dividend, x/0 and x%0 are NULL.
func TestIntArithAgainstBig(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	minI, maxI := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	maxU := new(big.Int).SetUint64(math.MaxUint64)
	for iter := 0; iter < 200000; iter++ {
		a, b := randomInt(rng), randomInt(rng)
		op := ArithOp(rng.IntN(5))
		e, err := NewArith(op, &Const{Value: a}, &Const{Value: b})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got, err := e.Eval(&Context{}, nil)
		res := e.Type().Family
		wantFam := types.Int64
		if a.Family().IsUnsigned() && b.Family().IsUnsigned() {
			wantFam = types.Uint64
		}
		if res != wantFam {
			t.Fatalf("seed %d: %v %s %v has type %v, want %v", seed, a, op, b, res, wantFam)
		}
		x, y := a.AsBigInt(), b.AsBigInt()
		var want *big.Int
		switch op {
		case Add:
			want = new(big.Int).Add(x, y)
		case Sub:
			want = new(big.Int).Sub(x, y)
		case Mul:
			want = new(big.Int).Mul(x, y)
		case Div:
			if y.Sign() != 0 {
				want = new(big.Int).Quo(x, y)
			}
		case Mod:
			if y.Sign() != 0 {
				want = new(big.Int).Rem(x, y)
			}
		}
		if want == nil {
			if err != nil || !got.IsNull() {
				t.Fatalf("seed %d: %v %s %v = %v, %v; want NULL", seed, a, op, b, got, err)
			}
			continue
		}
		fits := want.Cmp(minI) >= 0 && want.Cmp(maxI) <= 0
		if res == types.Uint64 {
			fits = want.Sign() >= 0 && want.Cmp(maxU) <= 0
		}
		if !fits {
			if sqlerr.Code(err) != sqlerr.NumericValueOutOfRange {
				t.Fatalf("seed %d: %v %s %v = %v, %v; want 22003 (exact %v)", seed, a, op, b, got, err, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: %v %s %v: unexpected %v (exact %v)", seed, a, op, b, err, want)
		}
		if got.Family() != res || got.AsBigInt().Cmp(want) != 0 {
			t.Fatalf("seed %d: %v %s %v = %v (%v), want %v", seed, a, op, b, got, got.Family(), want)
		}
	}
}

// TestSumAgainstBig checks sum() over random integers with math/big.
func TestSumAgainstBig(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	minI, maxI := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	for iter := 0; iter < 2000; iter++ {
		spec, err := NewAggSpec("sum", false, false, &ColumnRef{Typ: types.TypeInt64})
		if err != nil {
			t.Fatal(err)
		}
		acc := spec.New()
		want := new(big.Int)
		for n := rng.IntN(20); n > 0; n-- {
			v := randomInt(rng)
			if v.Family().IsUnsigned() {
				v = types.NewInt64(int64(v.Uint()))
			}
			want.Add(want, v.AsBigInt())
			if err := acc.Add(v); err != nil {
				t.Fatal(err)
			}
		}
		got, err := acc.Result()
		fits := want.Cmp(minI) >= 0 && want.Cmp(maxI) <= 0
		switch {
		case !fits && sqlerr.Code(err) != sqlerr.NumericValueOutOfRange:
			t.Fatalf("seed %d: sum = %v, %v; want 22003 (exact %v)", seed, got, err, want)
		case fits && (err != nil || (!got.IsNull() && got.AsBigInt().Cmp(want) != 0)):
			t.Fatalf("seed %d: sum = %v, %v; want %v", seed, got, err, want)
		}
	}
}
