package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// psqlPassword runs psql with PGPASSWORD=pw against addr as user and
// returns its combined output and whether it succeeded.
func psqlPassword(t *testing.T, addr, user, pw string, args ...string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (make deps installs it)")
	}
	host, port, _ := net.SplitHostPort(addr)
	base := []string{"-X", "-At", fmt.Sprintf("host=%s port=%s user=%s dbname=pivotdb sslmode=disable", host, port, user)}
	cmd := exec.Command(path, append(base, args...)...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+pw, "PGCONNECT_TIMEOUT=30", "PAGER=", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestPasswordAuth: --auth password (PostgreSQL's cleartext "password"
// method) on one node, with pgx and psql: the stored SCRAM verifiers of the
// initial password and of a user made with CREATE USER check passwords sent
// in the clear; wrong ones and unknown users get FATAL 28P01.
func TestPasswordAuth(t *testing.T) {
	srv := startServer(t, "--auth", "password", "--initial-password", "boot pw", "--auth-failure-delay", "0")
	c, err := connectURL(t, srv.url("pivotdb", "boot%20pw", "pivotdb", "disable"))
	if err != nil {
		t.Fatalf("right password: %v\n%s", err, srv.log)
	}
	if _, err := c.Exec(context.Background(), "CREATE USER alice WITH PASSWORD 'älice pw'"); err != nil {
		t.Fatal(err)
	}
	if _, err := connectURL(t, srv.url("alice", "%C3%A4lice%20pw", "pivotdb", "disable")); err != nil {
		t.Fatalf("alice's password: %v", err)
	}
	_, err = connectURL(t, srv.url("pivotdb", "wrong", "pivotdb", "disable"))
	wantAuthFailed(t, err, "pivotdb")
	_, err = connectURL(t, srv.url("nobody", "boot%20pw", "pivotdb", "disable"))
	wantAuthFailed(t, err, "nobody")

	if out, ok := psqlPassword(t, srv.addr, "pivotdb", "boot pw", "-c", "SELECT 40 + 2"); !ok || strings.TrimSpace(out) != "42" {
		t.Fatalf("psql with the right password: %q", out)
	}
	out, ok := psqlPassword(t, srv.addr, "alice", "wrong", "-c", "SELECT 1")
	if ok || !strings.Contains(out, `password authentication failed for user "alice"`) {
		t.Fatalf("psql with a wrong password: %q", out)
	}
	if !strings.Contains(srv.log.String(), "auth=password") {
		t.Fatalf("the server does not say it asks for passwords:\n%s", srv.log)
	}
}

// TestClusterPasswordAuth: --auth password with --join. The serving node
// checks the passwords of connections forwarded to it; pgx and psql log in
// through a forwarding node, a wrong password gets 28P01.
func TestClusterPasswordAuth(t *testing.T) {
	const password = "clear pw"
	procs := newClusterProcs(t, 3)
	for _, p := range procs {
		p.extra = []string{"--auth", "password", "--initial-password", password, "--auth-failure-delay", "0"}
		p.start()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := func(p *clusterProc, pw string) string {
		return fmt.Sprintf("postgres://pivotdb:%s@%s/pivotdb?sslmode=disable&connect_timeout=30", strings.ReplaceAll(pw, " ", "%20"), p.sql)
	}
	for _, p := range procs {
		deadline := time.Now().Add(90 * time.Second)
		for {
			c, err := pgx.Connect(ctx, url(p, password))
			if err == nil {
				_, err = c.Exec(ctx, "SELECT 1")
				c.Close(ctx)
				if err == nil {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s: %v\n%s", p.sql, err, p.log)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	serving := servingProc(t, procs)
	var fwd *clusterProc
	for _, p := range procs {
		if p != serving {
			fwd = p
			break
		}
	}
	_, err := pgx.Connect(ctx, url(fwd, "wrong"))
	wantAuthFailed(t, err, "pivotdb")
	if out, ok := psqlPassword(t, fwd.sql, "pivotdb", password, "-c", "SELECT 6 * 7"); !ok || strings.TrimSpace(out) != "42" {
		t.Fatalf("psql through a forwarding node: %q", out)
	}
	out, ok := psqlPassword(t, fwd.sql, "pivotdb", "wrong", "-c", "SELECT 1")
	if ok || !strings.Contains(out, `password authentication failed for user "pivotdb"`) {
		t.Fatalf("psql with a wrong password through a forwarding node: %q", out)
	}
}
