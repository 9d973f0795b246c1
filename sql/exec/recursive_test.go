package exec

import (
	"context"
	"errors"
	"testing"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

var nCols = []planner.Column{{Name: "n", Type: types.TypeInt64}}

// counter is WITH RECURSIVE t(n) AS (SELECT 1 UNION [ALL] SELECT step(n)
// FROM t WHERE n < stop).
func counter(all bool, step func(n expr.Expr) expr.Expr, stop int64) *planner.RecursiveCTE {
	rc := &planner.RecursiveCTE{Name: "t", All: all, Cols: nCols,
		Base: &planner.Values{Rows: [][]expr.Expr{{constInt(1)}}, Cols: nCols}}
	n := &expr.ColumnRef{Index: 0, Name: "n", Typ: types.TypeInt64}
	var in planner.Node = &planner.WorkTable{CTE: rc, Cols: nCols}
	if stop > 0 {
		in = &planner.Filter{Input: in, Cond: &expr.Compare{Op: expr.LT, L: n, R: constInt(stop)}}
	}
	rc.Recursive = &planner.Project{Input: in, Exprs: []expr.Expr{step(n)}, Cols: nCols}
	return rc
}

func plusOne(n expr.Expr) expr.Expr {
	e, _ := expr.NewArith(expr.Add, n, constInt(1))
	return e
}

func TestRecursiveCounts(t *testing.T) {
	c := &Context{Ctx: context.Background(), Eval: &expr.Context{}}
	it, err := Build(c, counter(true, plusOne, 1000))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Drain(c, it)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1000 || rows[999][0].Int() != 1000 {
		t.Fatalf("got %d rows, last %v", len(rows), rows[len(rows)-1])
	}
}

// TestRecursiveUnionEndsCycle: (n + 1) % 5 cycles; UNION stops after the
// five distinct values.
func TestRecursiveUnionEndsCycle(t *testing.T) {
	mod := func(n expr.Expr) expr.Expr {
		e, _ := expr.NewArith(expr.Mod, plusOne(n), constInt(5))
		return e
	}
	c := &Context{Ctx: context.Background(), Eval: &expr.Context{}}
	it, err := Build(c, counter(false, mod, 0))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Drain(c, it)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("got %d rows, want 5", len(rows))
	}
}

// TestRecursiveMemLimit: UNION ALL over a cycle never ends by itself;
// the iterator streams, so a consumer that keeps the rows runs into the
// limit (53200), and one that does not may stop when it likes.
func TestRecursiveMemLimit(t *testing.T) {
	c := &Context{Ctx: context.Background(), Eval: &expr.Context{}, MemLimit: 100_000}
	it, err := Build(c, counter(true, plusOne, 0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Drain(c, it)
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != sqlerr.OutOfMemory {
		t.Fatalf("got %v, want 53200", err)
	}
	// Streaming: 100k rounds of one row each stay within a small limit
	// (a finished round's rows are released).
	c = &Context{Ctx: context.Background(), Eval: &expr.Context{}, MemLimit: 10_000}
	it, err = Build(c, counter(true, plusOne, 100_000))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for {
		r, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			break
		}
		n++
	}
	if n != 100_000 {
		t.Fatalf("%d rows", n)
	}
}

// BenchmarkRecursiveCTE is WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL
// SELECT n + 1 FROM t WHERE n < 100000) SELECT count(*) FROM t.
func BenchmarkRecursiveCTE(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c := &Context{Ctx: context.Background(), Eval: &expr.Context{}}
		spec, _ := expr.NewAggSpec("count", false, true, nil)
		agg := &planner.Aggregate{Input: counter(true, plusOne, 100_000), Aggs: []*expr.AggSpec{spec},
			Cols: []planner.Column{{Name: "count", Type: types.TypeInt64}}}
		it, err := Build(c, agg)
		if err != nil {
			b.Fatal(err)
		}
		r, err := it.Next()
		if err != nil || r[0].Int() != 100_000 {
			b.Fatalf("%v %v", r, err)
		}
		it.Close()
	}
}
