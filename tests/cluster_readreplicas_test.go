package tests

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestClusterReadReplicas (issue 18 item 6): five nodes in zones a, a, b,
// c and c, the allocator off so that the three founders (zones a, a, b)
// keep the shard group's votes and the two nodes of zone c hold its
// non-voters. A table with READ_REPLICAS_SETTINGS = "PER_AZ:1" gets one
// read replica in zone c and none in zones a and b, whose nodes all vote
// (sys.partitions' read_replica_node_ids, a READ REPLICAS job); no NOTICE.
// A stale read-only connection to the read replica's node reads the table
// there, and keeps answering for 6 s with the serving node stopped by
// SIGSTOP (also without AS OF: bounded staleness); one
// to the other node of zone c is forwarded to it (its nearest read
// replica). RESET removes the read replica.
func TestClusterReadReplicas(t *testing.T) {
	procs := newClusterProcs(t, 5)
	founders := strings.Join([]string{procs[0].rpc, procs[1].rpc, procs[2].rpc}, ",")
	zones := []string{"az=a", "az=a", "az=b", "az=c", "az=c"}
	for i, p := range procs {
		p.join = founders
		if i < 3 {
			startPlacementNode(p, "--locality", zones[i], "--rebalance=false")
		}
	}
	waitSQL(t, procs[0])
	s := servingProc(t, procs[:3])
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var notices []string
	ccfg, err := pgx.ParseConfig(s.url())
	if err != nil {
		t.Fatal(err)
	}
	ccfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	conn, err := pgx.ConnectConfig(ctx, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close(context.Background()) }()
	waitSysNodes(t, conn, s, func(ns []nodeRow) bool {
		return len(ns) == 3 && ns[0].voters == 2 && ns[1].voters == 2 && ns[2].voters == 2
	})
	for _, p := range procs[3:] {
		startPlacementNode(p, "--locality", "az=c", "--rebalance=false", "--log-level", "debug")
	}
	waitSysNodes(t, conn, s, func(ns []nodeRow) bool {
		return len(ns) == 5 && ns[3].replicas == 2 && ns[4].replicas == 2
	})
	bySQL := map[string]*clusterProc{}
	for _, p := range procs {
		bySQL[p.sql] = p
	}
	// node id -> its process, once both recorded their locality
	zoneC := map[string]*clusterProc{}
	for start := time.Now(); len(zoneC) < 2; time.Sleep(200 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("zone c's nodes in sys.nodes: %v", zoneC)
		}
		rows, err := conn.Query(ctx, "SELECT node_id::Utf8, sql_address FROM sys.nodes WHERE locality = 'az=c'")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			var addr *string // NULL until the node recorded its SQL address
			if err := rows.Scan(&id, &addr); err != nil {
				t.Fatal(err)
			}
			if addr != nil {
				zoneC[id] = bySQL[*addr]
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := conn.Exec(ctx, `CREATE TABLE rr (k Int64, v Utf8, PRIMARY KEY (k)) WITH (READ_REPLICAS_SETTINGS = "PER_AZ:1")`); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 0 {
		t.Fatalf("notices: %q", notices)
	}
	if _, err := conn.Exec(ctx, "UPSERT INTO rr (k, v) VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	var written string
	if err := conn.QueryRow(ctx, "SELECT cluster_logical_timestamp()::Utf8").Scan(&written); err != nil {
		t.Fatal(err)
	}
	rrID := waitReadReplicas(t, conn, s, func(ids string) bool { return zoneC[ids] != nil })
	replica := zoneC[rrID]
	var router *clusterProc
	for id, p := range zoneC {
		if id != rrID {
			router = p
		}
	}
	var jobs int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM sys.jobs WHERE job_type = 'READ REPLICAS' AND status = 'succeeded'").Scan(&jobs); err != nil || jobs == 0 {
		t.Fatalf("READ REPLICAS jobs: %d, %v", jobs, err)
	}
	for _, want := range []string{"zone az=a: 0 of 1", "zone az=b: 0 of 1"} {
		if !strings.Contains(s.log.String(), want) {
			t.Errorf("the serving node's log does not say %q", want)
		}
	}

	// Stale reads on the read replica's node, served there.
	fc := connectStale(ctx, t, replica)
	asOf := "SELECT count(*) FROM rr AS OF SYSTEM TIME " + written
	var n int64
	// Without AS OF it reads at follower_read_timestamp(), 4.8 s back:
	// the rows show once that passed them.
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		err := fc.QueryRow(ctx, "SELECT count(*) FROM rr").Scan(&n)
		if err == nil && n == 2 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the read replica never answered the read: %d rows, %v", n, err)
		}
	}
	// The other node of zone c forwards its stale reads to the read
	// replica (its debug log says so), once it knows of the read replica
	// and sees its node live: it decides from its own replica of the
	// metadata group and its own pings, which may lag the serving node's
	// placement a little (until then it serves the connection itself).
	rcfg := staleConfig(t, router)
	forwarded := func() bool {
		l := router.log.String()
		return strings.Contains(l, "forwarded a stale read-only connection to the nearest read replica") && strings.Contains(l, "node="+rrID)
	}
	for start := time.Now(); !forwarded(); time.Sleep(200 * time.Millisecond) {
		if time.Since(start) > 15*time.Second {
			t.Fatalf("node %s's log does not say it forwarded a stale read to node %s:\n%s", router.sql, rrID, lastLines(router.log.String(), 40))
		}
		rc, err := pgx.ConnectConfig(ctx, rcfg)
		if err != nil {
			t.Fatal(err)
		}
		err = rc.QueryRow(ctx, asOf).Scan(&n)
		rc.Close(ctx)
		if err != nil || n != 2 {
			t.Fatalf("a stale read through node %s: %d rows, %v", router.sql, n, err)
		}
	}

	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Reads keep answering: at the write's time, and without AS OF
	// (follower_read_timestamp(), 4.8 s back) also once that passed the
	// last closed timestamp (about 2 s after the stop), at the closed
	// timestamp (bounded staleness, sql/follower.go), for longer than that.
	stopped := time.Now()
	for i := 0; time.Since(stopped) < 6*time.Second; i++ {
		for _, q := range []string{asOf, "SELECT count(*) FROM rr"} {
			qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
			err := fc.QueryRow(qctx, q).Scan(&n)
			qcancel()
			if err != nil || n != 2 {
				t.Fatalf("read %d (%s) on the read replica %s after the serving node stopped: %d rows, %v",
					i, q, time.Since(stopped).Round(time.Millisecond), n, err)
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	// RESET: the read replica goes (through whichever node serves now).
	conn.Close(ctx)
	var reset *pgx.Conn
	for start := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		c, err := pgx.Connect(ctx, procs[0].url())
		if err == nil {
			if _, err = c.Exec(ctx, "ALTER TABLE rr RESET (READ_REPLICAS_SETTINGS)"); err == nil {
				reset = c
				break
			}
			c.Close(ctx)
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code != "57P01" && pe.Code != "57P03" && pe.Code != "08006" {
			t.Fatalf("RESET: %v", err)
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("RESET: %v", err)
		}
	}
	defer func() { reset.Close(context.Background()) }()
	waitReadReplicas(t, reset, servingProc(t, procs), func(ids string) bool { return ids == "" })
}

// waitReadReplicas waits until sys.partitions shows table rr's read
// replicas as ok wants them, and returns them.
func waitReadReplicas(t *testing.T, conn *pgx.Conn, serving *clusterProc, ok func(ids string) bool) string {
	t.Helper()
	var got string
	var err error
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = conn.QueryRow(ctx, "SELECT read_replica_node_ids FROM sys.partitions WHERE table_name = 'rr'").Scan(&got)
		cancel()
		if err == nil && ok(got) {
			return got
		}
	}
	t.Fatalf("read_replica_node_ids %q (%v)\n%s", got, err, lastLines(serving.log.String(), 80))
	return ""
}
