package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
)

var serverBin string

func TestMain(m *testing.M) {
	serverBin = os.Getenv("PIVOTDB_BIN")
	if serverBin == "" {
		dir, err := os.MkdirTemp("", "pivotdb-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		serverBin = filepath.Join(dir, "pivotdb")
		out, err := exec.Command("go", "build", "-o", serverBin, "../cmd/pivotdb").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building pivotdb: %v\n%s", err, out)
			os.Exit(1)
		}
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// testServer is a pivotdb process serving a temporary data directory.
type testServer struct {
	t       testing.TB
	dataDir string
	addr    string
	cmd     *exec.Cmd
	log     *serverLog
	exited  chan error
	// clusterAddrs are a one-node cluster's (--one-node-cluster)
	// --cluster-listen and --raft-listen, chosen at the first start and
	// given again at each restart: FreeAddr's ports are never handed out twice in this
	// process, where ports the server picked itself could be taken by
	// another test's server while this one is down.
	clusterAddrs []string
}

// freePort returns a loopback address whose port was free just now, below
// the ephemeral range and never the same twice (clustertest.FreeAddr says
// why both matter for cluster tests).
func freePort(t testing.TB) string { return clustertest.FreeAddr(t) }

// serverLog collects a server process's output. The process writes it
// from exec's copying goroutine while tests read it (in failure messages,
// or counting lines), so it is locked.
type serverLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *serverLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *serverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startServer starts a server on a new data directory.
func startServer(t testing.TB, extra ...string) *testServer {
	t.Helper()
	s := &testServer{t: t, dataDir: t.TempDir()}
	s.start(extra...)
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *testServer) start(extra ...string) {
	s.t.Helper()
	s.startAt(freePort(s.t), extra...)
}

// startAt starts the server listening on addr.
func (s *testServer) startAt(addr string, extra ...string) {
	s.t.Helper()
	s.addr = addr
	if os.Getenv("PIVOTDB_TEST_ONE_NODE_CLUSTER") != "" && !slices.ContainsFunc(extra, func(a string) bool {
		return strings.HasPrefix(a, "--join") || strings.HasPrefix(a, "--one-node-cluster")
	}) {
		// Every one-node server through Raft: what still fails there
		// keeps --one-node-cluster from being serve's default.
		extra = append(extra, "--one-node-cluster")
	}
	args := append([]string{"serve", "--data-dir", s.dataDir, "--listen", s.addr}, extra...)
	if slices.Contains(extra, "--one-node-cluster") && !slices.ContainsFunc(extra, func(a string) bool {
		return strings.HasPrefix(a, "--cluster-listen")
	}) {
		if s.clusterAddrs == nil {
			s.clusterAddrs = []string{freePort(s.t), freePort(s.t)}
		}
		if len(s.clusterAddrs) == 2 { // empty: the server picks them (TestOneNodeCluster)
			args = append(args, "--cluster-listen", s.clusterAddrs[0], "--raft-listen", s.clusterAddrs[1])
		}
	}
	s.cmd = exec.Command(serverBin, args...)
	s.log = &serverLog{}
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.exited = make(chan error, 1)
	go func(c *exec.Cmd, ch chan error) { ch <- c.Wait() }(s.cmd, s.exited)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-s.exited:
			s.t.Fatalf("server exited during start: %v\n%s", err, s.log)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("server did not start listening on %s:\n%s", s.addr, s.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (s *testServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			s.t.Errorf("server exited with %v\n%s", err, s.log)
		}
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("server did not stop on SIGTERM\n%s", s.log)
	}
	s.cmd = nil
}

func (s *testServer) restart() {
	s.stop()
	s.start()
}

func (s *testServer) connString(db string) string {
	host, port, _ := net.SplitHostPort(s.addr)
	return fmt.Sprintf("postgres://pivotdb@%s:%s/%s?sslmode=disable", host, port, db)
}

// connect opens a pgx connection with the given exec mode.
func (s *testServer) connect(t testing.TB, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(s.connString("pivotdb"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, s.log)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
