package expr

import (
	"context"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Row is one input row: the values an expression's ColumnRefs index into.
type Row = []types.Value

// Context carries what an evaluation needs besides the row. One Context
// serves a whole statement execution; Eval never modifies it, so goroutines
// evaluating in parallel (one per shard) may share it.
type Context struct {
	// Ctx is the statement's context (cancellation); may be nil.
	Ctx context.Context
	// Params are the values of $1..$n, 0-based. A value may be of another
	// family than the parameter's inferred type (a text-format parameter
	// arrives as an Unknown value); Param.Eval converts it.
	Params []types.Value
	// Now is the statement time: now(), current_timestamp and current_date
	// read it, so that every row of a statement sees the same time.
	Now time.Time
	// ReadTime is the time of the statement's snapshot, at which its table
	// reads judge TTL (a row expired by then is hidden, one expiring later
	// is shown): the AS OF SYSTEM TIME, a REPEATABLE READ transaction's
	// first snapshot, else the statement's. Zero: Now.
	ReadTime time.Time
	// ReadWall and ReadLogical are the statement's read timestamp on the
	// hybrid logical clock, which cluster_logical_timestamp() returns
	// (zero: none, NULL).
	ReadWall    int64
	ReadLogical int32
	// FollowerReadOffset is how far before Now follower_read_timestamp()
	// is (func_follower.go; zero: 4.8 s).
	FollowerReadOffset time.Duration
	// Zone is the session's TimeZone (nil: UTC): casts between
	// timestamptz and timestamp, date or text, and the local clock
	// functions read it (zone.go).
	Zone *time.Location
	// Style is the session's DateStyle and IntervalStyle: casts of
	// dates, times and intervals to text print in it, and text read as a
	// date or timestamp takes its field order (zone.go).
	Style types.Style
	// Exec is the executor's state for the statement (package exec sets
	// it): subquery nodes run their plans through it. Nil outside an
	// executor.
	Exec any
	// Sequences serves nextval, currval, setval and lastval (nil while
	// binding: they are never folded).
	Sequences Sequences
}

// Expr is a typed scalar expression. Trees are built once (Builder) and
// then evaluated many times, possibly concurrently: Eval must not modify the
// node.
type Expr interface {
	// Type is the type of the values Eval returns (NULL is possible for
	// every type). It is types.Unknown only for untyped string literals and
	// parameters whose type the context did not decide, and types.Null for
	// an untyped NULL.
	Type() types.Type
	// Eval computes the value for one input row.
	Eval(c *Context, row Row) (types.Value, error)
	// String renders the expression in SQL-like syntax for EXPLAIN, e.g.
	// (k = 20) AND (l > 3).
	String() string
}

// isLeaf reports whether e renders without needing parentheses when it is
// an operand.
func isLeaf(e Expr) bool {
	switch e.(type) {
	case *ColumnRef, *Const, *Param, *Func, *Cast, *Coalesce, *Case:
		return true
	}
	return false
}

// operand renders e as the operand of an operator.
func operand(e Expr) string {
	if isLeaf(e) {
		return e.String()
	}
	return "(" + e.String() + ")"
}

func joinExprs(es []Expr) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.String())
	}
	return b.String()
}
