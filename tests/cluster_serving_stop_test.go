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

// TestClusterServingNodeStops: a connection forwarded by another node is
// served; then the serving node stops (SIGSTOP) while the connection is
// open. Once another node serves, the forwarding node ends the connection
// with FATAL 57P01 (the client was between messages), within a bounded
// time instead of hanging until the stopped node continues, and a new
// connection through the same node reaches the new serving node.
func TestClusterServingNodeStops(t *testing.T) {
	procs := startSQLCluster(t)
	serving := servingProc(t, procs)
	var fwd *clusterProc
	for _, p := range procs {
		if p != serving {
			fwd = p
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, fwd.url())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// Every node votes in both groups, so that stopping the serving node
	// leaves a quorum.
	waitSysNodes(t, c, serving, threeNodesVoting)
	if _, err := c.Exec(ctx, "CREATE TABLE t (k Int64, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "UPSERT INTO t (k) VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	stopProcess(t, serving)
	wantConnEnded(t, ctx, c, "57P01", 40*time.Second, 20*time.Second)

	// A new connection through the same node reaches the new serving node.
	n := countThrough(t, ctx, fwd, 30*time.Second)
	if n != 1 {
		t.Fatalf("%d rows through the new serving node, want 1", n)
	}
	if err := serving.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// wantConnEnded runs a query on c, whose serving node was just stopped, and
// fails unless the connection ends with a FATAL error of code within limit
// (the query itself gives up after wait).
func wantConnEnded(t testing.TB, ctx context.Context, c *pgx.Conn, code string, wait, limit time.Duration) {
	t.Helper()
	start := time.Now()
	qctx, qcancel := context.WithTimeout(ctx, wait)
	defer qcancel()
	var n int64
	err := c.QueryRow(qctx, "SELECT count(*) FROM t").Scan(&n)
	took := time.Since(start)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code || pe.Severity != "FATAL" {
		t.Fatalf("a query on the forwarded connection after the serving node stopped: %v (after %s), want FATAL %s", err, took, code)
	}
	t.Logf("the connection ended after %s: %s", took.Round(time.Millisecond), pe.Message)
	if took > limit {
		t.Fatalf("the connection ended only after %s", took)
	}
}

// countThrough connects through p until `SELECT count(*) FROM t` answers
// (for up to wait: a node may be taking over) and returns the count.
func countThrough(t testing.TB, ctx context.Context, p *clusterProc, wait time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		var n int64
		c, err := pgx.Connect(ctx, p.url())
		if err == nil {
			err = c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n)
			c.Close(ctx)
			if err == nil {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new connection through %s: %v", p.sql, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
