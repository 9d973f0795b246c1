package parser

import (
	"fmt"
	"strings"
)

// ArrayAssignFunc spells PostgreSQL's array element and slice assignment
// in an UPDATE's (or ON CONFLICT DO UPDATE's) SET list, which TiDB's grammar cannot express (its SET
// takes a column name on the left):
//
//	SET a[i][j] = v        SET a = pivot_array_assign(a, -1, i, j, (v))
//	SET a[lo:hi][:k] = v   SET a = pivot_array_assign(a, mask, lo, hi, 0, k, (v))
//
// The mask of a slice marks omitted bounds as in pivot_array_slice (and a
// plain subscript k among slices is 1:k). Several assignments to elements
// of one column compose in the binder.
const ArrayAssignFunc = "pivot_array_assign"

// setItemAt reports whether the operand at i starts an item of an
// UPDATE's or an ON CONFLICT DO UPDATE's SET list: the nearest clause word
// before it at its nesting level is SET, with only commas of the list in
// between.
func (s *stmtToks) setItemAt(i int) bool {
	if !s.isWord(i-1, "set") && !s.isOp(i-1, ",") {
		return false
	}
	depth := 0
	for k := i - 1; k >= 0; k-- {
		switch {
		case s.isOp(k, ")") || s.isOp(k, "]"):
			depth++
		case s.isOp(k, "(") || s.isOp(k, "["):
			if depth == 0 {
				return false
			}
			depth--
		case depth == 0 && s.isKind(k, tkIdent):
			w := strings.ToLower(s.text(k))
			if w == "set" {
				return s.isWord(0, "update") || s.isWord(k-1, "update") && s.isWord(k-2, "do")
			}
			if clauseWords[w] || w == "from" || w == "update" {
				return false
			}
		}
	}
	return false
}

// insertColumnAt reports whether the operand at i is in the column list of
// an INSERT (INSERT INTO [schema.]t (a[1], ...)).
func (s *stmtToks) insertColumnAt(i int) bool {
	if !s.isWord(0, "insert") {
		return false
	}
	depth := 0
	for k := i - 1; k >= 0; k-- {
		switch {
		case s.isOp(k, ")"):
			depth++
		case s.isOp(k, "("):
			if depth > 0 {
				depth--
				continue
			}
			return !s.queryAt(k) && (s.isWord(k-2, "into") || s.isOp(k-2, ".") && s.isWord(k-4, "into"))
		}
	}
	return false
}

// arrayAssign emits the SET item whose column is [i, bodyEnd), with the
// subscripts subs ('[', ':' or -1, ']' tokens) and "=" at eq, and returns
// the index after its value: the next comma of the SET list, or the
// clause word (FROM, WHERE, RETURNING) that ends it.
func (r *rewriter) arrayAssign(i, bodyEnd int, subs [][3]int, slice bool, eq, hi int) (int, error) {
	s := r.s
	end := eq + 1
	for end < hi && !s.isOp(end, ",") {
		if s.isKind(end, tkIdent) {
			if w := strings.ToLower(s.text(end)); w == "from" || w == "where" || w == "returning" {
				break
			}
		}
		end = s.nextTop(end, hi)
	}
	if end == eq+1 {
		return 0, s.errAtTok(end)
	}
	column := func() {
		for k := i; k < bodyEnd; k++ {
			r.plain(k)
		}
	}
	column()
	r.plain(eq)
	r.syn(ArrayAssignFunc+"(", eq, false, true)
	column()
	mask := -1
	if slice {
		// Omitted bounds, as in pivot_array_slice.
		mask = 0
		for k, sb := range subs {
			if sb[1] >= 0 && sb[1] == sb[0]+1 {
				mask |= 1 << (2 * k)
			}
			if sb[1] >= 0 && sb[2] == sb[1]+1 {
				mask |= 1 << (2*k + 1)
			}
		}
	}
	r.syn(fmt.Sprintf(", %d", mask), subs[0][0], true, false)
	for _, sb := range subs {
		open, colon, close := sb[0], sb[1], sb[2]
		switch {
		case !slice:
			r.syn(",", open, true, false)
			if err := r.seq(open+1, close); err != nil {
				return 0, err
			}
		case colon < 0:
			// a[k] among slices is a[1:k].
			r.syn(", 1,", open, true, false)
			if err := r.seq(open+1, close); err != nil {
				return 0, err
			}
		default:
			r.syn(",", open, true, false)
			if colon == open+1 {
				r.syn("0", open, false, false)
			} else if err := r.seq(open+1, colon); err != nil {
				return 0, err
			}
			r.syn(",", colon, true, false)
			if close == colon+1 {
				r.syn("0", colon, false, false)
			} else if err := r.seq(colon+1, close); err != nil {
				return 0, err
			}
		}
	}
	r.syn(", (", eq, true, true)
	if err := r.seq(eq+1, end); err != nil {
		return 0, err
	}
	r.syn("))", end-1, true, false)
	r.lastTok = end - 1
	return end, nil
}
