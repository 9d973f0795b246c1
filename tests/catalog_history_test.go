package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCatalogHistoryAfterRestart: the catalog's history is on disk
// (sql/catalog/history.go), so a read AS OF SYSTEM TIME after a restart
// binds against the schema of its time: columns added since are absent,
// columns dropped since are back with their values, an index created since
// is not used, a table created since does not exist (42P01), and one
// dropped since is read (its rows wait for its GC job); a block
// AS OF SYSTEM TIME binds the same way. Once GC
// has passed the time (a shorter GC_TTL and VACUUM), the read fails with
// CockroachDB's error.
func TestCatalogHistoryAfterRestart(t *testing.T) {
	srv := startServer(t, "--gc-ttl", "1s")
	ctx := ctxT(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE t (k Int64, a Utf8, b Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	mustExec(t, c, "INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20)")
	mustExec(t, c, `CREATE TABLE gone (k Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	mustExec(t, c, "INSERT INTO gone VALUES (4)")
	var ts1 string
	if err := c.QueryRow(ctx, "SELECT now()::Utf8").Scan(&ts1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	mustExec(t, c, "ALTER TABLE t ADD COLUMN c Int64 DEFAULT 5")
	mustExec(t, c, "ALTER TABLE t DROP COLUMN b")
	mustExec(t, c, "CREATE INDEX t_a ON t (a)")
	mustExec(t, c, "UPDATE t SET a = 'z' WHERE k = 1")
	mustExec(t, c, "CREATE TABLE later (k Int64, PRIMARY KEY (k))")
	mustExec(t, c, "DROP TABLE gone")

	srv.stop()
	srv.start("--gc-ttl", "1s")
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheDescribe} {
		c = srv.connect(t, mode)
		rows, err := c.Query(ctx, "SELECT * FROM t AS OF SYSTEM TIME '"+ts1+"' ORDER BY k")
		if err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		var cols []string
		for _, f := range rows.FieldDescriptions() {
			cols = append(cols, f.Name)
		}
		var got []string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprint(vals...))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(cols) != "[k a b]" || fmt.Sprint(got) != "[1x10 2y20]" {
			t.Fatalf("mode %v: AS OF before the changes, after a restart: columns %v rows %v, want [k a b] [1x10 2y20]", mode, cols, got)
		}
		// Through the index's column: the index did not exist then.
		var b int64
		if err := c.QueryRow(ctx, "SELECT b FROM t AS OF SYSTEM TIME '"+ts1+"' WHERE a = 'x'").Scan(&b); err != nil || b != 10 {
			t.Fatalf("mode %v: WHERE a = 'x' AS OF then: %d %v", mode, b, err)
		}
		_, err = c.Exec(ctx, "SELECT * FROM later AS OF SYSTEM TIME '"+ts1+"'")
		wantCode(t, err, "42P01")
		var k int64
		if err := c.QueryRow(ctx, "SELECT k FROM gone AS OF SYSTEM TIME '"+ts1+"'").Scan(&k); err != nil || k != 4 {
			t.Fatalf("mode %v: a table dropped since: %d %v", mode, k, err)
		}
	}
	// A block AS OF SYSTEM TIME binds every statement against then too.
	mustExec(t, c, "BEGIN AS OF SYSTEM TIME '"+ts1+"'")
	var sum int64
	if err := c.QueryRow(ctx, "SELECT sum(b)::Int64 FROM t").Scan(&sum); err != nil || sum != 30 {
		t.Fatalf("in a block AS OF then: sum(b) %d %v", sum, err)
	}
	mustExec(t, c, "COMMIT")
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t WHERE c = 5 AND a = 'z'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("today's table: %d %v", n, err)
	}

	// Past the retention window: the table's versions and the catalog's
	// history of then are collected.
	mustExec(t, c, `ALTER TABLE t SET (GC_TTL = Interval("PT0.1S"))`)
	time.Sleep(1500 * time.Millisecond)
	mustExec(t, c, "VACUUM t")
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := c.Exec(ctx, "SELECT * FROM t AS OF SYSTEM TIME '"+ts1+"'")
		if err != nil {
			wantCode(t, err, "XXUUU")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("AS OF SYSTEM TIME below the GC threshold still reads after 20s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
