package parser

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func TestExplainOptions(t *testing.T) {
	for _, tc := range []struct {
		sql              string
		analyze, verbose bool
		costs            string
		format           string
	}{
		{sql: "EXPLAIN (COSTS OFF) SELECT 1", costs: "off", format: "text"},
		{sql: "EXPLAIN (VERBOSE, COSTS, FORMAT JSON) SELECT (1)", verbose: true, costs: "on", format: "json"},
		{sql: "explain (verbose false, format 'text') select a from t where (a) in (1, 2)", costs: "", format: "text"},
		{sql: "EXPLAIN ANALYZE VERBOSE SELECT 1", analyze: true, verbose: true, format: "text"},
		{sql: "EXPLAIN (ANALYZE) SELECT 1", analyze: true, format: "text"},
	} {
		sts, err := Parse(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		o := sts[0].Explain
		if o == nil {
			t.Fatalf("%s: no options", tc.sql)
		}
		costs := ""
		if o.Costs != nil {
			costs = map[bool]string{true: "on", false: "off"}[*o.Costs]
		}
		if o.Analyze != tc.analyze || o.Verbose != tc.verbose || costs != tc.costs || o.Format != tc.format {
			t.Errorf("%s: got %+v costs %q", tc.sql, o, costs)
		}
		if _, ok := sts[0].AST.(*ast.ExplainStmt); !ok {
			t.Errorf("%s: AST %T", tc.sql, sts[0].AST)
		}
	}
	for _, tc := range []struct{ sql, code string }{
		{"EXPLAIN (FORMAT XML) SELECT 1", "0A000"},
		{"EXPLAIN (FORMAT BOGUS) SELECT 1", "22023"},
		{"EXPLAIN (NOPE) SELECT 1", "42601"},
		{"EXPLAIN (BUFFERS) SELECT 1", "0A000"},
		{"EXPLAIN (COSTS maybe) SELECT 1", "42601"},
		{"EXPLAIN (COSTS OFF)", "42601"},
	} {
		_, err := Parse(tc.sql)
		if err == nil || sqlerr.Code(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.sql, err, tc.code)
		}
	}
	if sts, err := Parse("EXPLAIN SELECT 1"); err != nil || sts[0].Explain != nil {
		t.Errorf("plain EXPLAIN: %v %+v", err, sts)
	}
}
