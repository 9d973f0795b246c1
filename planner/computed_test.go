package planner

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
)

// TestPiecesExact compares depInfo.pieces with counting by brute force:
// the runs of values over which every divisor's quotient stays the same,
// on random intervals of signed and unsigned domains, near zero and near
// the domains' ends, with NULL or without.
func TestPiecesExact(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	fams := []types.Family{types.Int64, types.Uint64, types.Int16, types.Uint8}
	divisorChoices := []uint64{1, 2, 3, 4, 6, 10, 7, 1 << 63, math.MaxUint64}
	for iter := 0; iter < 3000; iter++ {
		fam := fams[rng.Intn(len(fams))]
		dom, _ := domainOf(types.Type{Family: fam})
		var divs []uint64
		for _, d := range divisorChoices {
			if rng.Intn(3) == 0 {
				divs = append(divs, d)
			}
		}
		sortUints(divs)
		d := depInfo{dom: dom, integral: true, divisors: divs}
		// An interval of up to 300 values near the middle of the mapped
		// domain (zero for signed types), its start or its end.
		size := uint64(rng.Intn(300))
		var a uint64
		switch rng.Intn(3) {
		case 0:
			a = dom.min + uint64(rng.Intn(50))
		case 1:
			mid := dom.min + (dom.max-dom.min)/2
			a = mid - 150 + uint64(rng.Intn(300))
			if !dom.signed {
				a = uint64(rng.Intn(300))
			}
		default:
			a = dom.max - min(size+uint64(rng.Intn(50)), dom.max-dom.min)
		}
		if a < dom.min || a > dom.max {
			a = dom.min // the middle of a small unsigned domain
		}
		// A segment that holds NULL starts before it, so its values start
		// at the domain's minimum.
		null := rng.Intn(4) == 0
		if null {
			a = dom.min
		}
		b := a + min(size, dom.max-a)
		s := seg{lo: before(dom.value(a)), hi: after(dom.value(b))}
		if null {
			s.lo = beforeNull
		}
		want := uint64(0)
		if null {
			want++
		}
		if len(divs) == 0 {
			want++
		} else {
			for x := a; ; x++ {
				if x == a || !sameQuotients(dom, divs, x-1, x) {
					want++
				}
				if x == b {
					break
				}
			}
		}
		if got := d.pieces(&s, math.MaxUint64); got != want {
			t.Fatalf("seed %d: %v %v divisors %v null %v: %d pieces, want %d", seed, dom.value(a), dom.value(b), divs, null, got, want)
		}
		if want > 0 {
			limit := uint64(rng.Int63n(int64(want) + 1))
			if got := d.pieces(&s, limit); (got > limit) != (want > limit) || (want <= limit && got != want) {
				t.Fatalf("seed %d: %v %v divisors %v: limit %d gives %d, want %d", seed, dom.value(a), dom.value(b), divs, limit, got, want)
			}
		}
	}
}

// sameQuotients reports whether the mapped values x and y have the same
// quotient by every divisor (truncating toward zero).
func sameQuotients(dom intDomain, divs []uint64, x, y uint64) bool {
	for _, d := range divs {
		if dom.signed {
			xi, yi := int64(x^1<<63), int64(y^1<<63)
			if d > math.MaxInt64 {
				if (xi == math.MinInt64) != (yi == math.MinInt64) {
					return false
				}
				continue
			}
			if xi/int64(d) != yi/int64(d) {
				return false
			}
			continue
		}
		if x/d != y/d {
			return false
		}
	}
	return true
}

func sortUints(xs []uint64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// TestResidueCountExact compares residueCount with walking the residues
// and keeping those that cast into the column's type and lie in the
// segment, for signed and unsigned moduli into columns of several types.
func TestResidueCountExact(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	cols := []types.Family{types.Int64, types.Uint64, types.Int8, types.Uint8, types.Int16}
	for iter := 0; iter < 2000; iter++ {
		ck := &computedKey{
			typ:    types.Type{Family: cols[rng.Intn(len(cols))]},
			hasMod: true,
			mod:    uint64(rng.Intn(400)),
			modFam: []types.Family{types.Int64, types.Uint64}[rng.Intn(2)],
		}
		lo, hi := int64(rng.Intn(800)-400), int64(rng.Intn(800)-400)
		s := seg{lo: negInf, hi: posInf}
		switch rng.Intn(4) {
		case 0:
			s.lo = after(types.NullValue)
		case 1:
			v, err := types.Cast(types.NewInt64(lo), ck.typ)
			if err == nil {
				s.lo = before(v)
			}
		}
		if rng.Intn(2) == 0 {
			if v, err := types.Cast(types.NewInt64(hi), ck.typ); err == nil {
				s.hi = after(v)
			}
		}
		if compareCuts(s.lo, s.hi) >= 0 {
			continue
		}
		want := uint64(0)
		ck.residues(func(r types.Value) bool {
			if v, err := types.Cast(r, ck.typ); err == nil && s.contains(v) {
				want++
			}
			return true
		})
		if got := ck.residueCount(&s); got != want {
			t.Fatalf("seed %d: %s %% %d into %s over [%v, %v): %d residues, want %d",
				seed, ck.modFam, ck.mod, ck.typ, s.lo, s.hi, got, want)
		}
	}
}
