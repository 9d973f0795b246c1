package planner

import (
	"cmp"
	"slices"
	"sort"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Evaluate computes the key ranges for one execution: params are the
// values of $1..$n (nil when the statement has none); limit is
// range_expansion_limit (values below 1 count as 1: a single range).
//
// Evaluate never fails: an atom whose expression fails to evaluate (a
// parameter missing, an overflow in $1 + 1) just does not narrow the
// ranges, and the filter, which evaluates the same expression on the rows
// read, reports the error if there are any.
func (p *RangeProgram) Evaluate(params []types.Value, limit int) RangeResult {
	// A point lookup gives one range, an IN list of points one per
	// element (rangepoint.go).
	if p.point != nil {
		if res, ok := p.point.evaluate(p, params, limit); ok {
			return res
		}
	}
	return p.evaluateGeneral(params, limit)
}

// evaluateGeneral is Evaluate without the point fast path: tries, computed
// columns, flattening within the limit.
func (p *RangeProgram) evaluateGeneral(params []types.Value, limit int) RangeResult {
	limit = max(limit, 1)
	b := &trieBuilder{p: p, ctx: &expr.Context{Params: params}}
	tc, exact := b.build(p.captured)
	var ta *trie
	if p.approx != nil && !isEmpty(tc) {
		ta, _ = b.build(p.approx)
	}
	res := RangeResult{Filter: p.residual}
	if isEmpty(tc) || isEmpty(ta) {
		// A contradiction: no key satisfies the condition.
		res.Exact = true
		return res
	}
	x := &expansion{p: p, ctx: b.ctx, limit: limit}
	if ta == nil || !exact {
		rs, ok := x.ranges(intersect(tc, ta))
		res.Ranges, res.Exact = rs, exact && ok
	} else {
		// The approximate part narrows the read but must not cost the
		// captured part its exactness: flattening the combined trie may
		// drop a constraint of either, so the result is also cut to the
		// captured part's own ranges, which are exact or known not to be.
		rc, ok := x.ranges(tc)
		r1, _ := x.ranges(intersect(tc, ta))
		res.Ranges, res.Exact = intersectRanges(rc, r1), exact && ok
		if len(res.Ranges) > limit {
			res.Ranges, res.Exact = coarsenRanges(res.Ranges, limit), false
			x.widened = true
		}
	}
	res.Widened = x.widened
	if !res.Exact {
		res.Filter = p.cond
	}
	return res
}

// trieBuilder evaluates a normalized condition into a trie.
type trieBuilder struct {
	p   *RangeProgram
	ctx *expr.Context
}

// build returns a trie holding every key where n is TRUE, and whether it
// holds exactly those keys.
func (b *trieBuilder) build(n *pnode) (*trie, bool) {
	switch n.kind {
	case pTrue:
		return nil, true
	case pFalse:
		return emptyTrie, true
	case pUnknown:
		return nil, false
	case pAnd:
		ts := make([]*trie, 0, len(n.kids))
		exact := true
		for _, k := range n.kids {
			kt, kexact := b.build(k)
			if isEmpty(kt) && kexact {
				// One exactly empty conjunct empties the AND.
				return emptyTrie, true
			}
			ts = append(ts, kt)
			exact = exact && kexact
		}
		return intersectAll(ts), exact
	case pOr:
		ts := make([]*trie, 0, len(n.kids))
		exact := true
		for _, k := range n.kids {
			kt, kexact := b.build(k)
			if kt == nil {
				// Everything matches this kid; exactly so if it is exact,
				// whatever the others are.
				return nil, kexact
			}
			exact = exact && kexact
			ts = append(ts, kt)
		}
		return unionAll(ts), exact
	case pCmp:
		v, err := n.arg.Eval(b.ctx, nil)
		if err != nil {
			return nil, false
		}
		segs, ok := compareSegs(b.p.keyTypes[n.pos], n.op, n.neg, v)
		if !ok {
			return nil, false
		}
		return newTrie(n.pos, segs), true
	case pIsNull:
		if n.neg {
			return newTrie(n.pos, []seg{{lo: afterNull, hi: posInf}}), true
		}
		return newTrie(n.pos, []seg{pointSeg(types.NullValue, nil)}), true
	case pIn:
		return b.buildIn(n)
	case pRowIn:
		return b.buildRowIn(n)
	}
	return nil, false
}

// buildIn builds key[pos] [NOT] IN (list): the points of the elements the
// column can hold, or for NOT IN the gaps between them.
func (b *trieBuilder) buildIn(n *pnode) (*trie, bool) {
	t := b.p.keyTypes[n.pos]
	points := make([]types.Value, 0, len(n.list))
	for _, e := range n.list {
		v, err := e.Eval(b.ctx, nil)
		if err != nil {
			return nil, false
		}
		if v.IsNull() {
			if n.neg {
				// x NOT IN (..., NULL) is never TRUE.
				return emptyTrie, true
			}
			continue
		}
		switch l := locate(t, v); l.kind {
		case locExact:
			points = append(points, l.v)
		case locFail:
			return nil, false
		}
		// Gaps: no value of the column equals the element.
	}
	points = sortedUnique(points)
	if !n.neg {
		segs := make([]seg, len(points))
		for i, v := range points {
			segs[i] = pointSeg(v, nil)
		}
		return newTrie(n.pos, segs), true
	}
	segs := make([]seg, 0, len(points)+1)
	lo := afterNull
	for _, v := range points {
		segs = appendSeg(segs, seg{lo: lo, hi: before(v)})
		lo = after(v)
	}
	segs = appendSeg(segs, seg{lo: lo, hi: posInf})
	return newTrie(n.pos, segs), true
}

// sortedUnique sorts vs and drops duplicates, reusing vs.
func sortedUnique(vs []types.Value) []types.Value {
	if len(vs) < 2 {
		return vs
	}
	f := vs[0].Family()
	for _, v := range vs {
		if v.Family() != f {
			f = types.Null
			break
		}
	}
	// One integer or string family (the common IN list): sort the raw
	// numbers or strings, several times faster than sorting Values.
	switch {
	case f.IsUnsigned():
		return rebuild(vs, sortUnique(vs, types.Value.Uint), func(u uint64) types.Value { return types.NewUint(f, u) })
	case f.IsInteger():
		return rebuild(vs, sortUnique(vs, types.Value.Int), func(i int64) types.Value { return types.NewInt(f, i) })
	case f == types.Utf8:
		return rebuild(vs, sortUnique(vs, types.Value.Str), types.NewUtf8)
	case f == types.String:
		return rebuild(vs, sortUnique(vs, types.Value.Str), types.NewString)
	}
	slices.SortFunc(vs, types.Compare)
	return slices.CompactFunc(vs, func(a, b types.Value) bool { return types.Compare(a, b) == 0 })
}

func sortUnique[T cmp.Ordered](vs []types.Value, key func(types.Value) T) []T {
	ks := make([]T, len(vs))
	for i, v := range vs {
		ks[i] = key(v)
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

func rebuild[T any](vs []types.Value, ks []T, mk func(T) types.Value) []types.Value {
	vs = vs[:len(ks)]
	for i, k := range ks {
		vs[i] = mk(k)
	}
	return vs
}

// buildRowIn builds (key...) IN (rows) as the union of one chain of points
// per row. Elements that are not key columns do not constrain.
func (b *trieBuilder) buildRowIn(n *pnode) (*trie, bool) {
	exact := true
	for _, p := range n.rowPos {
		if p < 0 {
			exact = false
		}
	}
	type fix struct {
		pos int
		v   types.Value
	}
	chains := make([]*trie, 0, len(n.rows))
	fixes := make([]fix, 0, len(n.rowPos))
rows:
	for _, row := range n.rows {
		fixes = fixes[:0]
		for i, e := range row {
			pos := n.rowPos[i]
			v, err := e.Eval(b.ctx, nil)
			if err != nil {
				return nil, false
			}
			if v.IsNull() {
				continue rows // a NULL element never equals
			}
			if pos < 0 {
				continue
			}
			l := locate(b.p.keyTypes[pos], v)
			switch l.kind {
			case locFail:
				exact = false
				continue
			case locGap, locBetween:
				continue rows
			}
			fixes = append(fixes, fix{pos, l.v})
		}
		sort.SliceStable(fixes, func(i, j int) bool { return fixes[i].pos < fixes[j].pos })
		var chain *trie
		for i := len(fixes) - 1; i >= 0; i-- {
			f := fixes[i]
			if i > 0 && fixes[i-1].pos == f.pos {
				if types.Compare(fixes[i-1].v, f.v) != 0 {
					continue rows // (k, k) IN ((1, 2)): impossible
				}
				continue
			}
			chain = &trie{col: f.pos, segs: []seg{pointSeg(f.v, chain)}}
		}
		if chain == nil {
			return nil, false
		}
		chains = append(chains, chain)
	}
	return unionAll(chains), exact
}
