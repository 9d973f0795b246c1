package tests

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Rebalancing, decommissioning the node that serves SQL, and
// recommissioning (issue 18, cluster/placement) over the wire.

// nodeID returns the cluster node id p logged ("as node N").
func nodeID(t testing.TB, p *clusterProc) int64 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		l := p.log.String()
		for id := int64(1); id <= 9; id++ {
			if strings.Contains(l, fmt.Sprintf("as node %d\n", id)) || strings.Contains(l, fmt.Sprintf("as node %d ", id)) ||
				strings.Contains(l, fmt.Sprintf("as node %d\"", id)) {
				return id
			}
		}
	}
	t.Fatalf("node %s did not log its id:\n%s", p.sql, p.log)
	return 0
}

// startRetryingWriters is startKVWriters through one node that connects
// again when the connection ends (serving moved): a write whose
// connection ended, or that failed with 57P01, 57P03 or 08007, has an
// unknown outcome.
func startRetryingWriters(t testing.TB, url string, n int) *placementWriter {
	w := &placementWriter{stop: make(chan struct{})}
	for i := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			ctx := context.Background()
			var conn *pgx.Conn
			defer func() {
				if conn != nil {
					conn.Close(ctx)
				}
			}()
			var down time.Time // since the last write went through
			for k := int64(i); ; k += int64(n) {
				select {
				case <-w.stop:
					return
				default:
				}
				if conn == nil {
					var err error
					if conn, err = pgx.Connect(ctx, url); err != nil {
						if down.IsZero() {
							down = time.Now()
						} else if time.Since(down) > 60*time.Second {
							w.fail(fmt.Errorf("no connection for a minute: %w", err))
							return
						}
						time.Sleep(100 * time.Millisecond)
						k -= int64(n) // not tried
						continue
					}
				}
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := conn.Exec(wctx, "INSERT INTO kv VALUES ($1, $2)", k, fmt.Sprint("v", k))
				cancel()
				var pgErr *pgconn.PgError
				w.mu.Lock()
				switch {
				case err == nil:
					w.acked = append(w.acked, k)
					down = time.Time{}
				case errors.As(err, &pgErr) && pgErr.Code != "08007" && pgErr.Code != "57P01" && pgErr.Code != "57P03":
					w.mu.Unlock()
					w.fail(fmt.Errorf("insert %d: %w", k, err))
					return
				default:
					w.maybe = append(w.maybe, k)
					conn.Close(ctx)
					conn = nil
				}
				w.mu.Unlock()
			}
		}()
	}
	return w
}

// leaderCounts maps node ids to the groups they lead.
func leaderCounts(ns []nodeRow) map[int64]int {
	out := map[int64]int{}
	for _, n := range ns {
		out[n.id] = n.leaders
	}
	return out
}

func replicaCounts(ns []nodeRow) map[int64]int {
	out := map[int64]int{}
	for _, n := range ns {
		out[n.id] = n.replicas
	}
	return out
}

// TestClusterRebalance: three nodes take writes; a fourth joins and gets
// its replicas (a caught-up non-voter of each group), and the allocator
// spreads the leaderships so that no node leads both groups and moves a
// voter of the shard group to it (voters per node 2,2,2,0 → 2,2,1,1): the
// node that gave the voter up rejoins as a non-voter under a new replica
// id; then nothing moves for a while (no flapping), and every
// acknowledged write is there.
func TestClusterRebalance(t *testing.T) {
	procs := newClusterProcs(t, 4)
	founders := strings.Join([]string{procs[0].rpc, procs[1].rpc, procs[2].rpc}, ",")
	for _, p := range procs {
		p.join = founders
	}
	for _, p := range procs[:3] {
		startPlacementNode(p)
	}
	waitSQL(t, procs[0])
	s := servingProc(t, procs[:3])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	// Loaded: rows in the group, and writes going on.
	if _, err := conn.Exec(ctx, "CREATE TABLE bulk (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	for b := range 20 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO bulk VALUES ")
		for i := range 1000 {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "(%d, 'preloaded %d')", -(b*1000 + i + 1), i)
		}
		if _, err := conn.Exec(ctx, sb.String()); err != nil {
			t.Fatal(err)
		}
	}
	w := startKVWriters(t, s.url(), 2)
	before := waitSysNodes(t, conn, s, func(ns []nodeRow) bool {
		return len(ns) == 3 && ns[0].voters == 2 && ns[1].voters == 2 && ns[2].voters == 2
	})
	t.Logf("three nodes: replicas %v, voters %v, leaders %v", replicaCounts(before), voterCounts(before), leaderCounts(before))

	joined := time.Now()
	startPlacementNode(procs[3])
	after := waitSysNodes(t, conn, s, func(ns []nodeRow) bool {
		if len(ns) != 4 {
			return false
		}
		for _, n := range ns {
			if !n.live || n.replicas != 2 || n.leaders > 1 || n.voters < 1 {
				return false
			}
		}
		return true
	})
	took := time.Since(joined)
	t.Logf("four nodes after %s: replicas %v, voters %v, leaders %v, bytes %d", took.Round(time.Millisecond),
		replicaCounts(after), voterCounts(after), leaderCounts(after), after[3].bytes)
	// Its share of the bytes: every node holds the shard group's data.
	for _, n := range after {
		if n.bytes < 20000*10 || n.bytes != after[0].bytes {
			t.Fatalf("bytes per node: %+v", after)
		}
	}
	if took > time.Minute {
		t.Fatalf("the fourth node got its share after %s", took)
	}
	// The voter that moved: its node rejoined under generation 1.
	// (It notices within a second or so, once the serving node recorded
	// the new id.)
	rejoined := 0
	for deadline := time.Now().Add(15 * time.Second); rejoined == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, p := range procs[:3] {
			if strings.Contains(p.log.String(), "rejoined the shard group as a non-voter (replica 0x1") {
				rejoined++
			}
		}
	}
	if rejoined != 1 {
		t.Fatalf("%d nodes logged that they rejoined the shard group, want 1", rejoined)
	}
	// No flapping: the allocator moves nothing more (an election may move
	// a leadership on its own, so its moves are counted, not leaders).
	moves := func() (transfers, voters int) {
		if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE job_type = 'LEASE TRANSFER'),
			count(*) FILTER (WHERE job_type = 'REPLICA MOVE' AND description LIKE 'move a voter of%')
			FROM sys.jobs`).Scan(&transfers, &voters); err != nil {
			t.Fatal(err)
		}
		return transfers, voters
	}
	settledT, settledV := moves()
	time.Sleep(5 * time.Second)
	if n, v := moves(); n != settledT || n > 1 || v != settledV || v != 1 {
		t.Fatalf("%d leadership and %d voter moves, then %d and %d 5 s later: want at most one leadership move (the metadata group's) and one voter move",
			settledT, settledV, n, v)
	}
	t.Logf("%d leadership moves (LEASE TRANSFER jobs), %d voter move", settledT, settledV)
	w.finish(t, conn)
}

// TestClusterDecommissionServing decommissions the node that serves SQL,
// with `pivotdb node decommission` through another node, while writes go
// through a third: it hands serving over, the new serving node drains it,
// it is killed, and every acknowledged write is there. Then RECOMMISSION:
// of an active node it does nothing, of the decommissioned one it is
// refused (a recommission that stops a drain is tested in process,
// cluster/placement's TestRecommission).
func TestClusterDecommissionServing(t *testing.T) {
	procs, conn := placementCluster(t)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	old := procs[0]
	oldID := nodeID(t, old)
	w := startRetryingWriters(t, procs[2].url(), 3)
	time.Sleep(500 * time.Millisecond)

	start := time.Now()
	out, err := exec.Command(serverBin, "node", "decommission", fmt.Sprint(oldID), "--host", procs[1].sql).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("node %d is decommissioned", oldID)) {
		t.Fatalf("node decommission %d: %v\n%s\n%s", oldID, err, out, old.log)
	}
	t.Logf("decommissioned node %d, which served SQL, in %s:\n%s", oldID, time.Since(start).Round(time.Millisecond), out)
	// The drain ends once placement moved its replicas, which may be
	// before the node finished stepping down (its SQL server's shutdown
	// waits up to 2 s for the forwarded writers' statements).
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(old.log.String(), "stopped serving SQL"); {
		if time.Now().After(deadline) {
			t.Fatalf("node %d did not stop serving:\n%s", oldID, old.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	conn.Close(ctx)
	s := servingProc(t, procs[1:])
	conn, err = pgx.Connect(ctx, s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close(ctx) }()
	ns := readSysNodes(t, conn)
	for _, n := range ns {
		if n.id == oldID {
			if n.replicas != 0 || n.membership != "decommissioned" {
				t.Fatalf("node %d after the decommission: %+v", oldID, ns)
			}
		} else if n.voters != 2 || n.membership != "active" {
			t.Fatalf("node %d does not vote in both groups: %+v", n.id, ns)
		}
	}
	var finished int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM sys.jobs WHERE job_type = 'DECOMMISSION' AND status = 'succeeded'
		AND description = $1`, fmt.Sprintf("finish decommissioning node %d", oldID)).Scan(&finished); err != nil {
		t.Fatal(err)
	}
	if finished != 1 {
		t.Fatalf("%d finished decommission jobs on the new serving node", finished)
	}
	old.kill(syscall.SIGKILL)
	time.Sleep(500 * time.Millisecond)
	w.finish(t, conn)

	// Three nodes left, each voting in both groups: a decommission is
	// refused before it starts; RECOMMISSION of an active node does
	// nothing, and of the decommissioned one is refused.
	wantClusterSQLState(t, conn, "ALTER CLUSTER DECOMMISSION NODE "+fmt.Sprint(nodeID(t, s)), "55000")
	if _, err := conn.Exec(ctx, "ALTER CLUSTER RECOMMISSION NODE "+fmt.Sprint(nodeID(t, s))); err != nil {
		t.Fatal(err)
	}
	wantClusterSQLState(t, conn, fmt.Sprintf("ALTER CLUSTER RECOMMISSION NODE %d", oldID), "55000")
	out, err = exec.Command(serverBin, "node", "recommission", fmt.Sprint(oldID), "--host", s.sql).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "SQLSTATE 55000") {
		t.Fatalf("node recommission %d: %v\n%s", oldID, err, out)
	}
	out, err = exec.Command(serverBin, "node", "recommission", fmt.Sprint(nodeID(t, s)), "--host", s.sql).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "is active") {
		t.Fatalf("node recommission: %v\n%s", err, out)
	}
}
