package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The cluster section (issue 17, "Performance"): three `pivotdb serve
// --join` processes on this machine against one node, single-row UPSERT
// and point SELECT at 16 clients through pgx, sent to the serving node and
// to a forwarding node (which passes the connection on byte for byte).
// Targets: writes at least 0.5× and reads at least 0.7× of the one-node
// rate. The three nodes share this machine's cores and disk, so a cluster
// of separate machines would do better.

const clusterClients = 16

var clusterWorkloads = []string{"single-row UPSERT", "single-row UPSERT of a new row", "point SELECT"}

// newRowKeys hands out the keys of "single-row UPSERT of a new row": above
// every loaded row and never twice, so each UPSERT adds a row.
var newRowKeys atomic.Int64

// clusterOnlyWorkloads are measured only in the cluster section.
//
// "single-row UPSERT" rewrites a loaded row with the value it has, so its
// commit changes no shard's row count or size and writes no statistics
// counter. A new row does: partition's per-shard counter is merged in the
// same commit as the row. The counter is a shard-local key at the shard's
// pivot (partition/keys.go), in the row's own shard group, so the commit
// is one proposal; while it was a system key in the first group, the
// commit spanned two groups and took cluster/shardrepl's three rounds
// (stage, decide, apply; crossgroup.go). This row shows what INSERTs of
// new rows pay.
var clusterOnlyWorkloads = []workload{
	{
		name: "single-row UPSERT of a new row",
		op: func(ctx context.Context, in *instance, c *pgxpool.Conn, r *rand.Rand, rows int) error {
			k := int64(1_000_000_000) + newRowKeys.Add(1)
			_, err := c.Exec(ctx, in.dialect.upsert, k, value(int(k%int64(rows))))
			return err
		},
	},
}

// clusterRow is one measured line: a workload through one setup.
type clusterRow struct {
	workload, setup string
	m, one          measurement // this setup's, and one node's
	// cpu is the CPU time each process of the setup spent per operation
	// (the median over the repetitions): one entry for one node, three
	// for the cluster (in node order). The nodes share this machine's
	// cores, so CPU per operation is the figure that a loaded machine
	// disturbs least. marginal is the same less what each process spends
	// idle (measured for 2 s before the run: Raft ticks, heartbeats,
	// closed timestamps), which otherwise weighs more the fewer operations
	// a run does.
	cpu, marginal []time.Duration
	// loadMin and loadMax are the machine's 1-minute load average, the
	// least and the most read before the row's runs: other work on the
	// machine moves these figures more than anything measured.
	loadMin, loadMax float64
}

// loadAverage returns the 1-minute load average (Linux; 0 elsewhere).
func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
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
	sql   string
	debug string // --debug-listen address, when profiles are wanted
	cmd   *exec.Cmd
	log   *logTail
}

// startBenchCluster starts three nodes with one join list on fresh
// directories; stop stops them and removes the directories.
func startBenchCluster(bin string, withDebug bool) (nodes []*clusterNode, stop func(), err error) {
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
		args := []string{"serve", "--data-dir", fmt.Sprintf("%s/n%d", dir, i+1), "--listen", a.sql,
			"--cluster-listen", a.rpc, "--raft-listen", a.raft, "--join", strings.Join(rpcs, ","),
			"--balancer-interval", "10s"}
		n := &clusterNode{sql: a.sql, log: &logTail{}}
		if withDebug {
			n.debug = freeAddr()
			args = append(args, "--debug-listen", n.debug)
		}
		cmd := exec.Command(bin, args...)
		n.cmd = cmd
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
				err := in.pool.QueryRow(ctx, "SELECT sum(placed_voters)::Int64 FROM sys.nodes").Scan(&voters)
				in.pool.Close()
				if err == nil && voters == 6 { // three voters in each of the two groups placement moves
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

// processCPU returns the CPU time (user and system) process pid has used,
// from /proc/<pid>/stat (Linux; clock ticks of 10ms).
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count the fields after its closing one. utime and stime are fields
	// 14 and 15.
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// cpuOf returns the CPU time each of cmds has used.
func cpuOf(cmds []*exec.Cmd) ([]time.Duration, error) {
	out := make([]time.Duration, len(cmds))
	for i, c := range cmds {
		t, err := processCPU(c.Process.Pid)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// runClusterSection measures one node against the three-node cluster. With
// profileDir set, it then takes a 10 s CPU profile of each node while
// single-row UPSERTs at 16 clients go through the serving node, into
// profileDir/{serving,follower-1,follower-2}.pprof.
func runClusterSection(ctx context.Context, bin string, d time.Duration, reps, rows int, profileDir, only string) ([]clusterRow, error) {
	one, err := startPivot(bin, "", nil)
	if err != nil {
		return nil, err
	}
	defer one.stop()
	one.name = "one node"
	nodes, stop, err := startBenchCluster(bin, profileDir != "")
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
		if only != "" && !strings.Contains(strings.ToLower(name), strings.ToLower(only)) {
			continue
		}
		var w workload
		for _, x := range append(slices.Clip(workloads), clusterOnlyWorkloads...) {
			if x.name == name {
				w = x
			}
		}
		setups := []*instance{one, serving, forwarding}
		var clusterCmds []*exec.Cmd
		for _, n := range nodes {
			clusterCmds = append(clusterCmds, n.cmd)
		}
		// CPU per operation of each process, per setup and repetition.
		cpu := map[*instance][][]time.Duration{}
		marginal := map[*instance][][]time.Duration{}
		loads := map[*instance][]float64{}
		ms, err := measure(reps, setups, func(in *instance, rep int) (measurement, error) {
			loads[in] = append(loads[in], loadAverage())
			cmds := clusterCmds
			if in == one {
				cmds = []*exec.Cmd{one.cmd}
			}
			const idleFor = 2 * time.Second
			idle0, err := cpuOf(cmds)
			if err != nil {
				return measurement{}, err
			}
			time.Sleep(idleFor)
			before, err := cpuOf(cmds)
			if err != nil {
				return measurement{}, err
			}
			started := time.Now()
			m, err := runPgx(ctx, in, w, clusterClients, rows, d, uint64(rep*1000+clusterClients))
			if err != nil {
				return m, err
			}
			after, err := cpuOf(cmds)
			if err != nil {
				return m, err
			}
			elapsed := time.Since(started)
			perOp := make([]time.Duration, len(cmds))
			marginalPerOp := make([]time.Duration, len(cmds))
			for i := range cmds {
				if ops := m.ops * d.Seconds(); ops > 0 {
					used := after[i] - before[i]
					perOp[i] = time.Duration(float64(used) / ops)
					idle := float64(before[i]-idle0[i]) * elapsed.Seconds() / idleFor.Seconds()
					marginalPerOp[i] = time.Duration((float64(used) - idle) / ops)
				}
			}
			cpu[in] = append(cpu[in], perOp)
			marginal[in] = append(marginal[in], marginalPerOp)
			return m, nil
		})
		if err != nil {
			return nil, err
		}
		for i, in := range setups {
			r := clusterRow{workload: name, setup: in.name, m: ms[i], one: ms[0], cpu: medianCPU(cpu[in]), marginal: medianCPU(marginal[in])}
			if l := loads[in]; len(l) > 0 {
				r.loadMin, r.loadMax = slices.Min(l), slices.Max(l)
			}
			out = append(out, r)
			progress("cluster: %-18s %-36s %10.0f/s  %.2f× one node  CPU per op %s, less idle %s", name, in.name, ms[i].ops, ms[i].ops/ms[0].ops,
				fmtCPU(r.cpu), fmtCPU(r.marginal))
		}
	}
	if profileDir != "" {
		if err := profileCluster(ctx, s, nodes, serving, rows, profileDir); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// medianCPU returns, for each process, the median of its CPU per operation
// over the repetitions.
func medianCPU(reps [][]time.Duration) []time.Duration {
	if len(reps) == 0 {
		return nil
	}
	out := make([]time.Duration, len(reps[0]))
	for i := range out {
		v := make([]time.Duration, len(reps))
		for j, r := range reps {
			v[j] = r[i]
		}
		sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
		out[i] = v[len(v)/2]
	}
	return out
}

// fmtCPU renders CPU per operation: the sum over the processes, and each
// one's share when there are several.
func fmtCPU(cpu []time.Duration) string {
	var total time.Duration
	parts := make([]string, len(cpu))
	for i, c := range cpu {
		total += c
		parts[i] = fmt.Sprintf("%.0f", float64(c)/float64(time.Microsecond))
	}
	s := fmt.Sprintf("%.0f µs", float64(total)/float64(time.Microsecond))
	if len(cpu) > 1 {
		s += " (" + strings.Join(parts, " + ") + ")"
	}
	return s
}

// profileCluster takes a CPU profile of every node at once while
// single-row UPSERTs at 16 clients go through the serving node s.
func profileCluster(ctx context.Context, s *clusterNode, nodes []*clusterNode, serving *instance, rows int, dir string) error {
	var w workload
	for _, x := range workloads {
		if x.name == "single-row UPSERT" {
			w = x
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const seconds = 10
	done := make(chan error, 1)
	go func() {
		m, err := runPgx(ctx, serving, w, clusterClients, rows, (seconds+2)*time.Second, 7)
		if err == nil {
			progress("cluster: single-row UPSERT while profiled: %.0f/s", m.ops)
		}
		done <- err
	}()
	time.Sleep(time.Second)
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	follower := 0
	for i, n := range nodes {
		name := "serving"
		if n != s {
			follower++
			name = fmt.Sprintf("follower-%d", follower)
		}
		out := filepath.Join(dir, name+".pprof")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fetchProfile(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", n.debug, seconds), out)
		}()
	}
	wg.Wait()
	if err := <-done; err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	progress("cluster: wrote the nodes' CPU profiles to %s (go tool pprof -top bin/pivotdb %s/serving.pprof)", dir, dir)
	return nil
}

func fetchProfile(url, out string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
	sb.WriteString("CPU per operation is the CPU time the setup's processes used during the run divided by the\n")
	sb.WriteString("operations (for the cluster: the sum of the three nodes, then each node's in node order); less\n")
	sb.WriteString("idle, what each process spends idle (measured for 2 s before the run) is taken out first.\n\n")
	sb.WriteString("| workload | setup | ops/s | p50 | p99 | × one node | CPU per op | less idle |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	loadMin, loadMax := 0.0, 0.0
	for i, r := range rows {
		ratio := 0.0
		if r.one.ops > 0 {
			ratio = r.m.ops / r.one.ops
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %.2f× | %s | %s |\n", r.workload, r.setup, fmtOps(r.m.ops),
			fmtLat(r.m.p50), fmtLat(r.m.p99), ratio, fmtCPU(r.cpu), fmtCPU(r.marginal))
		if i == 0 || r.loadMin < loadMin {
			loadMin = r.loadMin
		}
		loadMax = max(loadMax, r.loadMax)
	}
	if loadMax > 0 {
		fmt.Fprintf(&sb, "\nThe machine's load average (1 minute) before the runs: %.1f to %.1f.\n", loadMin, loadMax)
	}
	return sb.String()
}
