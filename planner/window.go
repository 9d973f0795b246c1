package planner

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Window evaluates window functions that share one PARTITION BY and ORDER
// BY. Its rows are the input's columns followed by one value per function,
// in the order of Funcs; rows come out sorted by partition, then by the
// window's order (the order the client sees when the query has no ORDER BY
// of its own, as in PostgreSQL). Several window specifications stack
// several Window nodes.
type Window struct {
	Input       Node
	PartitionBy []expr.Expr
	// PartitionNullsFirst puts rows with NULL partition values before the
	// others (the dialect's default for an ascending key: NullsDefault):
	// partitions come out in that order.
	PartitionNullsFirst bool
	OrderBy             []WindowOrder
	Funcs               []*WindowFunc
	Cols                []Column
}

// WindowOrder is one ORDER BY item of a window.
type WindowOrder struct {
	Expr expr.Expr
	Desc bool
	// NullsFirst puts NULLs before every value, whatever the direction
	// (NULLS FIRST, or the dialect's default: NullsDefault).
	NullsFirst bool
}

// WindowFunc is one window function call. Name is the function's lower-case
// name: a ranking or value function (row_number, rank, dense_rank,
// percent_rank, cume_dist, ntile, lag, lead, first_value, last_value,
// nth_value) or, when Agg is set, an aggregate evaluated over the frame.
type WindowFunc struct {
	Name string
	// Args are evaluated on every input row (lag's offset and default,
	// ntile's bucket count and nth_value's n included, as in PostgreSQL).
	Args  []expr.Expr
	Agg   *expr.AggSpec
	Typ   types.Type
	Frame Frame
}

// FrameMode is how a frame's offsets count: rows, ORDER BY values, or
// groups of peers.
type FrameMode uint8

const (
	FrameRange FrameMode = iota
	FrameRows
	FrameGroups
)

func (m FrameMode) String() string {
	switch m {
	case FrameRows:
		return "ROWS"
	case FrameGroups:
		return "GROUPS"
	}
	return "RANGE"
}

// BoundKind is one end of a frame.
type BoundKind uint8

const (
	UnboundedPreceding BoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame. Offset (constant or a parameter) is the
// count of ROWS or GROUPS; for RANGE, Value is the ORDER BY value at which
// the frame ends for a row: the ORDER BY expression minus or plus the
// offset, built by the binder according to the direction of the order, so
// that the executor compares values only.
type FrameBound struct {
	Kind   BoundKind
	Offset expr.Expr
	Value  expr.Expr
}

// Frame is the set of rows of a partition an aggregate or value function
// sees for one row. The default (no frame clause) is RANGE BETWEEN
// UNBOUNDED PRECEDING AND CURRENT ROW: with ORDER BY, the rows up to the
// current row's last peer; without, the whole partition.
type Frame struct {
	Mode       FrameMode
	Start, End FrameBound
}

// DefaultFrame is the frame of a window without a frame clause.
var DefaultFrame = Frame{Mode: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}

func (n *Window) Columns() []Column { return n.Cols }
func (n *Window) Children() []Node  { return []Node{n.Input} }

// Describe is the node's EXPLAIN line.
func (n *Window) Describe() string {
	var parts []string
	for _, f := range n.Funcs {
		parts = append(parts, f.String())
	}
	s := "Window " + strings.Join(parts, ", ")
	if len(n.PartitionBy) > 0 {
		s += " partition by (" + joinExprs(n.PartitionBy) + ")"
	}
	if len(n.OrderBy) > 0 {
		var keys []string
		for _, o := range n.OrderBy {
			k := o.Expr.String()
			if o.Desc {
				k += " desc"
			}
			if o.NullsFirst != NullsDefault(o.Desc, false) {
				// Only what differs from YQL's order is shown.
				if o.NullsFirst {
					k += " nulls first"
				} else {
					k += " nulls last"
				}
			}
			keys = append(keys, k)
		}
		s += " order by (" + strings.Join(keys, ", ") + ")"
	}
	return s
}

func (f *WindowFunc) String() string {
	var s string
	if f.Agg != nil {
		s = f.Agg.String()
	} else {
		s = f.Name + "(" + joinExprs(f.Args) + ")"
	}
	if f.Frame != DefaultFrame {
		s += fmt.Sprintf(" %s between %s and %s", f.Frame.Mode, f.Frame.Start, f.Frame.End)
	}
	return s
}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "unbounded preceding"
	case OffsetPreceding:
		return b.Offset.String() + " preceding"
	case OffsetFollowing:
		return b.Offset.String() + " following"
	case UnboundedFollowing:
		return "unbounded following"
	}
	return "current row"
}
