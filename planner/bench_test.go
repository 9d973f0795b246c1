package planner

import (
	"fmt"
	"strings"
	"testing"
)

func benchInfer(b *testing.B, keys []string, pred string, wantRanges int) {
	tt, err := newTestTable(keys, nil)
	if err != nil {
		b.Fatal(err)
	}
	cond, err := tt.buildWhere(pred)
	if err != nil {
		b.Fatal(err)
	}
	res := InferRanges(tt.t, cond, tt.computed, nil, DefaultRangeExpansionLimit)
	if len(res.Ranges) != wantRanges || !res.Exact {
		b.Fatalf("%d ranges (exact %v), want %d exact", len(res.Ranges), res.Exact, wantRanges)
	}
	b.Run("compile+evaluate", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			InferRanges(tt.t, cond, tt.computed, nil, DefaultRangeExpansionLimit)
		}
	})
	prog := CompileRanges(tt.t, cond, tt.computed)
	b.Run("evaluate", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			prog.Evaluate(nil, DefaultRangeExpansionLimit)
		}
	})
	b.Run("evaluate+spans", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			prog.Evaluate(nil, DefaultRangeExpansionLimit).Ranges.ToSpans(tt.t)
		}
	})
}

func inList(n int, quote bool) string {
	items := make([]string, n)
	for i := range items {
		if quote {
			items[i] = fmt.Sprintf("'key%d'", i*7919%100003)
		} else {
			items[i] = fmt.Sprint(i * 7919 % 100003)
		}
	}
	return strings.Join(items, ", ")
}

// BenchmarkPoint plans a point read by the whole key, the baseline of the
// hash-sharded point read in BenchmarkFarmHash/point.
func BenchmarkPoint(b *testing.B) {
	benchInfer(b, []string{"k int64", "l utf8"}, "k = 1 AND l = 'x'", 1)
}

// BenchmarkInferIn plans `k IN (...)` with 1,000 and 10,000 integer keys
// (issue 4's target: 10,000 keys in under 5 ms).
func BenchmarkInferIn(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchInfer(b, []string{"k int64", "l int64"}, "k IN ("+inList(n, false)+")", n)
		})
	}
}

// BenchmarkFarmHash plans reads of a table keyed by farm_hash: a 1,000-key
// IN list (one evaluation per key), the residues of a salted key, and
// 10,001 quotient pieces.
func BenchmarkFarmHash(b *testing.B) {
	b.Run("point", func(b *testing.B) {
		benchInfer(b, []string{"hash uint64 as farm_hash(key)", "key utf8"}, "key = 'x'", 1)
	})
	b.Run("in-1000", func(b *testing.B) {
		benchInfer(b, []string{"hash uint64 as farm_hash(key)", "key utf8"}, "key IN ("+inList(1000, true)+")", 1000)
	})
	b.Run("modulo", func(b *testing.B) {
		benchInfer(b, []string{"b uint64 as farm_hash(id) % 10", "id int64"}, "id BETWEEN 2 AND 15", 11)
	})
	b.Run("quotients-10001", func(b *testing.B) {
		benchInfer(b, []string{"h uint64 as farm_hash(id / 10)", "id int64"}, "id BETWEEN 0 AND 100009", 10001)
	})
}

// BenchmarkPointParam plans the prepared point read of issue 4's
// PointSelect (`key = $1`) on a plain and a hash-sharded table: Evaluate
// takes the point fast path (rangepoint.go); "general" is the same
// evaluation through the tries, for comparison.
func BenchmarkPointParam(b *testing.B) {
	for _, kind := range []struct {
		name string
		keys []string
	}{
		{"plain", []string{"key utf8"}},
		{"hashed", []string{"hash uint64 as farm_hash(key)", "key utf8"}},
	} {
		tt, err := newTestTable(kind.keys, []string{"v int64"})
		if err != nil {
			b.Fatal(err)
		}
		cond, err := tt.buildWhere("key = $1")
		if err != nil {
			b.Fatal(err)
		}
		params, err := buildParams([]string{"'key-42'"})
		if err != nil {
			b.Fatal(err)
		}
		prog := CompileRanges(tt.t, cond, tt.computed)
		if prog.point == nil {
			b.Fatal("no fast path")
		}
		if res := prog.Evaluate(params, DefaultRangeExpansionLimit); len(res.Ranges) != 1 || !res.Exact {
			b.Fatalf("%s: %v", kind.name, res.Ranges)
		}
		b.Run(kind.name+"/evaluate", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				prog.Evaluate(params, DefaultRangeExpansionLimit)
			}
		})
		b.Run(kind.name+"/evaluate+spans", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				prog.Evaluate(params, DefaultRangeExpansionLimit).Ranges.ToSpans(tt.t)
			}
		})
		b.Run(kind.name+"/general", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				prog.evaluateGeneral(params, DefaultRangeExpansionLimit)
			}
		})
	}
}

// BenchmarkInParam plans the prepared IN-list read of the bench's
// "IN-list of 100 keys" (`k IN ($1, ..., $100)` on the hash-sharded
// hkv(h AS farm_hash(k), k)): Evaluate takes the point fast path's IN list
// (rangepoint.go); "general" is the same evaluation through the tries.
func BenchmarkInParam(b *testing.B) {
	tt, err := newTestTable([]string{"h uint64 as farm_hash(k)", "k int64"}, []string{"v utf8"})
	if err != nil {
		b.Fatal(err)
	}
	marks := make([]string, 100)
	vals := make([]string, 100)
	for i := range marks {
		marks[i] = fmt.Sprintf("$%d", i+1)
		vals[i] = fmt.Sprint(i * 7919 % 100003)
	}
	cond, err := tt.buildWhere("k IN (" + strings.Join(marks, ", ") + ")")
	if err != nil {
		b.Fatal(err)
	}
	params, err := buildParams(vals)
	if err != nil {
		b.Fatal(err)
	}
	prog := CompileRanges(tt.t, cond, tt.computed)
	if res := prog.Evaluate(params, DefaultRangeExpansionLimit); len(res.Ranges) != 100 || !res.Exact {
		b.Fatalf("%d ranges, exact %v", len(res.Ranges), res.Exact)
	}
	b.Run("evaluate", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			prog.Evaluate(params, DefaultRangeExpansionLimit)
		}
	})
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			prog.evaluateGeneral(params, DefaultRangeExpansionLimit)
		}
	})
}
