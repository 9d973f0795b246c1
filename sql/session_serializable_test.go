package sql

import (
	"errors"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestSerializableCycleReads: the statements of one protocol cycle are one
// transaction, so at SERIALIZABLE a query that only reads, ahead of a
// write in the same cycle, is among the reads the commit refreshes: a
// change to what it read, committed before the cycle's Sync, fails the
// commit with 40001. At READ COMMITTED the same cycle commits.
func TestSerializableCycleReads(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE oc (d Int32, on_call Bool, PRIMARY KEY (d))")
	for _, c := range []struct {
		level string
		fails bool
	}{{"serializable", true}, {"read committed", false}} {
		t.Run(c.level, func(t *testing.T) {
			query(t, a, "DELETE FROM oc")
			query(t, a, "INSERT INTO oc VALUES (1, true), (2, true)")
			query(t, a, "SET default_transaction_isolation = '"+c.level+"'")
			run := func(sql string) { inCycle(t, a, sql) }
			a.BeginImplicit()
			run("SELECT count(*) FROM oc WHERE on_call")
			query(t, b, "UPDATE oc SET on_call = false WHERE d = 2")
			run("UPDATE oc SET on_call = false WHERE d = 1")
			err := a.Sync()
			var se *sqlerr.Error
			if c.fails != (errors.As(err, &se) && se.Code == sqlerr.SerializationFailure) {
				t.Fatalf("Sync: %v, want 40001: %v", err, c.fails)
			}
		})
	}
}

// TestReadCommittedIndexWaitsForCycle: a schema change cannot land between
// a READ COMMITTED statement of an extended-protocol cycle and the cycle's
// commit at Sync (which would leave the statement's writes missing from a
// new index): CREATE INDEX waits for the open writer of its table (SHARE
// against ROW EXCLUSIVE), and the writer commits at Sync as it ran. Every
// index holds exactly the table's rows after.
func TestReadCommittedIndexWaitsForCycle(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE rr (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, a, "INSERT INTO rr VALUES (1, 1), (2, 0)")

	a.BeginImplicit()
	if tag := inCycle(t, a, "UPDATE rr SET v = v + 10 WHERE v > 0"); tag != "UPDATE 1" {
		t.Fatalf("tag %q", tag)
	}

	created := make(chan error, 1)
	go func() {
		_, err := tryQuery(b, "CREATE INDEX rr_v ON rr (v)")
		created <- err
	}()
	select {
	case err := <-created:
		t.Fatalf("CREATE INDEX finished (%v) while the cycle's UPDATE was not committed", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := a.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if err := <-created; err != nil {
		t.Fatalf("CREATE INDEX: %v", err)
	}
	if got := query(t, a, "SELECT v FROM rr WHERE k = 1"); got[0][0].Int() != 11 {
		t.Fatalf("v = %v", got)
	}
	if got := query(t, a, "SELECT k FROM rr WHERE v = 11"); len(got) != 1 || got[0][0].Int() != 1 {
		t.Fatalf("index read: %v", got)
	}
	checkIndexes(t, e)
}

// TestReadCommittedRerunAtSync: a READ COMMITTED statement whose commit at
// Sync meets a schema change of its table made after it ran is run again
// at Sync and committed, when it gives the tag the client already has;
// with another tag the commit fails with 40001 after all. Either way every
// index holds exactly the table's rows. (Schema changes wait for the
// statement's ROW EXCLUSIVE now, but a rewrite waits only for the writers
// there are when it starts: one that writes while it converts the rows
// meets its swap at commit.)
func TestReadCommittedRerunAtSync(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE rr (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, a, "INSERT INTO rr VALUES (1, 1), (2, 0)")
	run := func(sql string) string { return inCycle(t, a, sql) }
	// rewriteDuring runs stmt while an ALTER COLUMN TYPE of rr is
	// between its phases, and lets it swap.
	rewriteDuring := func(alter string, stmt func()) {
		t.Helper()
		hold, resume := make(chan struct{}), make(chan struct{})
		afterRewritePhase1 = func() { close(hold); <-resume }
		defer func() { afterRewritePhase1 = nil }()
		done := make(chan error, 1)
		go func() {
			_, err := tryQuery(b, alter)
			done <- err
		}()
		<-hold
		stmt()
		close(resume)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}

	a.BeginImplicit()
	rewriteDuring("ALTER TABLE rr ALTER COLUMN v TYPE Int32", func() {
		if tag := run("UPDATE rr SET v = v + 10 WHERE v > 0"); tag != "UPDATE 1" {
			t.Errorf("tag %q", tag)
		}
	})
	if err := a.Sync(); err != nil {
		t.Fatalf("Sync: %v, want the statement run again and committed", err)
	}
	if got := query(t, a, "SELECT v FROM rr WHERE k = 1"); got[0][0].Int() != 11 {
		t.Fatalf("v = %v", got)
	}
	checkIndexes(t, e)

	a.BeginImplicit()
	rewriteDuring("ALTER TABLE rr ALTER COLUMN v TYPE Int64", func() {
		if tag := run("UPDATE rr SET v = v + 10 WHERE v > 0"); tag != "UPDATE 1" {
			t.Errorf("tag %q", tag)
		}
	})
	query(t, b, "INSERT INTO rr VALUES (3, 5)") // the statement would now match 2 rows
	err := a.Sync()
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.SerializationFailure {
		t.Fatalf("Sync: %v, want 40001 (the run again would say UPDATE 2)", err)
	}
	if got := query(t, a, "SELECT v FROM rr WHERE k = 1"); got[0][0].Int() != 11 {
		t.Fatalf("v = %v after the failed commit", got)
	}
	checkIndexes(t, e)
}
