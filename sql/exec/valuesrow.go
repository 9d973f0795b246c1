package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
)

// OneValuesRow evaluates n when it is a VALUES list of one row of
// constants and parameters (cast or not): the source of a single-row
// INSERT or UPSERT, the commonest write. It skips the executor's set-up
// (Build's subquery, memory and recursion state, an iterator, Drain's
// slice), about a tenth of the statement's allocations. The row is
// accounted like Drain's rows. ok is false for any other node, and under
// EXPLAIN ANALYZE (which reports the VALUES node); the caller then Builds.
func OneValuesRow(c *Context, n planner.Node) (row expr.Row, ok bool, err error) {
	v, isValues := n.(*planner.Values)
	if !isValues || len(v.Rows) != 1 || len(v.Rows[0]) == 0 {
		return nil, false, nil
	}
	exprs := v.Rows[0]
	for _, e := range exprs {
		if !leafValue(e) {
			return nil, false, nil
		}
	}
	if analysisFrom(c.Ctx) != nil {
		return nil, false, nil
	}
	row = make(expr.Row, len(exprs))
	for i, e := range exprs {
		if row[i], err = e.Eval(c.Eval, nil); err != nil {
			return nil, true, err
		}
	}
	if err := c.grow(rowMemory(row)); err != nil {
		return nil, true, err
	}
	return row, true, nil
}

// leafValue reports whether e is a constant or a parameter, possibly under
// casts: its value needs nothing of the executor (no subquery, no row).
func leafValue(e expr.Expr) bool {
	for {
		switch x := e.(type) {
		case *expr.Const, *expr.Param:
			return true
		case *expr.Cast:
			e = x.E
		default:
			return false
		}
	}
}
