package tests

import (
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of golden tests")

// runPsql runs psql against the server with the given arguments and returns
// its combined output.
func runPsql(t *testing.T, srv *testServer, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (make deps installs it)")
	}
	host, port, _ := net.SplitHostPort(srv.addr)
	base := []string{"-X", "-h", host, "-p", port, "-U", "pivotdb", "-d", "pivotdb", "-v", "VERBOSITY=default"}
	cmd := exec.Command(path, append(base, args...)...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PAGER=", "PSQL_PAGER=", "PGTZ=UTC", "LC_ALL=C")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func TestPsqlCommand(t *testing.T) {
	srv := startServer(t)
	out := runPsql(t, srv, "-At", "-c", "SELECT 1 + 2")
	if strings.TrimSpace(out) != "3" {
		t.Fatalf("psql -c: %q", out)
	}
	out = runPsql(t, srv, "-c", "SELEC 1")
	if !strings.Contains(out, `syntax error at or near "SELEC"`) {
		t.Fatalf("psql error output: %q", out)
	}
}

// TestPsqlScripts runs each tests/psql/*.sql with `psql -f` (echoing every
// statement, as pg_regress does) and compares the output with the .out file
// beside it. Run `go test ./tests -run TestPsqlScripts -rewrite` to update
// the expectations, then read the diff.
func TestPsqlScripts(t *testing.T) {
	files, _ := filepath.Glob("psql/*.sql")
	if len(files) == 0 {
		t.Fatal("no psql scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			srv := startServer(t)
			got := runPsql(t, srv, "-a", "-f", f)
			expFile := strings.TrimSuffix(f, ".sql") + ".out"
			if *rewrite {
				if err := os.WriteFile(expFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(expFile)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output of %s differs from %s:\n--- got ---\n%s", f, expFile, got)
			}
		})
	}
}

// TestPsqlTiming checks \timing (its figures vary, so no golden file).
func TestPsqlTiming(t *testing.T) {
	srv := startServer(t)
	out := runPsql(t, srv, "-c", `\timing on`, "-c", "SELECT 1 AS one")
	if !strings.Contains(out, "Timing is on.") || !regexp.MustCompile(`(?m)^Time: \d+\.\d+ ms$`).MatchString(out) ||
		!strings.Contains(out, "(1 row)") {
		t.Fatalf("psql \\timing output:\n%s", out)
	}
}

// TestPgDumpallGlobals runs pg_dumpall -g (roles, their settings, the
// tablespaces): its queries unnest pg_db_role_setting.setconfig, an array.
func TestPgDumpallGlobals(t *testing.T) {
	dumpall := requireTool(t, "pg_dumpall")
	srv := startServer(t)
	runPsql(t, srv, "-c", "CREATE ROLE dump_alice LOGIN", "-c", "ALTER ROLE dump_alice SET work_mem = '8MB'")
	out := runClient(t, srv, ".", dumpall, "-g", "-l", "pivotdb")
	for _, want := range []string{"CREATE ROLE dump_alice;", "ALTER ROLE dump_alice SET work_mem TO '8MB';", "dump complete"} {
		if !strings.Contains(out, want) {
			t.Fatalf("pg_dumpall -g lacks %q:\n%s", want, out)
		}
	}
}

// TestPsqlImplicitBlock: psql -c sends its string as one simple Query,
// whose statements form PostgreSQL's implicit transaction block: a schema
// change rolls back with the rest when a later statement fails, and
// CREATE DATABASE is refused there (25001).
func TestPsqlImplicitBlock(t *testing.T) {
	srv := startServer(t)
	runPsql(t, srv, "-c", "CREATE TABLE one (k Int64, PRIMARY KEY (k)); INSERT INTO one VALUES (1)")
	out := runPsql(t, srv, "-c", "CREATE TABLE gone (k Int64, PRIMARY KEY (k)); INSERT INTO gone VALUES (1); INSERT INTO one VALUES (1)")
	if !strings.Contains(out, "duplicate key") {
		t.Fatalf("psql -c with a failing statement: %q", out)
	}
	out = runPsql(t, srv, "-c", "SELECT count(*) FROM gone")
	if !strings.Contains(out, `relation "gone" does not exist`) {
		t.Fatalf("the table of a failed string: %q", out)
	}
	out = runPsql(t, srv, "-At", "-c", "CREATE TABLE kept (k Int64, PRIMARY KEY (k)); INSERT INTO kept VALUES (1), (2); SELECT count(*) FROM kept")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); lines[len(lines)-1] != "2" {
		t.Fatalf("a string that succeeds: %q", out)
	}
	out = runPsql(t, srv, "-c", "SELECT 1; CREATE DATABASE other")
	if !strings.Contains(out, "CREATE DATABASE cannot run inside a transaction block") {
		t.Fatalf("CREATE DATABASE in a string of several: %q", out)
	}
}
