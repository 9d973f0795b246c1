package planner

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestRanges runs testdata/ranges/*. Commands:
//
//	ranges key=(k int64, l int64) [cols=(v int64)] [limit=N] [params=(1, 'x')]
//	<predicate>
//	----
//	[(20, 3, <Max>) .. (20, <Max>))
//
// The predicate (lines joined by spaces) is the WHERE clause of
// `SELECT * FROM t`, built by the real parser and expr.Builder. A key
// column written `h uint64 as farm_hash(k)` is computed. The output lists
// the ranges ("none" for none), then "inexact" when the ranges are wider
// than the captured conjuncts, "widened" when range_expansion_limit cut
// them, and the filter the executor must still apply.
//
//	explain ... uniform=N
//
// shows the EXPLAIN lines of the read over N uniform shards of the first
// key column (Prune).
func TestRanges(t *testing.T) {
	datadriven.Walk(t, "testdata/ranges", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var keys, cols, params []string
			limit, uniform := DefaultRangeExpansionLimit, 0
			for _, arg := range d.CmdArgs {
				switch arg.Key {
				case "key":
					keys = arg.Vals
				case "cols":
					cols = arg.Vals
				case "params":
					params = arg.Vals
				case "limit":
					limit = atoi(t, arg.Vals[0])
				case "uniform":
					uniform = atoi(t, arg.Vals[0])
				default:
					t.Fatalf("%s: unknown argument %s", d.Pos, arg.Key)
				}
			}
			tt, err := newTestTable(keys, cols)
			if err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
			pred := strings.Join(strings.Fields(d.Input), " ")
			cond, err := tt.buildWhere(pred)
			if err != nil {
				return fmt.Sprintf("error: %v\n", err)
			}
			pv, err := buildParams(params)
			if err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
			res := InferRanges(tt.t, cond, tt.computed, pv, limit)
			if err := res.Ranges.CheckInvariants(); err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
			var out strings.Builder
			switch d.Cmd {
			case "ranges":
				if len(res.Ranges) == 0 {
					out.WriteString("none\n")
				}
				for _, r := range res.Ranges {
					out.WriteString(r.String() + "\n")
				}
			case "explain":
				starts := uniformShardStarts(tt.t, uniform)
				shards := Prune(res.Ranges.ToSpans(tt.t), starts)
				out.WriteString(ExplainReadHeader(len(res.Ranges), len(shards), len(starts)) + "\n")
				for _, l := range ExplainRanges(res.Ranges, 0) {
					out.WriteString(l + "\n")
				}
			default:
				t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
			}
			if !res.Exact {
				out.WriteString("inexact\n")
			}
			if res.Widened {
				out.WriteString("widened\n")
			}
			if res.Filter != nil {
				out.WriteString("filter: " + res.Filter.String() + "\n")
			}
			return out.String()
		})
	})
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestProgramReuse evaluates one compiled program (a prepared statement)
// with several parameter sets, concurrently.
func TestProgramReuse(t *testing.T) {
	tt, err := newTestTable([]string{"hash uint64 as farm_hash(key)", "key utf8"}, []string{"v int64"})
	if err != nil {
		t.Fatal(err)
	}
	cond, err := tt.buildWhere("key = $1 AND v > 0")
	if err != nil {
		t.Fatal(err)
	}
	prog := CompileRanges(tt.t, cond, tt.computed)
	if !prog.HasParams() || prog.Residual() == nil || prog.Residual().String() != "v > 0" || prog.Cond() != cond {
		t.Fatalf("program %s: params %v residual %v", prog, prog.HasParams(), prog.Residual())
	}
	done := make(chan string)
	for _, key := range []string{"a", "b", "c", "d"} {
		go func() {
			var last string
			for i := 0; i < 50; i++ {
				res := prog.Evaluate([]types.Value{types.NewUnknown(key)}, DefaultRangeExpansionLimit)
				last = res.Ranges.String()
				if !res.Exact || res.Filter != prog.Residual() {
					last = "inexact"
				}
			}
			done <- last
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		r := <-done
		if !strings.Contains(r, "'") || seen[r] {
			t.Errorf("unexpected ranges %q", r)
		}
		seen[r] = true
	}
	// Without the parameter the ranges do not narrow, and the whole
	// condition is the filter.
	res := prog.Evaluate(nil, DefaultRangeExpansionLimit)
	if res.Exact || res.Filter != cond || len(res.Ranges) != 1 {
		t.Errorf("no parameter: %s exact %v", res.Ranges, res.Exact)
	}
}
