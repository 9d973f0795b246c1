package planner

import (
	"cmp"
	"slices"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The point fast path.
//
// Most reads by key are point reads: `key = $1`, `k = 1 AND l = 'x'`, or on
// a hash-sharded table keyed by (hash AS farm_hash(key), key) the same
// `key = $1`, whose hash column is computed from the key. For these the
// general machinery (tries, the walk with its depth loop, the item
// collector, quotient pieces) always ends in the same place: one range
// [(v1, ..., vn) .. (v1, ..., vn, <Max>)) over the key prefix up to the last
// fixed column, or nothing. CompileRanges recognises the shape once
// (compilePoint) and Evaluate builds that range directly, in one
// allocation, instead of paying for the general path on every execution.
//
// The shape, checked at compile time:
//
//   - no approximate part, and the captured part is one comparison or an
//     AND of comparisons `key[pos] = arg` or `key[pos] <=> arg` (not IS
//     DISTINCT FROM), each on a different, non-computed key position;
//   - every key position before the last fixed one is fixed by such a
//     comparison or is a computed key column all of whose dependencies are
//     fixed.
//
// What the general path does with this shape, and so what the fast path
// must reproduce (TestPointFastPathMatchesGeneral checks it on random
// predicates):
//
//   - Each atom becomes a point trie (rangeatom.go). A NULL with `=`, or a
//     value no column value equals (locGap, locBetween), gives the empty
//     set; with an exact AND this is a contradiction: no ranges, Exact, the
//     residual filter. `<=> NULL` is the point NULL.
//   - The walk (rangeexpand.go) fixes the columns in key order; a computed
//     column whose dependencies are fixed is enumerated as one quotient
//     piece: f evaluated on the dependencies and cast to the column's type
//     (computedKey.eval, as the write path computes it). A value that does
//     not cast belongs to no row: nothing is emitted, which gives an empty
//     (non-nil) range list that is still Exact.
//   - The last fixed column emits [(prefix, v) .. (prefix, v, <Max>)), both
//     bounds sharing one array; computed columns after it are not added.
//
// IN lists. One atom may be `key[pos] IN (list)` (not NOT IN) on a
// non-computed position, the other atoms as above: the shape of an
// IN-list read by primary key, also over a hash-sharded key. The general
// path makes the list's elements that the column can hold into points
// (buildIn: NULLs and gaps dropped, sorted, duplicates dropped), walks
// each through the computed columns, and normalizes the ranges; the fast
// path does the same per element without the tries and the walk. No
// element left is a contradiction; more points than the expansion limit
// go to the general path, which widens, and so does a computed column
// before the last fixed one that does not depend on the IN column.
//
// Whenever the general path would do anything else the fast path hands
// over to it: an argument or a computed expression that fails to evaluate,
// a value that cannot be placed among the column's values (locFail). Those
// are rare, so re-evaluating from scratch costs nothing in practice and
// keeps the fast path free of the general path's widening rules.

// pointProgram is the compiled fast path of a RangeProgram (nil when the
// program's shape does not allow it).
type pointProgram struct {
	// atoms are the comparisons, in the order the general path builds them.
	atoms []pointAtom
	// in is the one `key[pos] IN (list)` of the condition, if any: each
	// element is a point of its own (see "IN lists" above).
	in *pnode
	// width is the number of key values in the range's bounds: the last
	// fixed key position + 1.
	width int
	// computed are the computed key columns before width, in key order;
	// every one of their dependencies is fixed by an atom.
	computed []pointComputed
	// rowLen is the length of the scratch row computed expressions are
	// evaluated on: one past the largest catalog index they read (0 when
	// every computed column is a direct farm_hash).
	rowLen int
}

// pointComputed is a computed key column of the fast path.
type pointComputed struct {
	ck *computedKey
	// hashArgs, when not nil, says that the expression is
	// farm_hash(c1, ..., cn) over key columns, at these key positions:
	// the fast path then calls expr.FarmHash on the key values itself,
	// which is what the Func computes, without its allocations (the row,
	// the context, the argument buffer that escapes through the
	// function's implementation). The hash-sharded key of issue 4 is
	// exactly this.
	hashArgs []int
}

// pointAtom is one `key[pos] = arg` (nullSafe: `<=>`).
type pointAtom struct {
	pos      int
	arg      expr.Expr
	nullSafe bool
}

// pointInline is the number of key values (and, separately, of scratch
// row values) that fit in the single allocation of a fast-path
// evaluation; wider keys take more allocations.
const pointInline = 2

// pointScratch is what one fast-path evaluation allocates, in one piece:
// the result's range and its bound values (the range keeps the struct
// alive). Allocation dominates the fast path, so it is kept small.
type pointScratch struct {
	ranges [1]KeyRange
	vals   [pointInline]types.Value
}

// pointScratchComputed adds what evaluating computed columns needs: their
// row, and the context, which escapes through the expression's Eval.
type pointScratchComputed struct {
	pointScratch
	row [pointInline]types.Value
	ctx expr.Context
}

// compilePoint returns the fast path of p, or nil when p's shape is not a
// point (prefix) lookup.
func compilePoint(p *RangeProgram) *pointProgram {
	if p.approx != nil || p.captured == nil {
		return nil
	}
	var atoms []*pnode
	switch p.captured.kind {
	case pCmp, pIn:
		atoms = []*pnode{p.captured}
	case pAnd:
		atoms = p.captured.kids
	default:
		return nil
	}
	nkeys := len(p.keyTypes)
	fixed := make([]bool, nkeys)
	pp := &pointProgram{}
	for _, n := range atoms {
		if n.kind == pIn && !n.neg && pp.in == nil && !fixed[n.pos] && p.computed[n.pos] == nil {
			fixed[n.pos] = true
			pp.in = n
			pp.width = max(pp.width, n.pos+1)
			continue
		}
		if n.kind != pCmp || n.neg || (n.op != expr.EQ && n.op != expr.NullSafeEQ) {
			return nil
		}
		// Two atoms on one column would be intersected by the general
		// path (and values equal but spelled differently, as decimals
		// 1.0 and 1.00, pick one of them by position); a computed
		// column's own predicate is checked against its evaluated value.
		// Both are rare: leave them to the general path.
		if fixed[n.pos] || p.computed[n.pos] != nil {
			return nil
		}
		fixed[n.pos] = true
		pp.atoms = append(pp.atoms, pointAtom{pos: n.pos, arg: n.arg, nullSafe: n.op == expr.NullSafeEQ})
		pp.width = max(pp.width, n.pos+1)
	}
	for pos := 0; pos < pp.width; pos++ {
		if fixed[pos] {
			continue
		}
		ck := p.computed[pos]
		if ck == nil {
			return nil // a free column before a fixed one: not a point
		}
		for _, d := range ck.before {
			if !fixed[d] {
				return nil
			}
		}
		for _, d := range ck.after {
			if !fixed[d] {
				return nil
			}
		}
		if pp.in != nil && !slices.Contains(ck.before, pp.in.pos) && !slices.Contains(ck.after, pp.in.pos) {
			// A computed column that does not depend on the IN column:
			// the general path's walk budgets its pieces differently
			// (it may widen within the limit); leave it to that path.
			return nil
		}
		pc := pointComputed{ck: ck, hashArgs: farmHashArgs(p, ck.f)}
		if pc.hashArgs == nil {
			for _, c := range ck.beforeCols {
				pp.rowLen = max(pp.rowLen, c+1)
			}
			for _, c := range ck.afterCols {
				pp.rowLen = max(pp.rowLen, c+1)
			}
		}
		pp.computed = append(pp.computed, pc)
	}
	return pp
}

// farmHashArgs returns the key positions of the arguments of f when f is
// farm_hash over key columns only (nil otherwise). Matching Func nodes by
// name is what sql/expr documents for farm_hash.
func farmHashArgs(p *RangeProgram, f expr.Expr) []int {
	fn, ok := f.(*expr.Func)
	if !ok || fn.Name != "farm_hash" || len(fn.Args) == 0 {
		return nil
	}
	out := make([]int, len(fn.Args))
	for i, a := range fn.Args {
		ref, ok := a.(*expr.ColumnRef)
		if !ok {
			return nil
		}
		pos := slices.Index(p.table.PrimaryKey, ref.Index)
		if pos < 0 {
			return nil
		}
		out[i] = pos
	}
	return out
}

// evaluate computes the ranges as the general path would; ok is false when
// the general path must run instead (see above).
func (pp *pointProgram) evaluate(p *RangeProgram, params []types.Value, limit int) (RangeResult, bool) {
	var (
		s    *pointScratch
		row  []types.Value
		hctx *expr.Context // on the heap: computed expressions and evalArg may keep it
	)
	if pp.rowLen == 0 {
		s = new(pointScratch)
	} else {
		sc := &pointScratchComputed{ctx: expr.Context{Params: params}}
		s, row, hctx = &sc.pointScratch, sc.row[:], &sc.ctx
		if pp.rowLen > len(row) {
			row = make([]types.Value, pp.rowLen)
		}
		row = row[:pp.rowLen]
	}
	// vals is capped so that nothing appended to a bound reaches past it.
	vals := s.vals[:]
	if pp.width > len(vals) {
		vals = make([]types.Value, pp.width)
	}
	vals = vals[:pp.width:pp.width]
	// Parameters are read through a context on the stack (Param.Eval does
	// not keep it); other arguments get a heap one.
	ctx := expr.Context{Params: params}
	for i := range pp.atoms {
		a := &pp.atoms[i]
		v, err := evalArg(&ctx, hctx, a.arg)
		if err != nil {
			return RangeResult{}, false
		}
		if v.IsNull() {
			if !a.nullSafe {
				// key = NULL is never TRUE: a contradiction.
				return RangeResult{Filter: p.residual, Exact: true}, true
			}
			vals[a.pos] = types.NullValue
			continue
		}
		switch l := locate(p.keyTypes[a.pos], v); l.kind {
		case locExact:
			vals[a.pos] = l.v
		case locFail:
			return RangeResult{}, false
		default:
			// No value of the column equals v: a contradiction.
			return RangeResult{Filter: p.residual, Exact: true}, true
		}
	}
	if pp.in != nil {
		return pp.evaluateIn(p, &ctx, hctx, row, vals, limit)
	}
	ok, skip := pp.computeKey(hctx, row, vals)
	if !ok {
		return RangeResult{}, false
	}
	if skip {
		// f's value does not cast to the column's type, so no row has
		// these dependencies: nothing to read, exactly.
		return RangeResult{Ranges: Ranges{}, Filter: p.residual, Exact: true}, true
	}
	s.ranges[0] = KeyRange{Lower: Bound{Values: vals}, Upper: Bound{Values: vals, Max: true}}
	return RangeResult{Ranges: s.ranges[:], Filter: p.residual, Exact: true}, true
}

// computeKey fills the computed key columns of vals from its fixed
// columns. ok is false when an expression fails (the general path must
// run); skip is true when a value does not cast to its column's type.
func (pp *pointProgram) computeKey(hctx *expr.Context, row, vals []types.Value) (ok, skip bool) {
	for i := range pp.computed {
		pc := &pp.computed[i]
		ck := pc.ck
		var v types.Value
		ok, skip := true, false
		if pc.hashArgs != nil {
			v, skip = ck.farmHash(pc.hashArgs, vals)
		} else {
			v, ok, skip = ck.evalFixed(hctx, row, vals)
		}
		if !ok || skip {
			return ok, skip
		}
		vals[ck.pos] = v
	}
	return true, false
}

// evaluateIn is evaluate's IN list: vals holds the values of the other
// atoms; each element of the list gives a point of its own, as the
// general path's buildIn and walk give them (see "IN lists" above).
func (pp *pointProgram) evaluateIn(p *RangeProgram, ctx, hctx *expr.Context, row, fixed []types.Value, limit int) (RangeResult, bool) {
	n := pp.in
	t := p.keyTypes[n.pos]
	points := make([]types.Value, 0, len(n.list))
	for _, e := range n.list {
		v, err := evalArg(ctx, hctx, e)
		if err != nil {
			return RangeResult{}, false
		}
		if v.IsNull() {
			continue // never equal: no point
		}
		switch l := locate(t, v); l.kind {
		case locExact:
			points = append(points, l.v)
		case locFail:
			return RangeResult{}, false
		}
		// Gaps: no value of the column equals the element.
	}
	if len(points) == 0 {
		// No element can equal a key value: a contradiction.
		return RangeResult{Filter: p.residual, Exact: true}, true
	}
	points = sortedUnique(points)
	if len(points) > max(limit, 1) {
		return RangeResult{}, false // the general path widens
	}
	w := pp.width
	all := make([]types.Value, w*len(points))
	rs := make([]KeyRange, 0, len(points))
	for i, v := range points {
		vals := all[i*w : (i+1)*w : (i+1)*w]
		copy(vals, fixed)
		vals[n.pos] = v
		ok, skip := pp.computeKey(hctx, row, vals)
		if !ok {
			return RangeResult{}, false
		}
		if skip {
			continue // no row has this key
		}
		rs = append(rs, KeyRange{Lower: Bound{Values: vals}, Upper: Bound{Values: vals, Max: true}})
	}
	if !pp.inOrder() {
		sortPoints(rs)
	}
	// No mergeRanges: the points are distinct (sortedUnique) prefixes of
	// one width, so in key order no range is empty and none overlaps or
	// touches the next ((p1, <Max>) sorts before any longer p2 > p1).
	// It was 1.4% of the IN-list bench's server CPU.
	return RangeResult{Ranges: Ranges(rs), Filter: p.residual, Exact: true}, true
}

// inOrder reports whether evaluateIn's points, built from the IN list's
// sorted distinct values, are already in key order: no computed key
// column comes before the IN column (every position before it is the
// same fixed value in every point).
func (pp *pointProgram) inOrder() bool {
	for i := range pp.computed {
		if pp.computed[i].ck.pos < pp.in.pos {
			return false
		}
	}
	return true
}

// sortPoints sorts point ranges of one width (full keys, each range one
// key) by key. When every first key value is of one integer family, the
// hash-sharded key's farm_hash column above all, it sorts raw numbers
// with an index and compares whole bounds only on ties: several times
// cheaper than sorting the ranges with CompareBounds (5.7% of the IN-list
// bench's CPU before).
func sortPoints(rs []KeyRange) {
	if len(rs) < 2 {
		return
	}
	byLower := func(a, b KeyRange) int { return CompareBounds(a.Lower, b.Lower) }
	f := rs[0].Lower.Values[0].Family()
	if !f.IsInteger() {
		slices.SortFunc(rs, byLower)
		return
	}
	type item struct {
		k uint64
		i int
	}
	items := make([]item, len(rs))
	for i, r := range rs {
		v := r.Lower.Values[0]
		if v.Family() != f {
			slices.SortFunc(rs, byLower)
			return
		}
		k := v.Uint()
		if !f.IsUnsigned() {
			k ^= 1 << 63 // signed order as unsigned
		}
		items[i] = item{k, i}
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		return CompareBounds(rs[a.i].Lower, rs[b.i].Lower)
	})
	// rs[j] becomes rs[items[j].i], cycle by cycle, in place.
	for j := range items {
		if items[j].i < 0 {
			continue
		}
		tmp, k := rs[j], j
		for {
			next := items[k].i
			items[k].i = -1
			if next == j {
				rs[k] = tmp
				break
			}
			rs[k] = rs[next]
			k = next
		}
	}
}

// evalArg evaluates an atom's argument. Constants and parameters, by far
// the most common arguments, are evaluated by direct calls on ctx, which
// stays on the caller's stack; any other expression is evaluated with
// hctx, or a new heap context when that is nil.
func evalArg(ctx, hctx *expr.Context, e expr.Expr) (types.Value, error) {
	switch e := e.(type) {
	case *expr.Const:
		return e.Value, nil
	case *expr.Param:
		return e.Eval(ctx, nil)
	}
	if hctx == nil {
		hctx = &expr.Context{Params: ctx.Params}
	}
	return e.Eval(hctx, nil)
}

// farmHash computes the column's value for f = farm_hash(key[args]...):
// the hash, cast to the column's type like any computed value (skip when
// the cast fails, as evalFixed).
func (ck *computedKey) farmHash(args []int, key []types.Value) (v types.Value, skip bool) {
	var buf [4]types.Value
	vals := buf[:0]
	for _, p := range args {
		vals = append(vals, key[p])
	}
	c, err := types.Cast(types.NewUint64(expr.FarmHash(vals)), ck.typ)
	if err != nil {
		return v, true
	}
	return c, false
}

// evalFixed computes the column's value from the full key key (its
// dependencies filled in) exactly as eval does: f on a row holding only
// the dependencies, then cast to the column's type. ok is false when f
// fails; skip is true when the value does not cast.
func (ck *computedKey) evalFixed(ctx *expr.Context, row, key []types.Value) (v types.Value, ok, skip bool) {
	for i := range row {
		row[i] = types.NullValue
	}
	for i, p := range ck.before {
		row[ck.beforeCols[i]] = key[p]
	}
	for i, p := range ck.after {
		row[ck.afterCols[i]] = key[p]
	}
	return ck.evalRow(ctx, row)
}
