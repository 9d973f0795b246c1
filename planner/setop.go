package planner

// SetOpKind is UNION, EXCEPT or INTERSECT.
type SetOpKind uint8

const (
	Union SetOpKind = iota
	Except
	Intersect
)

func (k SetOpKind) String() string {
	switch k {
	case Except:
		return "EXCEPT"
	case Intersect:
		return "INTERSECT"
	}
	return "UNION"
}

// SetOp combines the rows of two inputs with the same number of columns
// (already converted to the types of Cols). Rows are compared as in
// DISTINCT: NULLs are equal to each other. Without All the result has no
// duplicates; with All, UNION keeps every row, INTERSECT ALL keeps
// min(m, n) copies of a row that appears m times on the left and n times on
// the right, EXCEPT ALL max(m-n, 0) copies (PostgreSQL). The order of the
// result is unspecified: left rows first, in input order.
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
	Cols        []Column
}

func (n *SetOp) Columns() []Column { return n.Cols }
func (n *SetOp) Children() []Node  { return []Node{n.Left, n.Right} }

// Describe renders the node for EXPLAIN.
func (n *SetOp) Describe() string {
	s := n.Kind.String()
	if n.All {
		s += " ALL"
	}
	return s
}
