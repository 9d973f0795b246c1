package tests

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestLockInQueryString sends LOCK TABLE in a query string of several
// statements (one simple-protocol Query, no BEGIN): as in PostgreSQL the
// string is an implicit transaction block, so LOCK runs and its lock holds
// other sessions' writes off until the string ends, while LOCK alone in a
// string is 25P01. A string that takes table locks before and after LOCK
// does not wait for itself.
func TestLockInQueryString(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	a := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	b := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, a, "CREATE TABLE lk (id Int64, v Int64, PRIMARY KEY (id))")
	mustExec(t, a, "INSERT INTO lk VALUES (1, 10), (2, 20)")
	mustExec(t, a, "CREATE VIEW lk_view AS SELECT id FROM lk WHERE v > 10")

	script := func(c *pgx.Conn, sql string) ([][][]string, error) {
		results, err := c.PgConn().Exec(ctx, sql).ReadAll()
		var out [][][]string
		for _, r := range results {
			var rows [][]string
			for _, row := range r.Rows {
				var vals []string
				for _, v := range row {
					vals = append(vals, string(v))
				}
				rows = append(rows, vals)
			}
			out = append(out, rows)
		}
		return out, err
	}

	_, err := script(a, "LOCK lk")
	wantError(t, "LOCK alone", err, "25P01", "LOCK TABLE can only be used in transaction blocks")

	res, err := script(a, "LOCK lk IN SHARE MODE; SELECT mode FROM pg_locks WHERE locktype = 'relation' AND relation = 'lk'::regclass; SELECT count(*) FROM lk")
	if err != nil {
		t.Fatalf("LOCK; SELECT: %v", err)
	}
	if len(res) != 3 || len(res[1]) != 1 || res[1][0][0] != "ShareLock" || res[2][0][0] != "2" {
		t.Fatalf("LOCK; SELECT gave %v", res)
	}
	// The lock ends with the string.
	var n int64
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation' AND mode = 'ShareLock'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("locks left after the string: %d (%v)", n, err)
	}

	// While the string runs, another session's write waits for its lock.
	done := make(chan error, 1)
	go func() {
		_, err := script(a, "LOCK lk_view IN EXCLUSIVE MODE; SELECT pg_sleep(0.6); INSERT INTO lk VALUES (3, 30)")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation' AND mode = 'ExclusiveLock' AND relation = 'lk'::regclass").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the string's lock never showed in pg_locks")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mustExec(t, b, "SET lock_timeout = '100ms'")
	_, err = b.Exec(ctx, "INSERT INTO lk VALUES (4, 40)")
	wantError(t, "a write under the string's EXCLUSIVE lock", err, "55P03", "")
	mustExec(t, b, "SET lock_timeout = 0")
	if err := <-done; err != nil {
		t.Fatalf("LOCK view; sleep; INSERT: %v", err)
	}
	mustExec(t, b, "INSERT INTO lk VALUES (4, 40)")

	// Locks before and after LOCK in one string, and writes: one owner,
	// no waiting for itself; an error rolls the whole string back.
	for _, sql := range []string{
		"SELECT count(*) FROM lk; LOCK lk; INSERT INTO lk VALUES (5, 50); SELECT count(*) FROM lk",
		"INSERT INTO lk VALUES (6, 60); INSERT INTO lk VALUES (7, 70); LOCK lk IN SHARE ROW EXCLUSIVE MODE; UPDATE lk SET v = v + 1 WHERE id = 6",
		"UPDATE lk SET v = v + 1 WHERE id = 1 RETURNING v; LOCK lk IN EXCLUSIVE MODE; DELETE FROM lk WHERE id = 7",
	} {
		ctxS, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := a.PgConn().Exec(ctxS, sql).ReadAll()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	_, err = script(a, "LOCK lk; INSERT INTO lk VALUES (1, 0)")
	wantError(t, "LOCK; duplicate INSERT", err, "23505", "")
	var sum int64
	if err := b.QueryRow(ctx, "SELECT sum(v) FROM lk").Scan(&sum); err != nil || sum != 10+1+20+30+40+50+61 {
		t.Fatalf("sum(v) = %d (%v)", sum, err)
	}
}
