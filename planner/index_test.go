package planner

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/catalog"
)

// TestChooseIndex checks which access path ChooseIndex picks for a table
// keyed by k with an index on (a, b) and one on (b).
func TestChooseIndex(t *testing.T) {
	tt, err := newTestTable([]string{"k Int64"}, []string{"a Int64", "b Utf8", "c Int64"})
	if err != nil {
		t.Fatal(err)
	}
	tt.t.Indexes = append(tt.t.Indexes,
		catalog.Index{ID: 100, Name: "iab", Columns: []int{1, 2}},
		catalog.Index{ID: 101, Name: "ib", Columns: []int{2}})
	for _, c := range []struct {
		pred, want string // want: index name, or "" for the primary key
	}{
		{"a = 1", "iab"},
		{"a IN (1, 2) AND b = 'x'", "iab"},
		{"b = 'x'", "ib"},
		{"a > 1 AND b = 'x'", "ib"}, // equality beats a range
		{"a > 1", "iab"},
		{"a IS NULL", "iab"},
		{"k = 3 AND a = 1", ""},    // a primary key point lookup wins
		{"k > 3 AND a = 1", "iab"}, // equality on the index beats a key range
		{"k > 3 AND a > 1", ""},    // ties go to the primary key
		{"a = 1 OR b = 'x'", ""},   // no single index bounds every branch
		{"a = 1 OR a = 2", "iab"},
		{"a <> 1", ""},
		{"a + 1 = 2", ""},
		{"c = 1", ""},
		{"a = 1 AND a = 2", "iab"}, // a contradiction reads nothing
	} {
		cond, err := tt.buildWhere(c.pred)
		if err != nil {
			t.Fatalf("%s: %v", c.pred, err)
		}
		pk := CompileRanges(tt.t, cond, tt.computed)
		got := ""
		if ic, ok := ChooseIndex(tt.t, cond, pk); ok {
			got = ic.Index.Name
			if ic.Entries.ID != ic.Index.ID {
				t.Errorf("%s: entries table %d for index %d", c.pred, ic.Entries.ID, ic.Index.ID)
			}
		}
		if got != c.want {
			t.Errorf("%s: chose %q, want %q", c.pred, got, c.want)
		}
	}
}
