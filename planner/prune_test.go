package planner

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestPrune reads a table keyed by k Int64 cut into four shards:
//
//	shard     0          1           2           3
//	       () ...  (10) ...  (20)  ...  (30) ... (<Max>)
func TestPrune(t *testing.T) {
	tt, err := newTestTable([]string{"k int64", "l int64"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	starts := [][]byte{rowenc.EncodeKeyPrefix(tt.t, nil)}
	for _, p := range []int64{10, 20, 30} {
		starts = append(starts, rowenc.EncodeKeyPrefix(tt.t, []types.Value{types.NewInt64(p)}))
	}
	for _, c := range []struct {
		pred  string
		want  []int
		parts string // spans per shard, as counts
	}{
		{"k = 15", []int{1}, "1:1"},
		{"k = 10", []int{1}, "1:1"},
		{"k = 9 AND l > 3", []int{0}, "0:1"},
		{"k IN (1, 2, 25)", []int{0, 2}, "0:2 2:1"},
		{"k BETWEEN 5 AND 25", []int{0, 1, 2}, "0:1 1:1 2:1"},
		{"k > 25", []int{2, 3}, "2:1 3:1"},
		{"k < 10", []int{0}, "0:1"},
		{"k <= 10", []int{0, 1}, "0:1 1:1"},
		{"k IS NULL", []int{0}, "0:1"},
		{"k = 1 AND k = 2", nil, ""},
		{"true", []int{0, 1, 2, 3}, "0:1 1:1 2:1 3:1"},
	} {
		cond, err := tt.buildWhere(c.pred)
		if err != nil {
			t.Fatal(err)
		}
		spans := InferRanges(tt.t, cond, nil, nil, DefaultRangeExpansionLimit).Ranges.ToSpans(tt.t)
		if got := Prune(spans, starts); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: shards %v, want %v", c.pred, got, c.want)
		}
		var parts []string
		for _, sh := range ShardSpans(spans, starts) {
			for _, sp := range sh.Spans {
				lo := starts[sh.Shard]
				if !sp.Contains(sp.Start) || string(sp.Start) < string(lo) ||
					(sh.Shard+1 < len(starts) && (sp.End == nil || string(sp.End) > string(starts[sh.Shard+1]))) {
					t.Errorf("%s: span %s outside shard %d", c.pred, sp, sh.Shard)
				}
			}
			parts = append(parts, fmt.Sprintf("%d:%d", sh.Shard, len(sh.Spans)))
		}
		if got := strings.Join(parts, " "); got != c.parts {
			t.Errorf("%s: shard spans %q, want %q", c.pred, got, c.parts)
		}
	}
}

func TestExplainRanges(t *testing.T) {
	var rs Ranges
	for i := int64(0); i < 103; i++ {
		v := []types.Value{types.NewInt64(i)}
		rs = append(rs, KeyRange{Lower: Bound{Values: v}, Upper: Bound{Values: v, Max: true}})
	}
	lines := ExplainRanges(rs, 0)
	if len(lines) != ExplainMaxRanges+1 || lines[0] != "[(0) .. (0, <Max>))" || lines[100] != "... and 3 more" {
		t.Errorf("lines: %d, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if got := ExplainRanges(rs[:2], 0); len(got) != 2 {
		t.Errorf("two ranges give %q", got)
	}
	if got := ExplainReadHeader(3, 2, 16); got != "ranges=3 partitions=2/16" {
		t.Errorf("header %q", got)
	}
	if got := (Ranges{FullRange()}).String(); got != "[() .. (<Max>))" {
		t.Errorf("full range %q", got)
	}
}
