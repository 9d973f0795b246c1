package sql

import (
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestLockView checks LOCK TABLE on a view as PostgreSQL 15 runs it: the
// view and every relation its query reads, through subqueries and the
// views it reads, are locked in the mode given, so another session's
// write to a base table waits; the user needs the mode's privileges on
// the view, the view's owner on its tables.
func TestLockView(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	for _, q := range []string{
		"CREATE TABLE lb1 (id Int64, v Int64, PRIMARY KEY (id))",
		"CREATE TABLE lb2 (id Int64, w Int64, PRIMARY KEY (id))",
		"CREATE TABLE lb3 (id Int64, PRIMARY KEY (id))",
		"CREATE TABLE lb4 (id Int64, PRIMARY KEY (id))",
		"CREATE VIEW lv1 AS SELECT * FROM lb1 WHERE v > (SELECT max(id) FROM lb3)",
		"CREATE VIEW lv2 AS SELECT lv1.id, lb2.w FROM lv1 JOIN lb2 ON lv1.id = lb2.id",
		"CREATE VIEW lv3 AS SELECT 1 AS x",
	} {
		query(t, a, q)
	}
	query(t, b, "SET lock_timeout = '100ms'")
	held := func() string {
		t.Helper()
		rows := query(t, a, "SELECT c.relname, l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "+
			"WHERE l.locktype = 'relation' ORDER BY 1")
		var out []string
		for _, r := range rows {
			out = append(out, r[0].Str()+":"+r[1].Str())
		}
		return strings.Join(out, " ")
	}

	query(t, a, "BEGIN")
	query(t, a, "LOCK TABLE lv2 IN SHARE MODE")
	if got, want := held(), "lb1:ShareLock lb2:ShareLock lb3:ShareLock lv1:ShareLock lv2:ShareLock"; got != want {
		t.Fatalf("locks of LOCK lv2: %s, want %s", got, want)
	}
	// SHARE holds writers of every base table off, readers not.
	for _, q := range []string{"INSERT INTO lb1 VALUES (1, 1)", "INSERT INTO lb2 VALUES (1, 1)", "INSERT INTO lb3 VALUES (1)"} {
		if _, err := tryQuery(b, q); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.LockNotAvailable {
			t.Fatalf("%s under LOCK lv2 IN SHARE MODE: %v, want 55P03", q, err)
		}
	}
	query(t, b, "INSERT INTO lb4 VALUES (1)")
	query(t, b, "SELECT * FROM lv2")
	done := make(chan error, 1)
	go func() {
		_, err := tryQuery(testSession(t, e), "INSERT INTO lb3 VALUES (7)")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("a write to lb3 did not wait for LOCK lv2: %v", err)
	default:
	}
	query(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("write after COMMIT: %v", err)
	}

	// ONLY changes nothing for a view; a view over no table locks itself.
	query(t, a, "BEGIN")
	query(t, a, "LOCK ONLY lv1, lv3")
	if got, want := held(), "lb1:AccessExclusiveLock lb3:AccessExclusiveLock lv1:AccessExclusiveLock lv3:AccessExclusiveLock"; got != want {
		t.Fatalf("locks of LOCK ONLY lv1, lv3: %s, want %s", got, want)
	}
	if _, err := tryQuery(b, "SELECT * FROM lb1"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.LockNotAvailable {
		t.Fatalf("read under ACCESS EXCLUSIVE of lv1: %v", err)
	}
	query(t, a, "ROLLBACK")
	if got := held(); got != "" {
		t.Fatalf("locks after ROLLBACK: %s", got)
	}
	if _, err := tryQuery(a, "LOCK lv1"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.NoActiveSQLTransaction {
		t.Fatalf("LOCK lv1 outside a block: %v", err)
	}

	// Privileges: the mode's on the view for the user; the owner's on
	// the tables (the owner here is a superuser).
	query(t, a, "CREATE ROLE lu LOGIN")
	query(t, a, "GRANT SELECT ON lv1 TO lu")
	lu := asUser(t, e, "lu")
	query(t, lu, "BEGIN")
	query(t, lu, "LOCK lv1 IN ACCESS SHARE MODE")
	query(t, lu, "ROLLBACK")
	query(t, lu, "BEGIN")
	denied(t, lu, "LOCK lv1", "permission denied for view lv1")
	query(t, lu, "ROLLBACK")
	query(t, lu, "BEGIN")
	denied(t, lu, "LOCK lb1 IN ACCESS SHARE MODE", "permission denied for table lb1")
	query(t, lu, "ROLLBACK")
	// A view owned by lu over a table lu may only read: lu may lock the
	// view in ACCESS SHARE mode, not in a mode that needs more on lb1.
	query(t, a, "GRANT SELECT ON lb4 TO lu")
	query(t, a, "CREATE VIEW luv AS SELECT * FROM lb4")
	query(t, a, "ALTER VIEW luv OWNER TO lu")
	query(t, lu, "BEGIN")
	query(t, lu, "LOCK luv IN ACCESS SHARE MODE")
	query(t, lu, "ROLLBACK")
	query(t, lu, "BEGIN")
	denied(t, lu, "LOCK luv IN EXCLUSIVE MODE", "permission denied for table lb4")
	query(t, lu, "ROLLBACK")
}
