package planner

import (
	"encoding/json"
	"strings"

	"github.com/pivotdb/pivotdb/sql/expr"
)

// ExplainNode is one operator of a plan as EXPLAIN shows it: the same tree
// prints as indented text (Lines) and as JSON (EXPLAIN (FORMAT JSON)).
type ExplainNode struct {
	// Operator is the operator and its arguments ("Scan t", "HashJoin on
	// (...)", "SubPlan $1").
	Operator string `json:"Operator"`
	// Details are lines about the operator: for a table read its access
	// path, ranges and shards (from the SQL layer), VERBOSE's output
	// columns.
	Details []string `json:"Details,omitempty"`
	// Plans are the inputs, subplans first (each a "SubPlan" node over the
	// subquery's plan), then the children in order.
	Plans []*ExplainNode `json:"Plans,omitempty"`
}

// ExplainTree builds the EXPLAIN tree of n. detail, when set, gives the
// detail lines of each node.
func ExplainTree(n Node, detail func(Node) []string) *ExplainNode {
	out := &ExplainNode{Operator: describe(n)}
	if detail != nil {
		out.Details = detail(n)
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
					Plans: []*ExplainNode{ExplainTree(sp.SubPlan(), detail)}})
			}
			return true
		})
	}
	for _, c := range n.Children() {
		out.Plans = append(out.Plans, ExplainTree(c, detail))
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
	*out = append(*out, pad+e.Operator)
	for _, l := range e.Details {
		*out = append(*out, pad+"  "+l)
	}
	for _, p := range e.Plans {
		p.lines(depth+1, out)
	}
}

// JSON renders the tree as PostgreSQL's EXPLAIN (FORMAT JSON) frames it: a
// one-element array holding {"Plan": tree}, indented by two spaces.
func (e *ExplainNode) JSON() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // ranges print as [(1) .. (1, <Max>))
	enc.SetIndent("", "  ")
	if err := enc.Encode([]map[string]*ExplainNode{{"Plan": e}}); err != nil {
		// Only strings and slices: encoding cannot fail.
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
