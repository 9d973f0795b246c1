package planner

import "testing"

// TestFullKeyPoints checks which predicates the executor may read by point
// lookups: only ranges that each fix every key column (computed ones
// included) to one value.
func TestFullKeyPoints(t *testing.T) {
	tt, err := newTestTable([]string{"hash uint64 as farm_hash(key)", "key utf8", "n int64"}, []string{"v int64"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pred string
		want bool
	}{
		{"key = 'a' AND n = 1", true},
		{"key IN ('a', 'b') AND n IN (1, 2)", true},
		{"(key, n) IN (('a', 1), ('b', 2)) AND v > 3", true},
		{"key = 'a' AND n IS NULL", true},
		{"key = 'a'", false},           // a prefix: many rows
		{"key = 'a' AND n > 1", false}, // a range
		{"key = 'a' AND n = 1 OR key = 'b'", false},
		{"key = 'a' AND n = 1 AND n = 2", false}, // contradiction: no ranges
		{"v = 1", false},
	} {
		cond, err := tt.buildWhere(tc.pred)
		if err != nil {
			t.Fatal(err)
		}
		res := CompileRanges(tt.t, cond, tt.computed).Evaluate(nil, DefaultRangeExpansionLimit)
		if got := res.Ranges.FullKeyPoints(tt.t); got != tc.want {
			t.Errorf("%s: FullKeyPoints = %v, want %v (ranges %s)", tc.pred, got, tc.want, res.Ranges)
		}
	}
}
