package planner

import (
	"math/rand"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// trieContains reports whether the key tuple is in the set t.
func trieContains(t *trie, key []types.Value) bool {
	for t != nil {
		if len(t.segs) == 0 {
			return false
		}
		v := key[t.col]
		var next *trie
		found := false
		for i := range t.segs {
			if t.segs[i].contains(v) {
				next, found = t.segs[i].child, true
				break
			}
		}
		if !found {
			return false
		}
		t = next
	}
	return true
}

// checkTrie verifies the trie's structural invariants: segments non-empty,
// sorted and disjoint, children deeper, no empty child.
func checkTrie(t *testing.T, tr *trie) {
	t.Helper()
	if tr == nil {
		return
	}
	for i := range tr.segs {
		s := &tr.segs[i]
		if compareCuts(s.lo, s.hi) >= 0 {
			t.Fatalf("empty segment %v", s)
		}
		if i > 0 && compareCuts(tr.segs[i-1].hi, s.lo) > 0 {
			t.Fatalf("segments %d and %d overlap", i-1, i)
		}
		if s.child != nil {
			if s.child.col <= tr.col || isEmpty(s.child) {
				t.Fatalf("bad child at col %d: col %d, %d segments", tr.col, s.child.col, len(s.child.segs))
			}
			checkTrie(t, s.child)
		}
	}
}

// TestTrieOps checks union and intersection against set semantics on every
// key of a small two-column domain (NULL included), with atoms of every
// comparison and long IN lists (the binary-search path of intersect).
func TestTrieOps(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	domain := [][]types.Value{{types.NullValue}, {types.NullValue}}
	for i := int64(0); i < 60; i++ {
		domain[0] = append(domain[0], types.NewInt64(i))
	}
	for i := int64(0); i < 5; i++ {
		domain[1] = append(domain[1], types.NewInt64(i))
	}
	var keys [][]types.Value
	for _, a := range domain[0] {
		for _, b := range domain[1] {
			keys = append(keys, []types.Value{a, b})
		}
	}
	type pred func(key []types.Value) bool
	ops := []expr.CmpOp{expr.EQ, expr.NE, expr.LT, expr.LE, expr.GT, expr.GE, expr.NullSafeEQ}
	var gen func(depth int) (*trie, pred)
	gen = func(depth int) (*trie, pred) {
		if depth == 0 || rng.Intn(3) == 0 {
			col := rng.Intn(2)
			if rng.Intn(3) == 0 {
				// A long IN list on column 0.
				var points []types.Value
				in := map[int64]bool{}
				for i := 0; i < 10+rng.Intn(40); i++ {
					x := rng.Int63n(60)
					points, in[x] = append(points, types.NewInt64(x)), true
				}
				points = sortedUnique(points)
				segs := make([]seg, len(points))
				for i, v := range points {
					segs[i] = pointSeg(v, nil)
				}
				return newTrie(0, segs), func(k []types.Value) bool { return !k[0].IsNull() && in[k[0].Int()] }
			}
			op, neg := ops[rng.Intn(len(ops))], rng.Intn(2) == 0
			v := domain[col][rng.Intn(len(domain[col]))]
			segs, ok := compareSegs(types.TypeInt64, op, neg, v)
			if !ok {
				t.Fatalf("seed %d: compareSegs failed", seed)
			}
			return newTrie(col, segs), func(k []types.Value) bool {
				x := k[col]
				if op == expr.NullSafeEQ {
					return (types.Compare(x, v) == 0) != neg
				}
				if x.IsNull() || v.IsNull() {
					return false
				}
				c := types.Compare(x, v)
				switch op {
				case expr.EQ:
					return c == 0
				case expr.NE:
					return c != 0
				case expr.LT:
					return c < 0
				case expr.LE:
					return c <= 0
				case expr.GT:
					return c > 0
				}
				return c >= 0
			}
		}
		a, pa := gen(depth - 1)
		b, pb := gen(depth - 1)
		if rng.Intn(2) == 0 {
			return union(a, b), func(k []types.Value) bool { return pa(k) || pb(k) }
		}
		return intersect(a, b), func(k []types.Value) bool { return pa(k) && pb(k) }
	}
	for iter := 0; iter < 3000; iter++ {
		tr, p := gen(4)
		checkTrie(t, tr)
		for _, k := range keys {
			if got, want := trieContains(tr, k), p(k); got != want {
				t.Fatalf("seed %d, iteration %d: key %v: trie says %v, predicate %v", seed, iter, k, got, want)
			}
		}
	}
}

func TestCoarsenRanges(t *testing.T) {
	b := func(max bool, vs ...int64) Bound {
		out := Bound{Max: max}
		for _, v := range vs {
			out.Values = append(out.Values, types.NewInt64(v))
		}
		return out
	}
	rs := Ranges{
		{b(false, 1, 1), b(true, 1, 1)},
		{b(false, 1, 3), b(true, 1, 3)},
		{b(false, 2, 1), b(true, 2, 1)},
		{b(false, 3, 1), b(true, 3, 1)},
		{b(false, 4, 1), b(true, 4, 1)},
	}
	for _, c := range []struct {
		limit int
		want  string
	}{
		{5, rs.String()},
		{4, "[(1) .. (1, <Max>))\n[(2) .. (2, <Max>))\n[(3) .. (3, <Max>))\n[(4) .. (4, <Max>))"},
		// Past the shortest prefix, neighbours join into hulls.
		{3, "[(1, 1) .. (1, 3, <Max>))\n[(2, 1) .. (3, 1, <Max>))\n[(4, 1) .. (4, 1, <Max>))"},
		{1, "[(1, 1) .. (4, 1, <Max>))"},
	} {
		got := coarsenRanges(rs, c.limit)
		if err := got.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		if got.String() != c.want {
			t.Errorf("limit %d:\n%s\nwant\n%s", c.limit, got, c.want)
		}
	}
}

func TestCompareBounds(t *testing.T) {
	i := types.NewInt64
	for _, c := range []struct {
		a, b Bound
		want int
	}{
		{Bound{}, Bound{Max: true}, -1},
		{Bound{Values: []types.Value{i(20)}}, Bound{Values: []types.Value{i(20), i(3)}}, -1},
		{Bound{Values: []types.Value{i(20)}, Max: true}, Bound{Values: []types.Value{i(20), i(3)}, Max: true}, 1},
		{Bound{Values: []types.Value{i(20)}}, Bound{Values: []types.Value{i(20), types.NullValue}}, 0},
		{Bound{Values: []types.Value{types.NullValue}, Max: true}, Bound{Values: []types.Value{i(-5)}}, -1},
		{Bound{Values: []types.Value{i(3)}, Max: true}, Bound{Values: []types.Value{i(4)}}, -1},
	} {
		if got := CompareBounds(c.a, c.b); got != c.want {
			t.Errorf("CompareBounds(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareBounds(c.b, c.a); got != -c.want {
			t.Errorf("CompareBounds(%s, %s) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}
