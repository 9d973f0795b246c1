package sql

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/types"
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

// TestExplainAnalyzeTimes: EXPLAIN ANALYZE with its default TIMING and
// SUMMARY shows each operator's time and the planning and execution
// times; with the times masked the output is the golden one.
func TestExplainAnalyzeTimes(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE et (k Int64, v Utf8, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = (3))")
	query(t, s, "INSERT INTO et VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
	var lines []string
	for _, r := range query(t, s, "EXPLAIN ANALYZE SELECT v FROM et WHERE k > 1 ORDER BY v") {
		lines = append(lines, r[0].Str())
	}
	mask := regexp.MustCompile(`\d+\.\d{3} ms`)
	got := mask.ReplaceAllString(strings.Join(lines, "\n"), "T ms")
	want := `Sort #2 asc  (actual rows=3 loops=1 time=T ms)
  Project v, v  (actual rows=3 loops=1 time=T ms)
    Scan et  (actual rows=3 loops=1 time=T ms)
      access: range scan
      ranges=1 partitions=2/2
      [(1, <Max>) .. (<Max>))
      rows read: 3 (partition 0: 1, partition 1: 2)
Planning Time: T ms
Execution Time: T ms`
	if got != want {
		t.Fatalf("EXPLAIN ANALYZE:\n%s\nwant (times masked):\n%s", strings.Join(lines, "\n"), want)
	}
	// The execution time covers the operators' times.
	parse := func(l string) float64 {
		m := mask.FindString(l)
		f, err := strconv.ParseFloat(strings.TrimSuffix(m, " ms"), 64)
		if err != nil {
			t.Fatalf("no time in %q", l)
		}
		return f
	}
	if top, exec := parse(lines[0]), parse(lines[len(lines)-1]); top > exec {
		t.Errorf("the top operator took %.3f ms, more than the execution time %.3f ms", top, exec)
	}

	// A subquery in the filter of a parallel scan runs in its workers:
	// their counts meet in one analysis (the race detector watches).
	query(t, s, "CREATE TABLE eu (k Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO eu VALUES (1), (3)")
	var sub []string
	for _, r := range query(t, s, "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT v FROM et WHERE EXISTS (SELECT 1 FROM eu WHERE eu.k = et.k) OR v = 'zz'") {
		sub = append(sub, r[0].Str())
	}
	if joined := strings.Join(sub, "\n"); !strings.Contains(joined, "Scan et  (actual rows=2 loops=1)") ||
		!strings.Contains(joined, "rows read: 4 (partition 0: 2, partition 1: 2)") ||
		!strings.Contains(joined, "Scan eu  (actual rows=2 loops=4)") {
		t.Fatalf("subquery in a parallel scan:\n%s", joined)
	}

	// VERBOSE names the shards read by id.
	var verbose []string
	for _, r := range query(t, s, "EXPLAIN (ANALYZE, VERBOSE, SUMMARY OFF) SELECT v FROM et") {
		verbose = append(verbose, r[0].Str())
	}
	if !regexp.MustCompile(`rows read: 4 \(partition 0 \(shard \d+\): 2, partition 1 \(shard \d+\): 2\)`).MatchString(strings.Join(verbose, "\n")) {
		t.Errorf("VERBOSE ANALYZE:\n%s", strings.Join(verbose, "\n"))
	}
}

// TestExplainAnalyzeJSON: FORMAT JSON carries the same measures as the
// text form, and the summary beside the plan.
func TestExplainAnalyzeJSON(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE ej2 (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO ej2 VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	rows := query(t, s, "EXPLAIN (ANALYZE, FORMAT JSON) UPDATE ej2 SET v = 'x' WHERE k < 3")
	type node struct {
		Operator    string
		ActualRows  int64    `json:"Actual Rows"`
		ActualLoops int64    `json:"Actual Loops"`
		ActualTime  *float64 `json:"Actual Total Time"`
		Details     []string
		Plans       []node
	}
	var doc []struct {
		Plan          node
		PlanningTime  *float64 `json:"Planning Time"`
		ExecutionTime *float64 `json:"Execution Time"`
	}
	if err := json.Unmarshal([]byte(rows[0][0].Str()), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("FORMAT JSON: %v\n%s", err, rows[0][0].Str())
	}
	d := doc[0]
	if d.PlanningTime == nil || d.ExecutionTime == nil {
		t.Fatalf("no summary:\n%s", rows[0][0].Str())
	}
	p := d.Plan
	if p.Operator != "Update on ej2" || p.ActualRows != 2 || p.ActualLoops != 1 || p.ActualTime == nil ||
		len(p.Plans) != 1 || p.Plans[0].Operator != "Scan ej2" || p.Plans[0].ActualRows != 2 ||
		!slices.Contains(p.Plans[0].Details, "rows read: 2 (partition 0: 2)") {
		t.Fatalf("FORMAT JSON:\n%s", rows[0][0].Str())
	}
	// The UPDATE ran (autocommit: committed).
	if got := query(t, s, "SELECT count(*) FROM ej2 WHERE v = 'x'")[0][0].Int(); got != 2 {
		t.Fatalf("EXPLAIN ANALYZE UPDATE changed %d rows, want 2", got)
	}
	// Parameters reach the statement (extended protocol).
	rows = query(t, s, "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT v FROM ej2 WHERE k = $1", types.NewInt64(3))
	if got := rows[1][0].Str(); got != "  Scan ej2  (actual rows=1 loops=1)" {
		t.Fatalf("with a parameter: %q", got)
	}
}

// TestRowsReadCounters: the rows scans read from storage feed
// pg_stat_user_tables' seq_tup_read (range scans) and idx_tup_fetch (point
// lookups, index entries) and the engine's total for /metrics.
func TestRowsReadCounters(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE rc (k Int64, v Utf8, PRIMARY KEY (k), INDEX rc_v GLOBAL ON (v))")
	query(t, s, "INSERT INTO rc VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
	before, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	query(t, s, "SELECT * FROM rc WHERE v > 'b' AND k > 0") // range scan: 5 rows visited
	query(t, s, "SELECT * FROM rc WHERE k IN (1, 2, 9)")    // point lookups: 2 found
	query(t, s, "SELECT k FROM rc WHERE v = 'c'")           // index scan: 1 entry
	got := query(t, s, "SELECT seq_tup_read, idx_tup_fetch FROM pg_stat_user_tables WHERE relname = 'rc'")
	if len(got) != 1 || got[0][0].Int() != 5 || got[0][1].Int() != 3 {
		t.Fatalf("seq_tup_read, idx_tup_fetch = %v, want 5, 3", got)
	}
	after, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// pg_stat_user_tables itself reads no table rows.
	if d := after.RowsRead - before.RowsRead; d != 8 {
		t.Fatalf("rows read grew by %d, want 8", d)
	}
}

// BenchmarkScanAnalyze: a 10,000-row scan plain and under EXPLAIN ANALYZE.
// A statement that is not analysed builds no wrappers (one nil check per
// operator started), so "plain" is the executor's normal path.
func BenchmarkScanAnalyze(b *testing.B) {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE ba (k Int64, v Int64, PRIMARY KEY (k))")
	query(b, s, "INSERT INTO ba SELECT x, x % 7 FROM generate_series(1, 10000) AS g(x)")
	for _, bc := range []struct{ name, sql string }{
		{"plain", "SELECT sum(v) FROM ba WHERE v > 2"},
		{"analyze", "EXPLAIN (ANALYZE) SELECT sum(v) FROM ba WHERE v > 2"},
		{"analyze-timing-off", "EXPLAIN (ANALYZE, TIMING OFF) SELECT sum(v) FROM ba WHERE v > 2"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				query(b, s, bc.sql)
			}
		})
	}
}
