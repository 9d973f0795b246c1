package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// GROUPING SETS, ROLLUP and CUBE (spelled as calls by the dialect front,
// see parser.GroupingSetsFunc), and MySQL's GROUP BY ... WITH ROLLUP.
//
// The GROUP BY list is expanded as PostgreSQL does: each item gives a
// list of sets — a plain expression one set of itself, ROLLUP (a, b) the
// sets (a, b), (a), (), CUBE (a, b) every subset, GROUPING SETS the sets
// of its elements — and the list's sets are the cross product of its
// items'. The Aggregate node groups by every distinct expression, with
// Sets saying which of them each grouping set uses; a row's columns
// outside its set are NULL. grouping(a, ...) is the bit mask of its
// arguments not in the row's set (an aggregate the executor answers per
// set, expr.AggSpec.GroupingMasks).

// groupingSets expands a GROUP BY that uses grouping sets; ok is false for
// a plain GROUP BY.
func groupingSets(gb *ast.GroupByClause) (sets [][]ast.ExprNode, ok bool) {
	special := gb.Rollup
	for _, item := range gb.Items {
		if call, isCall := item.Expr.(*ast.FuncCallExpr); isCall {
			switch call.FnName.L {
			case parser.GroupingSetsFunc, parser.RollupFunc, parser.CubeFunc:
				special = true
			}
		}
	}
	if !special {
		return nil, false
	}
	if gb.Rollup {
		var exprs []ast.ExprNode
		for _, item := range gb.Items {
			exprs = append(exprs, item.Expr)
		}
		return rollup(exprs), true
	}
	sets = [][]ast.ExprNode{{}}
	for _, item := range gb.Items {
		sets = crossSets(sets, itemSets(item.Expr))
	}
	return sets, true
}

// itemSets expands one GROUP BY item (or one element of GROUPING SETS).
func itemSets(n ast.ExprNode) [][]ast.ExprNode {
	call, ok := n.(*ast.FuncCallExpr)
	if !ok {
		return [][]ast.ExprNode{columnsOf(n)}
	}
	switch call.FnName.L {
	case parser.RollupFunc:
		return rollup(call.Args)
	case parser.CubeFunc:
		return cube(call.Args)
	case parser.GroupingSetFunc:
		var set []ast.ExprNode
		for _, a := range call.Args {
			set = append(set, columnsOf(a)...)
		}
		return [][]ast.ExprNode{set}
	case parser.GroupingSetsFunc:
		var out [][]ast.ExprNode
		for _, a := range call.Args {
			out = append(out, itemSets(a)...)
		}
		return out
	}
	return [][]ast.ExprNode{{n}}
}

// columnsOf splits a parenthesised list (a, b), an element of ROLLUP or
// CUBE that groups several expressions.
func columnsOf(n ast.ExprNode) []ast.ExprNode {
	if r, ok := n.(*ast.RowExpr); ok {
		return r.Values
	}
	return []ast.ExprNode{n}
}

// rollup (a, b, c) is the sets (a, b, c), (a, b), (a), ().
func rollup(elems []ast.ExprNode) [][]ast.ExprNode {
	var out [][]ast.ExprNode
	for k := len(elems); k >= 0; k-- {
		var set []ast.ExprNode
		for _, e := range elems[:k] {
			set = append(set, columnsOf(e)...)
		}
		out = append(out, set)
	}
	return out
}

// cube (a, b) is every subset, larger ones first: (a, b), (a), (b), ().
func cube(elems []ast.ExprNode) [][]ast.ExprNode {
	n := len(elems)
	var out [][]ast.ExprNode
	for size := n; size >= 0; size-- {
		for mask := (1 << n) - 1; mask >= 0; mask-- {
			if popcount(mask) != size {
				continue
			}
			var set []ast.ExprNode
			for i := 0; i < n; i++ {
				if mask&(1<<(n-1-i)) != 0 {
					set = append(set, columnsOf(elems[i])...)
				}
			}
			out = append(out, set)
		}
	}
	return out
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// maxGroupingSets bounds the expansion (CUBE of many columns).
const maxGroupingSets = 4096

func crossSets(a, b [][]ast.ExprNode) [][]ast.ExprNode {
	var out [][]ast.ExprNode
	for _, x := range a {
		for _, y := range b {
			out = append(out, append(append([]ast.ExprNode(nil), x...), y...))
		}
	}
	return out
}

// bindSets binds every expression of the sets as a group column.
func (g *aggregation) bindSets(sets [][]ast.ExprNode, sel *ast.SelectStmt) error {
	if len(sets) > maxGroupingSets {
		return sqlerr.New(sqlerr.StatementTooComplex, "too many grouping sets present")
	}
	g.sets = make([][]int, 0, len(sets))
	for _, set := range sets {
		idx := []int{}
		for _, n := range set {
			i, err := g.addGroup(n, sel)
			if err != nil {
				return err
			}
			dup := false
			for _, j := range idx {
				dup = dup || j == i
			}
			if !dup {
				idx = append(idx, i)
			}
		}
		g.sets = append(g.sets, idx)
	}
	return nil
}

// grouping binds grouping(a, ...): for each grouping set, the bit mask of
// the arguments (first = highest bit) that are not in the set.
func (g *aggregation) grouping(n *ast.FuncCallExpr, key string) (expr.Expr, bool, error) {
	for i, ak := range g.aggKeys {
		if ak == key {
			return &expr.ColumnRef{Index: len(g.groups) + i, Name: "grouping", Typ: g.aggs[i].Typ}, true, nil
		}
	}
	if len(n.Args) == 0 || len(n.Args) > 31 {
		return nil, false, sqlerr.New(sqlerr.UndefinedFunction, "function grouping with %d arguments does not exist", len(n.Args))
	}
	var pos []int
	for _, arg := range n.Args {
		k := g.key(arg)
		found := -1
		for i, gk := range g.groupKey {
			if gk == k {
				found = i
			}
		}
		if found < 0 {
			return nil, false, sqlerr.New(sqlerr.GroupingError, "arguments to GROUPING must be grouping expressions of the associated query level")
		}
		pos = append(pos, found)
	}
	sets := g.sets
	if sets == nil {
		all := make([]int, len(g.groups))
		for i := range all {
			all[i] = i
		}
		sets = [][]int{all}
	}
	spec := &expr.AggSpec{Name: "grouping", Star: true, Typ: types.TypeInt32}
	for _, set := range sets {
		var mask int64
		for k, p := range pos {
			in := false
			for _, s := range set {
				in = in || s == p
			}
			if !in {
				mask |= 1 << (len(pos) - 1 - k)
			}
		}
		spec.GroupingMasks = append(spec.GroupingMasks, mask)
	}
	g.aggs = append(g.aggs, spec)
	g.aggKeys = append(g.aggKeys, key)
	if g.agg != nil {
		g.agg.Aggs = g.aggs
		g.agg.Cols = append(g.agg.Cols, planner.Column{Name: "grouping", Type: spec.Typ})
	}
	return &expr.ColumnRef{Index: len(g.groups) + len(g.aggs) - 1, Name: "grouping", Typ: spec.Typ}, true, nil
}
