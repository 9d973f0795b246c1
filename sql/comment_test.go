package sql

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// TestCommentsSurviveRestart: COMMENT ON's texts are catalog state, read
// back after the engine reopens its data directory.
func TestCommentsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s := testSession(t, e)
	for _, q := range []string{
		"CREATE TABLE ct (k Int64, v Utf8, PRIMARY KEY (k))",
		"CREATE INDEX ct_v ON ct (v)",
		"COMMENT ON TABLE ct IS 'the table'",
		"COMMENT ON COLUMN ct.v IS 'a column'",
		"COMMENT ON INDEX ct_v IS 'an index'",
		"COMMENT ON INDEX ct_pkey IS 'the key'",
	} {
		query(t, s, q)
	}
	e.Close()

	e2, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2 := testSession(t, e2)
	rows := query(t, s2, `SELECT obj_description('ct'::regclass, 'pg_class'), col_description('ct'::regclass, 2),
		obj_description('ct_v'::regclass, 'pg_class'), obj_description('ct_pkey'::regclass, 'pg_class')`)
	var got []string
	for _, v := range rows[0] {
		got = append(got, showValue(v))
	}
	if want := "the table|a column|an index|the key"; strings.Join(got, "|") != want {
		t.Fatalf("after a restart: %s, want %s", strings.Join(got, "|"), want)
	}
}

// TestCommentNeedsOwner: as in PostgreSQL, only the table's owner may
// comment on it, its columns or its indexes (42501).
func TestCommentNeedsOwner(t *testing.T) {
	e := testEngine(t)
	admin := testSession(t, e)
	query(t, admin, "CREATE USER alice")
	query(t, admin, "CREATE TABLE ct (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, admin, "CREATE INDEX ct_v ON ct (v)")
	query(t, admin, "GRANT ALL ON ct TO alice")
	alice := asUser(t, e, "alice")
	for _, q := range []string{"COMMENT ON TABLE ct IS 'x'", "COMMENT ON COLUMN ct.v IS 'x'", "COMMENT ON INDEX ct_v IS 'x'"} {
		_, err := tryQuery(alice, q)
		if sqlerr.As(err).Code != sqlerr.InsufficientPrivilege {
			t.Errorf("%s as a non-owner: %v, want 42501", q, err)
		}
	}
	query(t, admin, "ALTER TABLE ct OWNER TO alice")
	query(t, alice, "COMMENT ON TABLE ct IS 'mine'")
	if rows := query(t, admin, "SELECT obj_description('ct'::regclass, 'pg_class')"); showValue(rows[0][0]) != "mine" {
		t.Fatalf("comment of the new owner: %v", rows)
	}
}
