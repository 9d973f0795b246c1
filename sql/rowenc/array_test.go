package rowenc

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestArrayValueRoundTrip stores array columns of several element types
// (NULL elements, empty arrays, two dimensions, lower bounds other than
// 1) and reads them back; a truncated value is ErrCorruptValue, never a
// panic.
func TestArrayValueRoundTrip(t *testing.T) {
	parse := func(typ types.Type, s string) types.Value {
		v, err := types.ParseText(types.ArrayOf(typ), s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	elemTypes := []types.Type{types.TypeInt32, types.TypeUtf8, types.T(types.Float), types.TypeDecimal, types.TypeUint64,
		types.TypeBool, types.T(types.Date), types.T(types.Uuid), types.TypeString}
	literals := [][]string{
		{"{1,NULL,-3}", "{}", "{{1,2},{3,4}}", "[0:1]={7,8}"},
		{`{a,"b c",NULL,""}`, "{}", "{{x},{y}}"},
		{"{1.5,-0.25}", "{NaN}"},
		{"{1.50,2E+30}", "{NULL}"},
		{"{18446744073709551615,0}"},
		{"{t,f,NULL}"},
		{"{2024-01-02,NULL}"},
		{"{11111111-2222-3333-4444-555555555555}"},
		{`{"\\x00ff",NULL}`},
	}
	tbl := &catalog.Table{ID: 5, PrimaryKey: []int{0}, Columns: []catalog.Column{{ID: 1, Name: "k", Type: types.TypeInt64}}}
	for i, et := range elemTypes {
		tbl.Columns = append(tbl.Columns, catalog.Column{ID: i + 2, Name: "c", Type: types.ArrayOf(et)})
	}
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 50; trial++ {
		row := []types.Value{types.NewInt64(int64(trial))}
		for i, et := range elemTypes {
			if r.IntN(5) == 0 {
				row = append(row, types.NullValue)
				continue
			}
			lits := literals[i]
			row = append(row, parse(et, lits[r.IntN(len(lits))]))
		}
		val := EncodeValue(nil, tbl, row)
		got, err := DecodeRow(tbl, EncodeKey(tbl, row), val)
		if err != nil {
			t.Fatal(err)
		}
		for i := range row {
			if types.Compare(got[i], row[i]) != 0 || got[i].Text() != row[i].Text() {
				t.Fatalf("column %d: %s -> %s", i, row[i].Text(), got[i].Text())
			}
			if !row[i].IsNull() && i > 0 && got[i].ArrayElemType().Family != elemTypes[i-1].Family {
				t.Fatalf("column %d: element type %v", i, got[i].ArrayElemType())
			}
		}
		for cut := 1; cut < len(val); cut++ {
			dst := make([]types.Value, len(tbl.Columns))
			_ = DecodeValue(tbl, val[:cut], dst) // must not panic
		}
	}
}

// TestArrayKeyOrder checks that the key encoding of arrays (used for sort
// and partition keys) orders as types.Compare.
func TestArrayKeyOrder(t *testing.T) {
	var vals []types.Value
	for _, s := range []string{"{}", "{1}", "{1,2}", "{1,2,3}", "{1,3}", "{1,NULL}", "{2}", "{NULL}", "{-5,7}"} {
		v, err := types.ParseText(types.ArrayOf(types.TypeInt64), s)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	for _, a := range vals {
		for _, b := range vals {
			kc := bytes.Compare(AppendKeyValue(nil, a), AppendKeyValue(nil, b))
			if c := types.Compare(a, b); c != kc {
				t.Errorf("%s vs %s: Compare %d, keys %d", a.Text(), b.Text(), c, kc)
			}
		}
	}
}
