package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Placement on a cluster (issue 18, cluster/placement): four processes on
// loopback, one Raft group for the data and the metadata group; a node is
// decommissioned under writes, a killed node is healed around.

// placementCluster starts four nodes with one join list and extra serve
// flags, and returns them with the node that serves SQL first. It waits
// until every node holds its replicas: nodes 1-3 vote in both groups and
// the fourth holds a caught-up non-voter of each.
func placementCluster(t *testing.T, extra ...string) ([]*clusterProc, *pgx.Conn) {
	t.Helper()
	procs := newClusterProcs(t, 4)
	for _, p := range procs {
		startPlacementNode(p, extra...)
	}
	// Every node answers SQL (the others forward to the serving one);
	// the serving node's log says it serves.
	waitSQL(t, procs[0])
	s := servingProc(t, procs)
	for i := range procs {
		if procs[i] == s {
			procs[0], procs[i] = procs[i], procs[0]
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	waitSysNodes(t, conn, procs[0], func(ns []nodeRow) bool {
		voters := 0
		for _, n := range ns {
			if n.replicas != 2 || !n.live {
				return false
			}
			voters += n.voters
		}
		// The shard group's non-voter on the fourth node must have caught
		// up before a move can promote it; the log says when it did.
		return len(ns) == 4 && voters == 6
	})
	return procs, conn
}

// startPlacementNode starts p with extra serve flags.
func startPlacementNode(p *clusterProc, extra ...string) {
	p.t.Helper()
	p.extra = extra
	p.start()
}

// nodeRow is a sys.nodes row as the placement tests read it: replicas,
// voters and leaders of the groups placement moves (readSysNodes).
type nodeRow struct {
	id                        int64
	live, decommissioned      bool
	membership                string
	replicas, voters, leaders int
	bytes                     int64
}

func readSysNodes(t testing.TB, conn *pgx.Conn) []nodeRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The groups placement moves (the metadata group and the first shard
	// group): the split children follow the first one's voters, one
	// manager round behind, and are not placement's.
	rows, err := conn.Query(ctx, "SELECT node_id, is_live, is_decommissioned, membership, placed_replicas, placed_voters, placed_leaders, bytes FROM sys.nodes ORDER BY node_id")
	if err != nil {
		t.Fatal(err)
	}
	var out []nodeRow
	for rows.Next() {
		var n nodeRow
		var replicas, voters, leaders int64
		if err := rows.Scan(&n.id, &n.live, &n.decommissioned, &n.membership, &replicas, &voters, &leaders, &n.bytes); err != nil {
			t.Fatal(err)
		}
		n.replicas, n.voters, n.leaders = int(replicas), int(voters), int(leaders)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitSysNodes waits until sys.nodes satisfies ok.
func waitSysNodes(t testing.TB, conn *pgx.Conn, serving *clusterProc, ok func([]nodeRow) bool) []nodeRow {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ns := readSysNodes(t, conn)
		if ok(ns) {
			return ns
		}
		if time.Now().After(deadline) {
			t.Fatalf("sys.nodes: %+v\n%s", ns, serving.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// placementWriter inserts rows through the serving node until stopped and
// remembers which were acknowledged.
type placementWriter struct {
	mu    sync.Mutex
	acked []int64
	maybe []int64 // 08007: the outcome is unknown
	stop  chan struct{}
	wg    sync.WaitGroup
	err   error
}

func startKVWriters(t testing.TB, url string, n int) *placementWriter {
	w := &placementWriter{stop: make(chan struct{})}
	for i := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				w.fail(err)
				return
			}
			defer conn.Close(ctx)
			for k := int64(i); ; k += int64(n) {
				select {
				case <-w.stop:
					return
				default:
				}
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := conn.Exec(wctx, "INSERT INTO kv VALUES ($1, $2)", k, fmt.Sprint("v", k))
				cancel()
				var pgErr *pgconn.PgError
				w.mu.Lock()
				switch {
				case err == nil:
					w.acked = append(w.acked, k)
				case errors.As(err, &pgErr) && pgErr.Code == "08007":
					w.maybe = append(w.maybe, k)
				default:
					w.mu.Unlock()
					w.fail(fmt.Errorf("insert %d: %w", k, err))
					return
				}
				w.mu.Unlock()
			}
		}()
	}
	return w
}

// waitAcked waits until at least n writes were acknowledged (finish wants
// 20), so that what the test does next happens under writes: a fixed
// sleep is not enough when the first writes wait for the table's new
// shard group (--shard-group-per-shard: TestClusterDecommission's writers
// got only 6 writes in before it ended).
func (w *placementWriter) waitAcked(t testing.TB, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		w.mu.Lock()
		acked, err := len(w.acked), w.err
		w.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if acked >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d writes acknowledged after 60 s", acked, n)
		}
	}
}

func (w *placementWriter) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// finish stops the writers and checks every acknowledged row is there and
// no row that was never written is.
func (w *placementWriter) finish(t testing.TB, conn *pgx.Conn) {
	t.Helper()
	close(w.stop)
	w.wg.Wait()
	if w.err != nil {
		t.Fatal(w.err)
	}
	have := map[int64]bool{}
	rows, err := conn.Query(context.Background(), "SELECT k FROM kv")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		have[k] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range w.acked {
		if !have[k] {
			t.Fatalf("acknowledged row %d is missing", k)
		}
		delete(have, k)
	}
	for _, k := range w.maybe {
		delete(have, k)
	}
	if len(have) != 0 {
		t.Fatalf("rows never written: %v", have)
	}
	if len(w.acked) < 20 {
		t.Fatalf("only %d writes acknowledged", len(w.acked))
	}
	t.Logf("%d writes acknowledged, %d with an unknown outcome", len(w.acked), len(w.maybe))
}

// voterCounts maps node ids to the groups they vote in.
func voterCounts(ns []nodeRow) map[int64]int {
	out := map[int64]int{}
	for _, n := range ns {
		out[n.id] = n.voters
	}
	return out
}

func wantClusterSQLState(t *testing.T, conn *pgx.Conn, stmt, code string) {
	t.Helper()
	_, err := conn.Exec(context.Background(), stmt)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != code {
		t.Fatalf("%s: got %v, want SQLSTATE %s", stmt, err, code)
	}
}

// TestClusterDecommission decommissions node 3 of four with `pivotdb node
// decommission` while writes run: its replicas move to node 4 (leadership
// first, a caught-up non-voter promoted, then the old replica removed),
// sys.jobs shows the moves, node 3 is then killed and every acknowledged
// row is there; the cluster refuses what would leave a group short.
func TestClusterDecommission(t *testing.T) {
	procs, conn := placementCluster(t)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	w := startKVWriters(t, procs[0].url(), 3)
	w.waitAcked(t, 20)

	// Bad input first: none of it changes anything.
	wantClusterSQLState(t, conn, "ALTER CLUSTER DECOMMISSION NODE 9", "42704")
	wantClusterSQLState(t, conn, "ALTER CLUSTER DECOMMISSION NODE 0", "42704")
	wantClusterSQLState(t, conn, "ALTER CLUSTER DECOMMISSION 3", "42601")
	wantClusterSQLState(t, conn, "BEGIN; ALTER CLUSTER DECOMMISSION NODE 3; COMMIT", "25001")
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(serverBin, "node", "decommission", "9", "--host", procs[0].sql).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "node 9 does not exist (SQLSTATE 42704)") {
		t.Fatalf("node decommission 9: %v\n%s", err, out)
	}

	// Node 3 votes in the groups the others did not promote node 4 in.
	before := voterCounts(readSysNodes(t, conn))
	start := time.Now()
	out, err = exec.Command(serverBin, "node", "decommission", "3", "--host", procs[0].sql).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "node 3 is decommissioned") {
		t.Fatalf("node decommission 3: %v\n%s\n%s", err, out, procs[0].log)
	}
	t.Logf("decommissioned node 3 (voting in %d groups) in %s:\n%s", before[3], time.Since(start).Round(time.Millisecond), out)
	ns := readSysNodes(t, conn)
	for _, n := range ns {
		if n.id == 3 {
			if n.replicas != 0 || n.voters != 0 || !n.decommissioned || n.membership != "decommissioned" {
				t.Fatalf("node 3 after the decommission: %+v", n)
			}
		} else if n.voters != 2 || n.decommissioned || n.membership != "active" {
			// Three nodes left: each votes in both groups.
			t.Fatalf("node %d does not vote in both groups: %+v", n.id, ns)
		}
	}
	// The moves are jobs with their progress.
	var moves, decommissions int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE job_type = 'REPLICA MOVE' AND description LIKE '%from node 3 to node %'),
		count(*) FILTER (WHERE job_type = 'DECOMMISSION' AND rows_done = rows_total)
		FROM sys.jobs WHERE status = 'succeeded' AND fraction_completed = 1`).Scan(&moves, &decommissions); err != nil {
		t.Fatal(err)
	}
	if moves != before[3] || decommissions != 1 {
		t.Fatalf("sys.jobs: %d replica moves and %d decommissions succeeded, want %d and 1", moves, decommissions, before[3])
	}
	out, err = exec.Command(serverBin, "node", "status", "--host", procs[0].sql).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "decommissioned") || strings.Count(string(out), "\n") != 5 {
		t.Fatalf("node status: %v\n%s", err, out)
	}
	// Again: nothing to do.
	if _, err := conn.Exec(ctx, "ALTER CLUSTER DECOMMISSION NODE 3"); err != nil {
		t.Fatal(err)
	}
	// Node 3 holds nothing: stopping it loses nothing and writes go on.
	var p3 *clusterProc
	for _, p := range procs {
		if strings.Contains(p.log.String(), "as node 3") {
			p3 = p
		}
	}
	if p3 == nil {
		t.Fatal("no process logged that it is node 3")
	}
	p3.kill(syscall.SIGKILL)
	// Restarted, it learns from its peers that it was removed and exits
	// saying so.
	startPlacementNode(p3)
	select {
	case err := <-p3.exited:
		if err == nil || !strings.Contains(p3.log.String(), "node 3 was removed from cluster") {
			t.Fatalf("restarted node 3: %v\n%s", err, p3.log)
		}
		p3.cmd = nil
	case <-time.After(60 * time.Second):
		t.Fatalf("restarted node 3 did not exit:\n%s", p3.log)
	}
	// Three nodes are left, each voting in both groups: decommissioning
	// one more would leave two.
	wantClusterSQLState(t, conn, "ALTER CLUSTER DECOMMISSION NODE 2", "55000")
	w.finish(t, conn)
}

// TestClusterHealDeadNode kills a voting node with --dead-node-timeout 3s:
// once it is dead, node 4's non-voters are promoted and the dead node's
// replicas removed, so both groups have three voters again, while writes
// go on and every acknowledged row stays.
func TestClusterHealDeadNode(t *testing.T) {
	procs, conn := placementCluster(t, "--dead-node-timeout", "3s")
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	w := startKVWriters(t, procs[0].url(), 3)
	w.waitAcked(t, 20)
	var victim *clusterProc
	for _, p := range procs {
		if strings.Contains(p.log.String(), "as node 2") {
			victim = p
		}
	}
	if victim == nil {
		t.Fatal("no process logged that it is node 2")
	}
	before := voterCounts(readSysNodes(t, conn))
	killed := time.Now()
	victim.kill(syscall.SIGKILL)
	ns := waitSysNodes(t, conn, procs[0], func(ns []nodeRow) bool {
		for _, n := range ns {
			if n.id == 2 && (n.live || n.replicas != 0) {
				return false
			}
			if n.id != 2 && n.voters != 2 {
				return false
			}
		}
		return true
	})
	t.Logf("healed %s after the kill: %+v", time.Since(killed).Round(time.Millisecond), ns)
	// Dead counts from the last answered ping, up to a ping interval
	// (half a second) and its timeout before the kill, more on a loaded
	// machine (CI saw 1.87 s): a heal that ignored the timeout would come
	// at the first missed ping.
	if elapsed := time.Since(killed); elapsed < time.Second {
		t.Fatalf("healed after %s, before the dead-node timeout", elapsed)
	}
	var jobs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM sys.jobs WHERE job_type = 'RE-REPLICATION'
		AND status = 'succeeded' AND description LIKE '%from node 2 to node %'`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != before[2] {
		t.Fatalf("%d re-replication jobs succeeded, want %d", jobs, before[2])
	}
	time.Sleep(300 * time.Millisecond)
	w.finish(t, conn)
}

// TestClusterPlacementFlags: --dead-node-timeout out of range or without
// --join, --rebalance without --join or with a bad value, --locality
// without --join or malformed, --snapshot-rate without --join or
// negative, and --snapshot-rate-elastic without --join or not a boolean,
// are refused
// before anything starts; so are bad `pivotdb node` arguments.
func TestClusterPlacementFlags(t *testing.T) {
	join := []string{"--join", "127.0.0.1:1", "--cluster-listen", "127.0.0.1:1", "--raft-listen", "127.0.0.1:2"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dead-node-timeout", "1m"}, "--dead-node-timeout needs --join"},
		{[]string{"--rebalance=false"}, "--rebalance needs --join"},
		{append(join, "--rebalance=maybe"), "invalid boolean value \"maybe\" for -rebalance"},
		{append(join, "--dead-node-timeout", "0s"), "--dead-node-timeout 0s: must be at least 1s"},
		{append(join, "--dead-node-timeout", "-5m"), "must be at least 1s"},
		{append(join, "--dead-node-timeout", "soon"), "invalid value \"soon\" for flag -dead-node-timeout"},
		{[]string{"--locality", "az=a"}, "--locality needs --join"},
		{append(join, "--locality", "az"), `--locality: locality "az": tier "az" is not key=value`},
		{append(join, "--locality", "az=a,az=b"), `key "az" is given twice`},
		{append(join, "--locality", "az=,rack=1"), "has an empty key or value"},
		{append(join, "--locality", "az=eu 1"), "keys and values are letters, digits"},
		{[]string{"--snapshot-rate", "8"}, "--snapshot-rate needs --join"},
		{[]string{"--shard-group-per-shard"}, "--shard-group-per-shard needs --join"},
		{append(join, "--snapshot-rate", "-1"), "--snapshot-rate -1: want megabytes per second, or 0 for no bound"},
		{append(join, "--snapshot-rate", "fast"), "invalid value \"fast\" for flag -snapshot-rate"},
		{[]string{"--snapshot-rate-elastic"}, "--snapshot-rate-elastic needs --join"},
		{append(join, "--snapshot-rate-elastic=sometimes"), "invalid boolean value \"sometimes\" for -snapshot-rate-elastic"},
	} {
		out, err := exec.Command(serverBin, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: %v\n%s", c.args, err, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"node"}, "want decommission NODE_ID, recommission NODE_ID or status"},
		{[]string{"node", "decommission"}, "want one NODE_ID"},
		{[]string{"node", "recommission"}, "want one NODE_ID"},
		{[]string{"node", "recommission", "-2"}, "flag provided but not defined"},
		{[]string{"node", "recommission", "y"}, `"y" is not a node id`},
		{[]string{"node", "decommission", "x"}, `"x" is not a node id`},
		{[]string{"node", "decommission", "0"}, `"0" is not a node id`},
		{[]string{"node", "status", "3"}, "unexpected argument"},
		{[]string{"node", "status", "--host", "nowhere"}, "--host \"nowhere\""},
	} {
		out, err := exec.Command(serverBin, c.args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v\n%s", c.args, err, out)
		}
	}
}

// TestClusterWipedNodeReplaced wipes node 3's data directory and restarts
// it: it rejoins as node 4, its old replica of the shard group (id 3, no
// longer in the registry) is removed, and the new one is added and
// promoted once it has caught up, so the group has three voters again. Writes then go on with
// node 2 killed: node 4 is part of the quorum.
func TestClusterWipedNodeReplaced(t *testing.T) {
	procs := startSQLCluster(t)
	ctx := context.Background()
	// The test's clients talk to node 1, the founder (it serves while it
	// leads; a forwarded connection would die with the node it went
	// through, and nodes 2 and 3 are killed below).
	var p1, p2, p3 *clusterProc
	for _, p := range procs {
		switch {
		case strings.Contains(p.log.String(), "as node 3"):
			p3 = p
		case strings.Contains(p.log.String(), "as node 2"):
			p2 = p
		default:
			p1 = p
		}
	}
	if p1 == nil || p2 == nil || p3 == nil {
		t.Fatal("no processes logged that they are nodes 2 and 3")
	}
	conn, err := pgx.Connect(ctx, p1.url())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close(ctx) }()
	waitSysNodes(t, conn, p1, func(ns []nodeRow) bool {
		return len(ns) == 3 && ns[0].voters == 2 && ns[1].voters == 2 && ns[2].voters == 2
	})
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	w := startKVWriters(t, p1.url(), 2)
	p3.kill(syscall.SIGKILL)
	if err := os.RemoveAll(p3.dir); err != nil {
		t.Fatal(err)
	}
	p3.start()
	ns := waitSysNodes(t, conn, p1, func(ns []nodeRow) bool {
		if len(ns) != 3 || ns[2].id != 4 {
			return false
		}
		for _, n := range ns {
			if n.voters != 2 {
				return false
			}
		}
		return true
	})
	t.Logf("after the rejoin: %+v", ns)
	var jobs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM sys.jobs WHERE job_type = 'RE-REPLICATION'
		AND status = 'succeeded' AND description LIKE 'remove replica 3 of the shard group:%'`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 1 {
		t.Fatalf("%d re-replication jobs removed replica 3 of the shard group, want 1", jobs)
	}
	// Nodes 1 and 4 are a quorum of both groups, and of kv's shard group
	// (cluster/shardrepl splits it off FirstGroup) once node 4 votes in
	// it. Node 3's replica may leave that group before (it left
	// FirstGroup), so the replica list alone does not say node 4 votes:
	// the serving node's log does.
	deadline := time.Now().Add(60 * time.Second)
	var group int64
	for {
		var replicas string
		err := conn.QueryRow(ctx, "SELECT replica_node_ids, group_id FROM sys.partitions WHERE table_name = 'kv'").Scan(&replicas, &group)
		if err == nil && replicas == "1,2,4" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kv's shard group is on nodes %q (%v), want 1,2,4", replicas, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	votes := fmt.Sprintf("node 4 votes in shard group %d", group)
	for group != 2 && !strings.Contains(p1.log.String(), votes) && !strings.Contains(p2.log.String(), votes) && !strings.Contains(p3.log.String(), votes) {
		if time.Now().After(deadline) {
			t.Fatalf("no node logged %q", votes)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p2.kill(syscall.SIGKILL)
	time.Sleep(time.Second)
	w.finish(t, conn)
}

// threeNodesVoting is waitSysNodes' condition for a three-node cluster
// whose nodes all vote in both groups (metadata and shard): stopping any
// one of them leaves a quorum.
func threeNodesVoting(ns []nodeRow) bool {
	voters := 0
	for _, n := range ns {
		voters += n.voters
	}
	return len(ns) == 3 && voters == 6
}
