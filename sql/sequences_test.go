package sql

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// TestSequenceCodes checks the SQLSTATEs of sequence and identity errors.
func TestSequenceCodes(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE SEQUENCE s MAXVALUE 2")
	query(t, s, "CREATE TABLE ga (id Int64 GENERATED ALWAYS AS IDENTITY, PRIMARY KEY (id))")
	query(t, s, "CREATE TABLE plain (k Int64, PRIMARY KEY (k))")
	for _, c := range []struct{ sql, code string }{
		{"SELECT currval('s')", sqlerr.ObjectNotInPrerequisiteState},
		{"SELECT lastval()", sqlerr.ObjectNotInPrerequisiteState},
		{"SELECT nextval('nope')", sqlerr.UndefinedTable},
		{"SELECT nextval('plain')", sqlerr.WrongObjectType},
		{"SELECT setval('s', 3)", sqlerr.NumericValueOutOfRange},
		{"CREATE SEQUENCE s", sqlerr.DuplicateTable},
		{"CREATE SEQUENCE x INCREMENT 0", sqlerr.InvalidParameterValue},
		{"CREATE SEQUENCE x START 0", sqlerr.InvalidParameterValue},
		{"CREATE SEQUENCE x OWNED BY plain.nope", sqlerr.UndefinedColumn},
		{"DROP SEQUENCE plain", sqlerr.WrongObjectType},
		{"DROP SEQUENCE ga_id_seq", sqlerr.DependentObjectsStillExist},
		{"INSERT INTO ga (id) VALUES (1)", sqlerr.GeneratedAlways},
		{"UPDATE ga SET id = 1", sqlerr.GeneratedAlways},
		{"UPSERT INTO ga (id) VALUES (1)", sqlerr.GeneratedAlways},
	} {
		wantStmtCode(t, s, c.sql, c.code)
	}
	query(t, s, "SELECT nextval('s'), nextval('s')")
	wantStmtCode(t, s, "SELECT nextval('s')", sqlerr.SequenceGeneratorLimitExceeded)
}

// TestSequenceRestart checks that no value is handed out twice across a
// restart, whatever the CACHE, and that the options, currval's session
// scope and the identity columns survive it.
func TestSequenceRestart(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	open := func() *Engine {
		e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	seen := map[string]map[int64]bool{"c1": {}, "c5": {}, "big": {}}
	last := map[string]int64{}
	take := func(s *Session, name string, n int) {
		for i := 0; i < n; i++ {
			v := query(t, s, fmt.Sprintf("SELECT nextval('%s')", name))[0][0].Int()
			if seen[name][v] {
				t.Fatalf("%s: value %d handed out twice", name, v)
			}
			if v <= last[name] {
				t.Fatalf("%s: value %d after %d", name, v, last[name])
			}
			seen[name][v], last[name] = true, v
		}
	}
	e := open()
	s := testSession(t, e)
	query(t, s, "CREATE SEQUENCE c1 CACHE 1")
	query(t, s, "CREATE SEQUENCE c5 CACHE 5 INCREMENT 3")
	query(t, s, "CREATE SEQUENCE big")
	query(t, s, "CREATE TABLE it (id bigserial, v Int64, PRIMARY KEY (id))")
	for round := 0; round < 4; round++ {
		for _, name := range []string{"c1", "c5", "big"} {
			take(s, name, 7)
		}
		query(t, s, "INSERT INTO it (v) VALUES (1), (2)")
		s.Close()
		e.Close()
		e = open()
		s = testSession(t, e)
		if _, err := tryQuery(s, "SELECT currval('c1')"); err == nil {
			t.Fatal("currval defined in a new session")
		}
	}
	// c1 reserves one value at a time: no gap at all across restarts.
	if last["c1"] != 28 {
		t.Fatalf("c1 ended at %d, want 28", last["c1"])
	}
	rows := query(t, s, "SELECT count(*), count(DISTINCT id) FROM it")
	if rows[0][0].Int() != 8 || rows[0][1].Int() != 8 {
		t.Fatalf("identity values after restarts: %v", rows)
	}
	s.Close()
	e.Close()
}

// TestSequenceConcurrent runs nextval from many sessions at once (run it
// with -race): every value is handed out exactly once.
func TestSequenceConcurrent(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE SEQUENCE cc CACHE 7")
	const workers, each = 8, 200
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		ws := testSession(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				rows, err := tryQuery(ws, "SELECT nextval('cc')")
				if err != nil {
					errs <- err
					return
				}
				v := rows[0][0].Int()
				mu.Lock()
				dup := seen[v]
				seen[v] = true
				mu.Unlock()
				if dup {
					errs <- fmt.Errorf("value %d handed out twice", v)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for v := int64(1); v <= workers*each; v++ {
		if !seen[v] {
			t.Fatalf("value %d missing: without a restart there are no gaps", v)
		}
	}
}

// TestSequencePrivileges checks who may create, alter, drop and use
// sequences, and the privileges of TRUNCATE, ON CONFLICT DO UPDATE and
// RETURNING.
func TestSequencePrivileges(t *testing.T) {
	e := testEngine(t)
	admin := testSession(t, e)
	query(t, admin, "CREATE USER alice")
	query(t, admin, "CREATE TABLE items (id serial PRIMARY KEY, v Utf8)")
	query(t, admin, "CREATE SEQUENCE free")
	alice := asUser(t, e, "alice")
	for _, q := range []string{
		"CREATE SEQUENCE mine",
		"SELECT nextval('free')",
		"SELECT nextval('items_id_seq')",
		"ALTER SEQUENCE free RESTART",
		"DROP SEQUENCE free",
		"INSERT INTO items (v) VALUES ('x')",
		"TRUNCATE items",
	} {
		wantStmtCode(t, alice, q, sqlerr.InsufficientPrivilege)
	}
	// INSERT on the table lets alice take values of its serial column,
	// but not read the rows back through RETURNING, nor update them
	// through ON CONFLICT.
	query(t, admin, "GRANT INSERT ON items TO alice")
	query(t, alice, "INSERT INTO items (v) VALUES ('x')")
	wantStmtCode(t, alice, "INSERT INTO items (v) VALUES ('y') RETURNING id", sqlerr.InsufficientPrivilege)
	wantStmtCode(t, alice, "INSERT INTO items VALUES (1, 'z') ON CONFLICT (id) DO UPDATE SET v = excluded.v", sqlerr.InsufficientPrivilege)
	query(t, admin, "GRANT SELECT, UPDATE, TRUNCATE ON items TO alice")
	if got := formatRows(query(t, alice, "INSERT INTO items VALUES (1, 'z') ON CONFLICT (id) DO UPDATE SET v = excluded.v RETURNING id, v")); got != `1,"z"` {
		t.Fatalf("ON CONFLICT as alice: %s", got)
	}
	query(t, alice, "TRUNCATE items")
	query(t, admin, "GRANT CREATE ON DATABASE pivotdb TO alice")
	query(t, alice, "CREATE SEQUENCE mine")
	query(t, alice, "SELECT nextval('mine')")
	query(t, alice, "ALTER SEQUENCE mine INCREMENT 2")
	query(t, alice, "DROP SEQUENCE mine")
}
