package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestOneNodeCluster: `pivotdb serve --one-node-cluster` (without --join)
// is a one-node cluster (issue 17 item 1). A data directory written by the
// engine without Raft (serve without the flag) keeps its rows when it
// becomes one; sys.nodes shows the node; a restart finds the same cluster address
// (kept in the data directory) and every row; a second node that joins
// and a third that join with --join naming that address get every row:
// they serve them once the first node stopped.
func TestOneNodeCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// clusterAddrs empty: the server picks its cluster addresses itself.
	s := &testServer{t: t, dataDir: t.TempDir(), clusterAddrs: []string{}}
	s.start()
	t.Cleanup(func() { s.stop() })
	c := s.connect(t, pgx.QueryExecModeDescribeExec)
	mustExec(t, c, "CREATE TABLE one (k Int64, v Utf8, PRIMARY KEY (k))")
	mustExec(t, c, "INSERT INTO one (k, v) SELECT x, 'plain' FROM generate_series(1, 100) AS x")
	c.Close(ctx)
	s.stop()

	// A shard group per shard (the default): the table's shard splits off
	// the first group into a child before the other nodes join, and they
	// must get the child's rows by a snapshot.
	s.start("--one-node-cluster")
	if !strings.Contains(s.log.String(), "one-node cluster") {
		t.Fatalf("serve without --join did not start a one-node cluster:\n%s", s.log)
	}
	c = s.connect(t, pgx.QueryExecModeDescribeExec)
	if n := countRows(t, c, "SELECT count(*) FROM one WHERE v = 'plain'"); n != 100 {
		t.Fatalf("the plain engine's rows after becoming a one-node cluster: %d of 100", n)
	}
	mustExec(t, c, "INSERT INTO one (k, v) SELECT x, 'raft' FROM generate_series(101, 200) AS x")
	addr := onlyNode(t, c)
	c.Close(ctx)

	s.stop()
	s.start("--one-node-cluster")
	c = s.connect(t, pgx.QueryExecModeDescribeExec)
	if got := onlyNode(t, c); got != addr {
		t.Fatalf("the restarted node's cluster address is %s, was %s", got, addr)
	}
	if n := countRows(t, c, "SELECT count(*) FROM one"); n != 200 {
		t.Fatalf("rows after a restart: %d of 200", n)
	}
	c.Close(ctx)

	// Two more nodes join by naming the first one's cluster address; once
	// the table's shard has a replica on each, the first node stops and
	// the other two serve every row from their own replicas.
	var procs []*clusterProc
	dir := t.TempDir()
	for i := 2; i <= 3; i++ {
		p := &clusterProc{t: t, dir: filepath.Join(dir, fmt.Sprintf("n%d", i)), sql: freePort(t), rpc: freePort(t),
			raftAddr: freePort(t), join: addr}
		p.start()
		procs = append(procs, p)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			if t.Failed() {
				t.Logf("node %s, the end of its log:\n%s", p.sql, lastLines(p.log.String(), 60))
			}
			p.kill(syscall.SIGTERM)
		}
	})
	for _, p := range procs {
		waitSQL(t, p) // forwarded to the first node
	}
	c, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	// Every node votes in every group (the metadata group, the first
	// shard group and the table's child) and holds a replica of the
	// table's shard: the first node may stop then. sys.nodes counts every
	// group (the child too), and the first node's log says when its
	// manager loop promoted each joining node's replica of the child,
	// i.e. once that replica caught up and held the shard
	// (cluster/shardrepl's groupplace.go).
	deadline := time.Now().Add(2 * time.Minute) // two joins and their snapshots, under load
	for {
		votes, err := votersPerNode(ctx, c)
		var replicas string
		if err == nil {
			err = c.QueryRow(ctx, "SELECT replica_node_ids FROM sys.partitions WHERE table_name = 'one'").Scan(&replicas)
		}
		childVoters := strings.Contains(s.log.String(), "node 2 votes in shard group ") &&
			strings.Contains(s.log.String(), "node 3 votes in shard group ")
		if err == nil && replicas == "1,2,3" && childVoters && len(votes) == 3 && votes[0] >= 2 && votes[0] == votes[1] && votes[1] == votes[2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes never all voted in every group: %v, the table's shard's replicas %q, the child's voters on the joined nodes %v, %v; the first node's log:\n%s", votes, replicas, childVoters, err, s.log)
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.Close(ctx)
	s.stop()
	deadline = time.Now().Add(90 * time.Second) // an election and a takeover
	for {
		n, err := countOn(ctx, procs[0], "SELECT count(*) FROM one")
		if err == nil && n == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("without the first node: %d rows, %v", n, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// votersPerNode reads sys.nodes' live nodes' groups they vote in (only
// where that is all the groups they hold a replica of; -1 otherwise).
func votersPerNode(ctx context.Context, c *pgx.Conn) ([]int64, error) {
	rows, err := c.Query(ctx, "SELECT replicas, voters FROM sys.nodes WHERE is_live ORDER BY node_id")
	if err != nil {
		return nil, err
	}
	var votes []int64
	for rows.Next() {
		var replicas, voters int64
		if err := rows.Scan(&replicas, &voters); err != nil {
			return nil, err
		}
		if voters != replicas {
			voters = -1
		}
		votes = append(votes, voters)
	}
	return votes, rows.Err()
}

// countOn runs a count query on a new connection to p.
func countOn(ctx context.Context, p *clusterProc, query string) (int64, error) {
	c, err := pgx.Connect(ctx, p.url())
	if err != nil {
		return 0, err
	}
	defer c.Close(ctx)
	var n int64
	err = c.QueryRow(ctx, query).Scan(&n)
	return n, err
}

// onlyNode checks that sys.nodes shows one live node, node 1, and returns
// its cluster address.
func onlyNode(t *testing.T, c *pgx.Conn) string {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT node_id, address, is_live FROM sys.nodes")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var addr string
	for rows.Next() {
		var id int64
		var live bool
		if err := rows.Scan(&id, &addr, &live); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %v", id, addr, live))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "1 127.0.0.1:") || !strings.HasSuffix(got[0], " true") {
		t.Fatalf("sys.nodes of a one-node cluster: %q", got)
	}
	return addr
}

func countRows(t *testing.T, c *pgx.Conn, query string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestOneNodeClusterLoadSixteenPartitions: rows loaded into a table of 16
// uniform partitions right after its CREATE TABLE on --one-node-cluster
// (groups per shard on) commit. The split reconciler splits the first
// group at once at each partition's start, and a commit to a partition
// whose child group is not in the serving node's shard map yet waits for
// it (Replicator: up to DefaultProposeTimeout). The children's replicas
// started one after another, each behind the previous one's first election
// (cluster/shardrepl's startChild held regenMu while it added the child to
// the map), so the last of 16 took longer than that: XX000 "no shard group
// of the map holds key" (2 of 2 runs before the fix, in round 0 or 1).
func TestOneNodeClusterLoadSixteenPartitions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := &testServer{t: t, dataDir: t.TempDir(), clusterAddrs: []string{}}
	s.start("--one-node-cluster")
	t.Cleanup(func() { s.stop() })
	c := s.connect(t, pgx.QueryExecModeDescribeExec)
	defer c.Close(ctx)
	for round := 0; round < 3; round++ {
		table := fmt.Sprintf("p%d", round)
		mustExec(t, c, "CREATE TABLE "+table+" (k Int64, v Utf8, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 16)")
		// Keys spread over the 16 partitions: (x % 16 - 8) picks one, of
		// 2^60 keys each.
		for batch := 0; batch < 8; batch++ {
			q := fmt.Sprintf("INSERT INTO %s (k, v) SELECT (x %% 16 - 8) * 1152921504606846976 + x / 16, 'v' FROM generate_series(%d, %d) AS x",
				table, batch*2000, batch*2000+1999)
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatalf("table %s, batch %d: %v; the node's log:\n%s", table, batch, err, s.log)
			}
		}
		if n := countRows(t, c, "SELECT count(*) FROM "+table); n != 16000 {
			t.Fatalf("table %s holds %d rows, want 16000", table, n)
		}
		// The split reconciler splits the groups in its own rounds
		// (cluster/shardrepl's splitqueue.go), so the load may finish
		// before the last split: wait for it, up to a bound far above a
		// round (a lead's run saw 1 group right after the load).
		var parts int64
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			err := c.QueryRow(ctx, "SELECT count(DISTINCT group_id) FROM sys.partitions WHERE table_name = '"+table+"'").Scan(&parts)
			if err == nil && parts == 16 {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Fatalf("table %s's partitions are in %d shard groups a minute after its load, want 16: %v", table, parts, err)
			}
		}
	}
}
