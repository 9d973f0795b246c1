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

// randomInt draws integers of every integer family that hit the
// interesting edges often.
func randomInt(rng *rand.Rand) types.Value {
	edges := []int64{0, 1, -1, 2, -2, 3, 7, -7, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1,
		math.MaxInt32, math.MinInt32, 1 << 32, -(1 << 32), 3037000499, 3037000500, -3037000500,
		math.MaxInt16, math.MinInt16, math.MaxInt8, math.MinInt8, 181, 46341, -46341}
	uedges := []uint64{0, 1, 2, math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1, 1<<63 + 1, 1 << 32, 4294967296 - 1,
		math.MaxUint32, math.MaxUint16, math.MaxUint8, 16, 256}
	fams := []types.Family{types.Int8, types.Int16, types.Int32, types.Int64, types.Uint8, types.Uint16, types.Uint32, types.Uint64}
	f := fams[rng.IntN(len(fams))]
	// Draw until the value fits f (casting rejects the others).
	for {
		var v types.Value
		switch rng.IntN(4) {
		case 0:
			v = types.NewInt64(edges[rng.IntN(len(edges))])
		case 1:
			v = types.NewUint64(uedges[rng.IntN(len(uedges))])
		case 2:
			v = types.NewInt64(rng.Int64N(201) - 100)
		default:
			lo, hi := types.IntRange(f)
			if f.IsUnsigned() {
				v = types.NewUint64(rng.Uint64() & hi)
			} else {
				v = types.NewInt64(lo + int64(rng.Uint64()&hi))
			}
		}
		if c, err := types.Cast(v, types.T(f)); err == nil {
			return c
		}
	}
}

// wantIntFamily is the documented result family of a op b (inttypes.go),
// derived from the families' ranges rather than their widths: the
// narrowest family of the operands' signedness (signed when they differ)
// whose range holds both operands' ranges, Int64 when none does.
func wantIntFamily(a, b types.Family) types.Family {
	cands := []types.Family{types.Int8, types.Int16, types.Int32, types.Int64}
	if a.IsUnsigned() && b.IsUnsigned() {
		cands = []types.Family{types.Uint8, types.Uint16, types.Uint32, types.Uint64}
	}
	alo, ahi := types.IntRange(a)
	blo, bhi := types.IntRange(b)
	for _, c := range cands {
		lo, hi := types.IntRange(c)
		if lo <= min(alo, blo) && hi >= max(ahi, bhi) {
			return c
		}
	}
	return types.Int64
}

// TestIntArithAgainstBig compares integer Arith with math/big: the result
// has the documented family, is exact when it fits that family and 22003
// exactly when it does not; / truncates, % follows the dividend, x/0 and
// x%0 are NULL.
func TestIntArithAgainstBig(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	for iter := 0; iter < 200000; iter++ {
		a, b := randomInt(rng), randomInt(rng)
		op := ArithOp(rng.IntN(5))
		e, err := NewArith(op, &Const{Value: a}, &Const{Value: b})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got, err := e.Eval(&Context{}, nil)
		res := e.Type().Family
		if wantFam := wantIntFamily(a.Family(), b.Family()); res != wantFam {
			t.Fatalf("seed %d: %v %s %v (%v, %v) has type %v, want %v", seed, a, op, b, a.Family(), b.Family(), res, wantFam)
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
		if !fitsFamily(want, res) {
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

func fitsFamily(x *big.Int, f types.Family) bool {
	lo, hi := types.IntRange(f)
	return x.Cmp(big.NewInt(lo)) >= 0 && x.Cmp(new(big.Int).SetUint64(hi)) <= 0
}

// TestIntNegAbs checks unary minus and abs on every integer family: the
// result family (the operand's for signed ones and abs, the signed family
// twice as wide for negated unsigned ones) and 22003 exactly when the exact
// result does not fit it.
func TestIntNegAbs(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("seed %d", seed)
	wantNeg := map[types.Family]types.Family{types.Int8: types.Int8, types.Int16: types.Int16, types.Int32: types.Int32,
		types.Int64: types.Int64, types.Uint8: types.Int16, types.Uint16: types.Int32, types.Uint32: types.Int64, types.Uint64: types.Int64}
	for iter := 0; iter < 20000; iter++ {
		a := randomInt(rng)
		x := a.AsBigInt()
		neg := &Unary{Op: Neg, E: &Const{Value: a}}
		typ, ok := UnaryType(Neg, types.T(a.Family()))
		if !ok || typ.Family != wantNeg[a.Family()] {
			t.Fatalf("seed %d: -%v (%v) has type %v, want %v", seed, a, a.Family(), typ, wantNeg[a.Family()])
		}
		neg.Typ = typ
		absE, err := buildAbs(newTestBuilder(), "abs", []Expr{&Const{Value: a, Typ: types.T(a.Family())}})
		if err != nil {
			t.Fatal(err)
		}
		if absE.Type().Family != a.Family() {
			t.Fatalf("seed %d: abs(%v) has type %v", seed, a, absE.Type())
		}
		for _, c := range []struct {
			e    Expr
			want *big.Int
		}{{neg, new(big.Int).Neg(x)}, {absE, new(big.Int).Abs(x)}} {
			got, err := c.e.Eval(&Context{}, nil)
			switch {
			case !fitsFamily(c.want, c.e.Type().Family):
				if sqlerr.Code(err) != sqlerr.NumericValueOutOfRange {
					t.Fatalf("seed %d: %v = %v, %v; want 22003", seed, c.e, got, err)
				}
			case err != nil || got.Family() != c.e.Type().Family || got.AsBigInt().Cmp(c.want) != 0:
				t.Fatalf("seed %d: %v = %v (%v), %v; want %v", seed, c.e, got, got.Family(), err, c.want)
			}
		}
	}
}

// TestSumAgainstBig checks sum() over random integers with math/big.
func TestSumAgainstBig(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	for iter := 0; iter < 2000; iter++ {
		spec, err := NewAggSpec("sum", false, false, &ColumnRef{Typ: types.TypeInt64})
		if err != nil {
			t.Fatal(err)
		}
		acc := spec.New()
		want := new(big.Int)
		for n := rng.IntN(20); n > 0; n-- {
			v := randomInt(rng)
			if v.Family() != types.Int64 {
				v = types.NewInt64(int64(v.AsBigInt().Uint64()))
			}
			want.Add(want, v.AsBigInt())
			if err := acc.Add(v); err != nil {
				t.Fatal(err)
			}
		}
		// sum(Int64) is Decimal (PostgreSQL's numeric): always exact.
		got, err := acc.Result()
		if err != nil || (!got.IsNull() && got.String() != want.String()) {
			t.Fatalf("seed %d: sum = %v, %v; want %v", seed, got, err, want)
		}
	}
}
