package bind

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Decorrelating EXISTS and IN.
//
// A correlated subquery reads its outer values as hidden parameters and
// runs once per distinct tuple of them (subquery.go). When the inner read
// cannot use those values to narrow its keys, each run scans the whole
// inner table: EXISTS over 10,000 × 10,000 rows is 10,000 scans. For
// EXISTS, NOT EXISTS, IN and NOT IN whose correlation is only a
// conjunction of equalities `inner column = outer value` (the rest of the
// inner query reading no outer value), hashSubquery gives the node a
// decorrelated plan: the inner query without those equalities, its rows
// carrying the inner key columns, run once and hashed on them
// (exec.SubHash) — a hash semi join (anti join for the negated forms) on
// the correlation keys. The result on every outer row is the one the
// per-row path gives, NULLs included: an inner or outer NULL key matches
// nothing, and NOT IN still compares with the matching group's rows
// (exec.Subquery.in), so a NULL among them still makes it NULL. Because
// the answer is the same, the node may stand anywhere (under OR, in the
// select list); only the cost changes.
//
// Not decorrelated: aggregates, DISTINCT, ORDER BY, LIMIT (but EXISTS's
// LIMIT n, n ≥ 1, which changes nothing), OFFSET, set operations
// and joins in the subquery (any plan other than a projection of one
// table's scan), outer values anywhere but in the key equalities, values
// of enclosing subqueries (Inherited), keys whose types do not compare as
// their hash keys do, and inner reads the correlation narrows to a key
// range or an index (they already read only the matching rows per outer
// value, and hashing would read the whole table instead). SET
// enable_hashjoin = off keeps the per-row path, as for joins.

// hashSubquery sets node.Hash when the subquery qualifies.
// notExists tells the EXPLAIN label (NOT EXISTS is a Not above the node).
func (a *binder) hashSubquery(node *exec.Subquery, notExists bool) error {
	if node.Kind != exec.SubExists && node.Kind != exec.SubIn {
		return nil
	}
	if len(node.Binds) == 0 || len(node.Inherited) > 0 {
		return nil
	}
	if !a.setting("enable_hashjoin") {
		return nil // SET enable_hashjoin = off: one inner run per outer row
	}
	plan := node.Plan
	if l, ok := plan.(*planner.Limit); ok && node.Kind == exec.SubExists && existsLimit(l) {
		plan = l.Input // EXISTS (... LIMIT 1): the limit changes nothing
	}
	proj, ok := plan.(*planner.Project)
	if !ok {
		return nil
	}
	var conds []expr.Expr
	in := proj.Input
	if f, ok := in.(*planner.Filter); ok {
		conds = append(conds, splitAnd(f.Cond)...)
		in = f.Input
	}
	scan, ok := in.(*planner.Scan)
	if !ok || scan.Index != nil {
		return nil
	}
	if scan.Filter != nil {
		conds = append(conds, splitAnd(scan.Filter)...)
	}
	slots := map[int]bool{}
	for _, s := range node.Slots {
		slots[s] = true
	}
	readsOuter := func(e expr.Expr) bool {
		found := false
		expr.Walk(e, func(x expr.Expr) bool {
			if p, ok := x.(*expr.Param); ok && slots[p.N] {
				found = true
			}
			if _, ok := x.(*exec.Subquery); ok {
				found = true // its plan may read them; not looked into
			}
			return !found
		})
		return found
	}
	for _, e := range proj.Exprs {
		if readsOuter(e) {
			return nil
		}
	}
	var rest, keyCols []expr.Expr
	var probe []expr.Expr
	var keyText []string
	for _, c := range conds {
		if col, p, ok := correlationKey(c, slots); ok {
			keyCols = append(keyCols, col)
			probe = append(probe, p)
			outer := p.String()
			for i, s := range node.Slots {
				if s == p.(*expr.Param).N {
					outer = node.Binds[i].String()
				}
			}
			keyText = append(keyText, col.String()+" = "+outer)
			continue
		}
		if readsOuter(c) {
			return nil
		}
		rest = append(rest, c)
	}
	if len(keyCols) == 0 {
		return nil
	}
	hs := *scan
	hs.Filter, hs.Ranges = nil, nil
	if len(rest) > 0 {
		if err := a.setScanCondition(&hs, andAll(rest)); err != nil {
			return err
		}
	}
	// The correlation narrows the per-row read (a key range or an index
	// the outer value selects): keep it.
	if scan.Ranges != nil && scan.Ranges.HasParams() && (hs.Ranges == nil || !hs.Ranges.HasParams()) {
		return nil
	}
	hp := &planner.Project{Input: &hs, Cols: append([]planner.Column(nil), proj.Cols...)}
	hp.Exprs = append(append([]expr.Expr(nil), proj.Exprs...), keyCols...)
	for _, k := range keyCols {
		hp.Cols = append(hp.Cols, planner.Column{Name: k.String(), Type: k.Type(), Hidden: true})
	}
	node.Hash = &exec.SubHash{Plan: hp, KeyAt: len(proj.Exprs), Probe: probe, Keys: keyText, Anti: notExists || node.Negate}
	return nil
}

// correlationKey matches `inner column = outer value` (either way round),
// the outer value being one of the subquery's own hidden parameters, with
// types whose hash keys are equal exactly when `=` is TRUE.
func correlationKey(e expr.Expr, slots map[int]bool) (expr.Expr, expr.Expr, bool) {
	c, ok := e.(*expr.Compare)
	if !ok || c.Op != expr.EQ {
		return nil, nil, false
	}
	l, r := c.L, c.R
	if _, ok := l.(*expr.Param); ok {
		l, r = r, l
	}
	col, ok := l.(*expr.ColumnRef)
	if !ok {
		return nil, nil, false
	}
	p, ok := r.(*expr.Param)
	if !ok || !slots[p.N] || !hashableKeys(col.Typ, p.Typ) {
		return nil, nil, false
	}
	return col, p, true
}

func hashableKeys(a, b types.Type) bool {
	fa, fb := a.Family, b.Family
	switch {
	case a.Blank || b.Blank:
		// char(n) compares ignoring trailing blanks; hashing the stored
		// (padded) bytes would not, so such keys keep the per-row path.
		return false
	case fa.IsInteger() && fb.IsInteger():
		return true
	case fa != fb:
		return false
	}
	switch fa {
	case types.Bool, types.Utf8, types.String, types.Date, types.Uuid:
		return true
	}
	return false
}

// existsLimit reports whether l is a LIMIT that cannot change an EXISTS: a
// constant count of at least one and no OFFSET.
func existsLimit(l *planner.Limit) bool {
	if l.Offset != nil {
		return false
	}
	c, ok := l.Count.(*expr.Const)
	return ok && !c.Value.IsNull() && c.Value.Family().IsInteger() && c.Value.Int() >= 1
}
