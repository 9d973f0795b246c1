package tests

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// clusterProc is one `pivotdb serve --join` process of a test cluster.
type clusterProc struct {
	t                       *testing.T
	dir, sql, rpc, raftAddr string
	join                    string
	cmd                     *exec.Cmd
	log                     *serverLog
	exited                  chan error
}

func (p *clusterProc) start() {
	p.t.Helper()
	p.cmd = exec.Command(serverBin, "serve", "--data-dir", p.dir, "--listen", p.sql,
		"--cluster-listen", p.rpc, "--raft-listen", p.raftAddr, "--join", p.join, "--balancer-interval", "0")
	p.log = &serverLog{}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.exited = make(chan error, 1)
	go func(c *exec.Cmd, ch chan error) { ch <- c.Wait() }(p.cmd, p.exited)
}

// kill ends the process with SIGKILL (or SIGTERM, then waits for a clean
// exit).
func (p *clusterProc) kill(sig syscall.Signal) {
	p.t.Helper()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.exited:
		if sig == syscall.SIGTERM && err != nil {
			p.t.Errorf("node %s exited with %v\n%s", p.sql, err, p.log)
		}
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		p.t.Errorf("node %s did not stop\n%s", p.sql, p.log)
	}
	p.cmd = nil
}

func (p *clusterProc) url() string {
	return fmt.Sprintf("postgres://pivotdb@%s/pivotdb?sslmode=disable", p.sql)
}

// startSQLCluster starts three nodes with one join list, in reverse order
// (a cluster forms in any order), and returns them with the one that
// serves SQL (node 1: the lowest address of the list founds the cluster)
// first.
func startSQLCluster(t *testing.T) []*clusterProc {
	t.Helper()
	dir := t.TempDir()
	procs := make([]*clusterProc, 3)
	var rpcs []string
	for i := range procs {
		procs[i] = &clusterProc{t: t, dir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			sql: freePort(t), rpc: freePort(t), raftAddr: freePort(t)}
		rpcs = append(rpcs, procs[i].rpc)
	}
	for _, p := range procs {
		p.join = strings.Join(rpcs, ",")
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill(syscall.SIGTERM)
		}
	})
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].start()
	}
	// The node with the lowest address founds the cluster and serves SQL:
	// put it first.
	deadline := time.Now().Add(90 * time.Second)
	for {
		for i, p := range procs {
			if servesSQL(p) {
				procs[0], procs[i] = procs[i], procs[0]
				return procs
			}
			select {
			case err := <-p.exited:
				t.Fatalf("node %s exited: %v\n%s", p.sql, err, p.log)
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no node serves SQL:\n%s\n%s\n%s", procs[0].log, procs[1].log, procs[2].log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// servesSQL reports whether p answers a query now.
func servesSQL(p *clusterProc) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.url())
	if err != nil {
		return false
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "SELECT 1")
	return err == nil
}

// waitSQL waits until p answers a query.
func waitSQL(t *testing.T, p *clusterProc) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !servesSQL(p) {
		select {
		case err := <-p.exited:
			t.Fatalf("node %s exited: %v\n%s", p.sql, err, p.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s does not serve SQL:\n%s", p.sql, p.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterSQL runs three `pivotdb serve --join` processes: node 1 serves
// SQL, the others refuse connections naming it (57P03). Writes go on with
// a follower killed (kill -9); it restarts and catches up, which the next
// step proves: with the other follower killed, writes still need it for a
// quorum. Every acknowledged row survives a kill -9 of node 1 and a restart
// of the whole cluster.
func TestClusterSQL(t *testing.T) {
	procs := startSQLCluster(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}

	// The other nodes name the serving one.
	for _, p := range procs[1:] {
		waitRefusal := time.Now().Add(60 * time.Second)
		for {
			c, err := pgx.Connect(ctx, p.url())
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				if pgErr.Code != "57P03" || !strings.Contains(pgErr.Message, procs[0].sql) {
					t.Fatalf("node %s: %v", p.sql, err)
				}
				break
			}
			if err == nil {
				c.Close(ctx)
				t.Fatalf("node %s serves SQL", p.sql)
			}
			if time.Now().After(waitRefusal) {
				t.Fatalf("node %s: %v\n%s", p.sql, err, p.log)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Writes whose commit timed out while a quorum was forming again
	// (08007: the outcome is unknown) may or may not be there.
	var acked, maybe []int64
	next := int64(0)
	write := func(n int) {
		t.Helper()
		unknown := 0
		for done := 0; done < n; {
			k := next
			next++
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := conn.Exec(wctx, "INSERT INTO kv VALUES ($1, $2)", k, fmt.Sprint("v", k))
			cancel()
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "08007" && unknown < 5 {
				maybe = append(maybe, k)
				unknown++
				continue
			}
			if err != nil {
				t.Fatalf("insert %d: %v\n%s", k, err, procs[0].log)
			}
			acked = append(acked, k)
			done++
		}
	}
	check := func() {
		t.Helper()
		rows, err := conn.Query(ctx, "SELECT k FROM kv ORDER BY k")
		if err != nil {
			t.Fatal(err)
		}
		have := map[int64]bool{}
		for rows.Next() {
			var k int64
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			have[k] = true
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range acked {
			if !have[k] {
				t.Fatalf("acknowledged row %d is missing", k)
			}
			delete(have, k)
		}
		for _, k := range maybe {
			delete(have, k)
		}
		if len(have) != 0 {
			t.Fatalf("rows never written: %v", have)
		}
	}
	// Kill nodes only once the group has three voters: before that, two
	// voters are a quorum that a kill breaks until the node is back.
	waitLog := time.Now().Add(60 * time.Second)
	for strings.Count(procs[0].log.String(), "votes in the shard group") < 2 {
		if time.Now().After(waitLog) {
			t.Fatalf("the shard group did not get three voters:\n%s", procs[0].log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	write(50)
	procs[2].kill(syscall.SIGKILL)
	write(50) // nodes 1 and 2 are a quorum
	procs[2].start()
	write(20)
	// Node 3 must have caught up: without node 2 it is node 1's quorum.
	procs[1].kill(syscall.SIGKILL)
	write(50)
	procs[1].start()
	check()

	// kill -9 of the serving node loses no acknowledged write.
	procs[0].kill(syscall.SIGKILL)
	conn.Close(ctx)
	procs[0].start()
	waitSQL(t, procs[0])
	if conn, err = pgx.Connect(ctx, procs[0].url()); err != nil {
		t.Fatal(err)
	}
	check()
	write(20)
	t.Logf("%d writes acknowledged, %d with an unknown outcome", len(acked), len(maybe))

	// A clean restart of every node.
	conn.Close(ctx)
	for _, p := range procs {
		p.kill(syscall.SIGTERM)
	}
	for _, p := range procs {
		p.start()
	}
	waitSQL(t, procs[0])
	if conn, err = pgx.Connect(ctx, procs[0].url()); err != nil {
		t.Fatal(err)
	}
	check()
}

// TestClusterFlags: cluster flags without --join, and settings a cluster
// node does not support yet, are refused before anything starts.
func TestClusterFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-listen", "127.0.0.1:1"}, "need --join"},
		{[]string{"--join", "127.0.0.1:1"}, "--join needs --cluster-listen and --raft-listen"},
		{[]string{"--join", "127.0.0.1:1", "--cluster-listen", "127.0.0.1:1", "--raft-listen", "127.0.0.1:2", "--unsafe-no-sync"},
			"--unsafe-no-sync with --join is not supported yet"},
		{[]string{"--join", "127.0.0.1:1", "--cluster-listen", "127.0.0.1:1", "--raft-listen", "127.0.0.1:2", "--gc-ttl", "1h"},
			"--gc-ttl with --join is not supported yet"},
	} {
		out, err := exec.Command(serverBin, append([]string{"serve", "--data-dir", t.TempDir()}, c.args...)...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: %v\n%s", c.args, err, out)
		}
	}
}
