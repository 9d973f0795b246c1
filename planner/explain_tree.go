package planner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/expr"
)

// ExplainNode is one operator of a plan as EXPLAIN shows it: the same tree
// prints as indented text (Lines) and as JSON (EXPLAIN (FORMAT JSON)).
type ExplainNode struct {
	// Operator is the operator and its arguments ("Scan t", "HashJoin on
	// (...)", "SubPlan $1").
	Operator string `json:"Operator"`
	// Actual is what EXPLAIN ANALYZE measured running the operator; nil
	// for a plain EXPLAIN. Its fields print inline in JSON, after the
	// operator.
	*ExplainActual
	// Details are lines about the operator: for a table read its access
	// path, ranges and shards (from the SQL layer), VERBOSE's output
	// columns.
	Details []string `json:"Details,omitempty"`
	// Plans are the inputs, subplans first (each a "SubPlan" node over the
	// subquery's plan), then the children in order.
	Plans []*ExplainNode `json:"Plans,omitempty"`
}

// ExplainActual is what EXPLAIN ANALYZE shows of one operator's run.
type ExplainActual struct {
	// Rows is the rows the operator returned over all its loops.
	Rows int64 `json:"Actual Rows"`
	// Loops is how often the operator was started (a subquery's or a
	// lateral join's inner plan runs once per outer row); 0: never.
	Loops int64 `json:"Actual Loops"`
	// TimeMs is the milliseconds spent starting the operator and
	// fetching its rows, inputs included, over all loops; nil with
	// TIMING OFF.
	TimeMs *float64 `json:"Actual Total Time,omitempty"`
}

// String renders the measures as the text form appends them to the
// operator's line.
func (a *ExplainActual) String() string {
	if a.Loops == 0 {
		return "(never executed)"
	}
	s := fmt.Sprintf("(actual rows=%d loops=%d", a.Rows, a.Loops)
	if a.TimeMs != nil {
		s += fmt.Sprintf(" time=%.3f ms", *a.TimeMs)
	}
	return s + ")"
}

// ExplainTree builds the EXPLAIN tree of n. detail, when set, gives the
// detail lines of each node.
func ExplainTree(n Node, detail func(Node) []string) *ExplainNode {
	return ExplainTreeAnalyzed(n, detail, nil)
}

// ExplainTreeAnalyzed is ExplainTree with each node's measures from
// actual (EXPLAIN ANALYZE; nil: none).
func ExplainTreeAnalyzed(n Node, detail func(Node) []string, actual func(Node) *ExplainActual) *ExplainNode {
	out := &ExplainNode{Operator: describe(n)}
	if detail != nil {
		out.Details = detail(n)
	}
	if actual != nil {
		out.ExplainActual = actual(n)
	}
	for _, e := range nodeExprs(n) {
		if e == nil {
			continue
		}
		expr.Walk(e, func(x expr.Expr) bool {
			if sp, ok := x.(SubPlanner); ok {
				op := "SubPlan " + sp.String()
				if l, ok := sp.(interface{ SubPlanOperator() string }); ok {
					op = l.SubPlanOperator()
				}
				out.Plans = append(out.Plans, &ExplainNode{Operator: op,
					Plans: []*ExplainNode{ExplainTreeAnalyzed(sp.SubPlan(), detail, actual)}})
			}
			return true
		})
	}
	for _, c := range n.Children() {
		out.Plans = append(out.Plans, ExplainTreeAnalyzed(c, detail, actual))
	}
	return out
}

// Lines renders the tree as text, one operator per line, its details and
// inputs indented under it.
func (e *ExplainNode) Lines() []string {
	var out []string
	e.lines(0, &out)
	return out
}

func (e *ExplainNode) lines(depth int, out *[]string) {
	pad := strings.Repeat("  ", depth)
	op := e.Operator
	if e.ExplainActual != nil {
		op += "  " + e.ExplainActual.String()
	}
	*out = append(*out, pad+op)
	for _, l := range e.Details {
		*out = append(*out, pad+"  "+l)
	}
	for _, p := range e.Plans {
		p.lines(depth+1, out)
	}
}

// JSON renders the tree as PostgreSQL's EXPLAIN (FORMAT JSON) frames it: a
// one-element array holding {"Plan": tree}, indented by two spaces.
func (e *ExplainNode) JSON() string { return e.JSONWithSummary(nil, nil) }

// JSONWithSummary is JSON with EXPLAIN ANALYZE's summary beside the plan,
// in milliseconds: "Planning Time" and "Execution Time" (nil: left out).
func (e *ExplainNode) JSONWithSummary(planningMs, executionMs *float64) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // ranges print as [(1) .. (1, <Max>))
	enc.SetIndent("", "  ")
	doc := explainDocument{Plan: e, PlanningTime: planningMs, ExecutionTime: executionMs}
	if err := enc.Encode([]explainDocument{doc}); err != nil {
		// Only strings, numbers and slices: encoding cannot fail.
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// explainDocument is one element of EXPLAIN's JSON array, its fields in
// PostgreSQL's order.
type explainDocument struct {
	Plan          *ExplainNode `json:"Plan"`
	PlanningTime  *float64     `json:"Planning Time,omitempty"`
	ExecutionTime *float64     `json:"Execution Time,omitempty"`
}
