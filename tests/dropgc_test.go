package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestDropTruncateAsOf: over the wire, a read AS OF SYSTEM TIME before a
// DROP TABLE or a TRUNCATE gives the rows of then, with the schema of
// then, before and after a kill -9 and a restart; each change has a SCHEMA
// CHANGE GC job in sys.jobs, waiting for its GC_TTL, that survives the
// restart; once a table's GC_TTL has passed its job removes the rows and
// the read fails with the GC-threshold error (XXUUU).
func TestDropTruncateAsOf(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, "CREATE TABLE d (k Int64, v Utf8, PRIMARY KEY (k))")
	mustExec(t, c, "CREATE INDEX d_v ON d (v)")
	mustExec(t, c, "INSERT INTO d VALUES (1, 'a'), (2, 'b')")
	mustExec(t, c, `CREATE TABLE tr (k Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	mustExec(t, c, "INSERT INTO tr VALUES (1), (2), (3)")
	mustExec(t, c, `CREATE TABLE short (k Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT0.2S"))`)
	mustExec(t, c, "INSERT INTO short VALUES (5)")
	var ts string
	if err := c.QueryRow(ctx, "SELECT cluster_logical_timestamp()::Utf8").Scan(&ts); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "ALTER TABLE d ADD COLUMN w Int64 DEFAULT 7")
	mustExec(t, c, "DROP TABLE d")
	mustExec(t, c, "TRUNCATE tr")
	mustExec(t, c, "INSERT INTO tr VALUES (9)")

	rowsOf := func(c *pgx.Conn, sql string) string {
		t.Helper()
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var out []string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return fmt.Sprint(out)
	}
	check := func(mode pgx.QueryExecMode) {
		t.Helper()
		c := srv.connect(t, mode)
		defer c.Close(ctx)
		// The schema of then: no column w.
		if got := rowsOf(c, "SELECT * FROM d AS OF SYSTEM TIME "+ts+" ORDER BY k"); got != "[1a 2b]" {
			t.Fatalf("mode %v: d before its drop: %s", mode, got)
		}
		if got := rowsOf(c, "SELECT k FROM d AS OF SYSTEM TIME "+ts+" WHERE v = 'b'"); got != "[2]" {
			t.Fatalf("mode %v: d's index before the drop: %s", mode, got)
		}
		if got := rowsOf(c, "SELECT k FROM tr AS OF SYSTEM TIME "+ts+" ORDER BY k"); got != "[1 2 3]" {
			t.Fatalf("mode %v: tr before TRUNCATE: %s", mode, got)
		}
		if got := rowsOf(c, "SELECT k FROM tr ORDER BY k"); got != "[9]" {
			t.Fatalf("mode %v: tr now: %s", mode, got)
		}
		_, err := c.Exec(ctx, "SELECT * FROM d")
		wantCode(t, err, "42P01")
		got := rowsOf(c, "SELECT description, status, running_status, next_run IS NOT NULL FROM sys.jobs "+
			"WHERE job_type = 'SCHEMA CHANGE GC' AND description NOT LIKE '%short%' ORDER BY job_id")
		if got != "[GC for DROP TABLE drunningwaiting for GC TTLtrue GC for TRUNCATE trrunningwaiting for GC TTLtrue]" {
			t.Fatalf("mode %v: sys.jobs: %s", mode, got)
		}
	}
	check(pgx.QueryExecModeSimpleProtocol)
	check(pgx.QueryExecModeCacheDescribe)

	srv.kill()
	srv.start()
	check(pgx.QueryExecModeSimpleProtocol)

	// short's window is 0.2s: its job removes its rows (after a restart
	// the engine's clock may run a few seconds ahead of the system's).
	c = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, "DROP TABLE short")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var status string
		if err := c.QueryRow(ctx, "SELECT status FROM sys.jobs WHERE description = 'GC for DROP TABLE short'").Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("short's GC job: %s after 30s", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err := c.Exec(ctx, "SELECT * FROM short AS OF SYSTEM TIME "+ts)
	wantCode(t, err, "XXUUU")
	if got := rowsOf(c, "SELECT k FROM tr AS OF SYSTEM TIME "+ts+" ORDER BY k"); got != "[1 2 3]" {
		t.Fatalf("tr before TRUNCATE, after short's GC: %s", got)
	}
}
