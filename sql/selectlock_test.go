package sql

import (
	"context"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
)

// TestLockingPlan runs testdata/locking_plan: where a locking query's
// LockRows node goes (below LIMIT, above ORDER BY) and how the locked
// tables' key columns reach it. Commands:
//
//	exec  statements, one per line; prints "ok" or the error
//	plan  one locking query; prints its plan with the LockRows node, or the
//	      error
func TestLockingPlan(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	datadriven.RunTest(t, "testdata/locking_plan", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "exec":
			for _, stmt := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				if _, err := tryQuery(s, stmt); err != nil {
					return formatErr(err)
				}
			}
			return "ok\n"
		case "plan":
			p, err := s.Prepare(context.Background(), d.Input, nil)
			if err != nil {
				return formatErr(err)
			}
			sel, ok := p.plan.plan.(*bind.Select)
			if !ok || len(sel.Locking) == 0 {
				t.Fatalf("not a locking query: %T", p.plan.plan)
			}
			node, err := lockingPlan(sel.Node, sel.Locking)
			if err != nil {
				return formatErr(err)
			}
			return strings.Join(planner.Explain(node, nil), "\n") + "\n"
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}
