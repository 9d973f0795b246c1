package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// These tests run PostgreSQL's own clients against a server with the fake
// engine, when they are installed.

func lookClient(t *testing.T, name string) string {
	path, err := exec.LookPath(name)
	if err != nil {
		path = "/usr/bin/" + name
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s not installed", name)
		}
	}
	return path
}

func TestPsql(t *testing.T) {
	psql := lookClient(t, "psql")
	ts := startServer(t, Config{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(ts.port()), "-U", "pivotdb",
		"-c", "select 1", "-c", "select 'psql' as who")
	cmd.Env = append(cmd.Environ(), "PGCONNECT_TIMEOUT=10", "PGSSLMODE=prefer")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	for _, want := range []string{"?column?", " 1\n", "(1 row)", "who", "psql"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("psql output lacks %q:\n%s", want, out)
		}
	}
	// The psql error path: a FATAL at connect time.
	cmd = exec.CommandContext(ctx, psql, "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(ts.port()), "-U", "pivotdb", "-d", "nope", "-c", "select 1")
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `database "nope" does not exist`) {
		t.Fatalf("psql against a missing database: %v\n%s", err, out)
	}
}

// TestPgbench runs pgbench in its three query modes; "prepared" uses named
// statements through libpq's PQprepare.
func TestPgbench(t *testing.T) {
	pgbench := lookClient(t, "pgbench")
	ts := startServer(t, Config{}, nil)
	script := filepath.Join(t.TempDir(), "script.sql")
	if err := os.WriteFile(script, []byte("\\set x random(1, 1000)\nselect :x;\nselect generate_series(1, 10);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"simple", "extended", "prepared"} {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		out, err := exec.CommandContext(ctx, pgbench, "-n", "-h", "127.0.0.1", "-p", strconv.Itoa(ts.port()), "-U", "pivotdb",
			"-c", "4", "-t", "50", "-M", mode, "-f", script, "pivotdb").CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "number of transactions actually processed: 200/200") {
			t.Errorf("pgbench -M %s: %v\n%s", mode, err, out)
		}
	}
}
