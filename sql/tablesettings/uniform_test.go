package tablesettings

import (
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

var integerFamilies = []types.Family{
	types.Int8, types.Int16, types.Int32, types.Int64,
	types.Uint8, types.Uint16, types.Uint32, types.Uint64,
}

// uniformOracle computes the pivots of UNIFORM_PARTITIONS = n without
// math/big: 128-bit division for the 64-bit types, int64 arithmetic for
// the narrower ones (R·i < 2^32·2^17 fits), as offsets from the type's
// minimum, deduplicated, without offset 0.
func uniformOracle(f types.Family, n int64) []types.Value {
	var out []types.Value
	var prev uint64
	for i := uint64(1); i < uint64(n); i++ {
		var off uint64
		switch f {
		case types.Int64, types.Uint64:
			off, _ = bits.Div64(i, 0, uint64(n)) // floor(2^64·i/n), i < n
		default:
			lo, hi := types.IntRange(f)
			if f.IsUnsigned() {
				lo = 0
			}
			r := int64(hi) - lo + 1
			off = uint64(r * int64(i) / n)
		}
		if off == prev {
			continue
		}
		prev = off
		switch {
		case f.IsUnsigned():
			out = append(out, types.NewUint(f, off))
		case f == types.Int64:
			out = append(out, types.NewInt(f, int64(off-1<<63))) // −2^63 + off, wrapping
		default:
			lo, _ := types.IntRange(f)
			out = append(out, types.NewInt(f, lo+int64(off)))
		}
	}
	return out
}

func TestUniformPivotsEveryType(t *testing.T) {
	for _, f := range integerFamilies {
		for _, n := range []int64{1, 2, 3, 4, 7, 1<<16 + 1} {
			got, err := UniformPivots(types.T(f), n)
			if err != nil {
				t.Fatalf("%s n=%d: %v", f, n, err)
			}
			want := uniformOracle(f, n)
			if !equalValues(got, want) {
				t.Fatalf("%s n=%d:\n got %v\nwant %v", f, n, head(got), head(want))
			}
			checkPivotInvariants(t, f, n, got)
		}
	}
}

// checkPivotInvariants checks what every result must satisfy: pivots of
// the key type, strictly ascending, above the minimum, min(n, R) − 1 of
// them, and (without dedup) shards whose widths differ by at most one.
func checkPivotInvariants(t *testing.T, f types.Family, n int64, got []types.Value) {
	t.Helper()
	lo, hi := types.IntRange(f)
	minV := types.NewInt(types.Int64, lo)
	if f.IsUnsigned() {
		minV = types.NewUint(types.Uint64, 0)
	}
	for i, v := range got {
		if v.Family() != f {
			t.Fatalf("%s n=%d: pivot %d has family %s", f, n, i, v.Family())
		}
		if types.Compare(v, minV) <= 0 {
			t.Fatalf("%s n=%d: pivot %d = %v is not above the minimum", f, n, i, v)
		}
		if i > 0 && types.Compare(got[i-1], v) >= 0 {
			t.Fatalf("%s n=%d: pivots %v, %v do not ascend", f, n, got[i-1], v)
		}
	}
	wantLen := n - 1
	if r, ok := rangeSize(f); ok && n > r {
		wantLen = r - 1
	}
	if int64(len(got)) != wantLen {
		t.Fatalf("%s n=%d: %d pivots, want %d", f, n, len(got), wantLen)
	}
	if r, ok := rangeSize(f); ok && n <= r && n > 1 {
		// Widths of the shards [min, p1), [p1, p2), ..., [p_last, max].
		bounds := []int64{lo}
		if f.IsUnsigned() {
			bounds[0] = 0
		}
		for _, v := range got {
			bounds = append(bounds, v.Int())
		}
		bounds = append(bounds, int64(hi)+1)
		lowW, highW := int64(math.MaxInt64), int64(0)
		for i := 1; i < len(bounds); i++ {
			w := bounds[i] - bounds[i-1]
			lowW, highW = min(lowW, w), max(highW, w)
		}
		if highW-lowW > 1 {
			t.Fatalf("%s n=%d: shard widths range from %d to %d", f, n, lowW, highW)
		}
	}
}

func TestUniformPivotsExact(t *testing.T) {
	for _, c := range []struct {
		f    types.Family
		n    int64
		want []string
	}{
		// The example of issue 3.
		{types.Uint64, 4, []string{"4611686018427387904", "9223372036854775808", "13835058055282163712"}},
		{types.Int64, 4, []string{"-4611686018427387904", "0", "4611686018427387904"}},
		{types.Uint64, 3, []string{"6148914691236517205", "12297829382473034410"}},
		{types.Int64, 3, []string{"-3074457345618258603", "3074457345618258602"}},
		{types.Int64, 2, []string{"0"}},
		{types.Uint32, 2, []string{"2147483648"}},
		{types.Int32, 4, []string{"-1073741824", "0", "1073741824"}},
		{types.Uint16, 3, []string{"21845", "43690"}},
		{types.Int16, 3, []string{"-10923", "10922"}},
		{types.Uint8, 3, []string{"85", "170"}},
		{types.Int8, 3, []string{"-43", "42"}},
		{types.Int8, 7, []string{"-92", "-55", "-19", "18", "54", "91"}},
		{types.Uint8, 1, nil},
	} {
		got, err := UniformPivots(types.T(c.f), c.n)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, v := range got {
			texts = append(texts, v.Text())
		}
		if !slices.Equal(texts, c.want) {
			t.Errorf("%s n=%d: got %v, want %v", c.f, c.n, texts, c.want)
		}
	}
}

// More partitions than values: one shard per value.
func TestUniformPivotsDedup(t *testing.T) {
	for _, c := range []struct {
		f types.Family
		n int64
	}{{types.Uint8, 1<<16 + 1}, {types.Uint8, 256}, {types.Uint8, 257}, {types.Int8, 1000}, {types.Uint16, 1<<16 + 1}} {
		got, err := UniformPivots(types.T(c.f), c.n)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := types.IntRange(c.f)
		if c.f.IsUnsigned() {
			lo = 0
		}
		if int64(len(got)) != int64(hi)-lo {
			t.Fatalf("%s n=%d: %d pivots, want %d", c.f, c.n, len(got), int64(hi)-lo)
		}
		for i, v := range got {
			if want := lo + 1 + int64(i); v.Int() != want {
				t.Fatalf("%s n=%d: pivot %d = %d, want %d", c.f, c.n, i, v.Int(), want)
			}
		}
	}
}

func TestUniformPivotsErrors(t *testing.T) {
	for _, c := range []struct {
		typ  types.Type
		n    int64
		code string
	}{
		{types.TypeUtf8, 4, sqlerr.InvalidTableDefinition},
		{types.TypeString, 4, sqlerr.InvalidTableDefinition},
		{types.TypeTimestamp, 4, sqlerr.InvalidTableDefinition},
		{types.T(types.Date), 4, sqlerr.InvalidTableDefinition},
		{types.TypeBool, 2, sqlerr.InvalidTableDefinition},
		{types.TypeDecimal, 2, sqlerr.InvalidTableDefinition},
		{types.TypeDouble, 2, sqlerr.InvalidTableDefinition},
		{types.TypeUint64, 0, sqlerr.InvalidParameterValue},
		{types.TypeUint64, -1, sqlerr.InvalidParameterValue},
		{types.TypeUint64, MaxInitialPartitions + 1, sqlerr.InvalidParameterValue},
	} {
		_, err := UniformPivots(c.typ, c.n)
		if got := sqlerr.Code(err); got != c.code {
			t.Errorf("%s n=%d: code %s (%v), want %s", c.typ, c.n, got, err, c.code)
		}
	}
}

func equalValues(a, b []types.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Family() != b[i].Family() || types.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

func head(vs []types.Value) []types.Value {
	if len(vs) > 8 {
		return vs[:8]
	}
	return vs
}
