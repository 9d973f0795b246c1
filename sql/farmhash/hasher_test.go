package farmhash

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	farm "github.com/dgryski/go-farm"
)

// value is one argument of farm_hash in the tests: exactly one of the kinds.
type value struct {
	kind byte // 'n' NULL, 'i' int64, 'u' uint64, 'b' bool, 's' string
	i    int64
	u    uint64
	b    bool
	s    string
}

func null() value          { return value{kind: 'n'} }
func i64(v int64) value    { return value{kind: 'i', i: v} }
func u64(v uint64) value   { return value{kind: 'u', u: v} }
func boolean(v bool) value { return value{kind: 'b', b: v} }
func str(v string) value   { return value{kind: 's', s: v} }

func (v value) String() string {
	switch v.kind {
	case 'n':
		return "NULL"
	case 'i':
		return fmt.Sprint(v.i)
	case 'u':
		return fmt.Sprintf("%du", v.u)
	case 'b':
		return fmt.Sprint(v.b)
	default:
		return fmt.Sprintf("%q", v.s)
	}
}

func (v value) addTo(h *Hasher) {
	switch v.kind {
	case 'n':
		h.AddNull()
	case 'i':
		h.AddInt64(v.i)
	case 'u':
		h.AddUint64(v.u)
	case 'b':
		h.AddBool(v.b)
	default:
		h.AddString(v.s)
	}
}

func hashRow(row ...value) uint64 {
	h := New()
	for _, v := range row {
		v.addTo(&h)
	}
	return h.Sum64()
}

func TestFarmHash(t *testing.T) {
	for _, tc := range []struct {
		row  []value
		want uint64
	}{
		// The vectors of design.md §7.
		{[]value{i64(3), str("hello"), boolean(true)}, 13185060272037541714},
		{[]value{i64(54), null(), boolean(false)}, 1607147011416532415},

		// The row expectations of YTsaurus's stability test
		// (farm_fingerprint_stability_ut.cpp), except the pair with a double.
		{[]value{i64(12345678), u64(42)}, 16453323425893019626},
		{[]value{u64(12345678), boolean(true)}, 10502610411105654667},
		{[]value{boolean(false), str("")}, 10248854568006048452},
		{[]value{str("abc"), i64(-1000000)}, 9998489714118868374},

		// The empty row is the seed XOR 0.
		{nil, 0xdeadc0de},
	} {
		name := fmt.Sprint(tc.row)
		t.Run(name, func(t *testing.T) {
			if got := hashRow(tc.row...); got != tc.want {
				t.Errorf("farm_hash%v = %d, want %d", tc.row, got, tc.want)
			}
		})
	}
}

// TestFarmHashDoubleBits covers the remaining YTsaurus stability pair,
// (42.0, "0"), whose double YTsaurus fingerprints by its bits as it does an
// integer; feeding those bits through AddUint64 must give YTsaurus's answer.
func TestFarmHashDoubleBits(t *testing.T) {
	h := New()
	h.AddUint64(math.Float64bits(42))
	h.AddString("0")
	if got, want := h.Sum64(), uint64(12125805494429148155); got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
}

func TestZeroHasherIsNew(t *testing.T) {
	var zero Hasher
	if zero != New() {
		t.Fatalf("zero Hasher %+v differs from New() %+v", zero, New())
	}
	zero.AddInt64(3)
	zero.AddString("hello")
	zero.AddBool(true)
	if got, want := zero.Sum64(), uint64(13185060272037541714); got != want {
		t.Fatalf("zero Hasher: got %d, want %d", got, want)
	}
}

// TestPrefixFork checks that Sum64 does not consume the state and that a
// copied Hasher continues independently.
func TestPrefixFork(t *testing.T) {
	h := New()
	h.AddInt64(54)
	before := h.Sum64()
	if h.Sum64() != before {
		t.Fatalf("Sum64 changed the Hasher")
	}
	fork := h
	fork.AddNull()
	fork.AddBool(false)
	if got, want := fork.Sum64(), hashRow(i64(54), null(), boolean(false)); got != want {
		t.Fatalf("fork: got %d, want %d", got, want)
	}
	if h.Sum64() != before || h.Len() != 1 {
		t.Fatalf("adding to a copy changed the original")
	}
}

// TestAlias checks the equivalences the format guarantees: an int64 and a
// uint64 with the same bits, and a bool and the integer 0 or 1, fingerprint
// alike; NULL and false and 0 all contribute 0.
func TestAlias(t *testing.T) {
	for _, tc := range []struct{ a, b []value }{
		{[]value{i64(-1)}, []value{u64(math.MaxUint64)}},
		{[]value{i64(math.MinInt64)}, []value{u64(1 << 63)}},
		{[]value{boolean(true)}, []value{i64(1)}},
		{[]value{boolean(false)}, []value{u64(0)}},
		{[]value{null(), str("x")}, []value{i64(0), str("x")}},
	} {
		if x, y := hashRow(tc.a...), hashRow(tc.b...); x != y {
			t.Errorf("farm_hash%v = %d but farm_hash%v = %d", tc.a, x, tc.b, y)
		}
	}
	// Order and arity matter.
	if hashRow(i64(1), i64(2)) == hashRow(i64(2), i64(1)) {
		t.Errorf("farm_hash is insensitive to argument order")
	}
	if hashRow(null()) == hashRow(null(), null()) {
		t.Errorf("farm_hash is insensitive to the number of NULLs")
	}
}

// oracle transcribes YTsaurus's GetFarmFingerprint(begin, end) loop over a
// materialized row, independently of Hasher's incremental, zero-valued state.
func oracle(row []value) uint64 {
	r := uint64(0xdeadc0de)
	for _, v := range row {
		var fp uint64
		switch v.kind {
		case 'n':
			fp = 0
		case 'i':
			fp = Fingerprint64(uint64(v.i))
		case 'u':
			fp = Fingerprint64(v.u)
		case 'b':
			if v.b {
				fp = Fingerprint64(1)
			}
		default:
			fp = farm.Fingerprint64([]byte(v.s))
		}
		r = Fingerprint128(r, fp)
	}
	return r ^ uint64(len(row))
}

func TestRandomRowsAgainstOracle(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	for iter := 0; iter < 2000; iter++ {
		row := make([]value, rng.IntN(8))
		for j := range row {
			switch rng.IntN(5) {
			case 0:
				row[j] = null()
			case 1:
				row[j] = i64(int64(rng.Uint64()))
			case 2:
				row[j] = u64(rng.Uint64())
			case 3:
				row[j] = boolean(rng.IntN(2) == 1)
			default:
				// Lengths up to 100 cover each of FarmHash's
				// length classes (0-16, 17-32, 33-64, >64).
				buf := make([]byte, rng.IntN(101))
				for k := range buf {
					buf[k] = byte(rng.Uint32())
				}
				row[j] = str(string(buf))
			}
		}
		if got, want := hashRow(row...), oracle(row); got != want {
			t.Fatalf("seed %d: farm_hash%v = %d, oracle says %d", seed, row, got, want)
		}
	}
}

func TestAllocationFree(t *testing.T) {
	long := strings.Repeat("pivotdb ", 512)
	longBytes := []byte(long)
	allocs := testing.AllocsPerRun(100, func() {
		h := New()
		h.AddNull()
		h.AddInt64(-7)
		h.AddUint64(7)
		h.AddBool(true)
		h.AddString(long)
		h.AddBytes(longBytes)
		sink = h.Sum64()
	})
	if allocs != 0 {
		t.Fatalf("Hasher allocated %v times per row", allocs)
	}
}

var sink uint64

func FuzzStringBytesAgree(f *testing.F) {
	for _, s := range []string{"", "0", "abc", "hello", strings.Repeat("x", 65)} {
		f.Add(s, int64(3))
	}
	f.Fuzz(func(t *testing.T, s string, n int64) {
		var a, b Hasher
		a.AddString(s)
		a.AddInt64(n)
		b.AddBytes([]byte(s))
		b.AddUint64(uint64(n))
		if a.Sum64() != b.Sum64() {
			t.Fatalf("AddString/AddInt64 and AddBytes/AddUint64 disagree on (%q, %d)", s, n)
		}
	})
}

func BenchmarkHasher(b *testing.B) {
	b.Run("row=int,string,bool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := New()
			h.AddInt64(3)
			h.AddString("hello")
			h.AddBool(true)
			sink = h.Sum64()
		}
	})
	for _, n := range []int{8, 64, 1024} {
		s := strings.Repeat("x", n)
		b.Run(fmt.Sprintf("string=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				h := New()
				h.AddString(s)
				sink = h.Sum64()
			}
		})
	}
	b.Run("int64", func(b *testing.B) {
		b.ReportAllocs()
		var i int64
		for b.Loop() {
			h := New()
			h.AddInt64(i)
			sink = h.Sum64()
			i++
		}
	})
}
