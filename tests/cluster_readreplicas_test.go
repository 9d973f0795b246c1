package tests

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestClusterReadReplicas (issue 18 item 6): four nodes in zones a, a, b
// and c, the allocator off so that the three founders (zones a, a, b)
// keep the shard group's votes and node 4 (zone c) holds its only
// non-voter. A table with READ_REPLICAS_SETTINGS = "PER_AZ:1" gets one read
// replica in zone c (node 4) and none in zones a and b, whose nodes all
// vote (sys.partitions' read_replica_node_ids, a READ REPLICAS job); no
// NOTICE. A stale read-only connection to node 4 reads the table, and
// keeps answering with the serving node stopped by SIGSTOP. RESET removes
// the read replica.
func TestClusterReadReplicas(t *testing.T) {
	procs := newClusterProcs(t, 4)
	founders := strings.Join([]string{procs[0].rpc, procs[1].rpc, procs[2].rpc}, ",")
	zones := []string{"az=a", "az=a", "az=b", "az=c"}
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
	startPlacementNode(procs[3], "--locality", zones[3], "--rebalance=false")
	waitSysNodes(t, conn, s, func(ns []nodeRow) bool { return len(ns) == 4 && ns[3].replicas == 2 })
	var zoneC int64
	if err := conn.QueryRow(ctx, "SELECT node_id FROM sys.nodes WHERE locality = 'az=c'").Scan(&zoneC); err != nil {
		t.Fatal(err)
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
	waitReadReplicas(t, conn, s, strconv.FormatInt(zoneC, 10))
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
	cfg, err := pgx.ParseConfig(procs[3].url())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["stale_read_only"] = "on"
	fc, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { fc.Close(context.Background()) }()
	asOf := "SELECT count(*) FROM rr AS OF SYSTEM TIME " + written
	var n int64
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		err := fc.QueryRow(ctx, asOf).Scan(&n)
		if err == nil && n == 2 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the read replica never answered the read: %d rows, %v", n, err)
		}
	}
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for i := range 5 {
		qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
		err := fc.QueryRow(qctx, asOf).Scan(&n)
		qcancel()
		if err != nil || n != 2 {
			t.Fatalf("read %d on the read replica %s after the serving node stopped: %d rows, %v",
				i, time.Since(stopped).Round(time.Millisecond), n, err)
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
	waitReadReplicas(t, reset, servingProc(t, procs), "")
}

// waitReadReplicas waits until sys.partitions shows want as table rr's
// read replicas.
func waitReadReplicas(t *testing.T, conn *pgx.Conn, serving *clusterProc, want string) {
	t.Helper()
	var got string
	var err error
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = conn.QueryRow(ctx, "SELECT read_replica_node_ids FROM sys.partitions WHERE table_name = 'rr'").Scan(&got)
		cancel()
		if err == nil && got == want {
			return
		}
	}
	t.Fatalf("read_replica_node_ids %q (%v), want %q\n%s", got, err, want, lastLines(serving.log.String(), 80))
}
