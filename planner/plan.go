package planner

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Column describes one output column of a node.
type Column struct {
	Name string
	Type types.Type
	// Table and Index identify the source table column of a plain column
	// reference (for RowDescription); Table is nil otherwise.
	Table *catalog.Table
	Index int
	// Hidden columns are carried for sorting but not returned to clients.
	Hidden bool
}

// VisibleCount counts the columns a client sees (hidden ones come last).
func VisibleCount(cols []Column) int {
	n := 0
	for _, c := range cols {
		if !c.Hidden {
			n++
		}
	}
	return n
}

// Node is a logical plan node.
type Node interface {
	// Columns describes the rows the node produces.
	Columns() []Column
	// Children returns the node's inputs.
	Children() []Node
}

// Scan reads the rows of a table in primary key order. Its rows have one
// value per table column (hidden ones included), in catalog order.
type Scan struct {
	Table *catalog.Table
	// Filter is the scan's whole condition (nil: none). Writes re-check it
	// on each row they lock.
	Filter expr.Expr
	// Ranges narrows the read to key ranges inferred from Filter; it is
	// evaluated with the statement's parameters at execution, which also
	// yields the part of Filter still to apply. Nil reads the whole table.
	Ranges *RangeProgram
	Cols   []Column
	// Index, when set, is the secondary index the scan reads through:
	// IndexRanges (compiled from Filter over the index's entries, table
	// IndexEntries) select entries, each entry's primary key fetches its
	// row, and Filter is applied to the row. Rows then come in index
	// order. Ranges is still set: writers re-check rows with Filter.
	Index        *catalog.Index
	IndexEntries *catalog.Table
	IndexRanges  *RangeProgram
}

// Values produces constant rows (SELECT without FROM, INSERT ... VALUES).
type Values struct {
	Rows [][]expr.Expr
	Cols []Column
}

// Filter passes rows for which Cond is true.
type Filter struct {
	Input Node
	Cond  expr.Expr
}

// Project computes one output column per expression.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Cols  []Column
}

// Aggregate groups its input by GroupBy and computes Aggs per group. Its
// rows are the group values followed by the aggregate results. Without
// GroupBy it produces exactly one row, even for empty input.
//
// Sets, when set (GROUPING SETS, ROLLUP, CUBE), lists the grouping sets as
// indexes into GroupBy: each input row is added to one group per set,
// keyed by the set's columns; a group's row has NULL for the GroupBy
// columns outside its set.
type Aggregate struct {
	Input   Node
	GroupBy []expr.Expr
	Aggs    []*expr.AggSpec
	Cols    []Column
	Sets    [][]int
}

// SortKey orders by the column at Index of the input.
type SortKey struct {
	Index int
	Desc  bool
	// NullsFirst puts NULLs before every value, whatever the direction
	// (NULLS FIRST); otherwise they come after every value.
	NullsFirst bool
}

// NullsDefault is where NULLs go when ORDER BY does not say: YQL's order
// (NULL is the smallest value: first ascending, last descending) or, when
// pg, PostgreSQL's (NULL is the largest: last ascending, first
// descending).
func NullsDefault(desc, pg bool) (nullsFirst bool) { return desc == pg }

// Sort orders its input by Keys; each key says where its NULLs go.
type Sort struct {
	Input Node
	Keys  []SortKey
}

// Limit skips Offset rows and then passes at most Count rows. Either may be
// nil; both are constant or parameter expressions.
type Limit struct {
	Input         Node
	Count, Offset expr.Expr
}

// Distinct removes duplicate rows, comparing the first N columns, or,
// when On is set, the columns at those indexes (DISTINCT ON: the first
// row of each group passes, so the input is sorted first).
type Distinct struct {
	Input Node
	N     int
	On    []int
}

// Generate produces rows computed by the SQL layer at execution time: system
// views and SHOW output.
type Generate struct {
	Name string
	Cols []Column
	Rows func() ([][]types.Value, error)
}

func (n *Scan) Columns() []Column      { return n.Cols }
func (n *Values) Columns() []Column    { return n.Cols }
func (n *Filter) Columns() []Column    { return n.Input.Columns() }
func (n *Project) Columns() []Column   { return n.Cols }
func (n *Aggregate) Columns() []Column { return n.Cols }
func (n *Sort) Columns() []Column      { return n.Input.Columns() }
func (n *Limit) Columns() []Column     { return n.Input.Columns() }
func (n *Distinct) Columns() []Column  { return n.Input.Columns() }
func (n *Generate) Columns() []Column  { return n.Cols }

func (n *Scan) Children() []Node      { return nil }
func (n *Values) Children() []Node    { return nil }
func (n *Filter) Children() []Node    { return []Node{n.Input} }
func (n *Project) Children() []Node   { return []Node{n.Input} }
func (n *Aggregate) Children() []Node { return []Node{n.Input} }
func (n *Sort) Children() []Node      { return []Node{n.Input} }
func (n *Limit) Children() []Node     { return []Node{n.Input} }
func (n *Distinct) Children() []Node  { return []Node{n.Input} }
func (n *Generate) Children() []Node  { return nil }

// Explain renders the plan tree, one node per line, children indented.
// scanDetail, when set, adds lines under each Scan (the SQL layer prints the
// ranges and shards a read touches, which need the shard maps).
func Explain(n Node, scanDetail func(*Scan) []string) []string {
	var detail func(Node) []string
	if scanDetail != nil {
		detail = func(n Node) []string {
			if scan, ok := n.(*Scan); ok {
				return scanDetail(scan)
			}
			return nil
		}
	}
	return ExplainTree(n, detail).Lines()
}

func describe(n Node) string {
	switch n := n.(type) {
	case *Scan:
		if n.Index != nil {
			return "Scan " + n.Table.Name + " using index " + n.Index.Name
		}
		return "Scan " + n.Table.Name
	case *Values:
		return fmt.Sprintf("Values %d rows", len(n.Rows))
	case *Filter:
		return "Filter " + n.Cond.String()
	case *Project:
		return "Project " + joinExprs(n.Exprs)
	case *Aggregate:
		parts := []string{}
		for _, a := range n.Aggs {
			parts = append(parts, a.String())
		}
		s := "Aggregate group by (" + joinExprs(n.GroupBy) + ") "
		if n.Sets != nil {
			var sets []string
			for _, set := range n.Sets {
				var cols []string
				for _, i := range set {
					cols = append(cols, n.GroupBy[i].String())
				}
				sets = append(sets, "("+strings.Join(cols, ", ")+")")
			}
			s += "sets " + strings.Join(sets, ", ") + " "
		}
		return s + strings.Join(parts, ", ")
	case *Sort:
		parts := []string{}
		for _, k := range n.Keys {
			d := "asc"
			if k.Desc {
				d = "desc"
			}
			if k.NullsFirst != NullsDefault(k.Desc, false) {
				// Shown only where it differs from YQL's order, which
				// the plans in tests were written with.
				if k.NullsFirst {
					d += " nulls first"
				} else {
					d += " nulls last"
				}
			}
			parts = append(parts, fmt.Sprintf("#%d %s", k.Index+1, d))
		}
		return "Sort " + strings.Join(parts, ", ")
	case *Limit:
		s := "Limit"
		if n.Count != nil {
			s += " " + n.Count.String()
		}
		if n.Offset != nil {
			s += " offset " + n.Offset.String()
		}
		return s
	case *Distinct:
		if len(n.On) > 0 {
			parts := []string{}
			for _, i := range n.On {
				parts = append(parts, fmt.Sprintf("#%d", i+1))
			}
			return "Distinct on (" + strings.Join(parts, ", ") + ")"
		}
		return "Distinct"
	case *Generate:
		return "Generate " + n.Name
	case *Join:
		return n.describe()
	}
	if d, ok := n.(interface{ Describe() string }); ok {
		return d.Describe()
	}
	return fmt.Sprintf("%T", n)
}

func joinExprs(es []expr.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

// Unnest produces the elements of its array arguments, one row per
// position, in storage order: unnest(a, b, ...) in FROM, one column per
// argument (NULL where an array is shorter than the longest), plus the
// 1-based position when Ordinality (WITH ORDINALITY). The arguments are
// evaluated once when the node starts (they may refer to an outer
// query's row); a NULL array counts as empty.
type Unnest struct {
	Args       []expr.Expr
	Ordinality bool
	Cols       []Column
}

func (n *Unnest) Columns() []Column { return n.Cols }
func (n *Unnest) Children() []Node  { return nil }

// Describe is the node's EXPLAIN line.
func (n *Unnest) Describe() string {
	s := "Unnest " + joinExprs(n.Args)
	if n.Ordinality {
		s += " with ordinality"
	}
	return s
}

// Series produces the integers Start, Start+Step, ... up to Stop (down to
// Stop for a negative Step): generate_series(start, stop [, step]) in FROM.
// Its one column is the value. The arguments are evaluated once when the
// node starts (they may refer to an outer query's row).
type Series struct {
	Start, Stop, Step expr.Expr // Step nil: 1
	Cols              []Column
}

func (n *Series) Columns() []Column { return n.Cols }
func (n *Series) Children() []Node  { return nil }

// Describe is the node's EXPLAIN line.
func (n *Series) Describe() string {
	s := "Series " + n.Start.String() + " to " + n.Stop.String()
	if n.Step != nil {
		s += " step " + n.Step.String()
	}
	return s
}
