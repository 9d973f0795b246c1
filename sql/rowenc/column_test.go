package rowenc

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestColumnMatchesDecodeValue checks, for random tables of every value
// type, random rows with NULLs, a column added with a DEFAULT (NULL or
// not) after the rows were written, one added after some rows were and a
// dropped column still in the rows, that DecodeColumn gives each non-key
// column exactly what DecodeValue does, and ColumnText the same bytes for
// text columns.
func TestColumnMatchesDecodeValue(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 5))
	valueTypes := append(append([]types.Type{}, keyFamilies...), types.T(types.Double), types.T(types.Json),
		types.T(types.Interval), types.TypeBPChar, types.TypeUtf8, types.T(types.String))
	randomVal := func(typ types.Type) types.Value {
		if r.IntN(6) == 0 {
			return types.NullValue
		}
		switch typ.Family {
		case types.Double:
			return types.NewDouble(r.NormFloat64())
		case types.Json:
			return types.NewJson(`{"a": 1}`)
		case types.Interval:
			return types.NewInterval(r.Int64N(1e12))
		}
		return randomValue(r, typ)
	}
	for trial := 0; trial < 300; trial++ {
		tbl := &catalog.Table{ID: 77, PrimaryKey: []int{0}}
		tbl.Columns = append(tbl.Columns, catalog.Column{ID: 1, Name: "k", Type: types.TypeInt64})
		for i := 1; i <= 1+r.IntN(4); i++ {
			tbl.Columns = append(tbl.Columns, catalog.Column{ID: i + 1, Name: fmt.Sprint("c", i), Type: valueTypes[r.IntN(len(valueTypes))]})
		}
		// Rows are written with a column that is dropped before the read
		// (in the middle of the ids) and without the two added later.
		written := *tbl
		written.Columns = append(append([]catalog.Column{}, tbl.Columns...), catalog.Column{ID: 50, Name: "gone", Type: types.TypeUtf8})
		read := *tbl
		read.Columns = append([]catalog.Column{}, tbl.Columns...)
		for id := 101; id <= 102; id++ {
			typ := valueTypes[r.IntN(len(valueTypes))]
			read.Columns = append(read.Columns, catalog.Column{ID: id, Name: fmt.Sprint("added", id), Type: typ,
				Missing: EncodeMissing(id, randomVal(typ))})
		}
		for n := 0; n < 20; n++ {
			w := &written
			if n%3 == 0 {
				w = &read // written since the columns were added, NULLs stored explicitly
			}
			row := make([]types.Value, len(w.Columns))
			row[0] = types.NewInt64(int64(n))
			for i := 1; i < len(row); i++ {
				row[i] = randomVal(w.Columns[i].Type)
			}
			val := EncodeValue(nil, w, row)
			want := make([]types.Value, len(read.Columns))
			for i := range want {
				want[i] = types.NullValue
			}
			if err := DecodeValue(&read, val, want); err != nil {
				t.Fatal(err)
			}
			for c := 1; c < len(read.Columns); c++ {
				got, err := DecodeColumn(&read, val, c)
				if err != nil {
					t.Fatalf("seed %d: column %d of %v: %v", seed, c, row, err)
				}
				if got.IsNull() != want[c].IsNull() || !got.IsNull() && (got.Family() != want[c].Family() || types.Compare(got, want[c]) != 0) {
					t.Fatalf("seed %d: column %d (%s) of %v: DecodeColumn %v, DecodeValue %v", seed, c, read.Columns[c].Type, row, got, want[c])
				}
				if f := read.Columns[c].Type.Family; f == types.Utf8 || f == types.String {
					b, ok, err := ColumnText(&read, val, c)
					if err != nil || ok == want[c].IsNull() || ok && string(b) != want[c].Str() {
						t.Fatalf("seed %d: column %d of %v: ColumnText %q %v %v, DecodeValue %v", seed, c, row, b, ok, err, want[c])
					}
				}
			}
		}
	}
}

// TestColumnCorrupt: damaged values fail with an error, not a panic or a
// wrong value.
func TestColumnCorrupt(t *testing.T) {
	tbl := &catalog.Table{ID: 9, PrimaryKey: []int{0}, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.TypeInt64}, {ID: 2, Name: "n", Type: types.TypeInt64}, {ID: 3, Name: "v", Type: types.TypeUtf8}}}
	val := EncodeValue(nil, tbl, []types.Value{types.NewInt64(1), types.NewInt64(-5), types.NewUtf8("value")})
	// Cut at 3, after n's entry, the value is whole: a row without v.
	if _, ok, err := ColumnText(tbl, val[:3], 2); ok || err != nil {
		t.Errorf("ColumnText of %x: %v %v, want NULL", val[:3], ok, err)
	}
	for cut := 1; cut < len(val); cut++ {
		if cut == 3 {
			continue
		}
		if _, _, err := ColumnText(tbl, val[:cut], 2); err == nil {
			t.Errorf("ColumnText of %x (cut at %d of %d): no error", val[:cut], cut, len(val))
		}
	}
	// An integer payload where the text column is: corrupt, not text.
	bad := EncodeValue(nil, &catalog.Table{ID: 9, PrimaryKey: []int{0}, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.TypeInt64}, {ID: 3, Name: "v", Type: types.TypeInt64}}},
		[]types.Value{types.NewInt64(1), types.NewInt64(7)})
	if _, _, err := ColumnText(tbl, bad, 2); err != ErrCorruptValue {
		t.Errorf("ColumnText of an integer entry: %v, want ErrCorruptValue", err)
	}
}

// BenchmarkColumnText reads the text column of the bench's kv rows alone,
// as a decorrelated EXISTS's build side does (sql/exec/subhashraw.go),
// against BenchmarkDecodeRow's whole-row decoding.
func BenchmarkColumnText(b *testing.B) {
	tbl := &catalog.Table{ID: 42, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.Type{Family: types.Int64}},
		{ID: 2, Name: "v", Type: types.Type{Family: types.Utf8}},
	}, PrimaryKey: []int{0}}
	in := []types.Value{types.NewInt64(123456), types.NewUtf8("value-0000000000123456")}
	val := EncodeValue(nil, tbl, in)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		s, ok, err := ColumnText(tbl, val, 1)
		if err != nil || !ok {
			b.Fatal(err)
		}
		n += len(s)
	}
	if n == 0 {
		b.Fatal("no bytes")
	}
}
