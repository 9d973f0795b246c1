package planner

// RecursiveCTE is WITH RECURSIVE's iteration: Base's rows, then the rows of
// Recursive run again and again over the rows the previous round produced
// (read by its WorkTable leaf), until a round produces none. Without All
// (UNION) a row already produced is dropped, which also ends cycles. Both
// inputs are already converted to Cols' types.
type RecursiveCTE struct {
	Name            string
	Base, Recursive Node
	All             bool
	Cols            []Column
}

// WorkTable reads the rows of the previous round of the RecursiveCTE CTE:
// the recursive term's reference to the query's own name. Its Children are
// none, so that walking a plan does not loop.
type WorkTable struct {
	CTE  *RecursiveCTE
	Cols []Column
}

func (n *RecursiveCTE) Columns() []Column { return n.Cols }
func (n *RecursiveCTE) Children() []Node  { return []Node{n.Base, n.Recursive} }
func (n *WorkTable) Columns() []Column    { return n.Cols }
func (n *WorkTable) Children() []Node     { return nil }

// Describe is the node's EXPLAIN line.
func (n *RecursiveCTE) Describe() string {
	s := "Recursive " + n.Name + " UNION"
	if n.All {
		s += " ALL"
	}
	return s
}

// Describe is the node's EXPLAIN line.
func (n *WorkTable) Describe() string { return "WorkTable " + n.CTE.Name }
