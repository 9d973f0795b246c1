package metrics

import (
	"errors"
	"testing"
	"time"
)

func TestParseTag(t *testing.T) {
	for _, tc := range []struct {
		tag, kind string
		rows      int64
		hasRows   bool
	}{
		{"INSERT 0 5", "INSERT", 5, true},
		{"UPDATE 2", "UPDATE", 2, true},
		{"DELETE 0", "DELETE", 0, true},
		{"SELECT 10", "SELECT", 10, true},
		{"CREATE TABLE", "CREATE TABLE", 0, false},
		{"BEGIN", "BEGIN", 0, false},
		{"", "unknown", 0, false},
	} {
		kind, rows, hasRows := parseTag(tc.tag)
		if kind != tc.kind || rows != tc.rows || hasRows != tc.hasRows {
			t.Errorf("parseTag(%q) = %q, %d, %v; want %q, %d, %v", tc.tag, kind, rows, hasRows, tc.kind, tc.rows, tc.hasRows)
		}
	}
}

// TestParseTagFastPath checks parseTag's split of plain tags against
// strings.Fields (parseTagFields), which it must agree with.
func TestParseTagFastPath(t *testing.T) {
	for _, tag := range []string{
		"INSERT 0 5", "INSERT 5", "INSERT 0 0", "UPDATE 2", "SELECT 1", "SELECT 100000",
		"CREATE TABLE", "DROP INDEX", "BEGIN", "COMMIT", "FETCH 3", "MOVE 0", "COPY 12",
		"SHOW", "5", "SELECT x", "SELECT +7", "SELECT -1", "A B C 9", "INSERT 0 5 6",
		"SELECT 99999999999999999999",
	} {
		if !plainTag(tag) {
			t.Fatalf("%q should take the fast path", tag)
		}
		k1, r1, h1 := parseTag(tag)
		k2, r2, h2 := parseTagFields(tag)
		if k1 != k2 || r1 != r2 || h1 != h2 {
			t.Errorf("parseTag(%q) = %q, %d, %v; strings.Fields gives %q, %d, %v", tag, k1, r1, h1, k2, r2, h2)
		}
	}
	for _, tag := range []string{" SELECT 1", "SELECT 1 ", "SELECT  1", "SELECT\t1", "SÉLECT 1", " ", "\t"} {
		if plainTag(tag) {
			t.Errorf("%q should not take the fast path", tag)
		}
		parseTag(tag) // must not panic
	}
	if k, r, h := parseTag("SELECT\t3"); k != "SELECT" || r != 3 || !h {
		t.Errorf("parseTag(SELECT\\t3) = %q, %d, %v", k, r, h)
	}
	if k, _, h := parseTag("   "); k != "unknown" || h {
		t.Errorf("parseTag(blank) = %q, %v", k, h)
	}
}

// TestStatementDoneCounts checks the counts and latency series by kind,
// which StatementDone keeps in its own map of series.
func TestStatementDoneCounts(t *testing.T) {
	m := New(Sources{})
	for range 3 {
		m.StatementDone("SELECT 2", time.Millisecond, nil)
	}
	m.StatementDone("INSERT 0 4", time.Millisecond, nil)
	m.StatementDone("SELECT 1", time.Millisecond, errors.New("boom"))
	got := map[string]float64{}
	latencySeries := 0
	var rowsReturned, rowsInserted float64
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			label := ""
			if len(metric.GetLabel()) > 0 {
				label = metric.GetLabel()[0].GetValue()
			}
			switch f.GetName() {
			case "pivotdb_statements_total":
				got[label] = metric.GetCounter().GetValue()
			case "pivotdb_statement_duration_seconds":
				latencySeries++
			case "pivotdb_rows_returned_total":
				rowsReturned = metric.GetCounter().GetValue()
			case "pivotdb_rows_written_total":
				if label == "insert" {
					rowsInserted = metric.GetCounter().GetValue()
				}
			}
		}
	}
	want := map[string]float64{"SELECT": 3, "INSERT": 1, "error": 1}
	if len(got) != len(want) {
		t.Errorf("statements by kind %v, want %v", got, want)
	}
	for kind, n := range want {
		if got[kind] != n {
			t.Errorf("statements{kind=%q} = %v, want %v", kind, got[kind], n)
		}
	}
	if latencySeries != 3 {
		t.Errorf("latency series: %d, want 3", latencySeries)
	}
	if rowsReturned != 2*3 {
		t.Errorf("rows returned %v, want 6", rowsReturned)
	}
	if rowsInserted != 4 {
		t.Errorf("rows inserted %v, want 4", rowsInserted)
	}
}

// BenchmarkStatementDone is what the server's Observer costs every
// statement: a point SELECT's tag, from 4 goroutines as 4 clients would.
func BenchmarkStatementDone(b *testing.B) {
	m := New(Sources{})
	b.ReportAllocs()
	b.SetParallelism(2) // 2 × GOMAXPROCS goroutines
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.StatementDone("SELECT 1", 50*time.Microsecond, nil)
		}
	})
}
