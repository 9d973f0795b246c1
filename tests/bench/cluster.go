package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The cluster section (issue 17, "Performance"): three `pivotdb serve
// --join` processes on this machine against one node, single-row UPSERT
// and point SELECT at 16 clients through pgx, sent to the serving node and
// to a forwarding node (which passes the connection on byte for byte).
// Targets: writes at least 0.5× and reads at least 0.7× of the one-node
// rate. The three nodes share this machine's cores and disk, so a cluster
// of separate machines would do better.

const clusterClients = 16

var clusterWorkloads = []string{"single-row UPSERT", "point SELECT"}

// clusterRow is one measured line: a workload through one setup.
type clusterRow struct {
	workload, setup string
	m, one          measurement // this setup's, and one node's
}

// logTail keeps a child's log for finding the serving node and for
// printing when something fails.
type logTail struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type clusterNode struct {
	sql string
	cmd *exec.Cmd
	log *logTail
}

// startBenchCluster starts three nodes with one join list on fresh
// directories; stop stops them and removes the directories.
func startBenchCluster(bin string) (nodes []*clusterNode, stop func(), err error) {
	dir, err := os.MkdirTemp("", "pivotdb-bench-cluster")
	if err != nil {
		return nil, nil, err
	}
	var rpcs []string
	type addrs struct{ sql, rpc, raft string }
	var as []addrs
	for range 3 {
		a := addrs{freeAddr(), freeAddr(), freeAddr()}
		as = append(as, a)
		rpcs = append(rpcs, a.rpc)
	}
	stop = func() {
		for _, n := range nodes {
			stopProcess(n.cmd)
		}
		os.RemoveAll(dir)
	}
	for i, a := range as {
		cmd := exec.Command(bin, "serve", "--data-dir", fmt.Sprintf("%s/n%d", dir, i+1), "--listen", a.sql,
			"--cluster-listen", a.rpc, "--raft-listen", a.raft, "--join", strings.Join(rpcs, ","),
			"--balancer-interval", "10s")
		n := &clusterNode{sql: a.sql, cmd: cmd, log: &logTail{}}
		cmd.Stdout, cmd.Stderr = n.log, n.log
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, err
		}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		if err := waitListening(n.sql, 90*time.Second); err != nil {
			stop()
			return nil, nil, err
		}
	}
	return nodes, stop, nil
}

// stopProcess stops a child with SIGINT (PivotDB's drain), then kills it.
func stopProcess(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	in := &instance{cmd: cmd}
	in.stop()
}

// servingState reads a node's log for its SQL role: the epoch of its
// newest claim ("serves SQL under epoch N") and whether it serves under it
// now ("serving SQL" for that epoch, and no word since of another node
// taking over: from that moment its gateway forwards new connections,
// seconds before it logs "stopped serving SQL"). As tests/cluster_sql_test.go.
func servingState(log string) (epoch uint64, serving bool) {
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, "serves SQL under epoch "):
			_, after, _ := strings.Cut(line, "serves SQL under epoch ")
			n, _ := strconv.ParseUint(strings.TrimRight(after, `"`), 10, 64)
			epoch, serving = n, false
		case strings.Contains(line, `msg="serving SQL"`):
			serving = epoch != 0 && strings.Contains(line, fmt.Sprintf("epoch=%d", epoch))
		case strings.Contains(line, "took over serving SQL"), strings.Contains(line, "stops serving SQL"),
			strings.Contains(line, "stopped serving SQL"):
			serving = false
		}
	}
	return epoch, serving
}

// servingNode returns the node that serves SQL under the newest epoch any
// node claimed, once every node votes in the shard group.
func servingNode(ctx context.Context, nodes []*clusterNode) (*clusterNode, error) {
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		var serving []*clusterNode
		var newest, servingEpoch uint64
		for _, n := range nodes {
			e, ok := servingState(n.log.String())
			newest = max(newest, e)
			if ok {
				serving, servingEpoch = append(serving, n), e
			}
		}
		if len(serving) == 1 && servingEpoch == newest {
			in := &instance{name: "serving node", dialect: pivotDialect, addr: serving[0].sql, user: "pivotdb", db: "pivotdb"}
			if err := in.connect(ctx, 1); err == nil {
				var voters int64
				err := in.pool.QueryRow(ctx, "SELECT sum(voters)::Int64 FROM sys.nodes").Scan(&voters)
				in.pool.Close()
				if err == nil && voters == 6 { // three voters in each of the two groups
					return serving[0], nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	var tails []string
	for _, n := range nodes {
		l := n.log.String()
		tails = append(tails, l[max(0, len(l)-3000):])
	}
	return nil, fmt.Errorf("the cluster did not settle on one serving node with three voters:\n%s", strings.Join(tails, "\n---\n"))
}

// runClusterSection measures one node against the three-node cluster.
func runClusterSection(ctx context.Context, bin string, d time.Duration, reps, rows int) ([]clusterRow, error) {
	one, err := startPivot(bin, "", nil)
	if err != nil {
		return nil, err
	}
	defer one.stop()
	one.name = "one node"
	nodes, stop, err := startBenchCluster(bin)
	if err != nil {
		return nil, err
	}
	defer stop()
	s, err := servingNode(ctx, nodes)
	if err != nil {
		return nil, err
	}
	var f *clusterNode
	for _, n := range nodes {
		if n != s {
			f = n
			break
		}
	}
	serving := &instance{name: "3 nodes, through the serving node", dialect: pivotDialect, addr: s.sql, user: "pivotdb", db: "pivotdb"}
	forwarding := &instance{name: "3 nodes, through a forwarding node", dialect: pivotDialect, addr: f.sql, user: "pivotdb", db: "pivotdb"}
	for _, in := range []*instance{one, serving, forwarding} {
		if err := in.connect(ctx, clusterClients); err != nil {
			return nil, fmt.Errorf("%s: %w", in.name, err)
		}
	}
	defer serving.pool.Close()
	defer forwarding.pool.Close()
	for _, in := range []*instance{one, serving} {
		if err := loadTables(ctx, in, rows); err != nil {
			return nil, fmt.Errorf("%s: %w", in.name, err)
		}
	}
	progress("cluster section: loaded %d rows into one node and the three-node cluster", rows)
	var out []clusterRow
	for _, name := range clusterWorkloads {
		var w workload
		for _, x := range workloads {
			if x.name == name {
				w = x
			}
		}
		setups := []*instance{one, serving, forwarding}
		ms, err := measure(reps, setups, func(in *instance, rep int) (measurement, error) {
			return runPgx(ctx, in, w, clusterClients, rows, d, uint64(rep*1000+clusterClients))
		})
		if err != nil {
			return nil, err
		}
		for i, in := range setups {
			out = append(out, clusterRow{workload: name, setup: in.name, m: ms[i], one: ms[0]})
			progress("cluster: %-18s %-36s %10.0f/s  %.2f× one node", name, in.name, ms[i].ops, ms[i].ops/ms[0].ops)
		}
	}
	return out, nil
}

// renderCluster renders the cluster section of the report.
func renderCluster(rows []clusterRow, d time.Duration, reps int) string {
	var sb strings.Builder
	sb.WriteString("\n## A three-node cluster against one node\n\n")
	sb.WriteString("Three `pivotdb serve --join` processes on this machine (one Raft group of three replicas\n")
	sb.WriteString("holds the data; the group leader's node serves SQL, the others forward each connection to it\n")
	sb.WriteString("byte for byte) against one `pivotdb serve`, the same tables loaded, pgx at 16 clients. Each\n")
	fmt.Fprintf(&sb, "figure is the median of %d × %v, alternating which setup goes first. The three processes\n", reps, d)
	sb.WriteString("share this machine's cores and disk: every commit is fsynced by three Raft logs on one disk.\n")
	sb.WriteString("Targets (issue 17): writes at least 0.5× and reads at least 0.7× of one node.\n\n")
	sb.WriteString("| workload | setup | ops/s | p50 | p99 | × one node |\n|---|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		ratio := 0.0
		if r.one.ops > 0 {
			ratio = r.m.ops / r.one.ops
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %.2f× |\n", r.workload, r.setup, fmtOps(r.m.ops),
			fmtLat(r.m.p50), fmtLat(r.m.p99), ratio)
	}
	return sb.String()
}
