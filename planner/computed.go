package planner

import (
	"math"
	"sort"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Computed key columns (design §3.2, §6; YTsaurus's range inferrer).
//
// A computed key column c = f(deps) usually comes first, as in
//
//	(hash Uint64 AS (farm_hash(key)), key Utf8)
//
// so a predicate on key alone leaves the key prefix unconstrained. When the
// ranges are flattened (rangeexpand.go) and the walk reaches c, the values c
// can take under the constraints on its dependencies are produced, each
// with the constraints that go with it:
//
//   - Fixed dependencies (=, IN, small integer intervals): f is evaluated
//     for each combination of their values, and the combination's own
//     subtree is kept under its value: key IN ('a', 'b') gives the points
//     (farm_hash('a'), 'a') and (farm_hash('b'), 'b').
//   - Quotients: when a dependency ranges over an integer interval and f
//     reads it only as dep / divisor (or whole, divisor 1), f is constant
//     between multiples of the divisors: one value per piece. This holds
//     for any dependency, wherever it sits in the key after c: with
//     h = farm_hash(a / 10, b), key (h, a, b) and a in [0, 30), b = 'x',
//     the pieces of a are [0, 9], [10, 19], [20, 29], each with b = 'x'
//     below it. Intervals of several dependencies give the product of
//     their pieces.
//   - Modulo: when f is g(...) % m, c is one of 0..m-1 (unsigned) or
//     -(m-1)..m-1 (signed), or NULL; each value gets the whole subtree.
//
// The cheaper of the quotient and modulo enumerations wins, each counted
// exactly (pieces by walking the divisors' boundaries, residues by
// intersecting their interval with c's own segment); values outside c's
// own predicate are skipped. An enumeration that does not fit in what is
// left of range_expansion_limit is not done: c's segment becomes one wider
// range (never a wrong one).
//
// All of this relies on the invariant that every stored row satisfies
// c = CAST(f(deps) AS c's type): enumerating the values c can have for the
// keys that satisfy the dependencies' constraints loses no row. A value f
// produces that does not cast to c's type (or an f that fails) belongs to
// no row, since writing such a row fails.

// computedKey describes a computed key column usable for enumeration.
type computedKey struct {
	pos int // key position
	typ types.Type
	f   expr.Expr
	// before are the dependencies at key positions before pos (fixed when
	// the walk reaches pos), after those behind it, ascending; *Cols are
	// their catalog column indexes.
	before, beforeCols []int
	after, afterCols   []int
	// deps describes the dependencies in after, one for one.
	deps []depInfo
	// Modulo enumeration: f is g % mod with a result of family modFam.
	hasMod bool
	mod    uint64
	modFam types.Family
}

// analyseComputed prepares the computed key columns of t. A computed
// column whose expression reads anything but non-computed key columns, or
// is not deterministic, is treated as an ordinary column.
func analyseComputed(t *catalog.Table, keyPos map[int]int, computed map[int]expr.Expr) []*computedKey {
	out := make([]*computedKey, len(t.PrimaryKey))
	for pos, col := range t.PrimaryKey {
		f := computed[col]
		if f == nil || !expr.IsDeterministic(f) {
			continue
		}
		ck := &computedKey{pos: pos, typ: t.Columns[col].Type, f: f}
		valid := true
		seen := map[int]bool{}
		expr.Walk(f, func(e expr.Expr) bool {
			ref, ok := e.(*expr.ColumnRef)
			if !ok {
				return valid
			}
			p, isKey := keyPos[ref.Index]
			if !isKey || ref.Index == col || computed[ref.Index] != nil || t.Columns[ref.Index].Computed != "" {
				valid = false
				return false
			}
			if !seen[p] {
				seen[p] = true
				if p < pos {
					ck.before = append(ck.before, p)
				} else {
					ck.after = append(ck.after, p)
				}
			}
			return valid
		})
		if !valid {
			continue
		}
		sort.Ints(ck.before)
		sort.Ints(ck.after)
		for _, p := range ck.before {
			ck.beforeCols = append(ck.beforeCols, t.PrimaryKey[p])
		}
		for _, p := range ck.after {
			ck.afterCols = append(ck.afterCols, t.PrimaryKey[p])
		}
		ck.deps = make([]depInfo, len(ck.after))
		for i, col := range ck.afterCols {
			d := &ck.deps[i]
			if d.dom, d.integral = domainOf(t.Columns[col].Type); !d.integral {
				continue
			}
			set := map[uint64]bool{}
			collectDivisors(f, col, set)
			for dv := range set {
				d.divisors = append(d.divisors, dv)
			}
			sort.Slice(d.divisors, func(i, j int) bool { return d.divisors[i] < d.divisors[j] })
		}
		if a, ok := f.(*expr.Arith); ok && a.Op == expr.Mod && a.Typ.Family.IsInteger() {
			if k, ok := a.R.(*expr.Const); ok && k.Value.Family().IsInteger() {
				ck.hasMod, ck.mod, ck.modFam = true, absInt(k.Value), a.Typ.Family
			}
		}
		out[pos] = ck
	}
	return out
}

// depInfo describes a dependency after the computed column: whether its
// values are integers (dom), and the divisors through which f reads it,
// ascending (1 when f reads it whole; empty when f reads it only divided by
// zero, which gives NULL whatever it is).
type depInfo struct {
	dom      intDomain
	integral bool
	divisors []uint64
}

// pieceEnd returns the end of the piece that starts at the mapped value x
// of an interval ending at b: the largest y <= b such that every divisor
// gives the same quotient for x..y, so f cannot tell those values apart.
func (d *depInfo) pieceEnd(x, b uint64) uint64 {
	end := b
	for _, dv := range d.divisors {
		end = min(end, d.dom.quotEnd(x, dv))
	}
	return end
}

// pieces counts the pieces of segment s (its NULL counting as one), or
// returns a number above limit as soon as they exceed it. The count is
// exact: quotients by one divisor are counted in closed form, which also
// bounds the count from below and rejects large intervals without a walk;
// several divisors are counted by walking their piece boundaries, which
// costs at most limit+1 steps.
func (d *depInfo) pieces(s *seg, limit uint64) uint64 {
	a, b, ints, null := d.dom.span(s.lo, s.hi)
	var n uint64
	if null {
		n = 1
	}
	if !ints {
		return n
	}
	switch {
	case len(d.divisors) == 0:
		return n + 1
	case d.divisors[0] == 1:
		return satAdd(n, satAdd(b-a, 1)) // every value a piece of its own
	}
	if lower := d.dom.quotientCount(a, b, d.divisors[0]); satAdd(n, lower) > limit || len(d.divisors) == 1 {
		return satAdd(n, lower)
	}
	for x := a; ; {
		n++
		if n > limit {
			return n
		}
		end := d.pieceEnd(x, b)
		if end >= b {
			return n
		}
		x = end + 1
	}
}

// collectDivisors adds to set the divisors through which e reads column
// col: d for `col / d` and `col DIV d` in integer arithmetic, 1 for any
// other use of col. Division by zero is NULL whatever col is, so it adds
// nothing.
func collectDivisors(e expr.Expr, col int, set map[uint64]bool) {
	if a, ok := e.(*expr.Arith); ok && (a.Op == expr.Div || a.Op == expr.IntDiv) && a.Typ.Family.IsInteger() {
		ref, isRef := a.L.(*expr.ColumnRef)
		k, isConst := a.R.(*expr.Const)
		if isRef && ref.Index == col && isConst && k.Value.Family().IsInteger() {
			if d := absInt(k.Value); d != 0 {
				set[d] = true
			}
			return
		}
	}
	if ref, ok := e.(*expr.ColumnRef); ok && ref.Index == col {
		set[1] = true
		return
	}
	for _, c := range expr.Children(e) {
		collectDivisors(c, col, set)
	}
}

func absInt(v types.Value) uint64 {
	if v.Family().IsUnsigned() || v.Int() >= 0 {
		return v.Uint()
	}
	return uint64(-v.Int()) // MinInt64 gives 1<<63, as wanted
}

// modCount is the number of values f can take under modulo enumeration,
// NULL included (saturating).
func (ck *computedKey) modCount() uint64 {
	switch {
	case ck.mod == 0:
		return 1
	case ck.modFam.IsUnsigned():
		return satAdd(ck.mod, 1)
	}
	return satAdd(satAdd(ck.mod, ck.mod-1), 1)
}

// residueCount is the number of values residues gives that lie in s once
// cast to the column's type (what the modulo enumeration walks), NULL
// included: exact for an integer column, modCount for any other.
func (ck *computedKey) residueCount(s *seg) uint64 {
	dom, ok := domainOf(ck.typ)
	if !ok || dom.fam == types.Bool {
		return ck.modCount()
	}
	a, b, ints, null := dom.span(s.lo, s.hi)
	var n uint64
	if null {
		n = 1
	}
	if !ints || ck.mod == 0 {
		return n
	}
	lo, hi := ck.residueSpan(dom)
	lo, hi = max(lo, a), min(hi, b)
	if lo > hi {
		return n
	}
	return satAdd(n, satAdd(hi-lo, 1))
}

// residueSpan returns the non-NULL residues that cast to the column's
// integer type as a mapped interval of its domain dom (ck.mod > 0): the
// numbers -neg..pos clipped to the type's range, since an integer casts to
// another integer type exactly when it is in range.
func (ck *computedKey) residueSpan(dom intDomain) (lo, hi uint64) {
	pos, neg := ck.mod-1, uint64(0)
	if !ck.modFam.IsUnsigned() {
		m := min(ck.mod, math.MaxInt64)
		pos, neg = m-1, m-1
	}
	if !dom.signed {
		return 0, min(pos, dom.max)
	}
	minI, maxI := int64(dom.min^1<<63), int64(dom.max^1<<63)
	l := -int64(min(neg, uint64(^minI)+1))
	h := int64(min(pos, uint64(maxI)))
	return uint64(l) ^ 1<<63, uint64(h) ^ 1<<63
}

// residues calls fn with every value f can take under modulo enumeration,
// NULL first.
func (ck *computedKey) residues(fn func(v types.Value) bool) {
	if !fn(types.NullValue) || ck.mod == 0 {
		return
	}
	if ck.modFam.IsUnsigned() {
		for r := uint64(0); r < ck.mod; r++ {
			if !fn(types.NewUint(ck.modFam, r)) {
				return
			}
		}
		return
	}
	m := int64(min(ck.mod, math.MaxInt64))
	for r := -(m - 1); r <= m-1; r++ {
		if !fn(types.NewInt(ck.modFam, r)) {
			return
		}
	}
}

// eval computes the column's value for the dependencies' values: prefix
// holds the key values before the column, vals those of ck.after. ok is
// false when f fails; skip is true when the value does not cast to the
// column's type (no row has it).
func (ck *computedKey) eval(ctx *expr.Context, row []types.Value, prefix, vals []types.Value) (v types.Value, ok, skip bool) {
	for i := range row {
		row[i] = types.NullValue
	}
	for i, p := range ck.before {
		row[ck.beforeCols[i]] = prefix[p]
	}
	for i, x := range vals {
		row[ck.afterCols[i]] = x
	}
	return ck.evalRow(ctx, row)
}

// evalRow evaluates the computed column on a filled row and casts the value
// to the column's type exactly as the write path stores it: ok is false when
// evaluation fails, skip is true when the value does not cast (no stored row
// can have it).
func (ck *computedKey) evalRow(ctx *expr.Context, row []types.Value) (v types.Value, ok, skip bool) {
	v, err := ck.f.Eval(ctx, row)
	if err != nil {
		return v, false, false
	}
	c, err := types.Cast(v, ck.typ)
	if err != nil {
		return v, true, true
	}
	return c, true, false
}

// item is one combination of the dependencies after the computed column:
// deps holds, for each of them in order, the segment of the path through
// the trie, a point or an interval (which quotientPieces splits).
type item struct {
	deps []*seg
	// tail is the subtree below the combination (the last dependency's
	// segment's child).
	tail *trie
}

// itemCollector walks the subtree under a computed column's segment and
// lists the combinations of its dependencies' values.
type itemCollector struct {
	ck    *computedKey
	items []item
	cap   int
	// indirect is set when the walk crossed a constrained column that is
	// not a dependency: a combination's subtree is then cut out of the
	// whole by intersection, not rebuilt from its tail.
	indirect bool
}

// collect fills c.items from n (constraints on the columns after the
// computed one); false when some dependency is unconstrained or the items
// exceed c.cap.
func (c *itemCollector) collect(n *trie, k int, path []*seg) bool {
	if len(c.items) > c.cap {
		return false
	}
	after := c.ck.after
	if k == len(after) {
		c.items = append(c.items, item{deps: append([]*seg(nil), path...), tail: n})
		return true
	}
	if n == nil || n.col > after[k] {
		return false // dependency k is unconstrained
	}
	if n.col < after[k] {
		// A column that is not a dependency: every segment's subtree.
		c.indirect = true
		for i := range n.segs {
			if !c.collect(n.segs[i].child, k, path) {
				return false
			}
		}
		return true
	}
	for i := range n.segs {
		if !c.collect(n.segs[i].child, k+1, append(path, &n.segs[i])) {
			return false
		}
	}
	return true
}

// pieceCount is the number of values the quotient enumeration produces for
// the items, or a number above limit when they exceed it (MaxUint64 when
// it cannot run: an interval of a dependency that is not an integer). It
// counts what quotientPieces walks, before values outside the column's
// own segment are dropped.
func (ck *computedKey) pieceCount(items []item, limit uint64) uint64 {
	var total uint64
	for i := range items {
		if total = satAdd(total, ck.itemPieces(&items[i], limit)); total > limit {
			return total
		}
	}
	return total
}

// itemPieces counts the pieces of one item like pieceCount. It is 0 when
// the interval of some dependency holds no value of its type.
func (ck *computedKey) itemPieces(it *item, limit uint64) uint64 {
	n := uint64(1)
	for k, s := range it.deps {
		if s.isPoint() {
			continue
		}
		if !ck.deps[k].integral {
			return math.MaxUint64
		}
		// The pieces of the dependencies multiply; each factor needs
		// counting only up to what keeps the product within limit.
		if n = satMul(n, ck.deps[k].pieces(s, limit/n)); n == 0 {
			return 0
		}
	}
	return n
}

func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// piece is one value of a computed column with the constraints on the
// following columns that go with it.
type piece struct {
	v   types.Value
	sub *trie
}

// restrict returns the part of sub (the subtree under the computed
// column's segment) for a combination: dependency i of the column within
// spec[i] (a point or a piece), tail the subtree below the last. Unless
// indirect, the part is rebuilt as a chain ending in tail; otherwise it is
// cut out of sub, since columns that are not dependencies lie between.
func (ck *computedKey) restrict(sub *trie, indirect bool, spec []seg, tail *trie) *trie {
	var chain *trie
	if !indirect {
		chain = tail
	}
	for i := len(spec) - 1; i >= 0; i-- {
		sg := spec[i]
		sg.child = chain
		chain = &trie{col: ck.after[i], segs: []seg{sg}}
	}
	if indirect {
		return intersect(sub, chain)
	}
	return chain
}

// quotientPieces evaluates the column for every combination of the items'
// points and pieces (an interval of a dependency is split where one of its
// divisors' quotients changes, plus NULL when the interval holds it). ok
// is false when f fails.
func (ck *computedKey) quotientPieces(ctx *expr.Context, row, prefix []types.Value, s *seg, c *itemCollector) ([]piece, bool) {
	out := make([]piece, 0, len(c.items))
	n := len(ck.after)
	vals := make([]types.Value, n) // the dependencies' values to evaluate f on
	spec := make([]seg, n)         // the combination's segment of each
	var walk func(it *item, k int) bool
	walk = func(it *item, k int) bool {
		if k == n {
			v, ok, skip := ck.eval(ctx, row, prefix, vals)
			if !ok {
				return false
			}
			if skip || !s.contains(v) {
				return true
			}
			if sub := ck.restrict(s.child, c.indirect, spec, it.tail); !isEmpty(sub) {
				out = append(out, piece{v: v, sub: sub})
			}
			return true
		}
		ds := it.deps[k]
		if ds.isPoint() {
			vals[k], spec[k] = ds.lo.v, pointSeg(ds.lo.v, nil)
			return walk(it, k+1)
		}
		d := &ck.deps[k]
		a, b, ints, null := d.dom.span(ds.lo, ds.hi)
		if null {
			vals[k], spec[k] = types.NullValue, pointSeg(types.NullValue, nil)
			if !walk(it, k+1) {
				return false
			}
		}
		if !ints {
			return true
		}
		for x := a; ; {
			end := d.pieceEnd(x, b)
			// f reads the dependency only through its quotients, which are
			// the same over the piece: its first value stands for all.
			vals[k] = d.dom.value(x)
			spec[k] = seg{lo: before(d.dom.value(x)), hi: after(d.dom.value(end))}
			if !walk(it, k+1) {
				return false
			}
			if end >= b {
				return true
			}
			x = end + 1
		}
	}
	for i := range c.items {
		// An item with an empty interval has no pieces at all; walking
		// the others' pieces for it would take as long as they are many.
		if ck.itemPieces(&c.items[i], 0) == 0 {
			continue
		}
		if !walk(&c.items[i], 0) {
			return nil, false
		}
	}
	return out, true
}
