package tests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and unmounts
// it at the end of the test. It needs root: CI runs as root, so there a
// failure to mount fails the test; elsewhere the test is skipped.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("needs root to mount a tmpfs (run as root, as CI does)")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestDiskFull fills a 64 MB tmpfs holding the data directory with four
// writers over the wire. Every writer must end with 53100 (never a dropped
// connection), every acknowledged row must be there and no refused one,
// and reads must go on. Writes must work again without a restart once
// space is freed, both by DROP TABLE (accepted on the full disk) and by
// deleting a filler file the test put on the filesystem; after a restart
// every acknowledged row is still there.
func TestDiskFull(t *testing.T) {
	mnt := mountTmpfs(t, 64<<20)
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, dataDir: filepath.Join(mnt, "data")}
	s.start()
	t.Cleanup(func() { s.stop() })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := s.connect(t, pgx.QueryExecModeCacheStatement)
	if _, err := admin.Exec(ctx, `CREATE TABLE t (w Int64, i Int64, pad Utf8, PRIMARY KEY (w, i))`); err != nil {
		t.Fatal(err)
	}
	// big holds ~10 MB that the test drops later to free space from SQL.
	if _, err := admin.Exec(ctx, `CREATE TABLE big (i Int64, pad Utf8, PRIMARY KEY (i))`); err != nil {
		t.Fatal(err)
	}
	for i := range 1200 {
		pad := make([]byte, 4<<10)
		rand.Read(pad)
		if _, err := admin.Exec(ctx, "INSERT INTO big (i, pad) VALUES ($1, $2)", i, hex.EncodeToString(pad)); err != nil {
			t.Fatal(err)
		}
	}

	// Each statement inserts rowsPerStmt rows of ~8 KB of random (so
	// incompressible) text; acked[w] counts the rows of writer w whose
	// statement succeeded. Rows are numbered in order, so writer w's
	// table rows must be exactly i = 0 .. acked[w]-1.
	const writers, rowsPerStmt = 4, 8
	acked := make([]int, writers)
	refusedTx := make([]bool, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.connect(t, pgx.QueryExecModeCacheStatement)
			pad := make([]byte, 4<<10)
			for stmts := 0; ; stmts++ {
				if ctx.Err() != nil {
					errs <- fmt.Errorf("writer %d: disk not full after %d rows", w, acked[w])
					return
				}
				var sb strings.Builder
				sb.WriteString("INSERT INTO t (w, i, pad) VALUES ")
				for r := range rowsPerStmt {
					rand.Read(pad)
					if r > 0 {
						sb.WriteString(", ")
					}
					fmt.Fprintf(&sb, "(%d, %d, '%s')", w, acked[w]+r, hex.EncodeToString(pad))
				}
				var err error
				if stmts%2 == 0 {
					_, err = c.Exec(ctx, sb.String())
				} else {
					// Every other statement runs in a block: then it is
					// the COMMIT that fails.
					err = runInBlock(ctx, c, sb.String())
				}
				if err == nil {
					acked[w] += rowsPerStmt
					continue
				}
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "53100" {
					errs <- fmt.Errorf("writer %d after %d rows: got %v, want 53100", w, acked[w], err)
					return
				}
				refusedTx[w] = stmts%2 == 1
				// The connection is still good, and idle.
				var n int
				if err := c.QueryRow(ctx, "SELECT count(*) FROM t WHERE w = $1", w).Scan(&n); err != nil {
					errs <- fmt.Errorf("writer %d: read after 53100: %v", w, err)
					return
				}
				if n != acked[w] {
					errs <- fmt.Errorf("writer %d: %d rows stored, %d acknowledged", w, n, acked[w])
				}
				return
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.Fatalf("server log:\n%s", s.log)
	}
	total := 0
	for _, n := range acked {
		total += n
	}
	t.Logf("disk full after %d acknowledged rows (writers' last refusal in a block: %v)", total, refusedTx)

	// Reads keep working, on a new connection too, and every acknowledged
	// row is there.
	reader := s.connect(t, pgx.QueryExecModeSimpleProtocol)
	for w := range writers {
		var n, maxI int
		if err := reader.QueryRow(ctx, "SELECT count(*), coalesce(max(i), -1) FROM t WHERE w = $1", w).Scan(&n, &maxI); err != nil {
			t.Fatal(err)
		}
		if n != acked[w] || maxI != acked[w]-1 {
			t.Errorf("writer %d: %d rows up to i=%d stored, %d acknowledged", w, n, maxI, acked[w])
		}
	}
	// Still full: writes are still refused. Pebble frees some space on
	// its own meanwhile (obsolete WAL files, compactions), so keep writing
	// until refused again, counting the rows as acknowledged.
	fillUntilFull := func(w int) *pgconn.PgError {
		t.Helper()
		for i := 0; ; i++ {
			_, err := reader.Exec(ctx, "INSERT INTO t (w, i, pad) VALUES ($1, $2, $3)", w, i, strings.Repeat("z", 8192))
			if err == nil {
				total++
				continue
			}
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "53100" {
				t.Fatalf("write while full: got %v, want 53100\n%s", err, s.log)
			}
			return pe
		}
	}
	pe := fillUntilFull(98)
	if !strings.Contains(pe.Message, "No space left on device") || pe.Hint == "" {
		t.Errorf("53100 reads %q (hint %q)", pe.Message, pe.Hint)
	}
	// waitWritable retries a small insert until it is accepted; each
	// refusal must be 53100. The deadline is a safety net.
	waitWritable := func(w int, what string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			_, err := reader.Exec(ctx, "INSERT INTO t (w, i, pad) VALUES ($1, 0, 'x')", w)
			if err == nil {
				total++
				return
			}
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "53100" {
				t.Fatalf("write after %s: got %v, want success or 53100\n%s", what, err, s.log)
			}
			if time.Now().After(deadline) {
				t.Fatalf("writes still refused a minute after %s\n%s", what, s.log)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Deleting data from SQL frees space: DROP TABLE is accepted on a full
	// disk, and once Pebble has dropped the table's files, writes resume.
	// DROP TABLE may use most of the reserve, but a compaction running at
	// that moment may hold it: then it is refused with 53100 too, for as
	// long as the compaction runs.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, err := reader.Exec(ctx, "DROP TABLE big")
		if err == nil {
			break
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "53100" || time.Now().After(deadline) {
			t.Fatalf("DROP TABLE on a full disk: %v\n%s", err, s.log)
		}
	}
	waitWritable(97, "DROP TABLE")

	// Fill up again; then free space outside the database: writes resume.
	fillUntilFull(96)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitWritable(95, "deleting a file")
	var n int
	if err := reader.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != total {
		t.Fatalf("%d rows, want %d", n, total)
	}
	// A restart (stop checks the exit is clean, so it never was Pebble's
	// fatal one) finds every row again.
	s.restart()
	reader = s.connect(t, pgx.QueryExecModeSimpleProtocol)
	if err := reader.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != total {
		t.Fatalf("after restart: %d rows, want %d", n, total)
	}
}

// runInBlock runs stmt inside BEGIN ... COMMIT.
func runInBlock(ctx context.Context, c *pgx.Conn, stmt string) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, stmt); err != nil {
		tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}
