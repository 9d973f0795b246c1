package planner

import (
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
)

// Secondary index choice. An index's entries are a table of their own
// (catalog.Table.IndexTable) with the indexed table's columns, so a
// condition over the table compiles against them unchanged: the same
// range inference gives the index ranges to read. A Scan with Index set
// reads those ranges and then each row by primary key; its rows come in
// index order, not primary key order.

// Constraint grades how narrowly a range program bounds the first key
// column: nothing, a range of it, or equality (=, IN, IS NULL, or a
// contradiction), so that the cheapest access path can be picked.
type Constraint int

// The grades, in increasing selectivity.
const (
	ConstraintNone Constraint = iota
	ConstraintRange
	ConstraintEq
)

// FirstKeyConstraint grades the constraint of the program's condition on
// the first key column (an AND of the captured and approximate parts).
func (p *RangeProgram) FirstKeyConstraint() Constraint {
	if p == nil {
		return ConstraintNone
	}
	if p.point != nil {
		// A point lookup by a key prefix, computed key columns included
		// (a hash-sharded table's `key = $1` fixes hash = f(key) too).
		return ConstraintEq
	}
	g := grade(p.captured)
	if p.approx != nil {
		g = max(g, grade(p.approx))
	}
	return g
}

// grade is FirstKeyConstraint of one normalized node: an AND is as narrow
// as its narrowest part, an OR as its widest.
func grade(n *pnode) Constraint {
	switch n.kind {
	case pFalse:
		return ConstraintEq
	case pAnd:
		g := ConstraintNone
		for _, k := range n.kids {
			g = max(g, grade(k))
		}
		return g
	case pOr:
		g := ConstraintEq
		for _, k := range n.kids {
			g = min(g, grade(k))
		}
		return g
	case pCmp:
		if n.pos != 0 {
			return ConstraintNone
		}
		switch {
		case n.op == expr.EQ, n.op == expr.NullSafeEQ && !n.neg:
			return ConstraintEq
		case n.op == expr.NE, n.op == expr.NullSafeEQ:
			return ConstraintNone
		}
		return ConstraintRange
	case pIn:
		if n.pos == 0 && !n.neg {
			return ConstraintEq
		}
	case pIsNull:
		if n.pos == 0 && !n.neg {
			return ConstraintEq
		}
	case pRowIn:
		for _, p := range n.rowPos {
			if p == 0 {
				return ConstraintEq
			}
		}
	}
	return ConstraintNone
}

// IndexChoice is the access path ChooseIndex picked.
type IndexChoice struct {
	Index   *catalog.Index
	Entries *catalog.Table // the index's entries (IndexTable)
	Ranges  *RangeProgram  // over Entries
}

// ChooseIndex picks the secondary index of t to read for cond, given the
// primary key's range program pk: an index is used when it bounds its
// first column more narrowly than the primary key bounds its own (equality
// beats a range beats nothing); among equally narrow indexes the first
// declared wins. ok is false when
// the primary key (or a full scan) is as good.
func ChooseIndex(t *catalog.Table, cond expr.Expr, pk *RangeProgram) (IndexChoice, bool) {
	if cond == nil || len(t.Indexes) == 0 {
		return IndexChoice{}, false
	}
	best := pk.FirstKeyConstraint()
	var choice IndexChoice
	found := false
	for i := range t.Indexes {
		ix := &t.Indexes[i]
		et := t.IndexTable(ix)
		rp := CompileRanges(et, cond, nil)
		g := rp.FirstKeyConstraint()
		if g > best {
			best, choice, found = g, IndexChoice{Index: ix, Entries: et, Ranges: rp}, true
		}
	}
	return choice, found
}
