package rowenc

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestMissingValue checks the value of a column added with a DEFAULT:
// rows written before it read the default, rows written after read what
// they stored, NULL included.
func TestMissingValue(t *testing.T) {
	before := &catalog.Table{ID: 7, Columns: []catalog.Column{
		{ID: 1, Name: "id", Type: types.TypeInt64},
		{ID: 2, Name: "a", Type: types.TypeUtf8},
	}, PrimaryKey: []int{0}}
	after := *before
	after.Columns = append(append([]catalog.Column(nil), before.Columns...),
		catalog.Column{ID: 3, Name: "c", Type: types.TypeInt64, Missing: EncodeMissing(3, types.NewInt64(5))})

	old := []types.Value{types.NewInt64(1), types.NewUtf8("x")}
	oldVal := EncodeValue(nil, before, old)
	row, err := DecodeRow(&after, EncodeKey(before, old), oldVal)
	if err != nil {
		t.Fatal(err)
	}
	if row[2].IsNull() || row[2].Int() != 5 || row[1].Str() != "x" {
		t.Fatalf("a row older than the column reads %v, want (1, x, 5)", row)
	}

	for _, c := range []types.Value{types.NullValue, types.NewInt64(9)} {
		cur := []types.Value{types.NewInt64(2), types.NullValue, c}
		row, err := DecodeRow(&after, EncodeKey(&after, cur), EncodeValue(nil, &after, cur))
		if err != nil {
			t.Fatal(err)
		}
		if row[2].IsNull() != c.IsNull() || !c.IsNull() && row[2].Int() != c.Int() || !row[1].IsNull() {
			t.Fatalf("a row written with c = %v reads %v", c, row)
		}
	}
	// Readers of the old definition skip the new column's entries.
	cur := []types.Value{types.NewInt64(3), types.NewUtf8("y"), types.NullValue}
	row, err = DecodeRow(before, EncodeKey(&after, cur), EncodeValue(nil, &after, cur))
	if err != nil || len(row) != 2 || row[1].Str() != "y" {
		t.Fatalf("old reader: %v, %v", row, err)
	}
}
