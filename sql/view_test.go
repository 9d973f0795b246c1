package sql

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

func wantStmtCode(t *testing.T, s *Session, sql, code string) {
	t.Helper()
	_, err := tryQuery(s, sql)
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("%s: got %v, want SQLSTATE %s", sql, err, code)
	}
}

// formatRows renders rows as "a,b|c,d".
func formatRows(rows [][]types.Value) string {
	var out []string
	for _, r := range rows {
		var parts []string
		for _, v := range r {
			parts = append(parts, v.String())
		}
		out = append(out, strings.Join(parts, ","))
	}
	return strings.Join(out, "|")
}

// TestViews covers CREATE VIEW / DROP VIEW, views over views and in joins,
// and that views survive a restart.
func TestViews(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s := testSession(t, e)
	query(t, s, "CREATE TABLE vt (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO vt VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	query(t, s, "CREATE VIEW v1 AS SELECT k, v FROM vt WHERE k >= 2 ORDER BY k DESC")
	query(t, s, "CREATE VIEW v2 (n) AS SELECT k * 10 FROM v1")
	if got := formatRows(query(t, s, "SELECT n FROM v2 ORDER BY n")); got != "20|30" {
		t.Fatalf("v2: %s", got)
	}
	if got := formatRows(query(t, s, "SELECT a.k, b.n FROM v1 AS a, v2 AS b WHERE b.n = a.k * 10 ORDER BY 1")); got != "2,20|3,30" {
		t.Fatalf("join of views: %s", got)
	}
	if got := formatRows(query(t, s, "SELECT x.k FROM (SELECT k FROM vt WHERE k < 3) AS x ORDER BY 1")); got != "1|2" {
		t.Fatalf("derived table: %s", got)
	}
	if got := formatRows(query(t, s, "SELECT n FROM v2 WHERE n > $1", types.NewInt64(20))); got != "30" {
		t.Fatalf("view with a parameter: %s", got)
	}
	wantStmtCode(t, s, "CREATE VIEW v1 AS SELECT 1", sqlerr.DuplicateTable)
	wantStmtCode(t, s, "CREATE VIEW vt AS SELECT 1", sqlerr.DuplicateTable)
	wantStmtCode(t, s, "CREATE TABLE v1 (k Int64, PRIMARY KEY (k))", sqlerr.DuplicateTable)
	wantStmtCode(t, s, "CREATE VIEW bad AS SELECT nope FROM vt", sqlerr.UndefinedColumn)
	wantStmtCode(t, s, "INSERT INTO v1 VALUES (9, 'z')", sqlerr.WrongObjectType)
	wantStmtCode(t, s, "DELETE FROM v1", sqlerr.WrongObjectType)
	wantStmtCode(t, s, "DROP TABLE v1", sqlerr.WrongObjectType)
	wantStmtCode(t, s, "DROP VIEW vt", sqlerr.WrongObjectType)
	wantStmtCode(t, s, "DROP VIEW nosuch", sqlerr.UndefinedTable)
	query(t, s, "DROP VIEW IF EXISTS nosuch")
	s.Close()
	e.Close()

	// Views are in the catalog: they survive a restart.
	e, err = Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s = testSession(t, e)
	if got := formatRows(query(t, s, "SELECT * FROM v1")); got != `3,"c"|2,"b"` {
		t.Fatalf("v1 after restart: %s", got)
	}
	query(t, s, "DROP VIEW v1")
	// v2 is left dangling: using it reports the missing view.
	wantStmtCode(t, s, "SELECT * FROM v2", sqlerr.UndefinedTable)
	query(t, s, "DROP VIEW v2")
	wantStmtCode(t, s, "SELECT * FROM v2", sqlerr.UndefinedTable)
}
