package tests

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Row-locking reads between two sessions (issue 16 item 4): PostgreSQL's
// conflicts between FOR KEY SHARE, FOR SHARE, FOR NO KEY UPDATE and FOR
// UPDATE and the writes; NOWAIT, SKIP LOCKED, lock_timeout, deadlocks; READ
// COMMITTED's re-check of a row changed while the reader waited, and
// REPEATABLE READ's 40001; locks gone at ROLLBACK TO SAVEPOINT. The
// one-session behaviour is tests/sql/locking.test.

func lockingSetup(t *testing.T) (srv *testServer, a, b *pgx.Conn, ctx context.Context) {
	srv = startServer(t)
	ctx = ctxT(t)
	a = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	b = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, a, "CREATE TABLE t (id Int64, v Utf8, n Int64, PRIMARY KEY (id))")
	mustExec(t, a, "INSERT INTO t VALUES (1, 'a', 0), (2, 'a', 0), (3, 'a', 0)")
	return srv, a, b, ctx
}

// wantError checks err's SQLSTATE and message.
func wantError(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code || msg != "" && pe.Message != msg {
		t.Fatalf("%s: got %v, want %s %s", what, err, code, msg)
	}
}

func queryIDs(t *testing.T, c *pgx.Conn, sql string) []int64 {
	t.Helper()
	rows, err := c.Query(ctxT(t), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return ids
}

// TestLockingConflicts walks PostgreSQL's conflict table with NOWAIT, SKIP
// LOCKED and lock_timeout.
func TestLockingConflicts(t *testing.T) {
	srv, a, b, ctx := lockingSetup(t)
	notAvailable := `could not obtain lock on row in relation "t"`
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SELECT * FROM t WHERE id = 1 FOR UPDATE")

	// FOR UPDATE conflicts with every strength.
	for _, s := range []string{"UPDATE", "NO KEY UPDATE", "SHARE", "KEY SHARE"} {
		_, err := b.Exec(ctx, "SELECT * FROM t WHERE id = 1 FOR "+s+" NOWAIT")
		wantError(t, "FOR "+s+" NOWAIT", err, "55P03", notAvailable)
	}
	if got := queryIDs(t, b, "SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"); len(got) != 1 || got[0] != 2 {
		t.Fatalf("SKIP LOCKED gave %v, want [2]", got)
	}
	if got := queryIDs(t, b, "SELECT id FROM t ORDER BY id FOR KEY SHARE SKIP LOCKED"); len(got) != 2 {
		t.Fatalf("SKIP LOCKED gave %v, want [2 3]", got)
	}
	// A prepared locking query runs again with other parameters.
	p := srv.connect(t, pgx.QueryExecModeCacheStatement)
	for _, id := range []int64{2, 3, 1} {
		var got int64
		err := p.QueryRow(ctx, "SELECT id FROM t WHERE id = $1 FOR NO KEY UPDATE NOWAIT", id).Scan(&got)
		if id == 1 {
			wantError(t, "prepared NOWAIT", err, "55P03", notAvailable)
		} else if err != nil || got != id {
			t.Fatalf("prepared, id %d: %d %v", id, got, err)
		}
	}
	// pg_locks shows the row lock, in PostgreSQL's mode for FOR UPDATE.
	var mode string
	if err := b.QueryRow(ctx, "SELECT mode FROM pg_locks WHERE locktype = 'tuple' AND relation = 't'::regclass AND pid <> pg_backend_pid()").Scan(&mode); err != nil || mode != "AccessExclusiveLock" {
		t.Fatalf("pg_locks: %q %v", mode, err)
	}
	// lock_timeout ends a wait with 55P03.
	mustExec(t, b, "SET lock_timeout = '100ms'")
	_, err := b.Exec(ctx, "UPDATE t SET n = 1 WHERE id = 1")
	wantError(t, "UPDATE under lock_timeout", err, "55P03", "canceling statement due to lock timeout")
	_, err = b.Exec(ctx, "SELECT * FROM t WHERE id = 1 FOR SHARE")
	wantError(t, "FOR SHARE under lock_timeout", err, "55P03", "canceling statement due to lock timeout")
	mustExec(t, a, "COMMIT")

	// FOR SHARE: shares with FOR SHARE and FOR KEY SHARE, not with writes.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SELECT * FROM t WHERE id = 1 FOR SHARE")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "SELECT * FROM t WHERE id = 1 FOR SHARE NOWAIT")
	mustExec(t, b, "SELECT * FROM t WHERE id = 1 FOR KEY SHARE NOWAIT")
	_, err = b.Exec(ctx, "SELECT * FROM t WHERE id = 1 FOR NO KEY UPDATE NOWAIT")
	wantError(t, "FOR NO KEY UPDATE vs FOR SHARE", err, "55P03", notAvailable)
	mustExec(t, b, "ROLLBACK")
	_, err = b.Exec(ctx, "UPDATE t SET n = 1 WHERE id = 1")
	wantError(t, "UPDATE vs FOR SHARE", err, "55P03", "canceling statement due to lock timeout")
	mustExec(t, a, "COMMIT")

	// FOR KEY SHARE lets an UPDATE that keeps the key through, not a
	// DELETE.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SELECT * FROM t WHERE id = 1 FOR KEY SHARE")
	mustExec(t, b, "UPDATE t SET n = 5 WHERE id = 1")
	_, err = b.Exec(ctx, "DELETE FROM t WHERE id = 1")
	wantError(t, "DELETE vs FOR KEY SHARE", err, "55P03", "canceling statement due to lock timeout")
	_, err = b.Exec(ctx, "SELECT * FROM t WHERE id = 1 FOR SHARE NOWAIT")
	if err != nil {
		t.Fatalf("FOR SHARE vs FOR KEY SHARE: %v", err)
	}
	mustExec(t, a, "COMMIT")

	// ROLLBACK TO SAVEPOINT gives back the locks taken after it.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SELECT * FROM t WHERE id = 2 FOR KEY SHARE")
	mustExec(t, a, "SAVEPOINT s")
	mustExec(t, a, "SELECT * FROM t WHERE id IN (2, 3) FOR UPDATE")
	_, err = b.Exec(ctx, "SELECT * FROM t WHERE id = 3 FOR KEY SHARE NOWAIT")
	wantError(t, "before ROLLBACK TO", err, "55P03", notAvailable)
	mustExec(t, a, "ROLLBACK TO SAVEPOINT s")
	mustExec(t, b, "SELECT * FROM t WHERE id = 3 FOR UPDATE NOWAIT")
	mustExec(t, b, "SELECT * FROM t WHERE id = 2 FOR NO KEY UPDATE NOWAIT")
	_, err = b.Exec(ctx, "SELECT * FROM t WHERE id = 2 FOR UPDATE NOWAIT")
	wantError(t, "FOR KEY SHARE kept", err, "55P03", notAvailable)
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "SELECT * FROM t WHERE id = 2 FOR UPDATE NOWAIT")
}

// TestLockingRecheck: a locking read that waited for a writer sees the
// rows as the writer left them (READ COMMITTED), or fails with 40001
// (REPEATABLE READ); two that wait for each other end in 40P01.
func TestLockingRecheck(t *testing.T) {
	_, a, b, ctx := lockingSetup(t)

	// READ COMMITTED: row 1 no longer matches, row 2 changed and still
	// matches, row 3 is unchanged.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE t SET v = 'b' WHERE id = 1")
	mustExec(t, a, "UPDATE t SET n = 7 WHERE id = 2")
	type result struct {
		rows [][2]int64
		err  error
	}
	done := make(chan result, 1)
	go func() {
		rows, err := b.Query(ctx, "SELECT id, n FROM t WHERE v = 'a' ORDER BY id FOR UPDATE")
		if err != nil {
			done <- result{err: err}
			return
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]int64, error) {
			var x [2]int64
			return x, r.Scan(&x[0], &x[1])
		})
		done <- result{rows: got, err: err}
	}()
	waitForLockWait(t, a)
	mustExec(t, a, "COMMIT")
	r := <-done
	if r.err != nil || len(r.rows) != 2 || r.rows[0] != [2]int64{2, 7} || r.rows[1] != [2]int64{3, 0} {
		t.Fatalf("FOR UPDATE after the writer committed: %v %v, want [[2 7] [3 0]]", r.rows, r.err)
	}

	// REPEATABLE READ: the row changed after the snapshot.
	mustExec(t, b, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	mustExec(t, b, "SELECT count(*) FROM t")
	mustExec(t, a, "UPDATE t SET n = 8 WHERE id = 3")
	_, err := b.Exec(ctx, "SELECT * FROM t WHERE id = 3 FOR SHARE")
	wantError(t, "REPEATABLE READ", err, "40001", "could not serialize access due to concurrent update")
	mustExec(t, b, "ROLLBACK")

	// Deadlock.
	mustExec(t, a, "BEGIN")
	mustExec(t, b, "BEGIN")
	mustExec(t, a, "SELECT * FROM t WHERE id = 2 FOR SHARE")
	mustExec(t, b, "SELECT * FROM t WHERE id = 3 FOR NO KEY UPDATE")
	errA := make(chan error, 1)
	go func() {
		_, err := a.Exec(ctx, "SELECT * FROM t WHERE id = 3 FOR SHARE")
		errA <- err
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-errA:
		t.Fatalf("FOR SHARE did not wait for FOR NO KEY UPDATE: %v", err)
	default:
	}
	_, errB := b.Exec(ctx, "SELECT * FROM t WHERE id = 2 FOR UPDATE")
	if sqlState(errB) == "40P01" {
		mustExec(t, b, "ROLLBACK")
		if err := <-errA; err != nil {
			t.Fatalf("the survivor: %v", err)
		}
	} else {
		err := <-errA
		wantError(t, "deadlock", err, "40P01", "deadlock detected")
		if errB != nil {
			t.Fatalf("the survivor: %v", errB)
		}
		mustExec(t, b, "ROLLBACK")
	}
	_, _ = a.Exec(ctx, "ROLLBACK")
}

// waitForLockWait waits until some session waits for a row lock
// (pg_locks shows an ungranted lock).
func waitForLockWait(t *testing.T, c *pgx.Conn) {
	t.Helper()
	for i := 0; i < 500; i++ {
		var n int64
		if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM pg_locks WHERE NOT granted").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no session waits for a lock")
}

// TestLockingForeignKey: a foreign key check takes FOR KEY SHARE on the
// parent row, as PostgreSQL's does: a child insert goes on beside an update
// of the parent's other columns and beside other children, and waits for a
// FOR UPDATE or a DELETE of the parent.
func TestLockingForeignKey(t *testing.T) {
	_, a, b, ctx := lockingSetup(t)
	mustExec(t, a, "CREATE TABLE c (id Int64, t_id Int64 REFERENCES t (id), PRIMARY KEY (id))")
	mustExec(t, b, "SET lock_timeout = '100ms'")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE t SET n = 1 WHERE id = 1")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "INSERT INTO c VALUES (1, 1)")
	mustExec(t, a, "INSERT INTO c VALUES (2, 1)")
	mustExec(t, b, "COMMIT")
	mustExec(t, a, "COMMIT")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SELECT * FROM t WHERE id = 2 FOR UPDATE")
	_, err := b.Exec(ctx, "INSERT INTO c VALUES (3, 2)")
	wantError(t, "child insert under the parent's FOR UPDATE", err, "55P03", "canceling statement due to lock timeout")
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "INSERT INTO c VALUES (3, 2)")
}
