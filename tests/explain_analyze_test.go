package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestExplainAnalyzeOverTheWire: EXPLAIN ANALYZE in both protocols, with a
// parameter, and of a write inside a transaction that is rolled back (the
// write ran, then vanished with the transaction, as in PostgreSQL).
func TestExplainAnalyzeOverTheWire(t *testing.T) {
	srv := startServer(t)
	for name, mode := range execModes {
		t.Run(name, func(t *testing.T) {
			c := srv.connect(t, mode)
			tbl := "xa_" + name
			mustExec(t, c, "CREATE TABLE "+tbl+" (k Int64, v Utf8, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = (10))")
			mustExec(t, c, "INSERT INTO "+tbl+" SELECT x, 'v' || x FROM generate_series(1, 20) AS g(x)")
			plan := func(sql string, args ...any) string {
				t.Helper()
				rows, err := c.Query(ctxT(t), sql, args...)
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				return strings.Join(lines, "\n")
			}
			got := plan("EXPLAIN ANALYZE SELECT v FROM "+tbl+" WHERE k >= $1", int64(5))
			for _, re := range []string{
				`(?m)^Project v  \(actual rows=16 loops=1 time=\d+\.\d{3} ms\)$`,
				`(?m)^    rows read: 16 \(partition 0: 5, partition 1: 11\)$`,
				`(?m)^Planning Time: \d+\.\d{3} ms$`,
				`(?m)^Execution Time: \d+\.\d{3} ms$`,
			} {
				if !regexp.MustCompile(re).MatchString(got) {
					t.Errorf("EXPLAIN ANALYZE output does not match %s:\n%s", re, got)
				}
			}
			tx, err := c.Begin(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tx.Query(ctxT(t), "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) DELETE FROM "+tbl+" WHERE k > 15")
			if err != nil {
				t.Fatal(err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			if lines[0] != "Delete on "+tbl+"  (actual rows=5 loops=1)" {
				t.Fatalf("EXPLAIN ANALYZE DELETE:\n%s", strings.Join(lines, "\n"))
			}
			var n int
			if err := tx.QueryRow(ctxT(t), "SELECT count(*) FROM "+tbl).Scan(&n); err != nil || n != 15 {
				t.Fatalf("inside the transaction: %d rows, %v; want 15", n, err)
			}
			if err := tx.Rollback(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM "+tbl).Scan(&n); err != nil || n != 20 {
				t.Fatalf("after ROLLBACK: %d rows, %v; want 20", n, err)
			}
		})
	}
}
