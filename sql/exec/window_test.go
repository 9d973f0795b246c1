package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Window test rows are (id, g, k, v): id is unique and identifies a row in
// the (sorted) output.
var windowCols = []planner.Column{
	{Name: "id", Type: types.TypeInt64}, {Name: "g", Type: types.TypeInt64},
	{Name: "k", Type: types.TypeInt64}, {Name: "v", Type: types.TypeInt64},
}

func col(i int) expr.Expr {
	return &expr.ColumnRef{Index: i, Name: windowCols[i].Name, Typ: types.TypeInt64}
}

func constInt(n int64) expr.Expr { return expr.NewConst(types.NewInt64(n)) }

func valuesNode(rows [][]types.Value) *planner.Values {
	n := &planner.Values{Cols: windowCols}
	for _, r := range rows {
		var es []expr.Expr
		for _, v := range r {
			if v.IsNull() {
				es = append(es, expr.NullOf(types.TypeInt64))
			} else {
				es = append(es, expr.NewConst(v))
			}
		}
		n.Rows = append(n.Rows, es)
	}
	return n
}

// runWindow runs one window function and returns its value per id.
func runWindow(t testing.TB, c *Context, w *planner.Window) (map[int64]types.Value, error) {
	w.Cols = append(append([]planner.Column(nil), windowCols...), planner.Column{Name: "f", Type: w.Funcs[0].Typ})
	it, err := Build(c, w)
	if err != nil {
		return nil, err
	}
	rows, err := Drain(c, it)
	if err != nil {
		return nil, err
	}
	out := map[int64]types.Value{}
	for _, r := range rows {
		out[r[0].Int()] = r[len(windowCols)]
	}
	return out, nil
}

func intRow(id int64, g, k, v any) []types.Value {
	val := func(x any) types.Value {
		if x == nil {
			return types.NullValue
		}
		return types.NewInt64(int64(x.(int)))
	}
	return []types.Value{types.NewInt64(id), val(g), val(k), val(v)}
}

func TestWindowRunningSumPeers(t *testing.T) {
	rows := [][]types.Value{
		intRow(1, 1, 1, 10), intRow(2, 1, 2, 20), intRow(3, 1, 2, 30), intRow(4, 2, 1, 5), intRow(5, 1, nil, 7),
	}
	spec, _ := expr.NewAggSpec("sum", false, false, col(3))
	w := &planner.Window{Input: valuesNode(rows), PartitionBy: []expr.Expr{col(1)},
		OrderBy: []planner.WindowOrder{{Expr: col(2), NullsFirst: true}},
		Funcs:   []*planner.WindowFunc{{Name: "sum", Agg: spec, Args: []expr.Expr{col(3)}, Typ: spec.Typ, Frame: planner.DefaultFrame}}}
	c := &Context{Ctx: context.Background(), Eval: &expr.Context{}}
	got, err := runWindow(t, c, w)
	if err != nil {
		t.Fatal(err)
	}
	// NULL sorts first: row 5 is alone in its peer group, then 10, then
	// the peers 2 and 3 share the sum up to their last peer.
	want := map[int64]int64{5: 7, 1: 17, 2: 67, 3: 67, 4: 5}
	for id, v := range want {
		if got[id].IsNull() || types.Compare(got[id], types.NewInt64(v)) != 0 {
			t.Errorf("id %d: got %v, want %d", id, got[id], v)
		}
	}
}

// TestWindowNullsLast: with NULLS LAST (PostgreSQL's default ascending)
// the NULL row comes after every value, in both directions, and a RANGE
// offset frame leaves it out of every value range.
func TestWindowNullsLast(t *testing.T) {
	rows := [][]types.Value{
		intRow(1, 1, 1, 10), intRow(2, 1, 2, 20), intRow(3, 1, 2, 30), intRow(4, nil, 1, 5), intRow(5, 1, nil, 7), intRow(6, nil, nil, 1),
	}
	spec, _ := expr.NewAggSpec("sum", false, false, col(3))
	run := func(desc bool, frame planner.Frame) map[int64]types.Value {
		t.Helper()
		w := &planner.Window{Input: valuesNode(rows), PartitionBy: []expr.Expr{col(1)},
			OrderBy: []planner.WindowOrder{{Expr: col(2), Desc: desc, NullsFirst: false}},
			Funcs:   []*planner.WindowFunc{{Name: "sum", Agg: spec, Args: []expr.Expr{col(3)}, Typ: spec.Typ, Frame: frame}}}
		got, err := runWindow(t, &Context{Ctx: context.Background(), Eval: &expr.Context{}}, w)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(name string, got map[int64]types.Value, want map[int64]int64) {
		t.Helper()
		for id, v := range want {
			if got[id].IsNull() || types.Compare(got[id], types.NewInt64(v)) != 0 {
				t.Errorf("%s: id %d: got %v, want %d", name, id, got[id], v)
			}
		}
	}
	// Ascending: 10, then peers 20+30, then the NULL row sees everything.
	check("asc", run(false, planner.DefaultFrame), map[int64]int64{1: 10, 2: 60, 3: 60, 5: 67, 4: 5, 6: 6})
	// Descending, NULLs still last: 20+30, then 10, then the NULL row.
	check("desc", run(true, planner.DefaultFrame), map[int64]int64{2: 50, 3: 50, 1: 60, 5: 67, 4: 5, 6: 6})
	// RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING: NULL rows frame their peers only.
	lo, _ := expr.NewArith(expr.Sub, col(2), constInt(1))
	hi, _ := expr.NewArith(expr.Add, col(2), constInt(1))
	fr := planner.Frame{Mode: planner.FrameRange,
		Start: planner.FrameBound{Kind: planner.OffsetPreceding, Offset: constInt(1), Value: lo},
		End:   planner.FrameBound{Kind: planner.OffsetFollowing, Offset: constInt(1), Value: hi}}
	check("range", run(false, fr), map[int64]int64{1: 60, 2: 60, 3: 60, 5: 7, 4: 5, 6: 1})
}

func TestWindowMemLimit(t *testing.T) {
	var rows [][]types.Value
	for i := 0; i < 1000; i++ {
		rows = append(rows, intRow(int64(i), i%3, i, i))
	}
	w := &planner.Window{Input: valuesNode(rows), OrderBy: []planner.WindowOrder{{Expr: col(2)}},
		Funcs: []*planner.WindowFunc{{Name: "row_number", Typ: types.TypeInt64, Frame: planner.DefaultFrame}}}
	c := &Context{Ctx: context.Background(), Eval: &expr.Context{}, MemLimit: 10_000}
	_, err := runWindow(t, c, w)
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != sqlerr.OutOfMemory {
		t.Fatalf("got %v, want 53200", err)
	}
}

// TestWindowRandom compares the executor with a naive oracle that decides
// frame membership row by row from the definitions (ROWS: positions,
// RANGE: ORDER BY values, GROUPS: peer-group numbers) on random data,
// specifications and frames.
func TestWindowRandom(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for iter := 0; iter < 400; iter++ {
		n := rng.Intn(25)
		var rows [][]types.Value
		maybe := func(r int) any {
			if rng.Intn(6) == 0 {
				return nil
			}
			return rng.Intn(r)
		}
		for i := 0; i < n; i++ {
			rows = append(rows, intRow(int64(i), maybe(3), maybe(6), maybe(100)))
		}
		w, desc := randomWindow(rng)
		w.Input = valuesNode(rows)
		c := &Context{Ctx: context.Background(), Eval: &expr.Context{}}
		got, err := runWindow(t, c, w)
		if err != nil {
			t.Fatalf("seed %d iter %d %s: %v", seed, iter, desc, err)
		}
		want := windowOracle(rows, w)
		for id, wv := range want {
			if gv := got[id]; types.Compare(gv, wv) != 0 || gv.IsNull() != wv.IsNull() {
				t.Fatalf("seed %d iter %d %s\nrows %v\nid %d: got %v, want %v", seed, iter, desc, rows, id, gv, wv)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d iter %d: %d rows, want %d", seed, iter, len(got), len(want))
		}
	}
}

var randomFuncs = []string{"sum", "count", "min", "max", "first_value", "last_value", "nth_value",
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead"}

func randomWindow(rng *rand.Rand) (*planner.Window, string) {
	w := &planner.Window{}
	if rng.Intn(2) == 0 {
		w.PartitionBy = []expr.Expr{col(1)}
	}
	hasOrder := rng.Intn(4) != 0
	if hasOrder {
		w.OrderBy = []planner.WindowOrder{{Expr: col(2), Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(2) == 0}}
	}
	w.PartitionNullsFirst = rng.Intn(2) == 0
	name := randomFuncs[rng.Intn(len(randomFuncs))]
	fn := &planner.WindowFunc{Name: name, Frame: planner.DefaultFrame, Typ: types.TypeInt64}
	switch name {
	case "sum", "count", "min", "max":
		fn.Args = []expr.Expr{col(3)}
		fn.Agg, _ = expr.NewAggSpec(name, false, false, col(3))
		fn.Typ = fn.Agg.Typ
	case "first_value", "last_value":
		fn.Args = []expr.Expr{col(3)}
	case "nth_value":
		fn.Args = []expr.Expr{col(3), constInt(int64(1 + rng.Intn(3)))}
	case "ntile":
		fn.Args = []expr.Expr{constInt(int64(1 + rng.Intn(5)))}
	case "lag", "lead":
		fn.Args = []expr.Expr{col(3), constInt(int64(rng.Intn(3))), constInt(-1)}
	case "percent_rank", "cume_dist":
		fn.Typ = types.TypeDouble
	}
	if rng.Intn(3) != 0 {
		fn.Frame = randomFrame(rng, hasOrder, w)
	}
	w.Funcs = []*planner.WindowFunc{fn}
	return w, fmt.Sprintf("%s %s partition=%v order=%v", name, fn.Frame.Mode, w.PartitionBy != nil, w.OrderBy)
}

func randomFrame(rng *rand.Rand, hasOrder bool, w *planner.Window) planner.Frame {
	modes := []planner.FrameMode{planner.FrameRows}
	if hasOrder {
		modes = append(modes, planner.FrameRange, planner.FrameGroups)
	}
	fr := planner.Frame{Mode: modes[rng.Intn(len(modes))]}
	for {
		fr.Start = randomBound(rng, fr.Mode, w)
		fr.End = randomBound(rng, fr.Mode, w)
		s, e := fr.Start.Kind, fr.End.Kind
		if s == planner.UnboundedFollowing || e == planner.UnboundedPreceding ||
			s == planner.CurrentRow && e == planner.OffsetPreceding ||
			s == planner.OffsetFollowing && (e == planner.OffsetPreceding || e == planner.CurrentRow) {
			continue
		}
		return fr
	}
}

func randomBound(rng *rand.Rand, mode planner.FrameMode, w *planner.Window) planner.FrameBound {
	b := planner.FrameBound{Kind: planner.BoundKind(rng.Intn(5))}
	if b.Kind != planner.OffsetPreceding && b.Kind != planner.OffsetFollowing {
		return b
	}
	off := int64(rng.Intn(4))
	b.Offset = constInt(off)
	if mode == planner.FrameRange {
		// The ORDER BY value minus the offset for PRECEDING in ascending
		// order (or FOLLOWING in descending), plus it otherwise.
		op := expr.Add
		if (b.Kind == planner.OffsetPreceding) != w.OrderBy[0].Desc {
			op = expr.Sub
		}
		b.Value, _ = expr.NewArith(op, col(2), constInt(off))
	}
	return b
}

// windowOracle computes the window function for every row by definition.
func windowOracle(rows [][]types.Value, w *planner.Window) map[int64]types.Value {
	fn := w.Funcs[0]
	desc := len(w.OrderBy) > 0 && w.OrderBy[0].Desc
	nullsFirst := len(w.OrderBy) > 0 && w.OrderBy[0].NullsFirst
	cmpK := func(a, b types.Value) int {
		c := types.Compare(a, b)
		if desc {
			return -c
		}
		return c
	}
	// ordK is the window's order: NULLs first or last whatever the
	// direction.
	ordK := func(a, b types.Value) int {
		switch {
		case a.IsNull() && b.IsNull():
			return 0
		case a.IsNull() != b.IsNull():
			if a.IsNull() == nullsFirst {
				return -1
			}
			return 1
		}
		return cmpK(a, b)
	}
	out := map[int64]types.Value{}
	for _, row := range rows {
		// The row's partition, in window order (stable: input order
		// among peers, as the executor's stable sort keeps it).
		var part [][]types.Value
		for _, r := range rows {
			if w.PartitionBy == nil || types.Compare(r[1], row[1]) == 0 {
				part = append(part, r)
			}
		}
		if w.OrderBy != nil {
			sort.SliceStable(part, func(i, j int) bool { return ordK(part[i][2], part[j][2]) < 0 })
		}
		pos := 0
		for i, r := range part {
			if r[0].Int() == row[0].Int() {
				pos = i
			}
		}
		peer := func(a, b []types.Value) bool { return w.OrderBy == nil || types.Compare(a[2], b[2]) == 0 }
		groupOf := func(i int) int {
			g := 0
			for j := 1; j <= i; j++ {
				if !peer(part[j-1], part[j]) {
					g++
				}
			}
			return g
		}
		off := func(b planner.FrameBound) int64 {
			if b.Offset == nil {
				return 0
			}
			v, _ := b.Offset.Eval(nil, nil)
			return v.Int()
		}
		key := row[2]
		inStart := func(j int) bool {
			b := fn.Frame.Start
			switch b.Kind {
			case planner.UnboundedPreceding:
				return true
			case planner.CurrentRow:
				if fn.Frame.Mode == planner.FrameRows {
					return j >= pos
				}
				return groupOf(j) >= groupOf(pos)
			}
			sign := int64(1)
			if b.Kind == planner.OffsetPreceding {
				sign = -1
			}
			switch fn.Frame.Mode {
			case planner.FrameRows:
				return int64(j) >= int64(pos)+sign*off(b)
			case planner.FrameGroups:
				return int64(groupOf(j)) >= int64(groupOf(pos))+sign*off(b)
			}
			if key.IsNull() {
				// A NULL ORDER BY value: the offset ends the frame at
				// the row's peers (PostgreSQL).
				return groupOf(j) >= groupOf(pos)
			}
			bound, _ := b.Value.Eval(nil, row)
			return !part[j][2].IsNull() && cmpK(part[j][2], bound) >= 0 || part[j][2].IsNull() && !nullsFirst
		}
		inEnd := func(j int) bool {
			b := fn.Frame.End
			switch b.Kind {
			case planner.UnboundedFollowing:
				return true
			case planner.CurrentRow:
				if fn.Frame.Mode == planner.FrameRows {
					return j <= pos
				}
				return groupOf(j) <= groupOf(pos)
			}
			sign := int64(1)
			if b.Kind == planner.OffsetPreceding {
				sign = -1
			}
			switch fn.Frame.Mode {
			case planner.FrameRows:
				return int64(j) <= int64(pos)+sign*off(b)
			case planner.FrameGroups:
				return int64(groupOf(j)) <= int64(groupOf(pos))+sign*off(b)
			}
			if key.IsNull() {
				return groupOf(j) <= groupOf(pos)
			}
			bound, _ := b.Value.Eval(nil, row)
			return !part[j][2].IsNull() && cmpK(part[j][2], bound) <= 0 || part[j][2].IsNull() && nullsFirst
		}
		var frame [][]types.Value
		for j := range part {
			if inStart(j) && inEnd(j) {
				frame = append(frame, part[j])
			}
		}
		out[row[0].Int()] = oracleValue(fn, part, pos, frame, groupOf)
	}
	return out
}

func oracleValue(fn *planner.WindowFunc, part [][]types.Value, pos int, frame [][]types.Value, groupOf func(int) int) types.Value {
	argInt := func(k int) int64 { v, _ := fn.Args[k].Eval(nil, nil); return v.Int() }
	n := len(part)
	firstPeer, lastPeer := pos, pos
	for firstPeer > 0 && groupOf(firstPeer-1) == groupOf(pos) {
		firstPeer--
	}
	for lastPeer < n-1 && groupOf(lastPeer+1) == groupOf(pos) {
		lastPeer++
	}
	switch fn.Name {
	case "row_number":
		return types.NewInt64(int64(pos + 1))
	case "rank":
		return types.NewInt64(int64(firstPeer + 1))
	case "dense_rank":
		return types.NewInt64(int64(groupOf(pos) + 1))
	case "percent_rank":
		if n == 1 {
			return types.NewDouble(0)
		}
		return types.NewDouble(float64(firstPeer) / float64(n-1))
	case "cume_dist":
		return types.NewDouble(float64(lastPeer+1) / float64(n))
	case "ntile":
		// Bucket b holds rows [b*n/k ...) with the larger buckets first:
		// count how many rows precede in earlier buckets.
		k := int(argInt(0))
		b, start := 0, 0
		for ; b < k; b++ {
			size := n / k
			if b < n%k {
				size++
			}
			if pos < start+size {
				break
			}
			start += size
		}
		return types.NewInt64(int64(b + 1))
	case "lag", "lead":
		off := int(argInt(1))
		if fn.Name == "lag" {
			off = -off
		}
		if j := pos + off; j >= 0 && j < n {
			return part[j][3]
		}
		return types.NewInt64(-1)
	case "first_value":
		if len(frame) == 0 {
			return types.NullValue
		}
		return frame[0][3]
	case "last_value":
		if len(frame) == 0 {
			return types.NullValue
		}
		return frame[len(frame)-1][3]
	case "nth_value":
		k := int(argInt(1))
		if k > len(frame) {
			return types.NullValue
		}
		return frame[k-1][3]
	case "count":
		c := 0
		for _, r := range frame {
			if !r[3].IsNull() {
				c++
			}
		}
		return types.NewInt64(int64(c))
	case "sum", "min", "max":
		var acc types.Value
		for _, r := range frame {
			v := r[3]
			switch {
			case v.IsNull():
			case acc.IsNull():
				acc = v
			case fn.Name == "sum":
				acc = types.NewInt64(acc.Int() + v.Int())
			case fn.Name == "min" && types.Compare(v, acc) < 0, fn.Name == "max" && types.Compare(v, acc) > 0:
				acc = v
			}
		}
		return acc
	}
	panic("oracle: " + fn.Name)
}

// BenchmarkWindowRunningSum is sum(v) OVER (PARTITION BY g ORDER BY k)
// over a million rows in 1000 partitions, input in random order.
func BenchmarkWindowRunningSum(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewSource(1))
	rows := make([]expr.Row, n)
	for i := range rows {
		rows[i] = expr.Row{types.NewInt64(int64(i)), types.NewInt64(int64(rng.Intn(1000))),
			types.NewInt64(int64(rng.Intn(n))), types.NewInt64(int64(rng.Intn(1000)))}
	}
	spec, _ := expr.NewAggSpec("sum", false, false, col(3))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := &planner.Window{Input: &planner.Values{Cols: windowCols}, PartitionBy: []expr.Expr{col(1)},
			OrderBy: []planner.WindowOrder{{Expr: col(2)}},
			Funcs:   []*planner.WindowFunc{{Name: "sum", Agg: spec, Args: []expr.Expr{col(3)}, Typ: spec.Typ, Frame: planner.DefaultFrame}},
			Cols:    append(append([]planner.Column(nil), windowCols...), planner.Column{Name: "sum", Type: spec.Typ})}
		c := &Context{Ctx: context.Background(), Eval: &expr.Context{}}
		c.bind()
		it, err := newWindowOver(c, w, &sliceIter{rows: rows})
		if err != nil {
			b.Fatal(err)
		}
		count := 0
		for {
			r, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			if r == nil {
				break
			}
			count++
		}
		if count != n {
			b.Fatalf("%d rows", count)
		}
	}
}
