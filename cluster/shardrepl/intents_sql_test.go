package shardrepl

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/storage/enginekey"
)

// intentCount counts the intents (versions at wall time MaxInt64,
// storage/intents.go) in n's store, whatever their transaction: what the
// node's replicas of the groups hold.
func intentCount(t *testing.T, n *replicaNode) int {
	t.Helper()
	db, _, _ := n.engine.PebbleForReplication()
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	c := 0
	for valid := it.First(); valid; valid = it.Next() {
		if _, ts, ok := enginekey.DecodeVersion(it.Key()); ok && ts.WallTime == math.MaxInt64 {
			c++
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return c
}

// crash stops n as kill -9 would leave the cluster: its Raft host first,
// so that nothing the engine does after (the server's rollback of open
// transactions at shutdown) reaches the other replicas.
func (n *replicaNode) crash() {
	if err := n.host.Close(); err != nil {
		n.t.Error(err)
	}
	n.host = nil
	if n.srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.srv.Shutdown(sctx)
		<-n.done
	}
	if n.sql != nil {
		_ = n.sql.Close() // errors of the closed host: expected
	} else {
		_ = n.engine.Close()
	}
}

// TestSQLIntentsThroughShardGroup: a transaction block on a replicated
// engine whose writes pass the flush size moves them into the store as
// intents through Raft (issue 17 item 1): every replica holds the same
// intents, the block reads its own writes and other sessions do not,
// ROLLBACK TO SAVEPOINT drops the part after it, COMMIT shows every row
// (on every replica: the resolution is replicated), ROLLBACK none, and a
// serving node that dies in the middle of a flushed block leaves nothing
// visible: the node that takes over removes its intents before it serves.
func TestSQLIntentsThroughShardGroup(t *testing.T) {
	old := txn.IntentFlushBytes
	txn.IntentFlushBytes = 64 << 10
	t.Cleanup(func() { txn.IntentFlushBytes = old })

	ctx := testCtx(t)
	nodes := startGroupCluster(ctx, t, 1)
	nodes[0].serveSQL(ctx)
	conn, err := pgx.Connect(ctx, nodes[0].url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	other, err := pgx.Connect(ctx, nodes[0].url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	exec := func(c *pgx.Conn, q string) {
		t.Helper()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(c *pgx.Conn) (n, sum int64) {
		t.Helper()
		if err := c.QueryRow(ctx, "SELECT count(*), coalesce(sum(k), 0) FROM t").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		return n, sum
	}
	want := func(c *pgx.Conn, who string, n, sum int64) {
		t.Helper()
		if gn, gs := count(c); gn != n || gs != sum {
			t.Fatalf("%s: %d rows (sum %d), want %d (sum %d)", who, gn, gs, n, sum)
		}
	}
	// 200-byte rows over four shards: 2000 rows are about six flushes.
	exec(conn, "CREATE TABLE t (k Int64, pad Utf8, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 4)")
	pad := strings.Repeat("x", 200)
	insert := func(c *pgx.Conn, from, to int) {
		t.Helper()
		exec(c, fmt.Sprintf("INSERT INTO t SELECT x, '%s' FROM generate_series(%d, %d) AS x", pad, from, to))
	}
	sumOf := func(from, to int64) int64 { return (from + to) * (to - from + 1) / 2 }

	exec(conn, "BEGIN")
	insert(conn, 1, 2000)
	exec(conn, "SAVEPOINT s")
	insert(conn, 2001, 3000)
	want(conn, "the block", 3000, sumOf(1, 3000))
	want(other, "another session", 0, 0)
	c := waitConverged(t, nodes, FirstGroup)
	for i, n := range nodes {
		if got := intentCount(t, n); got < 2000 {
			t.Fatalf("node %d holds %d intents during the block, want at least 2000 (%d keys)", i+1, got, c.Keys)
		}
	}
	exec(conn, "ROLLBACK TO SAVEPOINT s")
	want(conn, "the block after ROLLBACK TO", 2000, sumOf(1, 2000))
	exec(conn, "COMMIT")
	want(other, "another session after COMMIT", 2000, sumOf(1, 2000))
	waitConverged(t, nodes, FirstGroup)
	for i, n := range nodes {
		if got := intentCount(t, n); got != 0 {
			t.Fatalf("node %d holds %d intents after COMMIT", i+1, got)
		}
	}

	exec(conn, "BEGIN")
	insert(conn, 5001, 7000)
	exec(conn, "DELETE FROM t WHERE k <= 1000")
	want(conn, "the second block", 3000, sumOf(1001, 2000)+sumOf(5001, 7000))
	exec(conn, "ROLLBACK")
	want(other, "after ROLLBACK", 2000, sumOf(1, 2000))
	waitConverged(t, nodes, FirstGroup)
	for i, n := range nodes {
		if got := intentCount(t, n); got != 0 {
			t.Fatalf("node %d holds %d intents after ROLLBACK", i+1, got)
		}
	}

	// The serving node dies in the middle of a flushed block.
	exec(conn, "BEGIN")
	insert(conn, 8001, 10000)
	waitConverged(t, nodes, FirstGroup)
	if got := intentCount(t, nodes[1]); got < 1000 {
		t.Fatalf("node 2 holds %d intents of the open block, want at least 1000", got)
	}
	conn.Close(ctx)
	other.Close(ctx)
	nodes[0].crash()
	nodes[1].stop()
	nodes[1] = nodes[1].restart(2)
	if err := nodes[1].host.TransferLeadership(ctx, FirstGroup, 2); err != nil {
		t.Fatal(err)
	}
	nodes[1].serveSQL(ctx)
	// Its store held the dead block's record, so SetReplicator held its
	// closed timestamps; the recovery that removed the intents ended the
	// hold.
	if ts, err := nodes[1].engine.ClosableTimestamp(0); err != nil || ts.IsEmpty() {
		t.Fatalf("node 2 closes nothing after its recovery: %v %v", ts, err)
	}
	after, err := pgx.Connect(ctx, nodes[1].url)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close(ctx)
	want(after, "after the takeover", 2000, sumOf(1, 2000))
	waitConverged(t, nodes[1:], FirstGroup)
	for i, n := range nodes[1:] {
		if got := intentCount(t, n); got != 0 {
			t.Fatalf("node %d holds %d intents after the takeover's recovery", i+2, got)
		}
	}
	// The keys are free: a new block writes them.
	exec(after, "BEGIN")
	insert(after, 8001, 10000)
	exec(after, "COMMIT")
	want(after, "after a new block", 4000, sumOf(1, 2000)+sumOf(8001, 10000))
}
