package rowenc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// keyFamilies are the types allowed in a primary key (design.md §3.1).
var keyFamilies = []types.Type{
	types.T(types.Bool), types.T(types.Int8), types.T(types.Int16), types.T(types.Int32), types.T(types.Int64),
	types.T(types.Uint8), types.T(types.Uint16), types.T(types.Uint32), types.T(types.Uint64),
	{Family: types.Decimal, Precision: 30, Scale: 6}, types.T(types.String), types.T(types.Utf8),
	types.T(types.Date), types.T(types.Datetime), types.T(types.Timestamp),
}

func randomValue(r *rand.Rand, t types.Type) types.Value {
	if r.IntN(8) == 0 {
		return types.NullValue
	}
	edge := r.IntN(4) == 0
	switch f := t.Family; {
	case f == types.Bool:
		return types.NewBool(r.IntN(2) == 0)
	case f.IsUnsigned():
		_, hi := types.IntRange(f)
		if edge {
			return types.NewUint(f, []uint64{0, 1, hi, hi - 1}[r.IntN(4)])
		}
		if hi == math.MaxUint64 {
			return types.NewUint(f, r.Uint64())
		}
		return types.NewUint(f, r.Uint64()%(hi+1))
	case f.IsInteger():
		lo, hi := types.IntRange(f)
		if edge {
			return types.NewInt(f, []int64{lo, lo + 1, -1, 0, 1, int64(hi)}[r.IntN(6)])
		}
		span := uint64(int64(hi)-lo) + 1
		if span == 0 {
			return types.NewInt(f, int64(r.Uint64()))
		}
		return types.NewInt(f, lo+int64(r.Uint64()%span))
	case f == types.Decimal:
		d := apd.New(r.Int64N(2_000_000)-1_000_000, -int32(r.IntN(7)))
		if edge {
			d = apd.New(0, -int32(r.IntN(3)))
		}
		v, err := types.CastDecimal(t, d)
		if err != nil {
			panic(err)
		}
		return v
	case f == types.String || f == types.Utf8:
		n := r.IntN(6)
		b := make([]byte, n)
		for i := range b {
			b[i] = []byte{0, 1, 'a', 'b', 0xff, 0x7f}[r.IntN(6)]
		}
		if f == types.Utf8 {
			for i := range b {
				b[i] = "\x00ab~z"[r.IntN(5)]
			}
			return types.NewUtf8(string(b))
		}
		return types.NewString(string(b))
	case f == types.Date:
		return types.NewDate(r.Int64N(200000) - 100000)
	case f == types.Datetime:
		return types.NewDatetime(r.Int64N(1<<40) - 1<<39)
	case f == types.Timestamp:
		return types.NewTimestamp(r.Int64N(1<<60) - 1<<59)
	}
	panic(fmt.Sprintf("no generator for %v", t))
}

// TestKeyOrderMatchesSQLOrder checks, for random rows of every key type and
// for multi-column keys, that bytes.Compare of the encoded keys agrees with
// the SQL order of the values (NULL first), and that keys decode back.
func TestKeyOrderMatchesSQLOrder(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	for trial := 0; trial < 300; trial++ {
		ncols := 1 + r.IntN(3)
		tbl := &catalog.Table{ID: 7}
		for i := 0; i < ncols; i++ {
			tbl.Columns = append(tbl.Columns, catalog.Column{ID: i + 1, Name: fmt.Sprint("c", i), Type: keyFamilies[r.IntN(len(keyFamilies))]})
			tbl.PrimaryKey = append(tbl.PrimaryKey, i)
		}
		for pair := 0; pair < 50; pair++ {
			a := make([]types.Value, ncols)
			b := make([]types.Value, ncols)
			for i, c := range tbl.Columns {
				a[i] = randomValue(r, c.Type)
				if r.IntN(3) == 0 {
					b[i] = a[i]
				} else {
					b[i] = randomValue(r, c.Type)
				}
			}
			ka, kb := EncodeKey(tbl, a), EncodeKey(tbl, b)
			want := types.CompareRows(a, b)
			if got := bytes.Compare(ka, kb); sign(got) != sign(want) {
				t.Fatalf("seed %d: order of %v and %v: bytes %d, SQL %d", seed, a, b, got, want)
			}
			dec := make([]types.Value, ncols)
			if err := DecodeKey(tbl, ka, dec); err != nil {
				t.Fatalf("seed %d: decode %v: %v", seed, a, err)
			}
			if types.CompareRows(dec, a) != 0 {
				t.Fatalf("seed %d: round trip %v -> %v", seed, a, dec)
			}
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// TestValueRoundTrip encodes rows with every column type and decodes them.
func TestValueRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	all := append(append([]types.Type{}, keyFamilies...), types.T(types.Float), types.T(types.Double), types.T(types.Json), types.T(types.Interval))
	tbl := &catalog.Table{ID: 3, PrimaryKey: []int{0}}
	for i, typ := range all {
		tbl.Columns = append(tbl.Columns, catalog.Column{ID: i + 1, Name: fmt.Sprint("c", i), Type: typ})
	}
	for trial := 0; trial < 500; trial++ {
		row := make([]types.Value, len(all))
		for i, typ := range all {
			switch typ.Family {
			case types.Float:
				row[i] = types.NewFloat(r.NormFloat64())
			case types.Double:
				row[i] = types.NewDouble([]float64{math.Inf(1), -0.5, r.NormFloat64()}[r.IntN(3)])
			case types.Json:
				row[i] = types.NewJson(`{"a": 1}`)
			case types.Interval:
				row[i] = types.NewInterval(r.Int64())
			default:
				row[i] = randomValue(r, typ)
			}
		}
		got, err := DecodeRow(tbl, EncodeKey(tbl, row), EncodeValue(nil, tbl, row))
		if err != nil {
			t.Fatal(err)
		}
		for i := range row {
			if types.Compare(got[i], row[i]) != 0 || got[i].Family() != row[i].Family() {
				t.Fatalf("column %d (%v): %v -> %v", i, all[i], row[i], got[i])
			}
		}
	}
}

func FuzzDecodeValue(f *testing.F) {
	tbl := &catalog.Table{ID: 1, PrimaryKey: []int{0}, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.TypeInt64}, {ID: 2, Name: "s", Type: types.TypeUtf8},
		{ID: 3, Name: "d", Type: types.TypeDecimal}, {ID: 4, Name: "f", Type: types.TypeDouble},
	}}
	f.Add(EncodeValue(nil, tbl, []types.Value{types.NewInt64(1), types.NewUtf8("x"), types.NewDecimal(apd.New(15, -1)), types.NewDouble(1)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		row := make([]types.Value, 4)
		_ = DecodeValue(tbl, b, row) // must not panic
	})
}

// TestIntervalEncoding: PostgreSQL intervals keep months, days and
// microseconds through a row value; an interval of microseconds alone is
// encoded as before (so rows written earlier read the same); keys order
// intervals by their 30-day-month span, equal spans being one key, and
// infinite dates and timestamps sort after and before every finite one.
func TestIntervalEncoding(t *testing.T) {
	tbl := &catalog.Table{ID: 3, PrimaryKey: []int{0}, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.TypeInt64}, {ID: 2, Name: "iv", Type: types.TypeInterval},
	}}
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		iv := types.NewIntervalParts(int32(r.Uint32()), int32(r.Uint32()), r.Int64())
		row := []types.Value{types.NewInt64(1), iv}
		got, err := DecodeRow(tbl, EncodeKey(tbl, row), EncodeValue(nil, tbl, row))
		if err != nil {
			t.Fatal(err)
		}
		m1, d1, u1 := iv.IntervalParts()
		m2, d2, u2 := got[1].IntervalParts()
		if m1 != m2 || d1 != d2 || u1 != u2 {
			t.Fatalf("%v -> %v", iv, got[1])
		}
	}
	old := EncodeValue(nil, tbl, []types.Value{types.NewInt64(1), types.NewInterval(90e6)})
	if want := binary.AppendVarint([]byte{2, wireVarint}, 90e6); !bytes.Equal(old, want) {
		t.Errorf("interval of micros encodes as %x, want the old varint %x", old, want)
	}
	parse := func(s string) types.Value {
		v, err := types.ParseIntervalValue(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ordered := []string{"-1 year", "-1 mon", "-29 days", "00:00:00", "1 sec", "1 day", "1 mon 1 sec", "1 year"}
	for i := 1; i < len(ordered); i++ {
		a, b := AppendKeyValue(nil, parse(ordered[i-1])), AppendKeyValue(nil, parse(ordered[i]))
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("key of %q does not sort before %q", ordered[i-1], ordered[i])
		}
	}
	if !bytes.Equal(AppendKeyValue(nil, parse("1 mon")), AppendKeyValue(nil, parse("720 hours"))) {
		t.Error("'1 mon' and '720 hours' are equal but have different keys")
	}
	for _, f := range []types.Family{types.Date, types.Timestamp, types.TimestampTZ} {
		typ := types.T(f)
		lo, _ := types.ParseText(typ, "-infinity")
		mid, _ := types.ParseText(typ, "2024-01-01")
		hi, _ := types.ParseText(typ, "infinity")
		a, b, c := AppendKeyValue(nil, lo), AppendKeyValue(nil, mid), AppendKeyValue(nil, hi)
		if bytes.Compare(a, b) >= 0 || bytes.Compare(b, c) >= 0 {
			t.Errorf("%v: infinities out of order in keys", f)
		}
		for _, v := range []types.Value{lo, hi} {
			got, _, err := DecodeKeyValue(AppendKeyValue(nil, v), typ)
			if err != nil || got.Text() != v.Text() {
				t.Errorf("%v: %s decodes to %s (%v)", f, v.Text(), got.Text(), err)
			}
		}
	}
}

// BenchmarkEncodeKey encodes the key of a row of the bench's kv table (an
// INSERT encodes one per row).
func BenchmarkEncodeKey(b *testing.B) {
	tbl := &catalog.Table{ID: 42, Columns: []catalog.Column{
		{Name: "k", Type: types.Type{Family: types.Int64}},
		{Name: "v", Type: types.Type{Family: types.Utf8}},
	}, PrimaryKey: []int{0}}
	row := []types.Value{types.NewInt64(123456), types.NewUtf8("value-0000000000123456")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		EncodeKey(tbl, row)
	}
}

// BenchmarkDecodeRow decodes a row of the bench's kv table, key and value,
// as a scan does for every row it reads (a correlated EXISTS over 10k × 10k
// rows decodes 20,000 per statement).
func BenchmarkDecodeRow(b *testing.B) {
	tbl := &catalog.Table{ID: 42, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.Type{Family: types.Int64}},
		{ID: 2, Name: "v", Type: types.Type{Family: types.Utf8}},
	}, PrimaryKey: []int{0}}
	in := []types.Value{types.NewInt64(123456), types.NewUtf8("value-0000000000123456")}
	key, val := EncodeKey(tbl, in), EncodeValue(nil, tbl, in)
	row := make([]types.Value, 2)
	b.ReportAllocs()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		row[0], row[1] = types.NullValue, types.NullValue
		if err := DecodeKey(tbl, key, row); err != nil {
			b.Fatal(err)
		}
		if err := DecodeValue(tbl, val, row); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	if row[0].Int() != 123456 || row[1].Str() != "value-0000000000123456" {
		b.Fatalf("decoded %v", row)
	}
}

func TestTablePrefixLen(t *testing.T) {
	for _, id := range []uint64{0, 1, 42, math.MaxUint64} {
		if n := len(storage.TablePrefix(id)); n != tablePrefixLen {
			t.Fatalf("len(TablePrefix(%d)) = %d, tablePrefixLen %d", id, n, tablePrefixLen)
		}
	}
}
