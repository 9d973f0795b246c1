package tests

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterUnsafeNoSync: three nodes with --unsafe-no-sync (neither the
// Raft log nor the engine fsyncs) say so loudly, form a cluster and serve
// SQL through every node; a node stopped and restarted has every row (the
// operating system kept what was written).
func TestClusterUnsafeNoSync(t *testing.T) {
	procs := newClusterProcs(t, 3)
	for _, p := range procs {
		p.extra = []string{"--unsafe-no-sync"}
		p.start()
	}
	for _, p := range procs {
		waitSQL(t, p)
		if !strings.Contains(p.log.String(), "--unsafe-no-sync: neither the Raft log nor the storage engine fsyncs") {
			t.Fatalf("node %s gave no warning:\n%s", p.sql, p.log)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exec := func(p *clusterProc, sql string, args ...any) {
		t.Helper()
		c, err := pgx.Connect(ctx, p.url())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s through %s: %v", sql, p.sql, err)
		}
	}
	count := func(p *clusterProc) int64 {
		t.Helper()
		c, err := pgx.Connect(ctx, p.url())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatalf("count through %s: %v", p.sql, err)
		}
		return n
	}
	exec(procs[0], "CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
	for i := 0; i < 30; i++ {
		exec(procs[i%3], "UPSERT INTO t (k, v) VALUES ($1, $2)", int64(i), fmt.Sprint(i))
	}
	for _, p := range procs {
		if n := count(p); n != 30 {
			t.Fatalf("%d rows through %s, want 30", n, p.sql)
		}
	}
	// A follower stopped and restarted catches up and still forwards. Every
	// node votes first, so that the two left keep a quorum.
	s := servingProc(t, procs)
	sc, err := pgx.Connect(ctx, s.url())
	if err != nil {
		t.Fatal(err)
	}
	waitSysNodes(t, sc, s, threeNodesVoting)
	sc.Close(ctx)
	var f *clusterProc
	for _, p := range procs {
		if p != s {
			f = p
			break
		}
	}
	f.kill(syscall.SIGTERM)
	exec(s, "UPSERT INTO t (k, v) VALUES (100, 'while a node was down')")
	f.start()
	waitSQL(t, f)
	if n := count(f); n != 31 {
		t.Fatalf("%d rows through the restarted node, want 31", n)
	}
}
