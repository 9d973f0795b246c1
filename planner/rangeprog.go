package planner

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Key-range inference (design §6, after YTsaurus select_rows) runs in two
// steps, so that a prepared statement prunes with its parameters:
//
//  1. Plan time, CompileRanges: the WHERE condition becomes a RangeProgram.
//     NOT is pushed down to the comparisons (De Morgan, negated operators),
//     BETWEEN and row comparisons are already or become plain comparisons,
//     and every comparison of a key column with a row-independent
//     expression (constants, parameters, deterministic functions of them)
//     becomes an atom keeping that expression unevaluated. Top-level
//     conjuncts made only of atoms are "captured"; the others form the
//     residual filter, though the atoms inside them still narrow the read.
//
//  2. Execution time, RangeProgram.Evaluate: the atoms' expressions are
//     evaluated with the statement's parameters, each atom becomes a key
//     trie (keytrie.go) with exact conversion of the value to the column's
//     type (rangeatom.go), the tries are intersected and united along the
//     condition, computed key columns are filled in by evaluation or
//     enumeration (computed.go), and the trie is flattened into sorted,
//     disjoint key ranges within range_expansion_limit (rangeexpand.go).
//
// Exactness: the result is Exact when the ranges hold exactly the keys on
// which the captured conjuncts are TRUE; the executor then needs only the
// residual filter (RangeResult.Filter). Ranges are never narrower than the
// condition allows: whatever cannot be represented (a comparison of an
// expression of a key column, a constraint on a column after a range, a
// parameter that fails to evaluate, the expansion limit) widens them and
// clears Exact, and the executor applies the whole condition.

// DefaultRangeExpansionLimit is the default of the range_expansion_limit
// session setting: the most ranges one table read is split into.
const DefaultRangeExpansionLimit = 200000

// RangeProgram is the plan-time form of a scan's key constraint. It is
// immutable and safe for concurrent Evaluate calls, so a prepared statement
// keeps one.
type RangeProgram struct {
	table    *catalog.Table
	keyTypes []types.Type
	cond     expr.Expr
	residual expr.Expr
	// captured is the AND of the conjuncts made only of atoms; approx the
	// AND of the other conjuncts' atoms (nil when they have none).
	captured *pnode
	approx   *pnode
	computed []*computedKey // by key position; nil where not computed
	// hasComputed: some entry of computed is set (the walk then needs a
	// scratch row to evaluate them on).
	hasComputed bool
	params      bool
	// point is the fast path for point (prefix) lookups, compiled once
	// here so that each execution skips the tries (rangepoint.go); nil
	// when the condition has another shape.
	point *pointProgram
}

// RangeResult is the outcome of one evaluation of a RangeProgram.
type RangeResult struct {
	// Ranges are the key ranges to read: sorted, disjoint, never narrower
	// than the condition. None means the condition is a contradiction and
	// nothing is read.
	Ranges Ranges
	// Exact reports that the ranges hold exactly the keys where the
	// captured conjuncts are TRUE.
	Exact bool
	// Filter is what the executor must still apply to the rows read: the
	// residual conjuncts when Exact, otherwise the whole condition; nil
	// means none. Applying the whole condition is always correct too.
	Filter expr.Expr
	// Widened reports that range_expansion_limit made the ranges wider
	// than they could have been.
	Widened bool
}

// CompileRanges builds the range program of cond (a WHERE condition over
// the rows of table t, ColumnRef.Index being the catalog column index; nil
// means no condition). computed holds the built expression of each computed
// column by catalog column index (ColumnRefs again by catalog index); key
// columns missing from it are treated as ordinary columns.
func CompileRanges(t *catalog.Table, cond expr.Expr, computed map[int]expr.Expr) *RangeProgram {
	p := &RangeProgram{table: t, keyTypes: t.KeyTypes(), cond: cond}
	keyPos := make(map[int]int, len(t.PrimaryKey))
	for i, c := range t.PrimaryKey {
		keyPos[c] = i
	}
	p.computed = analyseComputed(t, keyPos, computed)
	for _, ck := range p.computed {
		p.hasComputed = p.hasComputed || ck != nil
	}
	c := &compiler{keyPos: keyPos, table: t}
	var captured, approx []*pnode
	var residual []expr.Expr
	for _, conj := range conjuncts(cond, nil) {
		n := c.normalize(conj, false)
		if n.hasUnknown() {
			residual = append(residual, conj)
			if n.kind != pUnknown {
				approx = append(approx, n)
			}
			continue
		}
		captured = append(captured, n)
	}
	p.captured = mkAnd(captured)
	if len(approx) > 0 {
		p.approx = mkAnd(approx)
		if p.approx.kind == pUnknown || p.approx.kind == pTrue {
			p.approx = nil
		}
	}
	for _, e := range residual {
		if p.residual == nil {
			p.residual = e
		} else {
			p.residual = &expr.And{L: p.residual, R: e}
		}
	}
	p.params = c.params
	p.point = compilePoint(p)
	return p
}

// InferRanges compiles and evaluates in one step.
func InferRanges(t *catalog.Table, cond expr.Expr, computed map[int]expr.Expr, params []types.Value, limit int) RangeResult {
	return CompileRanges(t, cond, computed).Evaluate(params, limit)
}

// Residual returns the conjuncts of the condition that the ranges do not
// capture (nil when none). RangeResult.Filter says which filter a given
// evaluation needs.
func (p *RangeProgram) Residual() expr.Expr { return p.residual }

// Cond returns the whole condition the program was compiled from.
func (p *RangeProgram) Cond() expr.Expr { return p.cond }

// HasParams reports whether the ranges depend on statement parameters;
// without them one evaluation at plan time serves every execution.
func (p *RangeProgram) HasParams() bool { return p.params }

// String renders the program for debugging: the captured and approximate
// parts in a prefix form over key positions.
func (p *RangeProgram) String() string {
	s := "captured: " + p.captured.String()
	if p.approx != nil {
		s += "; approx: " + p.approx.String()
	}
	return s
}

// conjuncts splits the top-level ANDs of e.
func conjuncts(e expr.Expr, out []expr.Expr) []expr.Expr {
	if e == nil {
		return out
	}
	if a, ok := e.(*expr.And); ok {
		return conjuncts(a.R, conjuncts(a.L, out))
	}
	return append(out, e)
}

// pkind is the kind of a node of the normalized condition.
type pkind uint8

const (
	pTrue    pkind = iota // always TRUE
	pFalse                // never TRUE (FALSE or NULL)
	pUnknown              // not representable: any key may match
	pAnd
	pOr
	pCmp    // key[pos] op arg
	pIn     // key[pos] [NOT] IN (list)
	pIsNull // key[pos] IS [NOT] NULL
	pRowIn  // (key[rowPos]...) IN (rows)
)

// pnode is a node of the normalized condition: AND/OR over atoms, with NOT
// already pushed into the atoms.
type pnode struct {
	kind pkind
	kids []*pnode
	pos  int
	op   expr.CmpOp
	// neg: pCmp with NullSafeEQ is IS DISTINCT FROM; pIn is NOT IN; pIsNull
	// is IS NOT NULL.
	neg  bool
	arg  expr.Expr
	list []expr.Expr
	// pRowIn: rowPos[i] is the key position of the row's element i, or -1
	// for an element that is not a key column (it does not constrain).
	rowPos []int
	rows   [][]expr.Expr
}

var (
	nodeTrue    = &pnode{kind: pTrue}
	nodeFalse   = &pnode{kind: pFalse}
	nodeUnknown = &pnode{kind: pUnknown}
)

func (n *pnode) hasUnknown() bool {
	switch n.kind {
	case pUnknown:
		return true
	case pAnd, pOr:
		for _, k := range n.kids {
			if k.hasUnknown() {
				return true
			}
		}
	case pRowIn:
		for _, p := range n.rowPos {
			if p < 0 {
				return true
			}
		}
	}
	return false
}

func (n *pnode) String() string {
	switch n.kind {
	case pTrue:
		return "true"
	case pFalse:
		return "false"
	case pUnknown:
		return "?"
	case pAnd, pOr:
		parts := make([]string, len(n.kids))
		for i, k := range n.kids {
			parts[i] = k.String()
		}
		op := "and"
		if n.kind == pOr {
			op = "or"
		}
		return op + "(" + strings.Join(parts, ", ") + ")"
	case pCmp:
		op := n.op.String()
		if n.neg {
			op = "IS DISTINCT FROM"
		}
		return fmt.Sprintf("#%d %s %s", n.pos, op, n.arg)
	case pIn:
		op := "IN"
		if n.neg {
			op = "NOT IN"
		}
		parts := make([]string, len(n.list))
		for i, e := range n.list {
			parts[i] = e.String()
		}
		return fmt.Sprintf("#%d %s (%s)", n.pos, op, strings.Join(parts, ", "))
	case pIsNull:
		if n.neg {
			return fmt.Sprintf("#%d IS NOT NULL", n.pos)
		}
		return fmt.Sprintf("#%d IS NULL", n.pos)
	case pRowIn:
		return fmt.Sprintf("%v IN %d rows", n.rowPos, len(n.rows))
	}
	return "?"
}

// mkAnd joins kids with AND, flattening and simplifying.
func mkAnd(kids []*pnode) *pnode {
	var out []*pnode
	for _, k := range kids {
		switch k.kind {
		case pTrue:
			continue
		case pFalse:
			return nodeFalse
		case pAnd:
			out = append(out, k.kids...)
			continue
		}
		out = append(out, k)
	}
	switch len(out) {
	case 0:
		return nodeTrue
	case 1:
		return out[0]
	}
	return &pnode{kind: pAnd, kids: out}
}

// mkOr joins kids with OR, flattening and simplifying. An unknown kid makes
// the whole OR unknown: any key may match it.
func mkOr(kids []*pnode) *pnode {
	var out []*pnode
	for _, k := range kids {
		switch k.kind {
		case pFalse:
			continue
		case pTrue:
			return nodeTrue
		case pUnknown:
			return nodeUnknown
		case pOr:
			out = append(out, k.kids...)
			continue
		}
		out = append(out, k)
	}
	switch len(out) {
	case 0:
		return nodeFalse
	case 1:
		return out[0]
	}
	return &pnode{kind: pOr, kids: out}
}

// compiler normalizes a condition.
type compiler struct {
	table  *catalog.Table
	keyPos map[int]int
	params bool
}

// maxNegatedRowIn bounds the size (rows × columns) of a NOT IN over rows
// that is rewritten into ANDs of ORs; larger ones stay residual.
const maxNegatedRowIn = 256

// normalize returns the node whose TRUE set is that of e (of NOT e when
// negate). NOT moves inward by De Morgan's laws, which hold for "is TRUE"
// in three-valued logic, and into comparisons by negating the operator:
// NOT (k < 5) is TRUE exactly when k >= 5 is (both NULL for a NULL k).
func (c *compiler) normalize(e expr.Expr, negate bool) *pnode {
	switch e := e.(type) {
	case *expr.And:
		l, r := c.normalize(e.L, negate), c.normalize(e.R, negate)
		if negate {
			return mkOr([]*pnode{l, r})
		}
		return mkAnd([]*pnode{l, r})
	case *expr.Or:
		l, r := c.normalize(e.L, negate), c.normalize(e.R, negate)
		if negate {
			return mkAnd([]*pnode{l, r})
		}
		return mkOr([]*pnode{l, r})
	case *expr.Not:
		return c.normalize(e.E, !negate)
	case *expr.Const:
		v := e.Value
		switch {
		case v.IsNull():
			return nodeFalse // NULL and NOT NULL are both never TRUE
		case v.Family() == types.Bool:
			if v.Bool() != negate {
				return nodeTrue
			}
			return nodeFalse
		}
	case *expr.ColumnRef:
		// A Bool key column used as a condition: b is b = TRUE, NOT b is
		// b = FALSE (both NULL for a NULL b).
		if pos, ok := c.keyPos[e.Index]; ok && e.Typ.Family == types.Bool {
			return &pnode{kind: pCmp, pos: pos, op: expr.EQ, arg: expr.NewConst(types.NewBool(!negate))}
		}
	case *expr.IsTruth:
		// b IS [NOT] TRUE is b IS [NOT] DISTINCT FROM TRUE for a Bool b.
		if ref, ok := e.E.(*expr.ColumnRef); ok && ref.Typ.Family == types.Bool {
			if pos, ok := c.keyPos[ref.Index]; ok {
				return &pnode{kind: pCmp, pos: pos, op: expr.NullSafeEQ, neg: e.Negate != negate,
					arg: expr.NewConst(types.NewBool(e.Truth))}
			}
		}
	case *expr.Compare:
		return c.pair(e.Op, e.L, e.R, negate)
	case *expr.IsNull:
		if pos, ok := c.keyColumn(e.E); ok {
			return &pnode{kind: pIsNull, pos: pos, neg: e.Negate != negate}
		}
	case *expr.In:
		pos, ok := c.keyColumn(e.E)
		if !ok || !c.allConstant(e.List) {
			break
		}
		return &pnode{kind: pIn, pos: pos, neg: e.Negate != negate, list: e.List}
	case *expr.RowIn:
		return c.rowIn(e, negate)
	case *expr.RowCompare:
		return c.rowCompare(e, negate)
	}
	return nodeUnknown
}

// keyColumn reports whether e is a reference to a key column and returns
// its key position.
func (c *compiler) keyColumn(e expr.Expr) (int, bool) {
	ref, ok := e.(*expr.ColumnRef)
	if !ok {
		return 0, false
	}
	pos, ok := c.keyPos[ref.Index]
	return pos, ok
}

// constant reports whether e can be evaluated once per execution: it reads
// no column and calls only deterministic functions (parameters allowed).
func (c *compiler) constant(e expr.Expr) bool {
	if !expr.IsRowIndependent(e) {
		return false
	}
	if _, ok := e.(*expr.Const); !ok && expr.HasParams(e) {
		c.params = true
	}
	return true
}

func (c *compiler) allConstant(es []expr.Expr) bool {
	for _, e := range es {
		if !c.constant(e) {
			return false
		}
	}
	return true
}

// pair normalizes l op r (NOT when negate).
func (c *compiler) pair(op expr.CmpOp, l, r expr.Expr, negate bool) *pnode {
	pos, ok := c.keyColumn(l)
	arg := r
	if !ok {
		if pos, ok = c.keyColumn(r); !ok {
			return nodeUnknown
		}
		arg, op = l, op.Commute()
	}
	if !c.constant(arg) {
		return nodeUnknown
	}
	n := &pnode{kind: pCmp, pos: pos, op: op, arg: arg}
	if negate {
		if op == expr.NullSafeEQ {
			n.neg = true
		} else {
			n.op = op.Negate()
		}
	}
	return n
}

// rowIn normalizes (l...) [NOT] IN (rows).
func (c *compiler) rowIn(e *expr.RowIn, negate bool) *pnode {
	for _, row := range e.List {
		if !c.allConstant(row) {
			return nodeUnknown
		}
	}
	if e.Negate != negate {
		// NOT IN is TRUE when every row differs in some pair with both
		// sides non-NULL: AND over the rows of OR over the pairs of <>.
		if len(e.List)*len(e.L) > maxNegatedRowIn {
			return nodeUnknown
		}
		rows := make([]*pnode, len(e.List))
		for i, row := range e.List {
			pairs := make([]*pnode, len(row))
			for j := range row {
				pairs[j] = c.pair(expr.NE, e.L[j], row[j], false)
			}
			rows[i] = mkOr(pairs)
		}
		return mkAnd(rows)
	}
	n := &pnode{kind: pRowIn, rowPos: make([]int, len(e.L)), rows: e.List}
	anyKey := false
	for i, l := range e.L {
		pos, ok := c.keyColumn(l)
		if !ok {
			pos = -1
		} else {
			anyKey = true
		}
		n.rowPos[i] = pos
	}
	if !anyKey {
		return nodeUnknown
	}
	return n
}

// rowCompare normalizes a row comparison. The lexicographic order
// (a, b) > (1, 2) is a > 1 OR (a = 1 AND b > 2), which is TRUE exactly when
// the row comparison is (a NULL met before a difference makes both NULL).
// Negation flips the operator, since the comparison is NULL in the same
// cases whatever the operator.
func (c *compiler) rowCompare(e *expr.RowCompare, negate bool) *pnode {
	n := len(e.L)
	pairs := func(op expr.CmpOp, neg bool) []*pnode {
		out := make([]*pnode, n)
		for i := range e.L {
			out[i] = c.pair(op, e.L[i], e.R[i], neg)
		}
		return out
	}
	switch e.Op {
	case expr.EQ:
		if negate {
			return mkOr(pairs(expr.NE, false))
		}
		return mkAnd(pairs(expr.EQ, false))
	case expr.NE:
		if negate {
			return mkAnd(pairs(expr.EQ, false))
		}
		return mkOr(pairs(expr.NE, false))
	case expr.NullSafeEQ:
		if negate {
			return mkOr(pairs(expr.NullSafeEQ, true))
		}
		return mkAnd(pairs(expr.NullSafeEQ, false))
	}
	op := e.Op
	if negate {
		op = op.Negate()
	}
	strict := op
	switch op {
	case expr.LE:
		strict = expr.LT
	case expr.GE:
		strict = expr.GT
	}
	alts := make([]*pnode, n)
	for k := 0; k < n; k++ {
		conj := make([]*pnode, 0, k+1)
		for j := 0; j < k; j++ {
			conj = append(conj, c.pair(expr.EQ, e.L[j], e.R[j], false))
		}
		o := strict
		if k == n-1 {
			o = op
		}
		conj = append(conj, c.pair(o, e.L[k], e.R[k], false))
		alts[k] = mkAnd(conj)
	}
	return mkOr(alts)
}
