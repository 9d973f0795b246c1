package tests

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestClusterFollowerReadStatementNoQuorum (issue 18 item 6): in an
// ordinary session (not stale read-only) on the serving node, SELECT ...
// AS OF SYSTEM TIME follower_read_timestamp(), a read at an explicit older
// time and BEGIN READ ONLY AS OF SYSTEM TIME follower_read_timestamp()
// answer from the node's own replica while both other nodes are stopped by
// SIGSTOP: the serving node cannot renew its read lease (a plain read
// waits 5 s and fails with FATAL 57P01), but a read at or below the closed
// timestamp its replica applied is complete without it. Before the change
// every one of them failed like the plain read.
//
// Timing: the nodes run with --closed-timestamp-target 20s, so
// follower_read_timestamp() is 32 s back and stays at or below the last
// closed timestamp (20 s back at the stop, published every 200 ms) for
// 12 s after the stop; the reads that need it run about 5 s after it (the
// plain read's lease wait). The reads at the write's time do not depend
// on it.
func TestClusterFollowerReadStatementNoQuorum(t *testing.T) {
	procs := newClusterProcs(t, 3)
	for i := len(procs) - 1; i >= 0; i-- {
		startPlacementNode(procs[i], "--closed-timestamp-target", "20s")
	}
	for _, p := range procs {
		waitSQL(t, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w, err := pgx.Connect(ctx, servingProc(t, procs).url())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	if _, err := w.Exec(ctx, "CREATE TABLE fs (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(ctx, "UPSERT INTO fs (k, v) VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	var written string
	if err := w.QueryRow(ctx, "SELECT cluster_logical_timestamp()::Utf8").Scan(&written); err != nil {
		t.Fatal(err)
	}
	w.Close(ctx)

	// The session on the node serving now (an election on a loaded
	// machine may have moved it since the write; a move ends the
	// session, so it is opened here, just before the stop).
	s := servingProc(t, procs)
	conn, err := pgx.Connect(ctx, s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	followerRead := "SELECT count(*) FROM fs AS OF SYSTEM TIME follower_read_timestamp()"
	count := func(q string) (int64, error) {
		var n int64
		err := conn.QueryRow(ctx, q).Scan(&n)
		return n, err
	}
	// The plain reads that show the lease lapsed end their session
	// (57P01 is FATAL): they run on a connection of their own.
	probe, err := pgx.Connect(ctx, s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close(context.Background())
	// follower_read_timestamp() passes the write 32 s after it.
	for start := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		n, err := count(followerRead)
		if err == nil && n == 2 {
			break
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("the follower read never saw the write: %d rows, %v", n, err)
		}
	}
	// follower_read_timestamp() as a value: now() less the target and
	// its margin (32 s for 20 s). It reads no table, but it
	// takes a snapshot, which needs the lease: asked before the stop.
	var lag string
	if err := conn.QueryRow(ctx, "SELECT CAST(now() - follower_read_timestamp() AS Utf8)").Scan(&lag); err != nil || lag != "00:00:32" {
		t.Fatalf("now() - follower_read_timestamp(): %q, %v; want 00:00:32", lag, err)
	}
	if servingProc(t, procs) != s {
		t.Fatalf("node %s no longer serves SQL", s.sql)
	}
	for _, p := range procs {
		if p != s {
			if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.cmd.Process.Signal(syscall.SIGCONT) })
		}
	}
	stopped := time.Now()
	since := func() time.Duration { return time.Since(stopped).Round(time.Millisecond) }

	// The plain read needs the lease, which no quorum renews: once the
	// last one ran out (150 ms after its renewal) it waits 5 s for it and
	// fails, ending the session. From here on the lease has lapsed.
	for {
		var pe *pgconn.PgError
		var n int64
		err := probe.QueryRow(ctx, "SELECT count(*) FROM fs").Scan(&n)
		if errors.As(err, &pe) && pe.Code == "57P01" {
			break
		}
		// (A quorum renews the lease: 30 s of successes would be a bug,
		// not load.)
		if err != nil || n != 2 || time.Since(stopped) > 30*time.Second {
			t.Fatalf("a plain read %s after the other nodes stopped: %d rows, %v; want 2 rows while the read lease lasts, then 57P01", since(), n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	asOfWrite := "SELECT count(*) FROM fs AS OF SYSTEM TIME " + written
	for _, q := range []string{asOfWrite, followerRead} {
		if n, err := count(q); err != nil || n != 2 {
			t.Fatalf("%s, %s after the other nodes stopped (no read lease): %d rows, %v", q, since(), n, err)
		}
	}
	if _, err := conn.Exec(ctx, "BEGIN READ ONLY AS OF SYSTEM TIME follower_read_timestamp()"); err != nil {
		t.Fatalf("BEGIN READ ONLY AS OF SYSTEM TIME follower_read_timestamp(), %s after the stop: %v", since(), err)
	}
	var k int64
	var v string
	if err := conn.QueryRow(ctx, "SELECT k, v FROM fs ORDER BY k DESC LIMIT 1").Scan(&k, &v); err != nil || k != 2 || v != "b" {
		t.Fatalf("a block AS OF SYSTEM TIME follower_read_timestamp(), %s after the stop: %d %q, %v", since(), k, v, err)
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		t.Fatalf("COMMIT of the read-only block: %v", err)
	}
}
