package planner

import "github.com/pivotdb/pivotdb/sql/expr"

// Apply is a lateral join: for each row of Left, Binds are evaluated on it
// and bound to the hidden parameters Slots, and Right (which reads them as
// outer references) runs with them. Its rows are a left row followed by a
// right row; with Outer, a left row for which Right gives no row (or none
// passing Cond) appears once, padded with NULLs (LEFT JOIN LATERAL). Cond,
// over the combined row, may be nil.
type Apply struct {
	Left, Right Node
	Binds       []expr.Expr
	Slots       []int
	Outer       bool
	Cond        expr.Expr
	Cols        []Column
}

func (n *Apply) Columns() []Column { return n.Cols }
func (n *Apply) Children() []Node  { return []Node{n.Left, n.Right} }

// Describe is the node's EXPLAIN line.
func (n *Apply) Describe() string {
	s := "Apply (lateral)"
	if n.Outer {
		s = "Left " + s
	}
	if len(n.Binds) > 0 {
		s += " binds (" + joinExprs(n.Binds) + ")"
	}
	if n.Cond != nil {
		s += " filter " + n.Cond.String()
	}
	return s
}
