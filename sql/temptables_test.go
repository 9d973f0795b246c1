package sql

import (
	"io"
	"log/slog"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// TestTempTableIsolation: a temporary table is visible only to its session,
// shadows a table of the same name there, and goes when the session ends.
func TestTempTableIsolation(t *testing.T) {
	e := testEngine(t)
	a := testSession(t, e)
	b := testSession(t, e)
	query(t, a, "CREATE TABLE shared (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, a, "INSERT INTO shared VALUES (1, 'permanent')")

	query(t, a, "CREATE TEMP TABLE shared (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, a, "INSERT INTO shared VALUES (1, 'temporary'), (2, 'temporary')")
	if got := query(t, a, "SELECT count(*) FROM shared"); got[0][0].Int() != 2 {
		t.Fatalf("session a sees %v rows in its temporary shared, want 2", got)
	}
	if got := query(t, b, "SELECT v FROM shared"); len(got) != 1 || got[0][0].Str() != "permanent" {
		t.Fatalf("session b sees %v, want the permanent table", got)
	}

	query(t, a, "CREATE TEMPORARY TABLE only_a (k Int64, PRIMARY KEY (k)) ON COMMIT PRESERVE ROWS")
	query(t, a, "INSERT INTO only_a VALUES (5)")
	_, err := tryQuery(b, "SELECT * FROM only_a")
	wantCode(t, err, sqlerr.UndefinedTable)
	query(t, b, "CREATE TEMP TABLE only_a (k Int64, PRIMARY KEY (k))")
	if got := query(t, b, "SELECT count(*) FROM only_a"); got[0][0].Int() != 0 {
		t.Fatalf("session b's own only_a has %v rows", got)
	}
	for _, name := range []string{"pg_temp_1_only_a", "pg_temp_2_only_a"} {
		_, err = tryQuery(b, "SELECT * FROM "+name)
		wantCode(t, err, sqlerr.UndefinedTable)
	}
	_, err = tryQuery(b, "CREATE TABLE pg_temp_9_x (k Int64, PRIMARY KEY (k))")
	wantCode(t, err, sqlerr.ReservedName)

	// DROP TABLE drops the temporary table first; then the permanent one
	// shows again.
	query(t, a, "DROP TABLE shared")
	if got := query(t, a, "SELECT v FROM shared"); len(got) != 1 || got[0][0].Str() != "permanent" {
		t.Fatalf("after DROP of the temporary table, a sees %v", got)
	}

	a.Close()
	c := testSession(t, e)
	for _, tbl := range e.catalog.Snapshot().Tables(c.db.ID) {
		if tbl.Name != "shared" && tbl.Name != "pg_temp_2_only_a" {
			t.Errorf("table %q left after its session closed", tbl.Name)
		}
	}
}

// TestTempTablesGoneAfterRestart: temporary tables of sessions a server did
// not close (a crash) are dropped when it starts again.
func TestTempTablesGoneAfterRestart(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	query(t, s, "CREATE TABLE keep (k Int64, PRIMARY KEY (k))")
	query(t, s, "CREATE TEMP TABLE tmp (k Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO tmp VALUES (1), (2)")
	// A killed server closes no session: as if so, the session forgets it
	// made temporary tables, so Engine.Close's closing of it drops none,
	// and only the startup cleanup can.
	s.madeTemp = false
	e.Close()

	e2, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2 := testSession(t, e2)
	var names []string
	for _, tbl := range e2.catalog.Snapshot().Tables(s2.db.ID) {
		names = append(names, tbl.Name)
	}
	if len(names) != 1 || names[0] != "keep" {
		t.Fatalf("tables after restart: %v, want [keep]", names)
	}
	_, err = tryQuery(s2, "SELECT * FROM tmp")
	wantCode(t, err, sqlerr.UndefinedTable)
}

// TestTempTableCatalogNames: pg_class and SHOW TABLES list a session's
// temporary tables under the names it gave them, and not other sessions'.
func TestTempTableCatalogNames(t *testing.T) {
	e := testEngine(t)
	a := testSession(t, e)
	b := testSession(t, e)
	query(t, a, "CREATE TEMP TABLE mine (k Int64, PRIMARY KEY (k))")
	names := func(s *Session, q string) map[string]bool {
		out := map[string]bool{}
		for _, r := range query(t, s, q) {
			out[r[0].Str()] = true
		}
		return out
	}
	if got := names(a, "SELECT relname FROM pg_class WHERE relkind = 'r'"); !got["mine"] || len(got) != 1 {
		t.Fatalf("session a's pg_class tables: %v", got)
	}
	if got := names(b, "SELECT relname FROM pg_class WHERE relkind = 'r'"); len(got) != 0 {
		t.Fatalf("session b's pg_class tables: %v", got)
	}
	if got := names(a, "SHOW TABLES"); !got["mine"] || len(got) != 1 {
		t.Fatalf("session a's SHOW TABLES: %v", got)
	}
	if got := names(b, "SHOW TABLES"); len(got) != 0 {
		t.Fatalf("session b's SHOW TABLES: %v", got)
	}
}
