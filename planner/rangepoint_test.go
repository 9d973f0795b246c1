package planner

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

// pointSchemas are the tables of TestPointFastPathMatchesGeneral: the
// oracle's, plus computed columns whose value may fail to cast (Uint8 of a
// negative or large number) or whose expression may fail (overflow), and
// the hash-sharded shape of issue 4.
var pointSchemas = append([]struct{ keys, cols []string }{
	{[]string{"hash uint64 as farm_hash(key)", "key utf8"}, []string{"v int64"}},
	{[]string{"key utf8"}, []string{"v int64"}},
	{[]string{"h uint8 as a + 0", "a int64", "b int64"}, nil},
	{[]string{"h int64 as a * 4611686018427387904", "a int64"}, nil},
	{[]string{"a int64", "h uint8 as a * 100", "b int64"}, nil},
	{[]string{"h uint64 as 7", "a int64"}, nil},
	{[]string{"h uint8 as farm_hash(a)", "a int64"}, nil},
	{[]string{"a int64", "b int64", "c int64", "d int64", "e int64", "h uint64 as farm_hash(e, d, c, b, a)", "f int64"}, nil},
	{[]string{"h int64 as farm_hash(s, a)", "a int64", "s utf8"}, nil},
	{[]string{"a int64", "b int64", "h uint64 as farm_hash(a, b)"}, nil},
	{[]string{"h uint64 as farm_hash(b)", "a int64", "b int64", "c int64"}, nil},
	{[]string{"a int64", "b int64", "c int64", "d int64", "e int64", "h uint64 as farm_hash(e) % 2", "f int64"}, nil},
}, oracleSchemas...)

// TestPointFastPathMatchesGeneral checks that the point fast path
// (rangepoint.go) gives exactly what the general path gives, on random
// conjunctions of `=` and `<=>` over key columns with constants,
// parameters (typed and text), NULL, values out of the column's range or
// between its values, and arguments that fail to evaluate. Predicates the
// fast path does not take are compared too (Evaluate must then be the
// general path).
func TestPointFastPathMatchesGeneral(t *testing.T) {
	seed := *oracleSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	rng := rand.New(rand.NewSource(seed))
	var tables []*testTable
	for _, s := range pointSchemas {
		tt, err := newTestTable(s.keys, s.cols)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tt)
	}
	// Arguments that fail to evaluate or to convert, whatever the column.
	odd := []string{"$9", "1 / 0", "9223372036854775807 + 1", "'abc'", "CAST('x' AS Int64)", "CAST('NaN' AS Decimal)", "CAST('NaN' AS Double)"}
	fast, fastIn, built, empty := 0, 0, 0, 0
	iters := *oracleIters * 2
	for iter := 0; iter < iters; iter++ {
		tt := tables[rng.Intn(len(tables))]
		g := &predGen{rng: rng, tt: tt}
		nkeys := len(tt.t.PrimaryKey)
		// Mostly a key prefix or the non-computed columns; sometimes any
		// subset, a repeated column or one extra non-key conjunct.
		var conj []string
		for pos := 0; pos < nkeys; pos++ {
			if rng.Intn(4) == 0 {
				continue
			}
			col := tt.t.Columns[tt.t.PrimaryKey[pos]]
			if col.Computed != "" && rng.Intn(4) != 0 {
				continue
			}
			var arg string
			switch rng.Intn(12) {
			case 0:
				arg = g.pick(odd)
			case 1:
				arg = g.constant(col.Type) + " + 0"
			default:
				arg = g.constant(col.Type)
			}
			if rng.Intn(4) == 0 {
				// An IN list (the fast path takes one): constants, odd
				// arguments, NULL, repeats; sometimes NOT IN.
				list := []string{arg}
				for k := rng.Intn(5); k > 0; k-- {
					switch rng.Intn(8) {
					case 0:
						list = append(list, "NULL")
					case 1:
						list = append(list, list[rng.Intn(len(list))])
					case 2:
						list = append(list, g.pick(odd))
					default:
						list = append(list, g.constant(col.Type))
					}
				}
				in := " IN ("
				if rng.Intn(8) == 0 {
					in = " NOT IN ("
				}
				conj = append(conj, col.Name+in+strings.Join(list, ", ")+")")
				continue
			}
			op := "="
			if rng.Intn(4) == 0 {
				op = "<=>"
			}
			c := col.Name + " " + op + " " + arg
			if rng.Intn(2) == 0 {
				c = arg + " " + op + " " + col.Name
			}
			conj = append(conj, c)
			if rng.Intn(12) == 0 {
				conj = append(conj, col.Name+" = "+g.constant(col.Type))
			}
		}
		if len(conj) == 0 {
			continue
		}
		if rng.Intn(6) == 0 && len(tt.t.Columns) > nkeys {
			conj = append(conj, tt.t.Columns[nkeys].Name+" > 0")
		}
		rng.Shuffle(len(conj), func(i, j int) { conj[i], conj[j] = conj[j], conj[i] })
		pred := strings.Join(conj, " AND ")
		cond, err := tt.buildWhere(pred)
		if err != nil {
			continue
		}
		params, err := buildParams(g.params)
		if err != nil {
			t.Fatalf("seed %d: params %v: %v", seed, g.params, err)
		}
		built++
		limit := []int{DefaultRangeExpansionLimit, 1, 2}[rng.Intn(3)]
		p := CompileRanges(tt.t, cond, tt.computed)
		got := p.Evaluate(params, limit)
		want := p.evaluateGeneral(params, limit)
		if p.point != nil {
			fast++
			if p.point.in != nil {
				fastIn++
			}
			if len(got.Ranges) == 0 {
				empty++
			}
		}
		if !reflect.DeepEqual(got, want) || (got.Ranges == nil) != (want.Ranges == nil) {
			t.Fatalf("seed %d, table %s, limit %d, params %v\nWHERE %s\nfast path %v\ngot  %s exact=%v widened=%v nil=%v filter=%v\nwant %s exact=%v widened=%v nil=%v filter=%v",
				seed, strings.Join(tt.keysSpec(), ", "), limit, g.params, pred, p.point != nil,
				got.Ranges, got.Exact, got.Widened, got.Ranges == nil, got.Filter,
				want.Ranges, want.Exact, want.Widened, want.Ranges == nil, want.Filter)
		}
	}
	t.Logf("seed %d: %d predicates, %d on the fast path (%d with an IN list, %d without ranges)", seed, built, fast, fastIn, empty)
	if fast < built/4 || fastIn < built/20 {
		t.Fatalf("seed %d: only %d of %d predicates took the fast path", seed, fast, built)
	}
}

// TestPointFastPathShapes pins which conditions take the fast path.
func TestPointFastPathShapes(t *testing.T) {
	for _, tc := range []struct {
		keys []string
		pred string
		fast bool
	}{
		{[]string{"key utf8"}, "key = $1", true},
		{[]string{"hash uint64 as farm_hash(key)", "key utf8"}, "key = $1", true},
		{[]string{"hash uint64 as farm_hash(key)", "key utf8"}, "key = $1 AND v > 3", true},
		{[]string{"k int64", "l utf8"}, "k = 1 AND l = 'x'", true},
		{[]string{"k int64", "l utf8"}, "k = 1", true},
		{[]string{"k int64", "l utf8"}, "l = 'x'", false},
		{[]string{"k int64", "l utf8"}, "k = 1 AND k = 2", false},
		{[]string{"k int64", "l utf8"}, "NOT (k <=> 1)", false},
		{[]string{"k int64", "l utf8"}, "k <=> NULL", true},
		{[]string{"k int64", "l utf8"}, "k = 1 AND l > 'x'", false},
		{[]string{"hash uint64 as farm_hash(key)", "key utf8"}, "hash = 5 AND key = 'x'", false},
		{[]string{"h uint64 as farm_hash(a, b)", "a int64", "b int64"}, "a = 1", false},
		{[]string{"h uint64 as farm_hash(a, b)", "a int64", "b int64"}, "a = 1 AND b = 2", true},
		{[]string{"hash uint64 as farm_hash(key)", "key utf8"}, "key IN ($1, $2, 'x')", true},
		{[]string{"k int64", "l utf8"}, "k IN (1, 2) AND l = 'x'", true},
		{[]string{"k int64", "l utf8"}, "k = 1 AND l IN ('x', 'y')", true},
		{[]string{"h uint64 as farm_hash(a, b)", "a int64", "b int64"}, "a IN (1, 2) AND b = 2", true},
		{[]string{"k int64", "l utf8"}, "k IN (1, 2) AND l IN ('x', 'y')", false},
		{[]string{"k int64", "l utf8"}, "k NOT IN (1, 2)", false},
		{[]string{"hash uint64 as farm_hash(key)", "key utf8"}, "hash IN (1, 2) AND key = 'x'", false},
	} {
		tt, err := newTestTable(tc.keys, []string{"v int64"})
		if err != nil {
			t.Fatal(err)
		}
		cond, err := tt.buildWhere(tc.pred)
		if err != nil {
			t.Fatal(err)
		}
		p := CompileRanges(tt.t, cond, tt.computed)
		if got := p.point != nil; got != tc.fast {
			t.Errorf("key (%s) WHERE %s: fast path %v, want %v (%s)", strings.Join(tc.keys, ", "), tc.pred, got, tc.fast, p)
		}
	}
}

func ExampleRangeProgram_Evaluate_point() {
	tt, _ := newTestTable([]string{"hash uint64 as farm_hash(key)", "key utf8"}, []string{"v int64"})
	cond, _ := tt.buildWhere("key = 'x'")
	fmt.Println(CompileRanges(tt.t, cond, tt.computed).Evaluate(nil, DefaultRangeExpansionLimit).Ranges)
	// Output:
	// [(10077136739098101559, 'x') .. (10077136739098101559, 'x', <Max>))
}
