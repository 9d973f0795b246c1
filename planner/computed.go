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
//   - Quotients: when the last dependency ranges over an integer interval
//     and f reads it only as dep / divisor (or whole, divisor 1), f is
//     constant between multiples of the divisors: one value per piece.
//   - Modulo: when f is g(...) % m, c is one of 0..m-1 (unsigned) or
//     -(m-1)..m-1 (signed), or NULL; each value gets the whole subtree.
//
// The cheaper of the quotient and modulo enumerations wins (counted in
// ranges); values outside c's own predicate are skipped. An enumeration
// that does not fit in what is left of range_expansion_limit is not done:
// c's segment becomes one wider range (never a wrong one).
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
	// lastDivisors are the divisors through which f reads the last
	// dependency (nil: no quotient enumeration over it).
	lastDivisors []uint64
	lastDomain   intDomain
	lastIntegral bool
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
		if n := len(ck.after); n > 0 {
			lastCol := ck.afterCols[n-1]
			if dom, ok := domainOf(t.Columns[lastCol].Type); ok {
				ck.lastDomain, ck.lastIntegral = dom, true
				set := map[uint64]bool{}
				collectDivisors(f, lastCol, set)
				for d := range set {
					ck.lastDivisors = append(ck.lastDivisors, d)
				}
				sort.Slice(ck.lastDivisors, func(i, j int) bool { return ck.lastDivisors[i] < ck.lastDivisors[j] })
			}
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
// vals fixes the first len(vals) of them; last, when set, is an interval of
// the last one.
type item struct {
	vals []types.Value
	last *seg
	// tail is the subtree below the combination (below the last
	// dependency's point, or last.child).
	tail *trie
}

// itemCollector walks the subtree under a computed column's segment and
// lists the combinations of its dependencies' values.
type itemCollector struct {
	ck       *computedKey
	keyTypes []types.Type
	items    []item
	cap      int
	// indirect is set when the walk crossed a constrained column that is
	// not a dependency: a combination's subtree is then cut out of the
	// whole by intersection, not rebuilt from its tail.
	indirect bool
}

// collect fills c.items from n (constraints on the columns after the
// computed one); false when some dependency is not fixed (except the last,
// which may be an interval) or the items exceed c.cap.
func (c *itemCollector) collect(n *trie, k int, vals []types.Value) bool {
	if len(c.items) > c.cap {
		return false
	}
	after := c.ck.after
	if k == len(after) {
		c.items = append(c.items, item{vals: append([]types.Value(nil), vals...), tail: n})
		return true
	}
	if n == nil || n.col > after[k] {
		return false // dependency k is unconstrained
	}
	if n.col < after[k] {
		// A column that is not a dependency: every segment's subtree.
		c.indirect = true
		for i := range n.segs {
			if !c.collect(n.segs[i].child, k, vals) {
				return false
			}
		}
		return true
	}
	last := k == len(after)-1
	for i := range n.segs {
		s := &n.segs[i]
		switch {
		case s.isPoint():
			if !c.collect(s.child, k+1, append(vals, s.lo.v)) {
				return false
			}
		case last:
			c.items = append(c.items, item{vals: append([]types.Value(nil), vals...), last: s, tail: s.child})
		default:
			dom, ok := domainOf(c.keyTypes[after[k]])
			if !ok {
				return false
			}
			xs, ok := dom.enumerate(s, smallEnum)
			if !ok {
				return false
			}
			for _, x := range xs {
				if !c.collect(s.child, k+1, append(vals, x)) {
					return false
				}
			}
		}
	}
	return true
}

// piecesEstimate is the number of values the quotient enumeration
// produces for the items (saturating; MaxUint64 when it cannot run).
func (ck *computedKey) piecesEstimate(items []item) uint64 {
	var total uint64
	for _, it := range items {
		if it.last == nil {
			total = satAdd(total, 1)
			continue
		}
		if !ck.lastIntegral {
			return math.MaxUint64
		}
		a, b, ints, null := ck.lastDomain.span(it.last.lo, it.last.hi)
		if null {
			total = satAdd(total, 1)
		}
		if !ints {
			continue
		}
		size := satAdd(b-a, 1)
		est := uint64(1)
		for _, d := range ck.lastDivisors {
			est = satAdd(est, satAdd(size/d, 1))
		}
		total = satAdd(total, min(est, size))
	}
	return total
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
// column's segment) for a combination: the dependencies after the computed
// column fixed to vals, the next one (the last) within last when set, tail
// the subtree below them. Unless indirect, the part is rebuilt as a chain
// of points ending in tail; otherwise it is cut out of sub.
func (ck *computedKey) restrict(sub *trie, indirect bool, vals []types.Value, last *seg, tail *trie) *trie {
	var chain *trie
	switch {
	case last != nil && indirect:
		chain = &trie{col: ck.after[len(vals)], segs: []seg{{lo: last.lo, hi: last.hi}}}
	case last != nil:
		chain = &trie{col: ck.after[len(vals)], segs: []seg{{lo: last.lo, hi: last.hi, child: tail}}}
	case !indirect:
		chain = tail
	}
	for i := len(vals) - 1; i >= 0; i-- {
		chain = &trie{col: ck.after[i], segs: []seg{pointSeg(vals[i], chain)}}
	}
	if indirect {
		return intersect(sub, chain)
	}
	return chain
}

// quotientPieces evaluates the column for every item (quotient
// enumeration for an interval of the last dependency). ok is false when f
// fails.
func (ck *computedKey) quotientPieces(ctx *expr.Context, row, prefix []types.Value, s *seg, c *itemCollector) ([]piece, bool) {
	out := make([]piece, 0, len(c.items))
	add := func(vals, restrictVals []types.Value, last *seg, tail *trie) bool {
		v, ok, skip := ck.eval(ctx, row, prefix, vals)
		if !ok {
			return false
		}
		if skip || !s.contains(v) {
			return true
		}
		if sub := ck.restrict(s.child, c.indirect, restrictVals, last, tail); !isEmpty(sub) {
			out = append(out, piece{v: v, sub: sub})
		}
		return true
	}
	for _, it := range c.items {
		if it.last == nil {
			if !add(it.vals, it.vals, nil, it.tail) {
				return nil, false
			}
			continue
		}
		dom := ck.lastDomain
		a, b, ints, null := dom.span(it.last.lo, it.last.hi)
		vals := append(append([]types.Value(nil), it.vals...), types.NullValue)
		if null {
			if !add(vals, vals, nil, it.tail) {
				return nil, false
			}
		}
		if !ints {
			continue
		}
		for x := a; ; {
			end := b
			for _, d := range ck.lastDivisors {
				end = min(end, dom.quotEnd(x, d))
			}
			if len(ck.lastDivisors) == 0 {
				end = b // f does not read the column: one piece
			}
			vals[len(vals)-1] = dom.value(x)
			if !add(vals, it.vals, &seg{lo: before(dom.value(x)), hi: after(dom.value(end))}, it.tail) {
				return nil, false
			}
			if end >= b {
				break
			}
			x = end + 1
		}
	}
	return out, true
}
