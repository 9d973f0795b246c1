package planner

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/expr"
)

// JoinKind is the kind of a Join.
type JoinKind uint8

const (
	// InnerJoin passes the pairs of rows for which the keys are equal and
	// Cond is true.
	InnerJoin JoinKind = iota
	// LeftJoin also passes each left row that matched nothing, padded with
	// NULLs for the right columns.
	LeftJoin
)

// Join combines two inputs. Its rows are a left row followed by a right
// row. The right input is read into memory once; when there are keys it is
// hashed on RightKeys and probed with LeftKeys (a NULL key matches
// nothing, as `=` never yields TRUE for it), otherwise every left row is
// paired with every right row.
type Join struct {
	Kind        JoinKind
	Left, Right Node
	// LeftKeys[i] (over left rows) = RightKeys[i] (over right rows); the
	// planner only pairs keys whose values compare as their hash keys do
	// (both numeric, both strings, or the same family).
	LeftKeys, RightKeys []expr.Expr
	// Cond is the rest of the join condition, over the combined row; nil
	// is TRUE.
	Cond expr.Expr
	Cols []Column
}

func (n *Join) Columns() []Column { return n.Cols }
func (n *Join) Children() []Node  { return []Node{n.Left, n.Right} }

func (n *Join) describe() string {
	var sb strings.Builder
	if n.Kind == LeftJoin {
		sb.WriteString("Left ")
	}
	if len(n.LeftKeys) > 0 {
		sb.WriteString("HashJoin on (")
		for i := range n.LeftKeys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(n.LeftKeys[i].String() + " = " + n.RightKeys[i].String())
		}
		sb.WriteString(")")
	} else {
		sb.WriteString("NestedLoopJoin")
	}
	if n.Cond != nil {
		sb.WriteString(" filter " + n.Cond.String())
	}
	return sb.String()
}
