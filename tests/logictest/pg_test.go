package logictest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The end-to-end tests run the runner against a real PostgreSQL 15. They
// use LOGICTEST_PG_ADDR (host:port of a server where user "pivotdb" may
// create databases, trust auth) when set; otherwise they start a throwaway
// instance from the binaries in $PG_BIN or /usr/lib/postgresql/15/bin, or
// skip when there are none.

var (
	pgOnce sync.Once
	pgAddr string
	pgErr  error
	pgStop func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pgStop != nil {
		pgStop()
	}
	os.Exit(code)
}

// postgres returns the address of a PostgreSQL server with a superuser
// "pivotdb" and a database "pivotdb", or skips the test.
func postgres(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	pgOnce.Do(func() {
		if addr := os.Getenv("LOGICTEST_PG_ADDR"); addr != "" {
			pgAddr = addr
			return
		}
		pgAddr, pgStop, pgErr = startPostgres()
	})
	if pgErr != nil {
		if strings.HasPrefix(pgErr.Error(), "skip:") {
			t.Skip(pgErr)
		}
		t.Fatal(pgErr)
	}
	return pgAddr
}

func startPostgres() (addr string, stop func(), err error) {
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	for _, b := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return "", nil, fmt.Errorf("skip: no PostgreSQL binaries: %v", err)
		}
	}

	dir, err := os.MkdirTemp("", "logictest-pg-")
	if err != nil {
		return "", nil, err
	}
	cleanupDir := func() { os.RemoveAll(dir) }
	data := filepath.Join(dir, "data")

	// PostgreSQL refuses to run as root: run it as an ordinary user then.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		var u *user.User
		for _, name := range []string{"postgres", "nobody"} {
			if u, err = user.Lookup(name); err == nil {
				break
			}
		}
		if err != nil {
			cleanupDir()
			return "", nil, fmt.Errorf("skip: running as root and no unprivileged user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			cleanupDir()
			return "", nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			cleanupDir()
			return "", nil, err
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "HOME="+dir)
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		return cmd
	}

	out, err := command("initdb", "-D", data, "-U", "pivotdb", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		cleanupDir()
		return "", nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}

	port, err := freePort()
	if err != nil {
		cleanupDir()
		return "", nil, err
	}
	var logBuf bytes.Buffer
	cmd := command("postgres", "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.Stdout = &logBuf
	cmd.Stderr = &logBuf
	if err := cmd.Start(); err != nil {
		cleanupDir()
		return "", nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop = func() {
		cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		cleanupDir()
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitReady(addr, exited); err != nil {
		stop()
		return "", nil, fmt.Errorf("postgres did not start: %v\n%s", err, logBuf.String())
	}
	return addr, stop, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady connects to database postgres until it works, then creates the
// database pivotdb.
func waitReady(addr string, exited chan struct{}) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, "postgres://pivotdb@"+addr+"/postgres?sslmode=disable")
		if err == nil {
			_, err = conn.Exec(ctx, "CREATE DATABASE pivotdb")
			conn.Close(ctx)
			cancel()
			return err
		}
		cancel()
		select {
		case <-exited:
			return fmt.Errorf("postgres exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pgOptions(t *testing.T) Options {
	return Options{Addr: postgres(t), SSLMode: "disable", FreshDatabase: true, FileTimeout: 2 * time.Minute}
}

func TestPostgresBasic(t *testing.T) {
	opts := pgOptions(t)
	var out bytes.Buffer
	opts.Verbose, opts.Out = true, &out
	res := RunFile(context.Background(), opts, "testdata/basic.test")
	if res.Err != nil {
		t.Fatalf("file error: %v", res.Err)
	}
	if res.Failed != 0 {
		t.Fatalf("%s\n%s", res.Summary(), out.String())
	}
	// Statement and query records: 31 in all, 3 skipped by guards
	// (onlyif sqlite, skipif pivotdb, onlyif mysql), 2 after the halt.
	if res.Passed != 26 || res.Skipped != 3 || !res.Halted {
		t.Errorf("%s, halted=%v", res.Summary(), res.Halted)
	}
}

func TestPostgresCRLF(t *testing.T) {
	opts := pgOptions(t)
	data, err := os.ReadFile("testdata/basic.test")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "basic_crlf.test")
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	if err := os.WriteFile(path, crlf, 0o644); err != nil {
		t.Fatal(err)
	}
	res := RunFile(context.Background(), opts, path)
	if res.Err != nil || res.Failed != 0 || res.Passed != 26 || res.Skipped != 3 {
		t.Errorf("%s, err=%v, failures=%+v", res.Summary(), res.Err, res.Failures)
	}
}

func TestPostgresFailures(t *testing.T) {
	opts := pgOptions(t)
	res := RunFile(context.Background(), opts, "testdata/failing.test")
	if res.Err != nil {
		t.Fatalf("file error: %v", res.Err)
	}
	var lines []int
	msgs := map[int]string{}
	for _, f := range res.Failures {
		lines = append(lines, f.Line)
		msgs[f.Line] = f.Message
	}
	want := []int{11, 19, 26, 35, 41, 47, 51, 55, 60, 73, 79, 82, 107}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("failed lines %v, want %v\n%+v", lines, want, res.Failures)
	}
	if res.Passed != 5 || res.Failed != 13 || res.Skipped != 1 {
		t.Errorf("%s", res.Summary())
	}
	for line, sub := range map[int]string{
		11:  `value 3: expected "4", got "3"`,
		19:  "expected 2 values, got 3",
		35:  "wrong result hash",
		47:  "expected an error",
		51:  "SQLSTATE 42P01",
		60:  "expected 2 but got 1",
		73:  "labeled result [label-9] does not agree",
		79:  "unknown record type",
		107: "labeled result [label-10] does not agree",
	} {
		if !strings.Contains(msgs[line], sub) {
			t.Errorf("line %d: message %q does not contain %q", line, msgs[line], sub)
		}
	}

	// Known failures are skipped and counted as known.
	opts.KnownFailures = KnownFailures{}
	opts.KnownFailures.Add("failing.test", 11, "wrong on purpose")
	opts.KnownFailures.Add("testdata/failing.test", 88, "not really failing")
	res = RunFile(context.Background(), opts, "testdata/failing.test")
	if res.Passed != 4 || res.Failed != 12 || res.Skipped != 3 || res.Known != 2 || res.Fixed != 0 {
		t.Errorf("with known failures: %s known=%d fixed=%d", res.Summary(), res.Known, res.Fixed)
	}
	// ... or run, and reported as still failing or fixed.
	opts.RunKnownFailures = true
	res = RunFile(context.Background(), opts, "testdata/failing.test")
	if res.Passed != 5 || res.Failed != 12 || res.Skipped != 2 || res.Known != 1 || res.Fixed != 1 ||
		!reflect.DeepEqual(res.FixedLines, []int{88}) {
		t.Errorf("running known failures: %s known=%d fixed=%d fixedLines=%v", res.Summary(), res.Known, res.Fixed, res.FixedLines)
	}
	if len(res.KnownFailures) != 1 || !strings.Contains(res.KnownFailures[0].Message, `expected "4"`) {
		t.Errorf("known failures: %+v", res.KnownFailures)
	}
}

// Engine-specific variants of one labeled query: the variant guarded off
// for this engine does not fix the label, whichever engine it is for and
// whichever comes first; a record skipped as a known failure does, since
// its listed result is this engine's.
func TestPostgresLabelVariants(t *testing.T) {
	opts := pgOptions(t)
	const file = `onlyif mysql
query R nosort label-1
SELECT 5 / 2
----
2.500

skipif mysql
query R nosort label-1
SELECT 5 / 2
----
2.000

query R nosort label-1
SELECT 4 / 2
----
2.000

query I nosort label-2
SELECT 7
----
7

onlyif mysql
query I nosort label-2
SELECT 8
----
8

query I nosort label-2
SELECT 7
----
7
`
	path := filepath.Join(t.TempDir(), "variants.test")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	res := RunFile(context.Background(), opts, path)
	if res.Err != nil || res.Passed != 4 || res.Failed != 0 || res.Skipped != 2 {
		t.Fatalf("%s, err=%v, failures=%+v", res.Summary(), res.Err, res.Failures)
	}

	// As engine "mysql" the other variants are skipped. Line 2 (2.500;
	// PostgreSQL gives 2) fails its own comparison and fixes nothing; line
	// 13 fixes label-1; line 24 (8) passes its own comparison but not
	// label-2's, fixed by line 18.
	mopts := opts
	mopts.Engine = "mysql"
	res = RunFile(context.Background(), mopts, path)
	var lines []int
	for _, f := range res.Failures {
		lines = append(lines, f.Line)
	}
	if !reflect.DeepEqual(lines, []int{2, 24}) || res.Passed != 3 || res.Skipped != 1 {
		t.Fatalf("as mysql: %s, failed lines %v, want [2 24]: %+v", res.Summary(), lines, res.Failures)
	}
	if !strings.Contains(res.Failures[1].Message, "labeled result [label-2] does not agree") {
		t.Errorf("line 24: %q", res.Failures[1].Message)
	}

	// A record skipped as a known failure is meant for this engine: its
	// listed result still fixes the label, so a variant that disagrees with
	// it fails even though the listed record did not run.
	const known = `query I nosort label-3
SELECT 30
----
3

query I nosort label-3
SELECT 30
----
30
`
	kpath := filepath.Join(t.TempDir(), "known.test")
	if err := os.WriteFile(kpath, []byte(known), 0o644); err != nil {
		t.Fatal(err)
	}
	res = RunFile(context.Background(), opts, kpath)
	if res.Failed != 1 || res.Failures[0].Line != 1 || res.Passed != 1 {
		t.Fatalf("unlisted: %s, failures=%+v", res.Summary(), res.Failures)
	}
	opts.KnownFailures = KnownFailures{}
	opts.KnownFailures.Add(kpath, 1, "listed")
	res = RunFile(context.Background(), opts, kpath)
	if res.Failed != 1 || res.Failures[0].Line != 6 || res.Known != 1 ||
		!strings.Contains(res.Failures[0].Message, "labeled result [label-3] does not agree") {
		t.Fatalf("listed: %s, failures=%+v", res.Summary(), res.Failures)
	}
}

// Without FreshDatabase, files share the database, and nothing is dropped.
func TestPostgresSharedDatabase(t *testing.T) {
	opts := pgOptions(t)
	opts.FreshDatabase = false
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.test", "statement ok\nCREATE TABLE shared_t(x INT)\n\nstatement ok\nINSERT INTO shared_t VALUES(1)\n")
	b := write("b.test", "query I nosort\nSELECT x FROM shared_t\n----\n1\n\nstatement ok\nDROP TABLE shared_t\n")
	results, err := RunFiles(context.Background(), opts, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.OK() || r.Passed != 2 {
			t.Errorf("%s err=%v failures=%+v", r.Summary(), r.Err, r.Failures)
		}
	}
}

func TestPostgresTimeouts(t *testing.T) {
	opts := pgOptions(t)
	path := filepath.Join(t.TempDir(), "slow.test")
	body := "statement ok\nSELECT pg_sleep(5)\n\nquery I nosort\nSELECT 1\n----\n1\n\nquery I nosort\nSELECT 2\n----\n2\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}

	// A record timeout cancels the statement; the session goes on.
	opts.RecordTimeout = 300 * time.Millisecond
	start := time.Now()
	res := RunFile(context.Background(), opts, path)
	if res.Err != nil || res.Passed != 2 || res.Failed != 1 ||
		!strings.Contains(res.Failures[0].Message, "record timeout") {
		t.Errorf("record timeout: %s err=%v failures=%+v", res.Summary(), res.Err, res.Failures)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("record timeout took %v", d)
	}

	// A file timeout stops the file; the rest counts as failed.
	opts.RecordTimeout = 0
	opts.FileTimeout = 500 * time.Millisecond
	res = RunFile(context.Background(), opts, path)
	if res.Err == nil || res.Passed != 0 || res.Failed != 3 {
		t.Errorf("file timeout: %s err=%v failures=%+v", res.Summary(), res.Err, res.Failures)
	}
}

func TestPostgresConnectFailure(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Addr: "127.0.0.1:" + strconv.Itoa(port), SSLMode: "disable", ConnectTimeout: 2 * time.Second}
	res := RunFile(context.Background(), opts, "testdata/failing.test")
	if res.Err == nil || res.Failed != 18 || res.Passed != 0 || res.Skipped != 1 {
		t.Errorf("%s err=%v", res.Summary(), res.Err)
	}
}

func TestMainCommand(t *testing.T) {
	addr := postgres(t)
	known := filepath.Join(t.TempDir(), "known.txt")
	if err := os.WriteFile(known, []byte("# known\nfailing.test:11 on purpose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(t.TempDir(), "written.txt")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"--addr", addr, "--sslmode", "disable", "--fresh-db",
		"testdata/basic.test", "testdata/failing.test",
		"--known-failures", known, "--write-failures", written}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit status %d", code)
	}
	want := "testdata/basic.test: 26 passed, 0 failed, 3 skipped\n" +
		"testdata/failing.test: 5 passed, 12 failed, 2 skipped\n" +
		"total: 31 passed, 12 failed, 5 skipped\n"
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", stdout.String(), want, stderr.String())
	}
	if !strings.Contains(stderr.String(), "testdata/failing.test: 1 known failures") {
		t.Errorf("stderr: %s", stderr.String())
	}
	w, err := os.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(w), "\n"); n != 13 || !strings.HasPrefix(string(w), "testdata/failing.test:11 on purpose\n") {
		t.Errorf("written failures (%d lines):\n%s", n, w)
	}

	// With the written list, the run passes.
	stdout.Reset()
	stderr.Reset()
	code = Main([]string{"--addr", addr, "--sslmode", "disable", "--fresh-db", "--known-failures", written, "-v",
		"testdata/failing.test"}, &stdout, &stderr)
	if code != 0 || !regexp.MustCompile(`(?m)^total: 5 passed, 0 failed, 14 skipped$`).MatchString(stdout.String()) {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}

	// Verbose output shows the failing record.
	stdout.Reset()
	code = Main([]string{"--addr", addr, "--sslmode", "disable", "--fresh-db", "-v", "testdata/failing.test"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "testdata/failing.test:11: query: wrong result") ||
		!strings.Contains(stdout.String(), "  expected:\n    1\n    2\n    4\n  got:\n    1\n    2\n    3\n") {
		t.Errorf("verbose output:\n%s", stdout.String())
	}
}

func TestMainUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main(nil, &stdout, &stderr); code != 2 {
		t.Errorf("no files: exit %d", code)
	}
	if code := Main([]string{"--bogus", "x.test"}, &stdout, &stderr); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
	if code := Main([]string{"no/such/file.test"}, &stdout, &stderr); code != 2 {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestPostgresCorpus runs the files named in LOGICTEST_CORPUS (separated by
// spaces) against PostgreSQL and logs the counts: a smoke test of the runner
// on real corpus files, most of which PostgreSQL fails for dialect reasons.
// LOGICTEST_ENGINE sets the engine name (default pivotdb).
func TestPostgresCorpus(t *testing.T) {
	files := strings.Fields(os.Getenv("LOGICTEST_CORPUS"))
	if len(files) == 0 {
		t.Skip("LOGICTEST_CORPUS not set")
	}
	opts := pgOptions(t)
	opts.FileTimeout = 30 * time.Minute
	opts.Engine = os.Getenv("LOGICTEST_ENGINE")
	results, err := RunFiles(context.Background(), opts, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		t.Logf("%s (%v, err=%v)", r.Summary(), r.Elapsed.Round(time.Millisecond), r.Err)
		kinds := map[string]int{}
		for _, f := range r.Failures {
			msg := f.Message
			if i := strings.IndexAny(msg, ":("); i > 0 {
				msg = msg[:i]
			}
			kinds[f.Kind+": "+msg]++
		}
		t.Logf("  failure kinds: %v", kinds)
		for i, f := range r.Failures {
			if i == 5 {
				break
			}
			t.Logf("  e.g. line %d: %s", f.Line, f.Message)
		}
	}
}

// When the server drops the connection, the rest of the file counts as
// failed ("not run") rather than failing one by one on a dead connection.
func TestPostgresConnectionLost(t *testing.T) {
	opts := pgOptions(t)
	path := filepath.Join(t.TempDir(), "lost.test")
	body := "query I nosort\nSELECT 1\n----\n1\n\n" +
		"statement ok\nSELECT pg_terminate_backend(pg_backend_pid())\n\n" +
		"query I nosort\nSELECT 1\n----\n1\n\n" +
		"onlyif sqlite\nstatement ok\nSELECT 1\n\n" +
		"statement ok\nSELECT 1\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts.Verbose, opts.Out = true, &out
	res := RunFile(context.Background(), opts, path)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "connection lost") ||
		res.Passed != 1 || res.Failed != 3 || res.Skipped != 1 {
		t.Errorf("%s err=%v failures=%+v", res.Summary(), res.Err, res.Failures)
	}
	if len(res.Failures) == 3 && res.Failures[2].Message != "not run: connection lost" {
		t.Errorf("last failure: %+v", res.Failures[2])
	}
	if !strings.Contains(out.String(), "remaining records count as failed") {
		t.Errorf("verbose output:\n%s", out.String())
	}
}
