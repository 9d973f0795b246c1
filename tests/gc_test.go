package tests

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestGCRetention: garbage collection over the wire. A table updated many
// times keeps its old versions inside its retention window (sys.partitions
// old_bytes grows) and loses them after it: with serve --gc-ttl 1s the
// background loop collects a table without GC_TTL within seconds; a table
// with GC_TTL = 1h keeps them until VACUUM after ALTER ... SET (GC_TTL)
// shortens it. A read AS OF SYSTEM TIME before the shard's GC threshold then
// gets CockroachDB's error (SQLSTATE XXUUU).
func TestGCRetention(t *testing.T) {
	srv := startServer(t, "--gc-ttl", "1s")
	ctx := ctxT(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, "CREATE TABLE quick (k Int64, v Int64, PRIMARY KEY (k))")
	mustExec(t, c, `CREATE TABLE kept (k Int64, v Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	for _, tbl := range []string{"quick", "kept"} {
		mustExec(t, c, "INSERT INTO "+tbl+" SELECT x, 0 FROM generate_series(1, 50) AS g(x)")
	}
	var before string
	if err := c.QueryRow(ctx, "SELECT now()::Utf8").Scan(&before); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		mustExec(t, c, "UPDATE quick SET v = v + 1")
		mustExec(t, c, "UPDATE kept SET v = v + 1")
	}
	oldBytes := func(tbl string) int64 {
		t.Helper()
		var n int64
		if err := c.QueryRow(ctx, "SELECT sum(old_bytes)::Int64 FROM sys.partitions WHERE table_name = $1", tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if kept := oldBytes("kept"); kept == 0 {
		t.Fatal("no old versions after 20 updates")
	}
	// The background loop (a pass per second for a 1s window).
	deadline := time.Now().Add(20 * time.Second)
	for oldBytes("quick") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("old_bytes of a table with --gc-ttl 1s still %d after 20s", oldBytes("quick"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	kept := oldBytes("kept")
	var sum int64
	if err := c.QueryRow(ctx, "SELECT sum(v)::Int64 FROM kept AS OF SYSTEM TIME '"+before+"'").Scan(&sum); err != nil || sum != 0 {
		t.Fatalf("kept, AS OF SYSTEM TIME before the updates: %d %v", sum, err)
	}
	_, err := c.Exec(ctx, "SELECT * FROM quick AS OF SYSTEM TIME '"+before+"'")
	wantCode(t, err, "XXUUU")
	mustExec(t, c, `ALTER TABLE kept SET (GC_TTL = Interval("PT0.1S"))`)
	time.Sleep(200 * time.Millisecond)
	mustExec(t, c, "VACUUM kept")
	if after := oldBytes("kept"); after != 0 {
		t.Fatalf("kept: old_bytes %d after VACUUM with GC_TTL 0.1s (was %d)", after, kept)
	}
	_, err = c.Exec(ctx, "SELECT * FROM kept AS OF SYSTEM TIME '"+before+"'")
	wantCode(t, err, "XXUUU")
	var n int64
	if err := c.QueryRow(ctx, "SELECT sum(v)::Int64 FROM kept").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("kept after GC: %d %v", n, err)
	}
}
