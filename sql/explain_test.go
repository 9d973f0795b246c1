package sql

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExplainVerboseJSON: VERBOSE adds output columns and the shards a read
// touches; FORMAT JSON gives the same tree as the text form.
func TestExplainVerboseJSON(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE ej (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO ej VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	query(t, s, "ALTER TABLE ej RESHARD AT ((), (2))")
	text := func(q string) string {
		var lines []string
		for _, r := range query(t, s, q) {
			lines = append(lines, r[0].Str())
		}
		return strings.Join(lines, "\n")
	}
	q := "SELECT v FROM ej WHERE k >= 2 ORDER BY v"
	verbose := text("EXPLAIN (VERBOSE, COSTS OFF) " + q)
	if !strings.Contains(verbose, "output: v Utf8") || !strings.Contains(verbose, "partitions=1/2") {
		t.Fatalf("VERBOSE:\n%s", verbose)
	}
	var shardsLine string
	for _, l := range strings.Split(verbose, "\n") {
		if strings.Contains(l, "shards: ") {
			shardsLine = strings.TrimSpace(l)
		}
	}
	if shardsLine == "" || strings.Contains(shardsLine, ",") {
		t.Fatalf("VERBOSE should list one shard read:\n%s", verbose)
	}

	rows := query(t, s, "EXPLAIN (VERBOSE, FORMAT JSON) "+q)
	if len(rows) != 1 {
		t.Fatalf("FORMAT JSON gave %d rows", len(rows))
	}
	type node struct {
		Operator string
		Details  []string
		Plans    []node
	}
	var doc []struct{ Plan node }
	if err := json.Unmarshal([]byte(rows[0][0].Str()), &doc); err != nil {
		t.Fatalf("FORMAT JSON is not JSON: %v\n%s", err, rows[0][0].Str())
	}
	// The JSON tree, printed as text, is the text form.
	var lines []string
	var walk func(n node, depth int)
	walk = func(n node, depth int) {
		pad := strings.Repeat("  ", depth)
		lines = append(lines, pad+n.Operator)
		for _, d := range n.Details {
			lines = append(lines, pad+"  "+d)
		}
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(doc[0].Plan, 0)
	if got, want := strings.Join(lines, "\n"), text("EXPLAIN VERBOSE "+q); got != want {
		t.Fatalf("JSON tree:\n%s\ntext form:\n%s", got, want)
	}
}
