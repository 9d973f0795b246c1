package planner

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
)

// LockRows locks, for each row of its input, the rows of the tables its
// targets name (SELECT ... FOR UPDATE and the other locking clauses), as
// PostgreSQL's LockRows node does: it sits below the query's LIMIT and
// above its ORDER BY, so only the rows that reach it are locked, and a row
// SKIP LOCKED passes over does not count against the LIMIT. Its rows are
// its input's; a row whose lock was skipped is left out.
type LockRows struct {
	Input   Node
	Targets []LockTarget
}

// LockTarget is one table row a LockRows node locks per input row: the
// primary key values of Table sit at KeyCols of the row.
type LockTarget struct {
	Table   *catalog.Table
	KeyCols []int
	// Strength is the row lock strength to take (storage/mvcc.Strength:
	// FOR KEY SHARE = 1 ... FOR UPDATE = 4) and Wait the clause's policy
	// (parser.LockWait: 0 wait, 1 SKIP LOCKED, 2 NOWAIT); plans are data
	// and import neither package.
	Strength uint8
	Wait     uint8
}

func (n *LockRows) Columns() []Column { return n.Input.Columns() }
func (n *LockRows) Children() []Node  { return []Node{n.Input} }

// Describe is the node's line in a plan: each target's table, key columns
// (1-based, as Sort prints them), strength and wait policy.
func (n *LockRows) Describe() string {
	strengths := [...]string{"", "FOR KEY SHARE", "FOR SHARE", "FOR NO KEY UPDATE", "FOR UPDATE"}
	waits := [...]string{"", " SKIP LOCKED", " NOWAIT"}
	var parts []string
	for _, t := range n.Targets {
		var cols []string
		for _, c := range t.KeyCols {
			cols = append(cols, fmt.Sprintf("#%d", c+1))
		}
		s := "?"
		if int(t.Strength) < len(strengths) {
			s = strengths[t.Strength]
		}
		w := ""
		if int(t.Wait) < len(waits) {
			w = waits[t.Wait]
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %s%s", t.Table.Name, strings.Join(cols, ", "), s, w))
	}
	return "LockRows " + strings.Join(parts, ", ")
}
