package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestPsycopg2NamedCursor streams a million rows through a psycopg2 named
// cursor (DECLARE ... CURSOR WITHOUT HOLD, then FETCH FORWARD itersize)
// and checks that the server's RSS stays bounded while it does. The rows
// hold about 130 MB of data; kept as values on the server they take
// several times that (a SCROLL cursor, which keeps them, peaked at about
// 410 MB over the baseline when this bound was chosen), while a streaming
// cursor needs Pebble's block cache and one FETCH's rows (about 125 MB
// over the baseline, most of it the 64 MB block cache and GC slack).
func TestPsycopg2NamedCursor(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the server's RSS")
	}
	py := requireFile(t, "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import psycopg2").Run(); err != nil {
		missing(t, "python3-psycopg2 is not installed")
	}
	const rows = 1_000_000
	const bound = 240 << 20
	srv := startServer(t, "--unsafe-no-sync")
	ctx := context.Background()
	setup := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := setup.Exec(ctx, "CREATE TABLE stream (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	for lo := 1; lo <= rows; lo += 250_000 {
		if _, err := setup.Exec(ctx, "INSERT INTO stream SELECT generate_series, repeat('x', 100) FROM generate_series($1::Int64, $2::Int64)",
			lo, lo+250_000-1); err != nil {
			t.Fatal(err)
		}
	}
	setup.Close(ctx)
	// A fresh process, so that the baseline is not the load's garbage.
	srv.stop()
	srv.start("--unsafe-no-sync")
	pid := srv.cmd.Process.Pid
	baseline := vmRSS(t, pid)

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r := vmRSS(t, pid); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	dir, _ := filepath.Abs("drivers/python")
	out := runClient(t, srv, dir, py, "named_cursor.py", "stream", "1000000")
	close(stop)
	<-sampled
	if !strings.Contains(out, "named cursor: streamed 1000000 rows") {
		t.Fatalf("named cursor test did not finish:\n%s", out)
	}
	grew := peak.Load() - baseline
	t.Logf("baseline RSS %d MB, peak %d MB (+%d MB)", baseline>>20, peak.Load()>>20, grew>>20)
	if grew > bound {
		t.Errorf("the server's RSS grew by %d MB while a cursor streamed %d rows; bound %d MB", grew>>20, rows, bound>>20)
	}
}

// TestCursorExtendedProtocol runs cursors through Parse/Bind/Execute: a
// DECLARE with a parameter, FETCH described before it runs, and the
// errors PostgreSQL gives.
func TestCursorExtendedProtocol(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeCacheDescribe)
	mustExec := func(sql string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	code := func(err error) string {
		if pe, ok := err.(*pgconn.PgError); ok {
			return pe.Code
		}
		return ""
	}
	mustExec("CREATE TABLE ec (k Int64, v Utf8, PRIMARY KEY (k))")
	mustExec("INSERT INTO ec SELECT generate_series, 'v' || CAST(generate_series AS Utf8) FROM generate_series(1, 100)")

	if _, err := c.Exec(ctx, "DECLARE c CURSOR FOR SELECT k FROM ec"); code(err) != "25P01" {
		t.Fatalf("DECLARE outside a block: %v, want 25P01", err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec("DECLARE c SCROLL CURSOR FOR SELECT k, v FROM ec WHERE k > $1 ORDER BY k", int64(90))
	var got []string
	for i := 0; i < 2; i++ {
		rows, err := c.Query(ctx, "FETCH 4 FROM c")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k int64
			var v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if tag := rows.CommandTag().String(); tag != "FETCH 4" {
			t.Errorf("tag %q, want FETCH 4", tag)
		}
	}
	if strings.Join(got, ",") != "v91,v92,v93,v94,v95,v96,v97,v98" {
		t.Errorf("fetched %v", got)
	}
	var k int64
	var v string
	if err := c.QueryRow(ctx, "FETCH PRIOR FROM c").Scan(&k, &v); err != nil || k != 97 {
		t.Errorf("FETCH PRIOR: %d, %v; want 97", k, err)
	}
	tag, err := c.Exec(ctx, "MOVE FORWARD ALL IN c")
	if err != nil || tag.String() != "MOVE 3" {
		t.Errorf("MOVE FORWARD ALL: %q, %v; want MOVE 3", tag, err)
	}
	if _, err := c.Exec(ctx, "FETCH nosuch"); code(err) != "34000" {
		t.Errorf("FETCH of an unknown cursor: %v, want 34000", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CLOSE c"); code(err) != "34000" {
		t.Errorf("CLOSE after ROLLBACK: %v, want 34000", err)
	}
}

// TestBinaryCursor checks that FETCH from a DECLARE BINARY cursor sends
// binary values over the simple protocol, as PostgreSQL does.
func TestBinaryCursor(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{"CREATE TABLE bc (k Int64, v Utf8, PRIMARY KEY (k))", "INSERT INTO bc VALUES (1, 'one'), (258, 'two')", "BEGIN",
		"DECLARE b BINARY CURSOR FOR SELECT k, v FROM bc ORDER BY k", "DECLARE t CURSOR FOR SELECT k FROM bc ORDER BY k"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	res := c.PgConn().Exec(ctx, "FETCH 2 FROM b; FETCH 1 FROM t")
	all, err := res.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	bin, text := all[0], all[1]
	if f := bin.FieldDescriptions; f[0].Format != 1 || f[1].Format != 1 {
		t.Fatalf("formats %d, %d; want binary", f[0].Format, f[1].Format)
	}
	if got := bin.Rows[1][0]; string(got) != "\x00\x00\x00\x00\x00\x00\x01\x02" {
		t.Errorf("binary int8 258 = %q", got)
	}
	if got := string(bin.Rows[1][1]); got != "two" {
		t.Errorf("binary text = %q", got)
	}
	if f := text.FieldDescriptions; f[0].Format != 0 || string(text.Rows[0][0]) != "1" {
		t.Errorf("a plain cursor: format %d, value %q; want text 1", f[0].Format, text.Rows[0][0])
	}
}
