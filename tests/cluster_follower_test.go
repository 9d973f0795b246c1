package tests

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestClusterFollowerReads (issue 18 item 6): a connection to a node that
// does not serve SQL asking for the stale read-only mode
// (stale_read_only=on in the startup packet) is served by that node from
// its own replica: it sees a write once the closed timestamp passed it,
// refuses writes (25006), and refuses a read newer than its replica's
// closed timestamp (55000: only a follower does; the serving node would
// answer it). With the serving node stopped by SIGSTOP, reads at or below
// the last closed timestamp keep answering at once, on a connection open
// before and on a new one. The follower session opens before the table
// is created, so its node's follower engine (and the catalog it loaded)
// predates the table: the session still reads it once the read's time
// passes the creation (statements prepared against the replica's catalog
// of their time, the table's shard map read from the store then), as it
// must for a table its replica applied only after the engine opened (the
// 42P01 that a follower session answered for 30 s with shard groups per
// shard on).
func TestClusterFollowerReads(t *testing.T) {
	procs := startSQLCluster(t)
	serving := servingProc(t, procs)
	fol := otherThan(procs, serving)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := pgx.Connect(ctx, serving.url())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	fc := connectStale(ctx, t, fol)
	if _, err := w.Exec(ctx, "CREATE TABLE fr (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(ctx, "UPSERT INTO fr (k, v) VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	var written string // a time after the write, as AS OF SYSTEM TIME takes it
	if err := w.QueryRow(ctx, "SELECT cluster_logical_timestamp()::Utf8").Scan(&written); err != nil {
		t.Fatal(err)
	}

	// The write shows once the closed timestamp passed it: the target (3 s)
	// and follower_read_timestamp()'s margin.
	start := time.Now()
	for {
		var n int64
		err := fc.QueryRow(ctx, "SELECT count(*) FROM fr").Scan(&n)
		if err == nil && n == 2 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the follower read never saw the write: %d rows, %v", n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the follower read saw the write after %s", time.Since(start).Round(time.Millisecond))
	var pe *pgconn.PgError
	if _, err := fc.Exec(ctx, "UPSERT INTO fr (k, v) VALUES (3, 'c')"); !errors.As(err, &pe) || pe.Code != "25006" {
		t.Fatalf("a write in a follower-read session: %v", err)
	}
	// Only a follower refuses a read a millisecond old: its replica is
	// complete only up to the closed timestamp, seconds back.
	if _, err := fc.Exec(ctx, "SELECT count(*) FROM fr AS OF SYSTEM TIME '-1ms'"); !errors.As(err, &pe) || pe.Code != "55000" {
		t.Fatalf("a read newer than the closed timestamp on a follower: %v", err)
	}
	asOf := "SELECT v FROM fr AS OF SYSTEM TIME " + written + " WHERE k = 2"
	var got string
	if err := fc.QueryRow(ctx, asOf).Scan(&got); err != nil || got != "b" {
		t.Fatalf("at the write's time: %q, %v", got, err)
	}

	if err := serving.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serving.cmd.Process.Signal(syscall.SIGCONT) })
	// Bounded staleness: the closed timestamp no longer moves (until
	// another node serves), and reads at or below it answer at once.
	for i := range 5 {
		qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
		err := fc.QueryRow(qctx, asOf).Scan(&got)
		qcancel()
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "57P01" {
			// This node took over serving: its follower sessions end.
			t.Logf("the follower node took over serving; its follower session ended")
			break
		}
		if err != nil || got != "b" {
			t.Fatalf("read %d with the serving node stopped: %q, %v", i, got, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	cfg := staleConfig(t, fol)
	cfg.ConnectTimeout = 10 * time.Second
	fc2, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("a new follower-read connection with the serving node stopped: %v", err)
	}
	defer fc2.Close(ctx)
	qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
	defer qcancel()
	if err := fc2.QueryRow(qctx, asOf).Scan(&got); err != nil || got != "b" {
		t.Fatalf("a new connection's read with the serving node stopped: %q, %v", got, err)
	}
}

// TestClusterClosedTargetFlag: --closed-timestamp-target needs --join and
// refuses a target below the 200 ms publication interval;
// --follower-read-max-staleness needs --join and refuses a negative bound.
func TestClusterClosedTargetFlag(t *testing.T) {
	join := []string{"--join", "127.0.0.1:1", "--cluster-listen", "127.0.0.1:2", "--raft-listen", "127.0.0.1:3"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--closed-timestamp-target", "5s"}, "--closed-timestamp-target needs --join"},
		{append(join, "--closed-timestamp-target", "10ms"), "--closed-timestamp-target 10ms: it must be at least 200ms"},
		{[]string{"--follower-read-max-staleness", "5s"}, "--follower-read-max-staleness needs --join"},
		{append(join, "--follower-read-max-staleness", "-1s"), "--follower-read-max-staleness -1s: want a duration of 0 (no fallback) or more"},
		{append(join, "--follower-read-max-staleness", "soon"), `invalid value "soon" for flag -follower-read-max-staleness`},
	} {
		out, err := exec.Command(serverBin, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: %v\n%s", c.args, err, out)
		}
	}
}

// TestClusterFollowerMaxStaleness: serve --follower-read-max-staleness is
// the default of a follower session's follower_read_max_staleness. With
// the two other nodes stopped by SIGSTOP (no quorum: no node serves), the
// follower's closed timestamp stops; once follower_read_timestamp() passed it, a read without AS OF
// falls back to it only within the bound: with the nodes' 1 s it fails
// (55000), and after SET follower_read_max_staleness = '1min' in the
// session it answers.
func TestClusterFollowerMaxStaleness(t *testing.T) {
	procs := newClusterProcs(t, 3)
	for i := len(procs) - 1; i >= 0; i-- {
		startPlacementNode(procs[i], "--follower-read-max-staleness", "1s")
	}
	for _, p := range procs {
		waitSQL(t, p)
	}
	serving := servingProc(t, procs)
	fol := otherThan(procs, serving)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := pgx.Connect(ctx, serving.url())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	if _, err := w.Exec(ctx, "CREATE TABLE ms (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(ctx, "UPSERT INTO ms (k, v) VALUES (1, 'a')"); err != nil {
		t.Fatal(err)
	}
	fc := connectStale(ctx, t, fol)
	var bound string
	if err := fc.QueryRow(ctx, "SHOW follower_read_max_staleness").Scan(&bound); err != nil || bound != "1000" {
		t.Fatalf("SHOW follower_read_max_staleness on a follower: %q, %v; want 1000 (the flag's 1 s)", bound, err)
	}
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		var n int64
		err := fc.QueryRow(ctx, "SELECT count(*) FROM ms").Scan(&n)
		if err == nil && n == 1 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the follower read never saw the write: %d rows, %v", n, err)
		}
	}

	// Both other nodes stop (SIGSTOP), so that no node can serve (a
	// single stopped serving node is replaced within about a second, and
	// the new one closes timestamps again). fol must not serve now
	// (serving may have moved since the start: an election on a loaded
	// machine).
	if servingProc(t, procs) == fol {
		t.Fatalf("the follower node %s serves SQL now", fol.sql)
	}
	for _, p := range procs {
		if p != fol {
			if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.cmd.Process.Signal(syscall.SIGCONT) })
		}
	}
	stopped := time.Now()
	// follower_read_timestamp() (4.8 s back) passes the last closed
	// timestamp (3 s back) 1.8 s after the stop; then the closed timestamp
	// is 4.8 s old, past the 1 s bound.
	time.Sleep(2500 * time.Millisecond)
	var pe *pgconn.PgError
	var n int64
	err = fc.QueryRow(ctx, "SELECT count(*) FROM ms").Scan(&n)
	if !errors.As(err, &pe) || pe.Code != "55000" {
		t.Fatalf("a stale read past the 1 s bound, %s after the serving node stopped: %d rows, %v; want 55000", time.Since(stopped).Round(time.Millisecond), n, err)
	}
	if _, err := fc.Exec(ctx, "SET follower_read_max_staleness = '1min'"); err != nil {
		t.Fatalf("SET follower_read_max_staleness past the bound: %v", err)
	}
	if err := fc.QueryRow(ctx, "SELECT count(*) FROM ms").Scan(&n); err != nil || n != 1 {
		t.Fatalf("a stale read within the session's 1 min bound, %s after the serving node stopped: %d rows, %v",
			time.Since(stopped).Round(time.Millisecond), n, err)
	}
	if _, err := fc.Exec(ctx, "SET follower_read_max_staleness = 'soon'"); !errors.As(err, &pe) || pe.Code != "22023" {
		t.Fatalf("SET follower_read_max_staleness = 'soon': %v; want 22023", err)
	}
}

// otherThan is the first of procs that is not p.
func otherThan(procs []*clusterProc, p *clusterProc) *clusterProc {
	for _, q := range procs {
		if q != p {
			return q
		}
	}
	return nil
}

// staleConfig is p's connection config in the stale read-only mode.
func staleConfig(t testing.TB, p *clusterProc) *pgx.ConnConfig {
	t.Helper()
	cfg, err := pgx.ParseConfig(p.url())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["stale_read_only"] = "on"
	return cfg
}

// connectStale opens a stale read-only session on p, closed when the test
// ends.
func connectStale(ctx context.Context, t testing.TB, p *clusterProc) *pgx.Conn {
	t.Helper()
	c, err := pgx.ConnectConfig(ctx, staleConfig(t, p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
