package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// procCPU returns the CPU time (user + system) process pid used so far.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (in parentheses): utime is the 14th
	// field of the line, stime the 15th, in clock ticks (100 a second).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// TestClusterIdleCost measures what an idle three-node cluster costs with
// $PIVOTDB_IDLE_GROUPS shard groups (a table with that many uniform
// partitions, one group each): CPU per second of each process over 20 s
// of no client activity. A measurement, not a check: it runs only with
// the variable set.
func TestClusterIdleCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PIVOTDB_IDLE_GROUPS"))
	if n <= 0 {
		t.Skip("set PIVOTDB_IDLE_GROUPS to the number of shard groups to measure")
	}
	withShardGroupPerShard(t)
	if n > 60 {
		// FirstGroup and the catalog's tables take a few of the serving
		// node's 64 (cluster/shardrepl's maxShardGroups).
		t.Fatalf("PIVOTDB_IDLE_GROUPS=%d: the serving node makes at most 60 or so groups for one table", n)
	}
	procs := newClusterProcs(t, 3)
	// PIVOTDB_IDLE_PROFILE=DIR also saves each node's CPU profile of the
	// idle window there (DIR/nodeN.pprof, from --debug-listen).
	profileDir := os.Getenv("PIVOTDB_IDLE_PROFILE")
	debug := make([]string, len(procs))
	for i, p := range procs {
		if profileDir != "" {
			debug[i] = freePort(t)
			p.extra = append(p.extra, "--debug-listen", debug[i])
		}
	}
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].start()
	}
	for _, p := range procs {
		waitSQL(t, p)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE idle (id Int64, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = "+strconv.Itoa(n)+")"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitDistinctGroups(ctx, t, procs[1].url(), "idle", n)
	t.Logf("%d groups after %s", n, time.Since(start).Round(time.Second))
	time.Sleep(5 * time.Second) // the children's additions settle
	const window = 20 * time.Second
	before := make([]time.Duration, len(procs))
	for i, p := range procs {
		before[i] = procCPU(t, p.cmd.Process.Pid)
	}
	profiles := make(chan error, len(procs))
	if profileDir != "" {
		for i := range procs {
			go func(i int) {
				profiles <- saveProfile(debug[i], window, filepath.Join(profileDir, fmt.Sprintf("node%d.pprof", i+1)))
			}(i)
		}
	}
	time.Sleep(window)
	if profileDir != "" {
		for range procs {
			if err := <-profiles; err != nil {
				t.Error(err)
			}
		}
	}
	var total time.Duration
	for i, p := range procs {
		used := procCPU(t, p.cmd.Process.Pid) - before[i]
		total += used
		t.Logf("node %d: %.0f ms CPU per second idle", i+1, float64(used.Milliseconds())/window.Seconds())
	}
	t.Logf("three nodes, %d groups: %.0f ms CPU per second idle in all", n, float64(total.Milliseconds())/window.Seconds())
}

// saveProfile saves the CPU profile of the next window from the pprof
// server at addr into file.
func saveProfile(addr string, window time.Duration, file string) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(window.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile of %s: %s", addr, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestClusterQuietGroupsWake: shard groups left idle long enough to
// quiesce (ten election timeouts, 5 s, without a proposal or read: cluster/raft's
// HostConfig.Quiesce) still serve once the serving node, which led them
// all, is killed (kill -9): the next serving node's reads and proposals
// wake each group, which elects a leader, and a write to every shard
// commits through another node. Nothing tells the test from outside that
// the groups did quiesce; it makes them idle past the threshold.
func TestClusterQuietGroupsWake(t *testing.T) {
	withShardGroupPerShard(t)
	procs := startSQLCluster(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE acct (id Int64, balance Int64, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 16)`); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := int64(0); i < 16; i++ {
		ids = append(ids, (2*i-15)<<59) // one in each sixteenth of Int64
		if _, err := conn.Exec(ctx, "INSERT INTO acct VALUES ($1, 1000)", ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	waitDistinctGroups(ctx, t, procs[1].url(), "acct", 16)
	time.Sleep(8 * time.Second) // idle past the quiesce threshold
	victim := servingProc(t, procs)
	victim.kill(syscall.SIGKILL)
	killed := time.Now()
	next := servingProc(t, procs)
	var other *clusterProc
	for _, p := range procs {
		if p != victim && p != next {
			other = p
		}
	}
	// Every shard's group takes a write, through the node that does not
	// serve (forwarded), within a deadline; the write sets a value, so an
	// attempt whose outcome was unknown may be repeated.
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			err := func() error {
				cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				defer cancel()
				c, err := pgx.Connect(cctx, other.url())
				if err != nil {
					return err
				}
				defer c.Close(context.Background())
				_, err = c.Exec(cctx, "UPDATE acct SET balance = 1001 WHERE id = $1", id)
				return err
			}()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no write to row %d's shard committed within 60 s of the kill: %v", id, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("every shard written %s after the kill", time.Since(killed).Round(time.Millisecond))
	c, err := pgx.Connect(ctx, next.url())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var sum, n int64
	if err := c.QueryRow(ctx, "SELECT sum(balance)::Int64, count(*) FROM acct").Scan(&sum, &n); err != nil {
		t.Fatal(err)
	}
	if sum != 16016 || n != 16 {
		t.Fatalf("%d accounts holding %d, want 16 holding 16016", n, sum)
	}
}
