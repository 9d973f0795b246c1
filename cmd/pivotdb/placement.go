package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/shardrepl"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/server"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
)

// Placement on a cluster (issue 18, cluster/placement): serve's
// --dead-node-timeout, the adapter that gives SQL the placement manager
// (sys.nodes, ALTER CLUSTER DECOMMISSION NODE), and `pivotdb node`.

// minDeadNodeTimeout: nodes are pinged every half second, so a shorter
// timeout would call a node dead after a missed ping or two.
const minDeadNodeTimeout = time.Second

func addDeadNodeTimeoutFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("dead-node-timeout", placement.DefaultDeadNodeTimeout,
		"a node not heard from for this long is dead: its replicas are replaced from the survivors on other live nodes; with --join")
}

func deadNodeTimeoutSet(fs *flag.FlagSet) bool { return flagSet(fs, "dead-node-timeout") }

func addSnapshotRateFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("snapshot-rate", shardsm.DefaultSnapshotRate>>20,
		"megabytes per second this node streams and installs replica snapshots at, all together (0: no bound); a move's snapshot "+
			"takes CPU and disk the shard's writes need too; with --join")
}

func addSnapshotRateElasticFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("snapshot-rate-elastic", false,
		"scale the snapshot rate down, to an eighth at least, while this node's CPU is short (Go's scheduling latency over 1 ms at the "+
			"99th percentile), so that a move's snapshot yields to the writes (experimental: a slowed copy of a big shard under "+
			"steady writes can outlive the leader's Raft log and be streamed again); with --join")
}

// addShardGroupPerShardFlag is serve's --shard-group-per-shard: the serving
// node splits the shard group where each partition shard begins
// (cluster/shardrepl's split reconciler). On by default;
// --shard-group-per-shard=false keeps every table in one shard group.
func addShardGroupPerShardFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("shard-group-per-shard", true,
		"give every partition shard a Raft group of its own, up to 64 groups (=false: one group holds every table); give every node the same value; with --join")
}

// snapshotRateBytes is shardrepl.ClusterConfig's SnapshotRate for
// --snapshot-rate's megabytes per second (0: unbounded, which the config
// spells negative).
func snapshotRateBytes(mbPerSecond int64) int64 {
	if mbPerSecond == 0 {
		return -1
	}
	return mbPerSecond << 20
}

// flagSet reports whether the command line gave flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func (c clusterFlags) checkDeadNodeTimeout() error {
	if *c.deadNodeTimeout < minDeadNodeTimeout {
		return fmt.Errorf("--dead-node-timeout %s: must be at least %s", *c.deadNodeTimeout, minDeadNodeTimeout)
	}
	return nil
}

// clusterAdmin is sql.ClusterAdmin over the placement manager, with the
// node's clock offset estimates (cluster/node's ClockMonitor) for
// sys.nodes.
type clusterAdmin struct {
	m      *placement.Manager
	cl     *shardrepl.Cluster
	clocks *node.ClockMonitor
}

// ShardGroups implements sql.ShardGroupLister: sys.partitions' group
// columns, from the serving node's shard map, and each group's read
// replicas as placement recorded them.
func (a clusterAdmin) ShardGroups(ctx context.Context) ([]sql.ShardGroup, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	gs, err := a.cl.GroupInfos(ctx)
	if err != nil {
		return nil, err
	}
	reads, err := a.m.ReadReplicas(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make([]sql.ShardGroup, len(gs))
	for i, g := range gs {
		out[i] = sql.ShardGroup{ID: uint64(g.Group), Start: g.Span.Start, End: g.Span.End, LeaderNode: g.LeaderNode, Nodes: g.Nodes,
			ReadReplicaNodes: reads[g.Group]}
	}
	return out, nil
}

func (a clusterAdmin) AttachJobs(r *jobs.Registry) { a.m.AttachJobs(r) }

func (a clusterAdmin) Nodes(ctx context.Context) ([]sql.ClusterNode, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nodes, err := a.m.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	// Placement counts the metadata group and FirstGroup; the split
	// children are the Cluster's. Their bytes are in FirstGroup's size
	// already (Cluster.groupSize sums every group, and every member of
	// FirstGroup holds every child).
	children, err := a.cl.ChildCounts(ctx)
	if err != nil {
		return nil, err
	}
	offsets := map[uint64]node.RemoteOffset{a.m.Self(): {}} // its own clock: 0
	if a.clocks != nil {
		for _, p := range a.clocks.Offsets() {
			offsets[p.Node] = p.RemoteOffset
		}
	}
	out := make([]sql.ClusterNode, len(nodes))
	for i, n := range nodes {
		o, known := offsets[n.ID]
		ch := children[n.ID]
		out[i] = sql.ClusterNode{ID: n.ID, Address: n.Addr, SQLAddress: n.SQLAddr, Live: n.Live, Membership: n.Membership,
			Replicas: n.Replicas + ch.Replicas, Voters: n.Voters + ch.Voters, Leaders: n.Leaders + ch.Leaders,
			PlacedReplicas: n.Replicas, PlacedVoters: n.Voters, PlacedLeaders: n.Leaders, Bytes: n.Bytes, Locality: n.Locality,
			ClockKnown: known, ClockOffset: o.Offset, ClockUncertainty: o.Uncertainty}
	}
	return out, nil
}

func (a clusterAdmin) Decommission(ctx context.Context, id uint64, progress func(done, total int64)) (string, error) {
	if err := a.m.Decommission(ctx, id, progress); err != nil {
		return "", err
	}
	if id == a.m.Self() {
		return fmt.Sprintf("node %d served SQL and handed serving over to another node, which drains node %d now; "+
			"this connection ends (57P01); sys.nodes shows node %d decommissioned once it holds no replica", id, id, id), nil
	}
	return "", nil
}

func (a clusterAdmin) Recommission(ctx context.Context, id uint64) error {
	return a.m.Recommission(ctx, id)
}

// addRebalanceFlag is serve's --rebalance: placement's allocator, which
// runs on the node that serves SQL.
func addRebalanceFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("rebalance", true,
		"spread the Raft groups' leaderships over the live nodes (cluster/placement's allocator, on the node that serves SQL; give every node the same value); with --join")
}

// addLocalityFlag is serve's --locality (CockroachDB's): key=value tiers,
// the widest first; the allocator puts a group's voters in distinct values
// of the first tier where it can, and sys.nodes shows it.
func addLocalityFlag(fs *flag.FlagSet) *string {
	return fs.String("locality", "",
		"where the node runs, as comma-separated key=value tiers, widest first (az=eu-1a,rack=r7): a group's voters go to distinct values of the first tier where possible; with --join")
}

// nodeCommand runs `pivotdb node decommission N` and `pivotdb node
// status` against the SQL address of the node that serves SQL.
func nodeCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "decommission" && args[0] != "recommission" && args[0] != "status") {
		fmt.Fprintln(stderr, "pivotdb node: want decommission NODE_ID, recommission NODE_ID or status")
		usage(stderr)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("node "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", server.DefaultListen, "SQL address (HOST:PORT) of the node that serves SQL")
	user := fs.String("user", "pivotdb", "user to connect as (a superuser; the password comes from PGPASSWORD)")
	// The node id may come before or after the flags.
	var rest []string
	for len(args) > 1 {
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = append([]string{sub}, fs.Args()[1:]...)
	}
	var id int64
	switch {
	case sub == "status" && len(rest) > 0:
		fmt.Fprintf(stderr, "pivotdb node status: unexpected argument %q\n", rest[0])
		return 2
	case sub != "status" && len(rest) != 1:
		fmt.Fprintf(stderr, "pivotdb node %s: want one NODE_ID\n", sub)
		return 2
	case sub != "status":
		var err error
		if id, err = strconv.ParseInt(rest[0], 10, 64); err != nil || id <= 0 {
			fmt.Fprintf(stderr, "pivotdb node %s: %q is not a node id (a positive integer)\n", sub, rest[0])
			return 2
		}
	}
	if _, _, err := net.SplitHostPort(*host); err != nil {
		fmt.Fprintf(stderr, "pivotdb node %s: --host %q: %v\n", sub, *host, err)
		return 2
	}
	u := url.URL{Scheme: "postgres", User: url.User(*user), Host: *host, Path: "/pivotdb", RawQuery: "sslmode=prefer"}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return nodeError(stderr, sub, err)
	}
	defer conn.Close(ctx)
	switch sub {
	case "status":
		if err := printNodes(ctx, conn, stdout); err != nil {
			return nodeError(stderr, sub, err)
		}
		return 0
	case "recommission":
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER CLUSTER RECOMMISSION NODE %d", id)); err != nil {
			return nodeError(stderr, sub, err)
		}
		fmt.Fprintf(stdout, "node %d is active\n", id)
		return 0
	}
	// The statement runs on one connection; a second one reports the
	// node's replicas left every second.
	watch, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return nodeError(stderr, sub, err)
	}
	defer watch.Close(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, fmt.Sprintf("ALTER CLUSTER DECOMMISSION NODE %d", id))
		done <- err
	}()
	last := ""
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			var pgErr *pgconn.PgError
			if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "57P01") {
				return nodeError(stderr, sub, err)
			}
			// The node that served SQL hands serving over and another
			// node finishes its drain (a NOTICE says so), or the
			// connection ended as serving moved: watch sys.nodes, through
			// --host, until the node is decommissioned.
			if err := waitDecommissioned(ctx, u.String(), id, stdout); err != nil {
				return nodeError(stderr, sub, err)
			}
			fmt.Fprintf(stdout, "node %d is decommissioned: it holds no replica and can be stopped\n", id)
			return 0
		case <-tick.C:
			var membership string
			var replicas int64
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := watch.QueryRow(qctx, "SELECT membership, replicas FROM sys.nodes WHERE node_id = $1", id).Scan(&membership, &replicas)
			cancel()
			if err != nil {
				continue // the statement's own answer says what went wrong
			}
			if line := fmt.Sprintf("node %d: %s, %d replicas left", id, membership, replicas); line != last {
				fmt.Fprintln(stdout, line)
				last = line
			}
		}
	}
}

// decommissionWait bounds how long `pivotdb node decommission` waits for a
// node that handed serving over to be drained by the next serving node.
const decommissionWait = 5 * time.Minute

// waitDecommissioned polls sys.nodes through url, connecting again as
// needed (serving may be moving), until node id is decommissioned. A node
// found active was not decommissioned (the connection ended before the
// statement did anything).
func waitDecommissioned(ctx context.Context, url string, id int64, stdout io.Writer) error {
	deadline := time.Now().Add(decommissionWait)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(ctx)
		}
	}()
	last := ""
	for {
		var membership string
		var replicas int64
		err := errors.New("not connected")
		if conn == nil {
			conn, err = pgx.Connect(ctx, url)
		}
		if conn != nil {
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = conn.QueryRow(qctx, "SELECT membership, replicas FROM sys.nodes WHERE node_id = $1", id).Scan(&membership, &replicas)
			cancel()
			if err != nil {
				conn.Close(ctx)
				conn = nil
			}
		}
		switch {
		case err == nil && membership == "decommissioned":
			return nil
		case err == nil && membership == "active":
			return fmt.Errorf("node %d is active: the decommission did not start (the connection ended first); run it again", id)
		case err == nil:
			if line := fmt.Sprintf("node %d: %s, %d replicas left", id, membership, replicas); line != last {
				fmt.Fprintln(stdout, line)
				last = line
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %d is not decommissioned after %s (last error: %v); sys.nodes shows its state", id, decommissionWait, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func printNodes(ctx context.Context, conn *pgx.Conn, w io.Writer) error {
	rows, err := conn.Query(ctx, `SELECT node_id, coalesce(address, ''), coalesce(sql_address, ''), is_live, membership,
		replicas, voters, leaders FROM sys.nodes ORDER BY node_id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintf(w, "%-7s %-21s %-21s %-7s %-15s %8s %6s %7s\n", "node_id", "address", "sql_address", "is_live", "membership",
		"replicas", "voters", "leaders")
	for rows.Next() {
		var id, replicas, voters, leaders int64
		var addr, sqlAddr, membership string
		var live bool
		if err := rows.Scan(&id, &addr, &sqlAddr, &live, &membership, &replicas, &voters, &leaders); err != nil {
			return err
		}
		fmt.Fprintf(w, "%-7d %-21s %-21s %-7t %-15s %8d %6d %7d\n", id, addr, sqlAddr, live, membership, replicas, voters, leaders)
	}
	return rows.Err()
}

func nodeError(stderr io.Writer, sub string, err error) int {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		fmt.Fprintf(stderr, "pivotdb node %s: ERROR: %s (SQLSTATE %s)\n", sub, pgErr.Message, pgErr.Code)
		if pgErr.Hint != "" {
			fmt.Fprintf(stderr, "HINT: %s\n", pgErr.Hint)
		}
	} else {
		fmt.Fprintf(stderr, "pivotdb node %s: %v\n", sub, err)
	}
	return 1
}

// readReplicaSpans adapts sql.Engine.ReadReplicaSpans to shardrepl's
// (cluster/placement's want per zone or in total).
func readReplicaSpans(e *sql.Engine) func() []shardrepl.ReadReplicaSpan {
	return func() []shardrepl.ReadReplicaSpan {
		spans := e.ReadReplicaSpans()
		out := make([]shardrepl.ReadReplicaSpan, 0, len(spans))
		for _, sp := range spans {
			var w placement.ReadReplicaWant
			switch sp.Setting.Mode {
			case tablesettings.ReplicasPerAZ:
				w.PerZone = sp.Setting.Count
			case tablesettings.ReplicasAnyAZ:
				w.Total = sp.Setting.Count
			}
			out = append(out, shardrepl.ReadReplicaSpan{Start: sp.Start, End: sp.End, Want: w})
		}
		return out
	}
}
