package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// instance is one throw-away database server the benchmark talks to.
type instance struct {
	name    string // "PivotDB" or "PostgreSQL"
	dialect dialect
	addr    string
	user    string
	db      string
	version string
	cmd     *exec.Cmd
	dir     string
	pool    *pgxpool.Pool
}

func (in *instance) host() string { h, _, _ := net.SplitHostPort(in.addr); return h }
func (in *instance) port() string { _, p, _ := net.SplitHostPort(in.addr); return p }

func (in *instance) url() string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", in.user, in.addr, in.db)
}

// connect opens a pool with up to maxConns connections using pgx's
// statement cache (extended protocol, prepared once per connection).
func (in *instance) connect(ctx context.Context, maxConns int) error {
	cfg, err := pgxpool.ParseConfig(in.url())
	if err != nil {
		return err
	}
	cfg.MaxConns = int32(maxConns)
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	in.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	if in.dialect == postgresDialect {
		return in.pool.QueryRow(ctx, "SELECT version()").Scan(&in.version)
	}
	c, err := in.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	in.version = "server_version " + c.Conn().PgConn().ParameterStatus("server_version")
	return nil
}

func (in *instance) stop() {
	if in.pool != nil {
		in.pool.Close()
	}
	if in.cmd != nil && in.cmd.Process != nil {
		// SIGINT is PostgreSQL's "fast shutdown" and PivotDB's drain.
		in.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { in.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			in.cmd.Process.Kill()
			<-done
		}
	}
	if in.dir != "" {
		os.RemoveAll(in.dir)
	}
}

// startPivot starts bin/pivotdb on a fresh data directory with the default
// durability (synced commits).
func startPivot(bin string, debugAddr string, extra []string) (*instance, error) {
	dir, err := os.MkdirTemp("", "pivotdb-bench")
	if err != nil {
		return nil, err
	}
	addr := freeAddr()
	args := []string{"serve", "--data-dir", dir, "--listen", addr, "--balancer-interval", "10s"}
	if debugAddr != "" {
		args = append(args, "--debug-listen", debugAddr)
	}
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &prefixWriter{prefix: "pivotdb: ", quietUntilError: true}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	in := &instance{name: "PivotDB", dialect: pivotDialect, addr: addr, user: "pivotdb", db: "pivotdb", cmd: cmd, dir: dir}
	if err := waitListening(addr, 30*time.Second); err != nil {
		in.stop()
		return nil, err
	}
	return in, nil
}

// postgresBinDir finds PostgreSQL 15's server binaries (Debian's layout
// first, then PATH).
func postgresBinDir() (string, error) {
	for _, d := range []string{"/usr/lib/postgresql/15/bin"} {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL 15 server binaries not found (make bench installs Debian's postgresql-15; run `bash .ci/install-postgres`)")
}

// startPostgres initialises a throw-away cluster in a temporary directory and
// starts it on a loopback port with PostgreSQL's defaults (fsync on,
// synchronous_commit on). PostgreSQL refuses to run as root, so as root it
// runs as the postgres user that Debian's package creates.
func startPostgres() (*instance, error) {
	binDir, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "postgres-bench")
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(binDir, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	addr := freeAddr()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(filepath.Join(binDir, "postgres"), "-D", data, "-p", port, "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Stderr = &prefixWriter{prefix: "postgres: ", quietUntilError: true}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	in := &instance{name: "PostgreSQL", dialect: postgresDialect, addr: addr, user: "postgres", db: "postgres", cmd: cmd, dir: dir}
	if err := waitListening(addr, 60*time.Second); err != nil {
		in.stop()
		return nil, err
	}
	// The port opens before recovery finishes; retry the first connection.
	ctx := context.Background()
	for i := 0; ; i++ {
		c, err := pgx.Connect(ctx, in.url())
		if err == nil {
			c.Close(ctx)
			break
		}
		if i == 100 {
			in.stop()
			return nil, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return in, nil
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("%v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitListening(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server did not start listening on %s within %v", addr, limit)
}

// prefixWriter passes a child's log lines through with a prefix. With
// quietUntilError it drops lines until one looks like an error, so a healthy
// run prints only the results table.
type prefixWriter struct {
	prefix          string
	quietUntilError bool
	buf             []byte
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if w.quietUntilError && !strings.Contains(line, "ERROR") && !strings.Contains(line, "FATAL") &&
			!strings.Contains(line, "PANIC") && !strings.Contains(line, "level=ERROR") && !strings.Contains(line, "panic") {
			continue
		}
		fmt.Fprintln(os.Stderr, w.prefix+line)
	}
	return len(p), nil
}
