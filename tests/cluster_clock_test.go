package tests

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The clock offset bound between nodes (issue 17 item 6; cluster/node's
// clockoffset.go, cluster/shardrepl's clockgate.go), with clocks shifted
// by the test-only knob PIVOTDB_TESTING_CLOCK_SHIFT_FILE.

// TestClusterClockOffset: of three nodes with the default --max-offset
// (500 ms: 400 ms tolerated), the second's clock is 200 ms ahead (within
// the bound: it is an ordinary node) and the third's 1.5 s (beyond it:
// it says so, never serves, and refuses follower reads with 57P01 naming
// the clock). sys.nodes shows the offsets the serving node measured. Then
// the serving node's clock jumps 3 s ahead while the third's is fixed: the
// serving node stops serving, says why, another node serves, and SQL
// through every node goes on.
func TestClusterClockOffset(t *testing.T) {
	procs := newClusterProcs(t, 3)
	// The founder (the lowest address: node 1) serves alone before the
	// others join, with no clock to compare with; the node whose clock is
	// off is another one.
	slices.SortFunc(procs, func(a, b *clusterProc) int { return strings.Compare(a.rpc, b.rpc) })
	dir := t.TempDir()
	shifts := []time.Duration{0, 200 * time.Millisecond, 1500 * time.Millisecond}
	files := make([]string, len(procs))
	setShift := func(i int, d time.Duration) {
		t.Helper()
		// Written whole, then renamed: the node never reads half a file.
		tmp := files[i] + ".tmp"
		if err := os.WriteFile(tmp, []byte(d.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, files[i]); err != nil {
			t.Fatal(err)
		}
		shifts[i] = d
	}
	for i, p := range procs {
		files[i] = filepath.Join(dir, fmt.Sprintf("shift-n%d", i+1))
		setShift(i, shifts[i])
		p.env = []string{"PIVOTDB_TESTING_CLOCK_SHIFT_FILE=" + files[i]}
	}
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].start()
	}
	for _, p := range procs {
		waitSQL(t, p)
	}
	off := procs[2]
	waitLog(t, off, "CLOCK OFFSET", 60*time.Second)
	if !strings.Contains(off.log.String(), "TESTING KNOB") {
		t.Fatalf("the shifted node does not warn of the testing knob:\n%s", off.log)
	}
	serving := servingProc(t, procs)
	if serving == off {
		t.Fatalf("the node whose clock is 1.5 s off serves SQL:\n%s", off.log)
	}
	si := 0
	for i, p := range procs {
		if p == serving {
			si = i
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, serving.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The serving node's estimates: each node's shift less its own,
	// within the estimate's uncertainty and a margin for the load.
	ids := map[int64]int{}
	for i, p := range procs {
		ids[nodeID(t, p)] = i
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := conn.Query(ctx, "SELECT node_id, clock_offset_ms, clock_uncertainty_ms FROM sys.nodes ORDER BY node_id")
		if err != nil {
			t.Fatal(err)
		}
		good, n, report := 0, 0, ""
		for rows.Next() {
			var id int64
			var offMS, uncMS *float64
			if err := rows.Scan(&id, &offMS, &uncMS); err != nil {
				t.Fatal(err)
			}
			n++
			want := float64(shifts[ids[id]]-shifts[si]) / float64(time.Millisecond)
			report += fmt.Sprintf(" node %d: %v ± %v (want %.0f);", id, deref(offMS), deref(uncMS), want)
			if offMS != nil && uncMS != nil && math.Abs(*offMS-want) <= *uncMS+50 {
				good++
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n == 3 && good == 3 {
			t.Logf("sys.nodes:%s", report)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sys.nodes' clock offsets:%s", report)
		}
		time.Sleep(300 * time.Millisecond)
	}

	// Follower reads: refused on the node whose clock is off, served on
	// the one within the bound.
	var pe *pgconn.PgError
	if err := followerSelect(ctx, off); !errors.As(err, &pe) || pe.Code != "57P01" || !strings.Contains(pe.Message, "clock offset") {
		t.Fatalf("a follower read on the node whose clock is off: %v", err)
	}
	var within *clusterProc
	for _, p := range procs {
		if p != serving && p != off {
			within = p
		}
	}
	if err := followerSelect(ctx, within); err != nil {
		t.Fatalf("a follower read on the node 200 ms ahead: %v", err)
	}
	if saysClockOff(within.log.String()) || saysClockOff(serving.log.String()) {
		t.Fatalf("a node within the bound says its clock is off:\n%s\n%s", within.log, serving.log)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE clk (k Int64, v Int64, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "UPSERT INTO clk (k, v) VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}

	// The serving node's clock jumps 3 s ahead; the third node's is
	// fixed, so two nodes agree.
	setShift(2, 0)
	waitLog(t, off, "within --max-offset of a majority of the nodes again", 30*time.Second)
	setShift(si, 3*time.Second)
	waitLog(t, serving, "STOPS SERVING SQL", 30*time.Second)
	next := servingProc(t, procs)
	if next == serving {
		t.Fatalf("the node whose clock jumped still serves:\n%s", serving.log)
	}
	// Its clients were told why, or their connection ended; new ones
	// are forwarded to the next serving node.
	if _, err := conn.Exec(ctx, "SELECT count(*) FROM clk"); err == nil {
		t.Fatalf("a query on the connection to the node that stopped serving succeeded")
	} else {
		t.Logf("the old serving node's connection: %v", err)
	}
	for k, p := range procs {
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := pgx.Connect(ctx, p.url())
			if err == nil {
				_, err = c.Exec(ctx, "UPSERT INTO clk (k, v) VALUES ($1, $1)", k+10)
				c.Close(ctx)
			}
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a write through node %s after the takeover: %v", p.sql, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	var count int64
	c, err := pgx.Connect(ctx, next.url())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := c.QueryRow(ctx, "SELECT count(*) FROM clk").Scan(&count); err != nil || count != 4 {
		t.Fatalf("rows after the takeover: %d, %v", count, err)
	}
	// While its clock stays off, the node does not serve again.
	epoch, _ := servingState(serving)
	time.Sleep(3 * time.Second)
	if e, ok := servingState(serving); ok || e != epoch {
		t.Fatalf("the node whose clock is off claimed serving again (epoch %d):\n%s", e, serving.log)
	}
}

// saysClockOff reports whether a node's log says its clock is off from
// the other clocks: a CLOCK OFFSET that counted three clocks or more, or
// one it has not taken back ("within --max-offset of a majority of the
// nodes again"). A node that knows only itself and the node 1.5 s off
// when it first checks sees two clocks that disagree, and by the rule
// (cluster/node's clockoffset.go) both stop until a third clock settles
// it: which node's ping answers first is up to the start, not the test
// (seen once: the founder knew the 1.5 s node 100 ms before the 200 ms one).
func saysClockOff(log string) bool {
	off := false
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, "CLOCK OFFSET") && !strings.Contains(line, "of the 2 clocks it knows"):
			return true
		case strings.Contains(line, "CLOCK OFFSET"):
			off = true
		case strings.Contains(line, "within --max-offset of a majority of the nodes again"):
			off = false
		}
	}
	return off
}

func deref(f *float64) any {
	if f == nil {
		return "NULL"
	}
	return *f
}

// followerSelect runs a query in a follower-read session on p.
func followerSelect(ctx context.Context, p *clusterProc) error {
	cfg, err := pgx.ParseConfig(p.url())
	if err != nil {
		return err
	}
	cfg.RuntimeParams["stale_read_only"] = "on"
	cfg.ConnectTimeout = 10 * time.Second
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "SELECT 1")
	return err
}

// waitLog waits until p's log says what.
func waitLog(t testing.TB, p *clusterProc, what string, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !strings.Contains(p.log.String(), what) {
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not log %q:\n%s", p.sql, what, lastLines(p.log.String(), 60))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterMaxOffsetFlag: --max-offset needs --join and a sane value;
// the testing knob is refused without --join.
func TestClusterMaxOffsetFlag(t *testing.T) {
	join := []string{"--join", "127.0.0.1:1", "--cluster-listen", "127.0.0.1:2", "--raft-listen", "127.0.0.1:3"}
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--max-offset", "250ms"}, "", "--max-offset needs --join"},
		{append(join, "--max-offset", "0s"), "", "--max-offset 0s: it must be positive"},
		{append(join, "--max-offset", "-1s"), "", "--max-offset -1s: it must be positive"},
		{append(join, "--max-offset", "10us"), "", "--max-offset 10µs: it must be at least 1ms"},
		{append(join, "--max-offset", "1m"), "", "--max-offset 1m0s: it may be at most 10s"},
		{nil, "PIVOTDB_TESTING_CLOCK_SHIFT=1s", "PIVOTDB_TESTING_CLOCK_SHIFT is a testing knob of cluster nodes (--join)"},
	} {
		cmd := exec.Command(serverBin, append([]string{"serve", "--data-dir", t.TempDir(), "--listen", freePort(t)}, c.args...)...)
		if c.env != "" {
			cmd.Env = append(os.Environ(), c.env)
		}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v (%s): %v\n%s\nwant exit 2 and %q", c.args, c.env, err, out, c.want)
		}
	}
}
