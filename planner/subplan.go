package planner

import (
	"strings"

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
			out = append(out, a.Arg)
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
	case *Join:
		out := append(append([]expr.Expr(nil), n.LeftKeys...), n.RightKeys...)
		return append(out, n.Cond)
	}
	return nil
}

// explainSubplans adds the plans of the subqueries in n's expressions.
func explainSubplans(n Node, depth int, scanDetail func(*Scan) []string, out *[]string) {
	pad := strings.Repeat("  ", depth+1)
	for _, e := range nodeExprs(n) {
		if e == nil {
			continue
		}
		expr.Walk(e, func(x expr.Expr) bool {
			if sp, ok := x.(SubPlanner); ok {
				*out = append(*out, pad+"SubPlan "+sp.String())
				explain(sp.SubPlan(), depth+2, scanDetail, out)
			}
			return true
		})
	}
}
