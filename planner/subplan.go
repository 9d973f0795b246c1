package planner

import (
	"github.com/pivotdb/pivotdb/sql/expr"
)

// SubPlanner is implemented by expression nodes that run a plan of their
// own (subqueries); EXPLAIN prints those plans under the node whose
// expressions contain them.
type SubPlanner interface {
	expr.Expr
	SubPlan() Node
}

// nodeExprs returns the expressions a node evaluates.
func nodeExprs(n Node) []expr.Expr {
	switch n := n.(type) {
	case *Scan:
		return []expr.Expr{n.Filter}
	case *Filter:
		return []expr.Expr{n.Cond}
	case *Project:
		return n.Exprs
	case *Aggregate:
		out := append([]expr.Expr(nil), n.GroupBy...)
		for _, a := range n.Aggs {
			out = append(out, a.Arg, a.Filter)
			for _, o := range a.Order {
				out = append(out, o.Expr)
			}
		}
		return out
	case *Values:
		var out []expr.Expr
		for _, r := range n.Rows {
			out = append(out, r...)
		}
		return out
	case *Limit:
		return []expr.Expr{n.Count, n.Offset}
	case *Series:
		return []expr.Expr{n.Start, n.Stop, n.Step}
	case *Unnest:
		return n.Args
	case *ProjectSet:
		return n.Arrays
	case *Join:
		out := append(append([]expr.Expr(nil), n.LeftKeys...), n.RightKeys...)
		return append(out, n.Cond)
	}
	return nil
}
