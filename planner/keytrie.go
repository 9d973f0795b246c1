package planner

import (
	"sort"

	"github.com/pivotdb/pivotdb/sql/types"
)

// The key trie is the value-level set of key tuples that range inference
// computes with (YTsaurus's TKeyTrie, generalised so that an interval of a
// column may carry a constraint on the following columns).
//
// A *trie constrains the key columns from position col on. On column col it
// holds sorted, disjoint segments; a key whose value on col falls in no
// segment is not in the set, and one that falls in a segment is in it when
// the rest of the key is in the segment's child. A nil *trie is the
// universal set (no constraint); a trie without segments is the empty set. A
// child's col is greater than its parent's; columns skipped in between are
// unconstrained.
//
//	k IN (1, 2) AND l > 3          col 0:  [1]──►col 1: (3 .. +inf)
//	                                       [2]──►(the same child)
//
// Segment ends are cuts: positions between the values of one column, which
// is also what a Bound holds (design §6). "before v" is the bound (.., v),
// "after v" is (.., v, <Max>); NULL is the smallest value. Tries are
// immutable once built and share children freely.

// cutKind says where a cut lies relative to its value.
type cutKind int8

const (
	cutNegInf cutKind = iota // before every value, NULL included
	cutBefore                // just before v
	cutAfter                 // just after v
	cutPosInf                // after every value
)

type cut struct {
	kind cutKind
	v    types.Value
}

var (
	negInf     = cut{kind: cutNegInf}
	posInf     = cut{kind: cutPosInf}
	beforeNull = cut{kind: cutBefore}
	afterNull  = cut{kind: cutAfter}
)

func before(v types.Value) cut { return cut{kind: cutBefore, v: v} }
func after(v types.Value) cut  { return cut{kind: cutAfter, v: v} }

// rank orders the cut kinds that do not carry a value; "before NULL" is the
// same position as -inf (nothing sorts before NULL).
func (c cut) rank() int {
	switch {
	case c.kind == cutNegInf, c.kind == cutBefore && c.v.IsNull():
		return 0
	case c.kind == cutPosInf:
		return 2
	}
	return 1
}

func compareCuts(a, b cut) int {
	ra, rb := a.rank(), b.rank()
	if ra != rb || ra != 1 {
		return ra - rb
	}
	if c := types.Compare(a.v, b.v); c != 0 {
		return c
	}
	return int(a.kind) - int(b.kind)
}

func minCut(a, b cut) cut {
	if compareCuts(a, b) <= 0 {
		return a
	}
	return b
}

func maxCut(a, b cut) cut {
	if compareCuts(a, b) >= 0 {
		return a
	}
	return b
}

// seg is the interval [lo, hi) of one column's values with the constraint
// child on the following columns (nil: none).
type seg struct {
	lo, hi cut
	child  *trie
}

// isPoint reports whether the segment holds exactly one value.
func (s *seg) isPoint() bool {
	return s.lo.kind == cutBefore && s.hi.kind == cutAfter && types.Compare(s.lo.v, s.hi.v) == 0 &&
		s.lo.v.IsNull() == s.hi.v.IsNull()
}

// contains reports whether value v of the column lies in the segment.
func (s *seg) contains(v types.Value) bool {
	return compareCuts(s.lo, before(v)) <= 0 && compareCuts(after(v), s.hi) <= 0
}

type trie struct {
	col  int
	segs []seg
}

// emptyTrie is the empty set.
var emptyTrie = &trie{}

func isEmpty(t *trie) bool { return t != nil && len(t.segs) == 0 }

// newTrie returns the set of keys whose column col lies in segs (sorted,
// disjoint), normalising a single segment over every value without a child
// to the universal set.
func newTrie(col int, segs []seg) *trie {
	if len(segs) == 1 && segs[0].child == nil && segs[0].lo.rank() == 0 && segs[0].hi.kind == cutPosInf {
		return nil
	}
	if len(segs) == 0 {
		return emptyTrie
	}
	return &trie{col: col, segs: segs}
}

func pointSeg(v types.Value, child *trie) seg { return seg{lo: before(v), hi: after(v), child: child} }

// appendSeg appends s to out, extending the last segment instead when s
// continues it with the same child.
func appendSeg(out []seg, s seg) []seg {
	if compareCuts(s.lo, s.hi) >= 0 {
		return out
	}
	if n := len(out); n > 0 && out[n-1].child == s.child && compareCuts(out[n-1].hi, s.lo) == 0 {
		out[n-1].hi = s.hi
		return out
	}
	return append(out, s)
}

// childCache remembers the last combination of two children, so that the
// pieces of one segment cut by many segments of the other trie share one
// combined child (and merge back with appendSeg).
type childCache struct {
	a, b, r *trie
	ok      bool
}

func (c *childCache) get(a, b *trie, f func(a, b *trie) *trie) *trie {
	if c.ok && c.a == a && c.b == b {
		return c.r
	}
	c.a, c.b, c.r, c.ok = a, b, f(a, b), true
	return c.r
}

// intersect returns the keys in both a and b.
func intersect(a, b *trie) *trie {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case isEmpty(a):
		return a
	case isEmpty(b):
		return b
	case a == b:
		return a
	}
	if a.col > b.col {
		a, b = b, a
	}
	var cache childCache
	if a.col < b.col {
		// b leaves column a.col unconstrained: it applies under every
		// segment of a.
		out := make([]seg, 0, len(a.segs))
		for _, s := range a.segs {
			c := cache.get(s.child, b, intersect)
			if isEmpty(c) {
				continue
			}
			out = appendSeg(out, seg{lo: s.lo, hi: s.hi, child: c})
		}
		return newTrie(a.col, out)
	}
	if len(a.segs) > len(b.segs) {
		a, b = b, a
	}
	var out []seg
	piece := func(x, y *seg) {
		lo, hi := maxCut(x.lo, y.lo), minCut(x.hi, y.hi)
		if compareCuts(lo, hi) >= 0 {
			return
		}
		c := cache.get(x.child, y.child, intersect)
		if isEmpty(c) {
			return
		}
		out = appendSeg(out, seg{lo: lo, hi: hi, child: c})
	}
	if len(a.segs)*16 < len(b.segs) {
		// Few against many (a point lookup in a long IN list): binary
		// search each small segment's place.
		for i := range a.segs {
			x := &a.segs[i]
			j := sort.Search(len(b.segs), func(j int) bool { return compareCuts(b.segs[j].hi, x.lo) > 0 })
			for ; j < len(b.segs) && compareCuts(b.segs[j].lo, x.hi) < 0; j++ {
				piece(x, &b.segs[j])
			}
		}
		return newTrie(a.col, out)
	}
	i, j := 0, 0
	for i < len(a.segs) && j < len(b.segs) {
		x, y := &a.segs[i], &b.segs[j]
		piece(x, y)
		switch c := compareCuts(x.hi, y.hi); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			i++
			j++
		}
	}
	return newTrie(a.col, out)
}

// union returns the keys in a or b.
func union(a, b *trie) *trie {
	switch {
	case a == nil || b == nil:
		return nil
	case isEmpty(a):
		return b
	case isEmpty(b):
		return a
	case a == b:
		return a
	}
	if a.col > b.col {
		a, b = b, a
	}
	if a.col < b.col {
		// b on column a.col: every value, with b below.
		b = &trie{col: a.col, segs: []seg{{lo: negInf, hi: posInf, child: b}}}
	}
	var cache childCache
	out := make([]seg, 0, len(a.segs)+len(b.segs))
	i, j := 0, 0
	pos := minCut(a.segs[0].lo, b.segs[0].lo)
	for i < len(a.segs) || j < len(b.segs) {
		var x, y *seg
		if i < len(a.segs) {
			x = &a.segs[i]
		}
		if j < len(b.segs) {
			y = &b.segs[j]
		}
		xOn := x != nil && compareCuts(x.lo, pos) <= 0
		yOn := y != nil && compareCuts(y.lo, pos) <= 0
		if !xOn && !yOn {
			switch {
			case x == nil:
				pos = y.lo
			case y == nil:
				pos = x.lo
			default:
				pos = minCut(x.lo, y.lo)
			}
			continue
		}
		next := posInf
		if xOn {
			next = minCut(next, x.hi)
		} else if x != nil {
			next = minCut(next, x.lo)
		}
		if yOn {
			next = minCut(next, y.hi)
		} else if y != nil {
			next = minCut(next, y.lo)
		}
		var child *trie
		switch {
		case xOn && yOn:
			child = cache.get(x.child, y.child, union)
		case xOn:
			child = x.child
		default:
			child = y.child
		}
		out = appendSeg(out, seg{lo: pos, hi: next, child: child})
		pos = next
		if xOn && compareCuts(x.hi, pos) <= 0 {
			i++
		}
		if yOn && compareCuts(y.hi, pos) <= 0 {
			j++
		}
	}
	return newTrie(a.col, out)
}

// unionAll unites many tries pairwise, so that n small tries cost
// O(n log n) rather than O(n²).
func unionAll(ts []*trie) *trie {
	switch len(ts) {
	case 0:
		return emptyTrie
	case 1:
		return ts[0]
	}
	mid := len(ts) / 2
	return union(unionAll(ts[:mid]), unionAll(ts[mid:]))
}

// intersectAll intersects many tries pairwise (k <> 1 AND k <> 2 AND ...
// stays O(n log n)).
func intersectAll(ts []*trie) *trie {
	switch len(ts) {
	case 0:
		return nil
	case 1:
		return ts[0]
	}
	mid := len(ts) / 2
	return intersect(intersectAll(ts[:mid]), intersectAll(ts[mid:]))
}
