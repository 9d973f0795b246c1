package planner

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

var (
	oracleSeed  = flag.Int64("seed", 0, "seed of TestRangeOracle (0: from the clock)")
	oracleIters = flag.Int("oracle-iters", 4000, "predicates TestRangeOracle tries")
)

// oracleSchemas are the tables the oracle test draws from: key columns
// (computed ones with AS) and other columns.
var oracleSchemas = []struct{ keys, cols []string }{
	{[]string{"a int64", "b int64"}, []string{"v int64"}},
	{[]string{"a int32", "s utf8"}, []string{"v int64"}},
	{[]string{"u uint64", "i int16"}, []string{"v int64"}},
	{[]string{"a int64", "c bool", "b int64"}, nil},
	{[]string{"d Decimal(6,2)", "dt date"}, []string{"v int64"}},
	{[]string{"h uint64 as farm_hash(a) % 4", "a int64", "b int64"}, []string{"v int64"}},
	{[]string{"h uint64 as farm_hash(a / 3)", "a int64", "s utf8"}, nil},
	{[]string{"h uint64 as farm_hash(a, s)", "a int64", "s utf8"}, nil},
	{[]string{"a int64", "h int64 as a % 3", "b int64"}, nil},
	{[]string{"h uint64 as farm_hash(b)", "a int64", "b int64"}, nil},
	{[]string{"h int64 as a / 2", "a int64", "b int64"}, nil},
	{[]string{"h uint64 as farm_hash(a, b / 2)", "a int64", "b int64"}, nil},
	{[]string{"a int64", "b int64", "h uint64 as farm_hash(a) % 3"}, nil},
	{[]string{"x uint64 as farm_hash(a) % 2", "y int64 as a / 2", "a int64"}, nil},
	{[]string{"t Int8", "u Uint8"}, []string{"v int64"}},
	{[]string{"h uint64 as farm_hash(u / 2)", "u uint64", "i int16"}, nil},
}

// randomSchemas is the number of tables TestRangeOracle adds to
// oracleSchemas, made by randomComputedSchema.
const randomSchemas = 6

// randomComputedSchema returns the key columns of a table with a computed
// key column of several inputs: two or three plain key columns, and a
// column computed from two or more of them, read whole or through a
// division, optionally taken modulo a constant, sometimes a second
// computed column, the key columns shuffled so that inputs come before,
// after, or on both sides of each.
func randomComputedSchema(rng *rand.Rand) []string {
	types := []string{"int64", "int64", "int16", "uint64", "utf8"}
	names := []string{"a", "b", "c"}
	n := 2 + rng.Intn(2)
	var plain []string
	var args []string
	signed := true
	for i := 0; i < n; i++ {
		typ := types[rng.Intn(len(types))]
		plain = append(plain, names[i]+" "+typ)
		arg := names[i]
		if typ != "utf8" {
			if d := []int{1, 2, 3}[rng.Intn(3)]; d > 1 {
				arg = fmt.Sprintf("%s / %d", names[i], d)
			}
		}
		signed = signed && (typ == "int64" || typ == "int16")
		args = append(args, arg)
	}
	// Two or more of the plain columns are inputs, in any order.
	rng.Shuffle(len(args), func(i, j int) { args[i], args[j] = args[j], args[i] })
	args = args[:2+rng.Intn(n-1)]
	var computed string
	switch {
	case signed && rng.Intn(3) == 0:
		// Integer arithmetic: a sum of quotients, with a signed modulo.
		computed = "h int64 as " + strings.Join(args, " + ")
		if rng.Intn(2) == 0 {
			computed = "h int64 as (" + strings.Join(args, " + ") + ") % 3"
		}
	default:
		computed = "h uint64 as farm_hash(" + strings.Join(args, ", ") + ")"
		if rng.Intn(2) == 0 {
			computed += fmt.Sprintf(" %% %d", 2+rng.Intn(3))
		}
	}
	keys := append(plain, computed)
	if rng.Intn(4) == 0 {
		// A second computed column, of one input: the walk meets two.
		keys = append(keys, fmt.Sprintf("g uint64 as farm_hash(%s) %% 2", names[rng.Intn(n)]))
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

// gridValues are the values each key column takes in the grid (SQL
// literals); constants are what predicates compare with, including values
// off the grid and of other types.
func gridValues(t types.Type) (grid, constants []string) {
	switch f := t.Family; {
	case f == types.Int16:
		return []string{"NULL", "-32768", "-1", "0", "1", "2", "32767"},
			[]string{"-32768", "-1", "0", "1", "2", "32767", "40000", "-40000", "1.5", "-0.5"}
	case f == types.Uint8:
		return []string{"NULL", "0", "1", "255"}, []string{"0", "1", "255", "256", "-1", "2.5"}
	case f.IsUnsigned():
		return []string{"NULL", "0", "1", "2", "3", "18446744073709551615"},
			[]string{"0", "1", "2", "3", "-1", "2.5", "18446744073709551615", "1e30", "-1e30"}
	case f.IsInteger():
		return []string{"NULL", "-2", "-1", "0", "1", "2", "3"},
			[]string{"-2", "-1", "0", "1", "2", "3", "4", "2.5", "-0.5", "1e30", "-1e30",
				"9223372036854775807", "18446744073709551615", "'2'", "1.0",
				"CAST('NaN' AS Double)", "CAST('Infinity' AS Double)", "CAST('-Infinity' AS Double)",
				"CAST('Infinity' AS Decimal)", "CAST(-2 AS Uint64)"}
	case f == types.Utf8:
		return []string{"NULL", "''", "'a'", "'ab'", "'b'"},
			[]string{"''", "'a'", "'aa'", "'ab'", "'b'", "'c'"}
	case f == types.Bool:
		return []string{"NULL", "false", "true"}, []string{"false", "true"}
	case f == types.Decimal:
		return []string{"NULL", "-1.50", "0", "1.25", "2"},
			[]string{"-1.5", "0", "1.25", "1.255", "2", "3", "1"}
	case f == types.Date:
		return []string{"NULL", "'2024-01-01'", "'2024-01-02'"},
			[]string{"'2024-01-01'", "'2024-01-02'", "CAST('2024-01-01 12:00:00' AS Timestamp)", "'2023-12-31'"}
	}
	panic("no grid for " + t.String())
}

// TestRangeOracle checks range inference against evaluation: random
// predicates over a small grid of keys (NULL included); every row where
// the predicate is TRUE must lie in the ranges (soundness), and when the
// result claims to be exact, the rows in the ranges where the residual
// filter is TRUE must be exactly the rows where the predicate is.
func TestRangeOracle(t *testing.T) {
	seed := *oracleSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	rng := rand.New(rand.NewSource(seed))
	type schema struct {
		tt   *testTable
		rows [][]types.Value
		keys [][]byte
	}
	var schemas []schema
	specs := append([]struct{ keys, cols []string }(nil), oracleSchemas...)
	for i := 0; i < randomSchemas; i++ {
		keys := randomComputedSchema(rng)
		specs = append(specs, struct{ keys, cols []string }{keys, []string{"v int64"}})
		t.Logf("random schema: %s", strings.Join(keys, ", "))
	}
	for _, s := range specs {
		tt, err := newTestTable(s.keys, s.cols)
		if err != nil {
			t.Fatalf("seed %d: table %v: %v", seed, s.keys, err)
		}
		rows := oracleGrid(t, tt, rng)
		keys := make([][]byte, len(rows))
		for i, r := range rows {
			keys[i] = rowenc.EncodeKey(tt.t, r)
		}
		schemas = append(schemas, schema{tt, rows, keys})
	}
	built, exactCount := 0, 0
	for iter := 0; iter < *oracleIters; iter++ {
		s := schemas[rng.Intn(len(schemas))]
		g := &predGen{rng: rng, tt: s.tt}
		pred := g.expr(3)
		cond, err := s.tt.buildWhere(pred)
		if err != nil {
			continue // an ill-typed combination
		}
		params, err := buildParams(g.params)
		if err != nil {
			t.Fatalf("seed %d: params %v: %v", seed, g.params, err)
		}
		limit := []int{DefaultRangeExpansionLimit, DefaultRangeExpansionLimit, 1, 2, 5, 40}[rng.Intn(6)]
		built++
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d, table %s, limit %d, params %v\nWHERE %s\n(%s)\n%s\nranges:\n%s",
				seed, strings.Join(s.tt.keysSpec(), ", "), limit, g.params, pred, cond,
				fmt.Sprintf(format, args...), CompileRanges(s.tt.t, cond, s.tt.computed).Evaluate(params, limit).Ranges)
		}
		res := InferRanges(s.tt.t, cond, s.tt.computed, params, limit)
		if err := res.Ranges.CheckInvariants(); err != nil {
			fail("%v", err)
		}
		if len(res.Ranges) > limit {
			fail("%d ranges exceed the limit", len(res.Ranges))
		}
		if !res.Exact && res.Filter != cond {
			fail("inexact result with filter %v", res.Filter)
		}
		if res.Exact {
			exactCount++
		}
		spans := res.Ranges.ToSpans(s.tt.t)
		for i := 1; i < len(spans); i++ {
			if bytes.Compare(spans[i-1].End, spans[i].Start) > 0 {
				fail("spans %s and %s overlap", spans[i-1], spans[i])
			}
		}
		ctx := &expr.Context{Params: params}
		for i, row := range s.rows {
			v, err := cond.Eval(ctx, row)
			if err != nil {
				continue
			}
			want := !v.IsNull() && v.Bool()
			in := inSpans(spans, s.keys[i])
			keyVals := make([]types.Value, len(s.tt.t.PrimaryKey))
			for j, c := range s.tt.t.PrimaryKey {
				keyVals[j] = row[c]
			}
			if res.Ranges.Contains(keyVals) != in {
				fail("row %v: bounds say in=%v, encoded spans say %v", keyVals, !in, in)
			}
			if want && !in {
				fail("row %v matches but lies outside the ranges", row)
			}
			if res.Exact && in {
				got := true
				if res.Filter != nil {
					fv, err := res.Filter.Eval(ctx, row)
					if err != nil {
						continue
					}
					got = !fv.IsNull() && fv.Bool()
				}
				if got != want {
					fail("row %v: predicate %v but exact ranges with filter give %v", row, want, got)
				}
			}
		}
	}
	t.Logf("seed %d: %d predicates built, %d exact", seed, built, exactCount)
	if built < *oracleIters/4 {
		t.Fatalf("seed %d: only %d of %d predicates built", seed, built, *oracleIters)
	}
}

func inSpans(spans []storage.Span, key []byte) bool {
	for _, s := range spans {
		if s.Contains(key) {
			return true
		}
	}
	return false
}

func (tt *testTable) keysSpec() []string {
	var out []string
	for _, c := range tt.t.PrimaryKey {
		col := tt.t.Columns[c]
		s := col.Name + " " + col.Type.String()
		if col.Computed != "" {
			s += " AS " + col.Computed
		}
		out = append(out, s)
	}
	return out
}

// oracleGrid returns every combination of the grid values of the
// non-computed key columns, with computed columns evaluated as a write
// would and the other columns random.
func oracleGrid(t *testing.T, tt *testTable, rng *rand.Rand) [][]types.Value {
	cols := tt.t.Columns
	choices := make([][]types.Value, len(cols))
	for i, c := range cols {
		if c.Computed != "" {
			continue
		}
		if !tt.t.IsKeyColumn(i) {
			for _, n := range []int64{-1, 0, 1, 2} {
				choices[i] = append(choices[i], types.NewInt64(n))
			}
			choices[i] = append(choices[i], types.NullValue)
			continue
		}
		grid, _ := gridValues(c.Type)
		for _, lit := range grid {
			e, err := tt.buildSelectItem("CAST(" + lit + " AS " + c.Type.String() + ")")
			if err != nil {
				t.Fatalf("grid value %s: %v", lit, err)
			}
			v, err := e.Eval(&expr.Context{}, nil)
			if err != nil {
				t.Fatalf("grid value %s: %v", lit, err)
			}
			choices[i] = append(choices[i], v)
		}
	}
	var rows [][]types.Value
	row := make([]types.Value, len(cols))
	var fill func(i int)
	fill = func(i int) {
		if i == len(cols) {
			r := append([]types.Value(nil), row...)
			for c, f := range tt.computed {
				v, err := f.Eval(&expr.Context{}, r)
				if err != nil {
					return
				}
				if r[c], err = types.Cast(v, cols[c].Type); err != nil {
					return
				}
			}
			rows = append(rows, r)
			return
		}
		switch {
		case cols[i].Computed != "":
			fill(i + 1)
		case !tt.t.IsKeyColumn(i):
			row[i] = choices[i][rng.Intn(len(choices[i]))]
			fill(i + 1)
		default:
			for _, v := range choices[i] {
				row[i] = v
				fill(i + 1)
			}
		}
	}
	fill(0)
	return rows
}

// predGen writes random predicates over a test table.
type predGen struct {
	rng    *rand.Rand
	tt     *testTable
	params []string
}

func (g *predGen) pick(xs []string) string { return xs[g.rng.Intn(len(xs))] }

func (g *predGen) column() (string, types.Type) {
	c := g.tt.t.Columns[g.rng.Intn(len(g.tt.t.Columns))]
	return c.Name, c.Type
}

func (g *predGen) keyColumn() (string, types.Type) {
	c := g.tt.t.Columns[g.tt.t.PrimaryKey[g.rng.Intn(len(g.tt.t.PrimaryKey))]]
	return c.Name, c.Type
}

// constant returns a literal for comparing with a column of type t,
// sometimes NULL or a parameter.
func (g *predGen) constant(t types.Type) string {
	var lit string
	switch {
	case g.rng.Intn(20) == 0:
		lit = "NULL"
	case t.Family == types.Uint64 && g.rng.Intn(3) == 0:
		// Computed hash columns: values that occur and values that do not.
		lit = g.pick([]string{"0", "1", "2", "3", "6", "11", "18446744073709551615"})
	case t.Family == types.Int64 && g.rng.Intn(3) == 0:
		lit = g.pick([]string{"-2", "-1", "0", "1", "2"})
	case !g.gridType(t):
		lit = "0"
	default:
		_, consts := gridValues(t)
		lit = g.pick(consts)
	}
	if g.rng.Intn(6) == 0 && !strings.HasPrefix(lit, "CAST") {
		g.params = append(g.params, lit)
		return fmt.Sprintf("$%d", len(g.params))
	}
	return lit
}

func (g *predGen) gridType(t types.Type) bool {
	switch f := t.Family; {
	case f.IsInteger(), f == types.Utf8, f == types.Bool, f == types.Decimal, f == types.Date:
		return true
	}
	return false
}

var cmpOps = []string{"=", "<>", "<", "<=", ">", ">=", "<=>"}

func (g *predGen) atom() string {
	name, typ := g.keyColumn()
	if g.rng.Intn(8) == 0 {
		name, typ = g.column()
	}
	switch g.rng.Intn(14) {
	case 0, 1, 2, 3:
		return name + " " + g.pick(cmpOps) + " " + g.constant(typ)
	case 4:
		return g.constant(typ) + " " + g.pick(cmpOps[:6]) + " " + name
	case 5, 6:
		n := 1 + g.rng.Intn(4)
		items := make([]string, n)
		for i := range items {
			items[i] = g.constant(typ)
		}
		not := ""
		if g.rng.Intn(3) == 0 {
			not = "NOT "
		}
		return name + " " + not + "IN (" + strings.Join(items, ", ") + ")"
	case 7:
		not := ""
		if g.rng.Intn(3) == 0 {
			not = "NOT "
		}
		return name + " " + not + "BETWEEN " + g.constant(typ) + " AND " + g.constant(typ)
	case 8:
		return name + g.pick([]string{" IS NULL", " IS NOT NULL"})
	case 9:
		n2, t2 := g.keyColumn()
		rows := make([]string, 1+g.rng.Intn(3))
		for i := range rows {
			rows[i] = "(" + g.constant(typ) + ", " + g.constant(t2) + ")"
		}
		not := ""
		if g.rng.Intn(4) == 0 {
			not = "NOT "
		}
		return "(" + name + ", " + n2 + ") " + not + "IN (" + strings.Join(rows, ", ") + ")"
	case 10:
		n2, t2 := g.keyColumn()
		return "(" + name + ", " + n2 + ") " + g.pick(cmpOps[:6]) + " (" + g.constant(typ) + ", " + g.constant(t2) + ")"
	case 11:
		if typ.Family.IsInteger() {
			return name + " + 0 " + g.pick(cmpOps[:6]) + " " + g.constant(typ)
		}
		return name + " IS NOT NULL"
	case 12:
		if typ.Family == types.Bool {
			return g.pick([]string{name, "NOT " + name, name + " IS TRUE", name + " IS NOT FALSE"})
		}
		return g.pick([]string{"true", "false", "NULL"})
	}
	for i, c := range g.tt.t.Columns {
		if !g.tt.t.IsKeyColumn(i) {
			return c.Name + " " + g.pick(cmpOps[:6]) + " " + g.pick([]string{"0", "1", "NULL"})
		}
	}
	return name + " = " + g.constant(typ)
}

func (g *predGen) expr(depth int) string {
	if depth == 0 || g.rng.Intn(5) < 2 {
		return g.atom()
	}
	switch g.rng.Intn(5) {
	case 0, 1:
		return "(" + g.expr(depth-1) + ") AND (" + g.expr(depth-1) + ")"
	case 2, 3:
		return "(" + g.expr(depth-1) + ") OR (" + g.expr(depth-1) + ")"
	}
	return "NOT (" + g.expr(depth-1) + ")"
}
