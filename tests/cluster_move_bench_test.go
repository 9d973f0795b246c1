package tests

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BenchmarkClusterReplicaMove times moving a replica of the shard group
// (issue 18's move benchmark): three nodes hold a table of
// PIVOTDB_MOVE_BENCH_MB megabytes (64 by default; 1024 for the issue's
// second figure) and take single-row INSERTs from two clients; a fourth
// node joins (the serving node adds it as a non-voter, which receives the
// group as a snapshot and catches up) and one of the non-serving voters is
// decommissioned, which promotes the new replica and removes the old one.
// It reports the time until the new replica caught up and until the move
// ended, the bytes the new node holds, and the write rate during the move
// against the quiet rate before it, and the CPU time each node process
// spent per acknowledged write in the quiet window and during the move
// (from /proc; what a move costs, less noisy on a loaded machine than
// the rates). The quiet rate is measured again for 10 s after the move
// (x-moving/quiet-around: the rate during the move against the mean of
// the two quiet ones, which a drifting load disturbs less). With
// PIVOTDB_MOVE_BENCH_PROFILE=DIR the nodes serve pprof
// (--debug-listen) and the serving node's and the new node's CPU
// profiles of the move's first PIVOTDB_MOVE_BENCH_PROFILE_SECONDS (5 by
// default) are written there; PIVOTDB_MOVE_BENCH_LOGS=DIR keeps the
// nodes' logs there; PIVOTDB_MOVE_BENCH_FLAGS adds serve flags to every
// node. Run it alone:
//
//	make build && PIVOTDB_BIN=$PWD/bin/pivotdb go test ./tests -run '^$' -bench ClusterReplicaMove -benchtime 1x
func BenchmarkClusterReplicaMove(b *testing.B) {
	mb := 64
	if v := os.Getenv("PIVOTDB_MOVE_BENCH_MB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("PIVOTDB_MOVE_BENCH_MB=%q: want a positive number of megabytes", v)
		}
		mb = n
	}
	for range b.N {
		moveReplicaOnce(b, mb)
	}
}

func moveReplicaOnce(b *testing.B, mb int) {
	b.StopTimer()
	procs := newClusterProcs(b, 4)
	founders := strings.Join([]string{procs[0].rpc, procs[1].rpc, procs[2].rpc}, ",")
	for _, p := range procs {
		p.join = founders
	}
	// The allocator would move a voter to the new node by itself (2 s
	// after it caught up): the move measured is the decommission's.
	profileDir := os.Getenv("PIVOTDB_MOVE_BENCH_PROFILE")
	// PIVOTDB_MOVE_BENCH_FLAGS: more serve flags for every node (e.g.
	// "--snapshot-rate 16", or "--log-level debug" for dragonboat's
	// snapshot decisions in PIVOTDB_MOVE_BENCH_LOGS).
	extraFlags := strings.Fields(os.Getenv("PIVOTDB_MOVE_BENCH_FLAGS"))
	debugAddrs := map[*clusterProc]string{}
	nodeFlags := func(p *clusterProc) []string {
		flags := append([]string{"--rebalance=false"}, extraFlags...)
		if profileDir != "" {
			debugAddrs[p] = freePort(b)
			flags = append(flags, "--debug-listen", debugAddrs[p])
		}
		return flags
	}
	for _, p := range procs[:3] {
		startPlacementNode(p, nodeFlags(p)...)
	}
	waitSQL(b, procs[0])
	s := servingProc(b, procs[:3])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { conn.Close(ctx) }()
	waitSysNodes(b, conn, s, func(ns []nodeRow) bool {
		return len(ns) == 3 && ns[0].voters == 2 && ns[1].voters == 2 && ns[2].voters == 2
	})
	for _, q := range []string{"CREATE TABLE bulk (k Int64, v Utf8, PRIMARY KEY (k))", "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	// mb megabytes of 1 KB rows, 512 rows a statement, of random
	// characters (Pebble would compress a repeated one to nothing).
	loadStart := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	padBytes := make([]byte, 1000)
	rows := mb * 1024
	for k := 0; k < rows; k += 512 {
		var sb strings.Builder
		// UPSERT: a statement repeated after serving moved (below) may
		// have committed the first time.
		sb.WriteString("UPSERT INTO bulk VALUES ")
		for i := k; i < min(k+512, rows); i++ {
			if i > k {
				sb.WriteString(", ")
			}
			for j := range padBytes {
				padBytes[j] = alphabet[rng.IntN(len(alphabet))]
			}
			fmt.Fprintf(&sb, "(%d, '%s')", i, padBytes)
		}
		for attempt := 0; ; attempt++ {
			_, err := conn.Exec(ctx, sb.String())
			if err == nil {
				break
			}
			// A loaded machine may miss the leader's heartbeats for an
			// election timeout during a long load: another node then
			// serves (57P01, or the connection ends). Go on through it.
			if attempt == 5 {
				b.Fatal(err)
			}
			b.Logf("loading: %v; reconnecting to the serving node", err)
			conn.Close(ctx)
			s = servingProc(b, procs[:3])
			if conn, err = pgx.Connect(ctx, s.url()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("loaded %d rows of 1 KB in %s", rows, time.Since(loadStart).Round(time.Millisecond))

	// Writers that reconnect: on a loaded machine serving may move during
	// a long move (an election), and the bench then goes on through it.
	w := startRetryingWriters(b, s.url(), 2)
	acked := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.acked)
	}
	time.Sleep(time.Second)
	q0, t0 := acked(), time.Now()
	cpu0 := nodesCPU(procs[:3])
	time.Sleep(quietWindow)
	quietWrites := acked() - q0
	quiet := float64(quietWrites) / time.Since(t0).Seconds()
	quietCPU := nodesCPU(procs[:3]) - cpu0

	// The shard groups of the bulk table (each shard has a group of its
	// own, and a big table is split into shards) and the nodes that hold
	// them. The voter that leaves does not serve SQL and holds the most of
	// them: its decommission moves those replicas to the new node.
	bulkGroups := map[int64]bool{}
	holds := map[int64]int{}
	parts, err := conn.Query(ctx, "SELECT DISTINCT group_id, replica_node_ids FROM sys.partitions WHERE table_name = 'bulk'")
	if err != nil {
		b.Fatal(err)
	}
	for parts.Next() {
		var g int64
		var nodes string
		if err := parts.Scan(&g, &nodes); err != nil {
			b.Fatal(err)
		}
		bulkGroups[g] = true
		for _, n := range strings.Split(nodes, ",") {
			if id, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64); err == nil {
				holds[id]++
			}
		}
	}
	if err := parts.Err(); err != nil {
		b.Fatal(err)
	}
	var leaving *clusterProc
	var leavingID int64
	for _, p := range procs[:3] {
		if id := nodeID(b, p); p != s && (leaving == nil || holds[id] > holds[leavingID]) {
			leaving, leavingID = p, id
		}
	}
	if holds[leavingID] == 0 {
		b.Fatalf("no node but the serving one holds a replica of the bulk table's groups %v", bulkGroups)
	}
	b.Logf("the bulk table's groups: %v; node %d holds %d of them and leaves", bulkGroups, leavingID, holds[leavingID])
	b.StartTimer()
	m0, start := acked(), time.Now()
	moveCPU0 := nodesCPU(procs[:3])
	// The writes acknowledged in every 100 ms of the move, for the log (to
	// read against the nodes' logged steps), and the slowest second.
	stopTrace := make(chan struct{})
	type traceOut struct {
		trace      string
		slowestSec int
		slowestAt  float64
	}
	traced := make(chan traceOut, 1)
	go func() {
		var sb strings.Builder
		var window []int // the last ten tenths
		out := traceOut{slowestSec: -1}
		last := m0
		for tick := time.NewTicker(100 * time.Millisecond); ; {
			select {
			case <-stopTrace:
				tick.Stop()
				out.trace = sb.String()
				traced <- out
				return
			case <-tick.C:
				n := acked()
				at := time.Since(start).Seconds()
				if len(window)%10 == 0 && len(window) > 0 || len(sb.String()) == 0 {
					fmt.Fprintf(&sb, "\n  %5.1fs:", at)
				}
				fmt.Fprintf(&sb, " %d", n-last)
				window = append(window, n-last)
				if len(window) >= 10 {
					sum := 0
					for _, x := range window[len(window)-10:] {
						sum += x
					}
					if out.slowestSec < 0 || sum < out.slowestSec {
						out.slowestSec, out.slowestAt = sum, at
					}
				}
				last = n
			}
		}
	}()
	startPlacementNode(procs[3], nodeFlags(procs[3])...)
	if profileDir != "" {
		secs := os.Getenv("PIVOTDB_MOVE_BENCH_PROFILE_SECONDS")
		if secs == "" {
			secs = "5"
		}
		for i, p := range []*clusterProc{s, procs[3]} {
			go func(name, addr string) {
				// The new node's debug listener comes up with its
				// process: try for a second.
				for range 20 {
					resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=" + secs)
					if err != nil {
						time.Sleep(50 * time.Millisecond)
						continue
					}
					defer resp.Body.Close()
					f, err := os.Create(filepath.Join(profileDir, name))
					if err == nil {
						io.Copy(f, resp.Body)
						f.Close()
					}
					return
				}
			}([]string{"move-serving.pprof", "move-new.pprof"}[i], debugAddrs[p])
		}
	}
	// Caught up: the new node's replicas of all the bulk table's groups.
	var caughtUp time.Duration
	for deadline := time.Now().Add(30 * time.Minute); caughtUp == 0; time.Sleep(20 * time.Millisecond) {
		log := procs[3].log.String()
		all := true
		for g := range bulkGroups {
			if !strings.Contains(log, fmt.Sprintf("its replica of shard group %d caught up", g)) {
				all = false
			}
		}
		if all {
			caughtUp = time.Since(start)
		}
		if time.Now().After(deadline) {
			b.Fatalf("the new node did not catch up:\n%s", procs[3].log)
		}
	}
	for attempt := 0; ; attempt++ {
		_, err := conn.Exec(ctx, fmt.Sprintf("ALTER CLUSTER DECOMMISSION NODE %d", leavingID))
		if err == nil {
			break
		}
		if attempt == 3 {
			b.Fatal(err)
		}
		// Serving moved (an election on a loaded machine): decommission
		// through the new serving node; a decommission in progress goes on.
		b.Logf("decommissioning: %v; again through the serving node", err)
		conn.Close(ctx)
		s = servingProc(b, procs[:3])
		if conn, err = pgx.Connect(ctx, s.url()); err != nil {
			b.Fatal(err)
		}
	}
	moved := time.Since(start)
	movedWrites := acked() - m0
	during := float64(movedWrites) / moved.Seconds()
	moveCPU := nodesCPU(procs[:3]) - moveCPU0
	newNodeCPU := nodesCPU(procs[3:])
	b.StopTimer()
	close(stopTrace)
	tr := <-traced
	b.Logf("writes acknowledged in each 100 ms of the move (from %s UTC; a line a second):%s", start.UTC().Format("15:04:05.000"), tr.trace)
	b.Logf("the slowest second of the move: %d writes, ending %.1fs after the start (%.0f quiet)", tr.slowestSec, tr.slowestAt, quiet)
	// The bytes streamed: the snapshots' streams the nodes sent during the
	// move (cluster/shardsm logs each), not counting the Raft transport's
	// framing.
	var sentMB, biggestMB float64
	for _, p := range procs {
		for _, line := range strings.Split(p.log.String(), "\n") {
			if i := strings.Index(line, "streamed a snapshot of "); i >= 0 {
				var keys int64
				var mbSent float64
				if _, err := fmt.Sscanf(line[i:], "streamed a snapshot of %d keys, %f MB", &keys, &mbSent); err == nil {
					sentMB += mbSent
					biggestMB = max(biggestMB, mbSent)
				}
			}
		}
	}
	if dir := os.Getenv("PIVOTDB_MOVE_BENCH_LOGS"); dir != "" {
		// The nodes' logs, to read the move's steps against the rates.
		for i, p := range procs {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("move-node%d.log", i+1)), []byte(p.log.String()), 0o644)
		}
	}
	// The quiet rate again after the move: on a shared machine the load
	// from other work drifts over the tens of seconds of a run, and the
	// rate during the move is compared with both sides of it as well.
	a0, ta := acked(), time.Now()
	time.Sleep(quietWindow)
	quietAfter := float64(acked()-a0) / time.Since(ta).Seconds()
	w.finish(b, conn)
	// The move is a job (issue 18: moves show in sys.jobs with their
	// progress): the shard group's replica from the leaving node to the
	// new one, its three steps done.
	var jobStatus string
	var jobFraction float64
	if err := conn.QueryRow(ctx, `SELECT status, fraction_completed FROM sys.jobs
		WHERE job_type = 'REPLICA MOVE' AND description = $1`,
		fmt.Sprintf("move the replica of the shard group from node %d to node %d", leavingID, nodeID(b, procs[3]))).Scan(&jobStatus, &jobFraction); err != nil {
		b.Errorf("the move's job in sys.jobs: %v", err)
	} else if jobStatus != "succeeded" || jobFraction != 1 {
		b.Errorf("the move's job in sys.jobs: %s, %.2f done", jobStatus, jobFraction)
	}
	// Its copy is a REPLICA SNAPSHOT job with the bytes streamed (the
	// biggest: the nodes' join snapshots at the start are jobs too).
	var snapStatus string
	var snapBytes int64
	if err := conn.QueryRow(ctx, `SELECT status, rows_total FROM sys.jobs WHERE job_type = 'REPLICA SNAPSHOT'
		ORDER BY rows_total DESC LIMIT 1`).Scan(&snapStatus, &snapBytes); err != nil {
		b.Errorf("the copy's job in sys.jobs: %v", err)
	} else if mb := float64(snapBytes) / (1 << 20); snapStatus != "succeeded" || mb < biggestMB-0.1 || mb > biggestMB+0.1 {
		b.Errorf("the copy's job in sys.jobs: %s, %.1f MB (the logs: the biggest stream %.1f MB)", snapStatus, mb, biggestMB)
	}

	// The new node's engine (the group's data) apart from its cluster
	// directory (the Raft log, snapshots received, the metadata group);
	// the engine's emergency ballast (a 64 MB file kept for a full disk)
	// is neither.
	var engine, raftDir int64
	filepath.WalkDir(procs[3].dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "EMERGENCY_BALLAST" {
			if info, err := d.Info(); err == nil {
				if strings.HasPrefix(path, filepath.Join(procs[3].dir, "cluster")+string(filepath.Separator)) {
					raftDir += info.Size()
				} else {
					engine += info.Size()
				}
			}
		}
		return nil
	})
	b.ReportMetric(caughtUp.Seconds(), "s-caught-up")
	b.ReportMetric(moved.Seconds(), "s-moved")
	b.ReportMetric(sentMB, "MB-sent")
	b.ReportMetric(float64(engine)/(1<<20), "MB-engine")
	b.ReportMetric(float64(raftDir)/(1<<20), "MB-raft")
	b.ReportMetric(quiet, "writes/s-quiet")
	b.ReportMetric(during, "writes/s-moving")
	b.ReportMetric(during/quiet, "x-moving/quiet")
	b.ReportMetric(quietAfter, "writes/s-quiet-after")
	b.ReportMetric(during/((quiet+quietAfter)/2), "x-moving/quiet-around")
	perWrite := func(cpu time.Duration, writes int) float64 {
		return float64(cpu.Microseconds()) / float64(max(writes, 1))
	}
	b.ReportMetric(perWrite(quietCPU, quietWrites), "cpu-us/write-quiet")
	b.ReportMetric(perWrite(moveCPU, movedWrites), "cpu-us/write-moving")
	b.ReportMetric(newNodeCPU.Seconds(), "cpu-s-new-node")
	b.Logf("CPU of the three founding nodes: %s for %d writes quiet (%.0f µs a write), %s for %d writes during the move (%.0f µs a write); the new node %s",
		quietCPU.Round(time.Millisecond), quietWrites, perWrite(quietCPU, quietWrites),
		moveCPU.Round(time.Millisecond), movedWrites, perWrite(moveCPU, movedWrites), newNodeCPU.Round(time.Millisecond))
	b.Logf("%d MB table: the new replica caught up after %s, the move (decommission of node %d) ended after %s; "+
		"snapshots streamed %.1f MB; the new node's engine holds %.1f MB, its Raft directory %.1f MB; writes %.0f/s quiet, %.0f/s during the move (%.2fx)",
		mb, caughtUp.Round(time.Millisecond), leavingID, moved.Round(time.Millisecond), sentMB, float64(engine)/(1<<20), float64(raftDir)/(1<<20),
		quiet, during, during/quiet)
}

// quietWindow is how long the quiet rate is measured before and after the
// move: ten seconds, as the load of other work on a shared machine swings
// the rate of a five-second window by half.
const quietWindow = 10 * time.Second

// nodesCPU is the CPU time (user and system) the processes of procs used
// so far, from /proc/PID/stat (clock ticks of 10 ms).
func nodesCPU(procs []*clusterProc) time.Duration {
	var total time.Duration
	for _, p := range procs {
		if p.cmd == nil || p.cmd.Process == nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			continue
		}
		// The fields after the command's name, which ends with ")":
		// utime and stime are the 14th and 15th of the line.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+s) * 10 * time.Millisecond
	}
	return total
}
