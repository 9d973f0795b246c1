package planner

import (
	"math"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Flattening a key trie into key ranges.
//
// The walk goes down the key columns. A point segment fixes its column and
// the walk continues below it; a segment without a constraint below
// becomes one range; an interval with a constraint below becomes one range
// that drops that constraint (inexact), unless it holds at most smallEnum
// integer values, which are then walked as points. Computed key columns
// are filled in by computed.go.
//
// range_expansion_limit bounds the ranges of one read. The walk runs with a
// depth: columns from the depth on are not expanded, each subtree there
// becomes the hull of its segments. It starts at the full key and, when
// the ranges exceed the limit, restarts one column shallower (YTsaurus
// shrinks the key the same way); depth 0 always gives one range.

// expansion flattens tries for one Evaluate call.
type expansion struct {
	p       *RangeProgram
	ctx     *expr.Context
	limit   int
	widened bool
	row     []types.Value // scratch row for computed column expressions
}

// ranges flattens t into at most x.limit ranges; exact reports that they
// hold exactly t's keys.
func (x *expansion) ranges(t *trie) (Ranges, bool) {
	if x.row == nil && x.p.hasComputed {
		// Only computed key columns evaluate expressions on a row.
		x.row = make([]types.Value, len(x.p.table.Columns))
	}
	size := 1
	if t != nil {
		size = min(len(t.segs), x.limit)
	}
	for depth := len(x.p.keyTypes); ; depth-- {
		w := walker{x: x, depth: depth, exact: true, out: make([]KeyRange, 0, size)}
		w.walk(0, t, nil)
		if !w.over || depth == 0 {
			if w.unsorted {
				return normalizeRanges(w.out), w.exact
			}
			return mergeRanges(w.out), w.exact
		}
		x.widened = true
	}
}

type walker struct {
	x     *expansion
	depth int
	out   []KeyRange
	exact bool
	over  bool
	// unsorted is set when a computed column's values were emitted out of
	// key order (they come in the order of the dependencies).
	unsorted bool
	// arena holds the values of emitted bounds, allocated in chunks.
	arena []types.Value
}

// alloc returns an empty slice with room for n values from the arena; the
// capacity is cut to n so that appending past it never reaches a
// neighbour.
func (w *walker) alloc(n int) []types.Value {
	if len(w.arena)+n > cap(w.arena) {
		// Chunks double from 16 values up to 4096, so that small results
		// stay small and large ones cost few allocations.
		w.arena = make([]types.Value, 0, max(n, min(4096, 2*cap(w.arena)), 16))
	}
	l := len(w.arena)
	w.arena = w.arena[:l+n]
	return w.arena[l : l : l+n]
}

func (w *walker) room() int { return w.x.limit - len(w.out) }

// emit adds the range [(prefix, lo) .. (prefix, hi)).
func (w *walker) emit(prefix []types.Value, lo, hi cut) {
	if len(w.out) >= w.x.limit {
		w.over = true
		return
	}
	w.out = append(w.out, cutRange(w.alloc(2*len(prefix)+2), prefix, lo, hi))
}

// cutRange is the range [(prefix, lo) .. (prefix, hi)), its bounds sharing
// buf (room for 2*len(prefix)+2 values; bounds are never modified).
func cutRange(buf, prefix []types.Value, lo, hi cut) KeyRange {
	n := len(prefix)
	buf = append(buf, prefix...)
	lower, upper := Bound{Values: buf[:n:n]}, Bound{Values: buf[:n:n]}
	if lo.kind == cutBefore || lo.kind == cutAfter {
		buf = append(buf, lo.v)
		lower = Bound{Values: buf[: n+1 : n+1], Max: lo.kind == cutAfter}
	} else {
		lower.Max = lo.kind == cutPosInf
	}
	if hi.kind == cutBefore || hi.kind == cutAfter {
		if len(buf) == n+1 && types.Compare(lo.v, hi.v) == 0 && lo.v.IsNull() == hi.v.IsNull() {
			upper = Bound{Values: buf[: n+1 : n+1]}
		} else {
			upper = Bound{Values: append(buf[len(buf):len(buf)], prefix...)}
			upper.Values = append(upper.Values, hi.v)
		}
		upper.Max = hi.kind == cutAfter
	} else {
		upper.Max = hi.kind == cutPosInf
	}
	if n == 0 && lower.Values != nil && len(lower.Values) == 0 {
		lower.Values = nil
	}
	if n == 0 && upper.Values != nil && len(upper.Values) == 0 {
		upper.Values = nil
	}
	return KeyRange{Lower: lower, Upper: upper}
}

func clonePrefix(prefix []types.Value, extra int) []types.Value {
	if len(prefix)+extra == 0 {
		return nil
	}
	out := make([]types.Value, len(prefix), len(prefix)+extra)
	copy(out, prefix)
	return out
}

// with returns prefix extended by v, never sharing prefix's array.
func with(prefix []types.Value, v types.Value) []types.Value {
	return append(clonePrefix(prefix, 1), v)
}

// walk emits the ranges of t, which constrains the columns from col on,
// under the fixed values prefix of the columns before col.
func (w *walker) walk(col int, t *trie, prefix []types.Value) {
	switch {
	case w.over || isEmpty(t):
		return
	case t == nil:
		w.emit(prefix, negInf, posInf)
		return
	case col == w.depth:
		if t.col > col || len(t.segs) > 1 || t.segs[0].child != nil {
			w.exact = false
		}
		if t.col > col {
			w.emit(prefix, negInf, posInf)
		} else {
			w.emit(prefix, t.segs[0].lo, t.segs[len(t.segs)-1].hi)
		}
		return
	}
	if ck := w.x.p.computed[col]; ck != nil {
		w.walkComputed(col, ck, t, prefix)
		return
	}
	if t.col > col {
		// Column col is free and a later one constrained: the prefix is
		// all a range can say.
		w.exact = false
		w.emit(prefix, negInf, posInf)
		return
	}
	for i := range t.segs {
		if w.over {
			return
		}
		s := &t.segs[i]
		switch {
		case s.child == nil:
			w.emit(prefix, s.lo, s.hi)
		case s.isPoint():
			w.walk(col+1, s.child, with(prefix, s.lo.v))
		default:
			w.walkInterval(col, s, prefix)
		}
	}
}

// walkInterval emits an interval segment with a constraint below it.
func (w *walker) walkInterval(col int, s *seg, prefix []types.Value) {
	if dom, ok := domainOf(w.x.p.keyTypes[col]); ok && w.room() >= smallEnum {
		if vals, ok := dom.enumerate(s, smallEnum); ok {
			for _, v := range vals {
				w.walk(col+1, s.child, with(prefix, v))
			}
			return
		}
	}
	w.exact = false
	w.emit(prefix, s.lo, s.hi)
}

// walkComputed emits the ranges under a computed key column (computed.go).
func (w *walker) walkComputed(col int, ck *computedKey, t *trie, prefix []types.Value) {
	own := t.segs
	if t.col > col {
		own = []seg{{lo: negInf, hi: posInf, child: t}}
	}
	for i := range own {
		if w.over {
			return
		}
		s := &own[i]
		switch {
		case s.child == nil && len(ck.after) > 0:
			// Nothing below to enumerate from: the segment is exact as is.
			w.emit(prefix, s.lo, s.hi)
		case s.isPoint():
			// The column's own predicate fixes it. Evaluating the
			// dependencies still drops what contradicts it (hash = 5 AND
			// key = 'x' reads nothing unless farm_hash('x') = 5), and
			// keeps only the matching quotient pieces.
			if !w.enumerate(col, ck, s, prefix, false) {
				w.walk(col+1, s.child, with(prefix, s.lo.v))
			}
		default:
			if !w.enumerate(col, ck, s, prefix, true) {
				if s.child != nil {
					w.exact = false
				}
				w.emit(prefix, s.lo, s.hi)
			}
		}
	}
}

// enumerate walks the values the computed column ck can take in segment s
// given the constraints below it; false when it cannot within the limit
// (nothing was emitted then). Modulo enumeration is tried only when
// allowMod.
//
// The quotient enumeration is counted exactly before it runs, and once run
// its pieces are those inside s; the modulo enumeration's residues inside s
// are counted exactly too. The one with fewer ranges wins, the quotients
// on a tie (their ranges are narrower).
func (w *walker) enumerate(col int, ck *computedKey, s *seg, prefix []types.Value, allowMod bool) bool {
	room := w.room()
	c := itemCollector{ck: ck, cap: room}
	quot := uint64(math.MaxUint64)
	if c.collect(s.child, 0, nil) {
		quot = ck.pieceCount(c.items, uint64(room))
	}
	mod := uint64(math.MaxUint64)
	// Residues help only when the column after them is constrained (or
	// computed in turn): otherwise each residue's range covers all of it.
	useful := s.child != nil && (s.child.col == col+1 || (col+1 < len(w.x.p.computed) && w.x.p.computed[col+1] != nil))
	if ck.hasMod && allowMod && useful {
		// Each residue in s walks the whole subtree, which gives about
		// one range per combination of the dependencies.
		mod = satMul(ck.residueCount(s), uint64(max(1, len(c.items))))
	}
	// The pieces are walked unless there are more of them than residues
	// and the column's own predicate, dropping none, cannot make them fewer.
	whole := s.lo.rank() == 0 && s.hi.kind == cutPosInf
	if quot <= uint64(room) && (quot <= mod || !whole) {
		if pieces, ok := ck.quotientPieces(w.x.ctx, w.x.row, prefix, s, &c); ok && uint64(len(pieces)) <= mod {
			w.unsorted = w.unsorted || len(pieces) > 1
			for _, pc := range pieces {
				w.walk(col+1, pc.sub, with(prefix, pc.v))
			}
			return true
		}
	}
	if mod <= uint64(room) {
		ck.residues(func(r types.Value) bool {
			v, err := types.Cast(r, ck.typ)
			if err == nil && s.contains(v) {
				w.walk(col+1, s.child, with(prefix, v))
			}
			return !w.over
		})
		return true
	}
	// The limit widened the ranges when an enumeration that could run
	// did not fit (not when none could: f failed, or a dependency is free).
	over := func(n uint64) bool { return n != math.MaxUint64 && n > uint64(room) }
	if allowMod && (over(quot) || over(mod)) {
		w.x.widened = true
	}
	return false
}
