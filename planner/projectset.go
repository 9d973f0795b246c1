package planner

import "github.com/pivotdb/pivotdb/sql/expr"

// ProjectSet runs the set-returning functions of a select list (unnest):
// for each input row it evaluates Arrays and emits as many rows as the
// longest array has elements, each the input row followed by one element
// of every array (NULL where an array is shorter), as PostgreSQL's
// ProjectSet does; an input row whose arrays are all empty or NULL emits
// nothing. The Project above reads the appended columns.
type ProjectSet struct {
	Input  Node
	Arrays []expr.Expr
	Cols   []Column // Input's columns, then one per array
}

func (n *ProjectSet) Columns() []Column { return n.Cols }
func (n *ProjectSet) Children() []Node  { return []Node{n.Input} }

// Describe is the node's EXPLAIN line.
func (n *ProjectSet) Describe() string { return "ProjectSet unnest(" + joinExprs(n.Arrays) + ")" }
