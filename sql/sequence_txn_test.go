package sql

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// TestSequenceChangeInBlock: a block that changed a sequence (ALTER
// SEQUENCE, TRUNCATE ... RESTART IDENTITY) holds it to its end, as
// PostgreSQL's lock on the sequence does: another session's nextval and
// setval wait (lock_timeout 55P03) and then continue from where the block
// left the sequence, or from where it stood before when the block rolled
// back; reading the sequence does not wait; a cycle through the wait is a
// deadlock (40P01).
func TestSequenceChangeInBlock(t *testing.T) {
	e := testEngine(t)
	a, b, c := testSession(t, e), testSession(t, e), testSession(t, e)
	query(t, a, "CREATE SEQUENCE q")
	query(t, a, "CREATE TABLE owned (id serial PRIMARY KEY, v int)")
	query(t, a, "INSERT INTO owned (v) VALUES (1), (2)")
	if got := query(t, a, "SELECT nextval('q')"); got[0][0].Int() != 1 {
		t.Fatalf("nextval: %v", got)
	}
	// waits runs sql on s in the background and checks that it waits.
	waits := func(s *Session, sql string) chan [][]string {
		t.Helper()
		done := make(chan [][]string, 1)
		go func() {
			rows, err := tryQuery(s, sql)
			var out [][]string
			for _, r := range rows {
				var row []string
				for _, v := range r {
					row = append(row, v.Text())
				}
				out = append(out, row)
			}
			if err != nil {
				out = [][]string{{"error", err.Error()}}
			}
			done <- out
		}()
		select {
		case got := <-done:
			t.Fatalf("%s did not wait for the block: %v", sql, got)
		case <-time.After(50 * time.Millisecond):
		}
		return done
	}
	for _, tc := range []struct {
		change, end string
		// the value the waiting nextval gets after the block's end
		want string
	}{
		{"ALTER SEQUENCE q RESTART WITH 100", "COMMIT", "101"},
		{"ALTER SEQUENCE q RESTART WITH 500", "ROLLBACK", "102"},
		{"ALTER SEQUENCE q INCREMENT BY 10", "COMMIT", "122"},
	} {
		query(t, a, "BEGIN")
		query(t, a, tc.change)
		query(t, b, "SET lock_timeout = '30ms'")
		_, err := tryQuery(b, "SELECT nextval('q')")
		wantCode(t, err, sqlerr.LockNotAvailable)
		_, err = tryQuery(b, "SELECT setval('q', 7)")
		wantCode(t, err, sqlerr.LockNotAvailable)
		query(t, b, "SET lock_timeout = 0")
		waiting := waits(b, "SELECT nextval('q')")
		// A reader does not wait, and sees the committed position.
		if got := query(t, c, "SELECT is_called FROM q"); got[0][0].Text() != "t" {
			t.Fatalf("reading the sequence: %v", got)
		}
		// The block takes values of its own position.
		query(t, a, "SELECT nextval('q')")
		query(t, a, tc.end)
		if got := <-waiting; len(got) != 1 || got[0][0] != tc.want {
			t.Fatalf("after %s; %s: the waiting nextval gave %v, want %s", tc.change, tc.end, got, tc.want)
		}
	}

	// TRUNCATE ... RESTART IDENTITY holds the table's sequence the same
	// way: an INSERT taking a serial value waits (for the table lock, or
	// for the sequence when it only calls nextval).
	query(t, a, "BEGIN")
	query(t, a, "TRUNCATE owned RESTART IDENTITY")
	waiting := waits(b, "SELECT nextval('owned_id_seq')")
	query(t, a, "INSERT INTO owned (v) VALUES (10)")
	query(t, a, "COMMIT")
	if got := <-waiting; len(got) != 1 || got[0][0] != "2" {
		t.Fatalf("nextval after the committed TRUNCATE ... RESTART IDENTITY: %v, want 2", got)
	}

	// A deadlock: the block waits for a row b holds, b for the sequence.
	query(t, a, "CREATE TABLE k (id int PRIMARY KEY)")
	query(t, a, "BEGIN")
	query(t, a, "ALTER SEQUENCE q RESTART")
	query(t, b, "BEGIN")
	query(t, b, "INSERT INTO k VALUES (1)")
	blocked := waits(a, "INSERT INTO k VALUES (1)")
	_, err := tryQuery(b, "SELECT nextval('q')")
	wantCode(t, err, sqlerr.DeadlockDetected)
	query(t, b, "ROLLBACK")
	if got := <-blocked; len(got) != 0 {
		t.Fatalf("the block's INSERT after the deadlock: %v", got)
	}
	query(t, a, "COMMIT")
	if got := query(t, b, "SELECT nextval('q')"); got[0][0].Int() != 1 {
		t.Fatalf("nextval after the committed RESTART: %v", got)
	}
}

// TestSequenceChangeInBlockDurable: a committed block's change of a
// sequence is in the store with the catalog (the next start continues from
// it); one whose block never ended (a crash) left nothing.
func TestSequenceChangeInBlockDurable(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	open := func() (*Engine, *Session) {
		e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.NewSession("pivotdb", "pivotdb")
		if err != nil {
			t.Fatal(err)
		}
		return e, s
	}
	e, s := open()
	query(t, s, "CREATE SEQUENCE d")
	query(t, s, "BEGIN")
	query(t, s, "ALTER SEQUENCE d RESTART WITH 1000 INCREMENT BY 5")
	query(t, s, "SELECT nextval('d')")
	query(t, s, "COMMIT")
	query(t, s, "BEGIN")
	query(t, s, "ALTER SEQUENCE d RESTART WITH 1")
	query(t, s, "SELECT nextval('d')")
	// The crash: the transaction never ends.
	s.txn, s.tddl = nil, nil
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, s = open()
	defer e.Close()
	defer s.Close()
	if got := query(t, s, "SELECT nextval('d')"); got[0][0].Int() != 1005 {
		t.Fatalf("nextval after the restart: %v, want 1005", got)
	}
}
