package sql

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestLockTable checks LOCK TABLE against the statements of another
// session: PostgreSQL's conflict table decides who waits (an EXCLUSIVE
// lock holds writers and DDL off but not readers; ACCESS SHARE, pg_dump's
// lock, holds DROP TABLE off), NOWAIT and lock_timeout give 55P03, the
// locks show in pg_locks and go at COMMIT, ROLLBACK and ROLLBACK TO
// SAVEPOINT.
func TestLockTable(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE t (id Int64, v Utf8, PRIMARY KEY (id))")
	query(t, a, "INSERT INTO t (id, v) VALUES (1, 'a')")
	query(t, b, "SET lock_timeout = '100ms'")

	wantCode := func(err error, code, sql string) {
		t.Helper()
		if e := sqlerr.As(err); err == nil || e.Code != code {
			t.Fatalf("%s: got %v, want %s", sql, err, code)
		}
	}
	mustFail := func(s *Session, sql, code string) {
		t.Helper()
		_, err := tryQuery(s, sql)
		wantCode(err, code, sql)
	}

	mustFail(a, "LOCK TABLE t", sqlerr.NoActiveSQLTransaction)
	mustFail(a, "LOCK TABLE nosuch IN SHARE MODE", sqlerr.NoActiveSQLTransaction)

	query(t, a, "BEGIN")
	mustFail(a, "LOCK TABLE nosuch", sqlerr.UndefinedTable)
	query(t, a, "ROLLBACK")

	// EXCLUSIVE: reads go on; writes, DDL and SHARE wait.
	query(t, a, "BEGIN")
	query(t, a, "LOCK TABLE t IN EXCLUSIVE MODE")
	if got := query(t, b, "SELECT v FROM t"); len(got) != 1 {
		t.Fatalf("read under EXCLUSIVE: %v", got)
	}
	mustFail(b, "INSERT INTO t (id, v) VALUES (2, 'b')", sqlerr.LockNotAvailable)
	mustFail(b, "ALTER TABLE t ADD COLUMN w Int64", sqlerr.LockNotAvailable)
	query(t, b, "BEGIN")
	mustFail(b, "LOCK TABLE t IN SHARE MODE NOWAIT", sqlerr.LockNotAvailable)
	query(t, b, "ROLLBACK")
	locks := query(t, b, "SELECT mode, granted FROM pg_locks WHERE locktype = 'relation' AND relation = 't'::regclass")
	if len(locks) != 1 || locks[0][0].Str() != "ExclusiveLock" || !locks[0][1].Bool() {
		t.Fatalf("pg_locks: %v", locks)
	}
	// A writer waiting for the lock goes on at COMMIT.
	done := make(chan error, 1)
	go func() {
		c := testSession(t, e)
		_, err := tryQuery(c, "INSERT INTO t (id, v) VALUES (3, 'c')")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	waiting := query(t, a, "SELECT mode FROM pg_locks WHERE locktype = 'relation' AND NOT granted")
	if len(waiting) != 1 || waiting[0][0].Str() != "RowExclusiveLock" {
		t.Fatalf("waiter in pg_locks: %v", waiting)
	}
	query(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("insert after COMMIT: %v", err)
	}
	if got := query(t, b, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation'"); got[0][0].Int() != 0 {
		t.Fatalf("locks left after COMMIT: %v", got)
	}

	// ACCESS SHARE (pg_dump's): DROP TABLE waits, reads and writes do not.
	query(t, a, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
	query(t, a, "LOCK TABLE public.t IN ACCESS SHARE MODE")
	query(t, b, "INSERT INTO t (id, v) VALUES (4, 'd')")
	mustFail(b, "DROP TABLE t", sqlerr.LockNotAvailable)
	mustFail(a, "LOCK TABLE t IN SHARE MODE", sqlerr.ReadOnlySQLTransaction)
	query(t, a, "ROLLBACK")

	// ROLLBACK TO SAVEPOINT gives back the locks taken since.
	query(t, a, "BEGIN")
	query(t, a, "LOCK t IN ACCESS SHARE MODE")
	query(t, a, "SAVEPOINT s")
	query(t, a, "LOCK TABLE t")
	mustFail(b, "SELECT * FROM t", sqlerr.LockNotAvailable)
	query(t, a, "ROLLBACK TO SAVEPOINT s")
	query(t, b, "SELECT * FROM t")
	// The lock taken before the savepoint stays.
	mustFail(b, "TRUNCATE t", sqlerr.LockNotAvailable)
	query(t, a, "COMMIT")
	query(t, b, "TRUNCATE t")

	// A schema change waits for a transaction that wrote the table (it
	// would fail at commit otherwise), not for one that only read it, and
	// its own lock ends with its statement (the block's schema-change
	// lock orders it with other schema changes until the block ends).
	query(t, a, "BEGIN")
	query(t, a, "INSERT INTO t (id, v) VALUES (5, 'e')")
	mustFail(b, "ALTER TABLE t ADD COLUMN w Int64", sqlerr.LockNotAvailable)
	query(t, a, "COMMIT")
	query(t, a, "BEGIN")
	query(t, a, "SELECT * FROM t")
	query(t, b, "BEGIN")
	query(t, b, "ALTER TABLE t ADD COLUMN w Int64")
	if got := query(t, a, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation' AND mode = 'AccessExclusiveLock'"); got[0][0].Int() != 0 {
		t.Fatalf("ALTER TABLE's lock outlived its statement: %v", got)
	}
	query(t, b, "COMMIT")
	query(t, a, "ROLLBACK")

	// A deadlock between two LOCK TABLEs: one of them gets 40P01.
	query(t, a, "CREATE TABLE u (id Int64, PRIMARY KEY (id))")
	query(t, a, "SET lock_timeout = '5s'")
	query(t, b, "SET lock_timeout = '5s'")
	query(t, a, "BEGIN")
	query(t, b, "BEGIN")
	query(t, a, "LOCK TABLE t")
	query(t, b, "LOCK TABLE u")
	errA := make(chan error, 1)
	go func() {
		_, err := tryQuery(a, "LOCK TABLE u")
		errA <- err
	}()
	time.Sleep(50 * time.Millisecond)
	_, errB := tryQuery(b, "LOCK TABLE t")
	if errB != nil {
		wantCode(errB, sqlerr.DeadlockDetected, "LOCK TABLE t")
		query(t, b, "ROLLBACK")
		if err := <-errA; err != nil {
			t.Fatalf("the other LOCK: %v", err)
		}
		query(t, a, "ROLLBACK")
	} else {
		wantCode(<-errA, sqlerr.DeadlockDetected, "LOCK TABLE u")
		query(t, a, "ROLLBACK")
		query(t, b, "ROLLBACK")
	}
	if got := query(t, b, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation'"); got[0][0].Int() != 0 {
		t.Fatalf("locks left: %v", got)
	}
}

// TestMaxIndexKeys checks PostgreSQL's limit of 32 columns in an index, a
// primary key and a foreign key (54011), which max_index_keys reports.
func TestMaxIndexKeys(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	var cols, names []string
	for i := 0; i < 33; i++ {
		cols = append(cols, fmt.Sprintf("c%d Int64", i))
		names = append(names, fmt.Sprintf("c%d", i))
	}
	query(t, s, "CREATE TABLE wide ("+strings.Join(cols, ", ")+", PRIMARY KEY (c0))")
	for _, q := range []string{
		"CREATE INDEX wide_all ON wide (" + strings.Join(names, ", ") + ")",
		"CREATE TABLE wide2 (" + strings.Join(cols, ", ") + ", PRIMARY KEY (" + strings.Join(names, ", ") + "))",
	} {
		if _, err := tryQuery(s, q); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.TooManyColumns {
			t.Fatalf("%.40s...: %v, want 54011", q, err)
		}
	}
	query(t, s, "CREATE INDEX wide_32 ON wide ("+strings.Join(names[:32], ", ")+")")
	if got := formatRows(query(t, s, "SHOW max_index_keys")); got != `"32"` {
		t.Fatalf("max_index_keys: %s", got)
	}
}
