package tests

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// dial connects as user to db with extra startup parameters.
func (s *testServer) dial(t *testing.T, user, db string, params map[string]string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(strings.Replace(s.connString(db), "pivotdb@", user+"@", 1))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range params {
		cfg.RuntimeParams[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect %s@%s %v: %v\n%s", user, db, params, err, s.log)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func showDialect(t *testing.T, c *pgx.Conn) string {
	t.Helper()
	var d string
	if err := c.QueryRow(context.Background(), "SHOW sql_dialect").Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDialectStartupAndStoredSettings checks where a session's sql_dialect
// comes from: the default, ALTER DATABASE / ALTER ROLE [IN DATABASE] SET
// with PostgreSQL's precedence (role in database > role > database), the
// startup packet (options=-c, a plain startup parameter) over all of
// them, RESET back to the connection-start value, persistence across a
// restart, and prepared statements that re-parse when the dialect changes.
func TestDialectStartupAndStoredSettings(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	admin := s.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{"CREATE DATABASE d1", "CREATE DATABASE d2", "CREATE USER alice", "CREATE USER bob"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := showDialect(t, s.dial(t, "alice", "d1", nil)); got != "yql" {
		t.Fatalf("default dialect %q", got)
	}
	// -c in options, also --name=value, and as a plain startup parameter.
	for _, p := range []map[string]string{
		{"options": "-c sql_dialect=postgresql"},
		{"options": "--sql_dialect=postgresql"},
		{"options": "-csql-dialect=postgresql"},
		{"sql_dialect": "postgresql"},
	} {
		if got := showDialect(t, s.dial(t, "alice", "d1", p)); got != "postgresql" {
			t.Errorf("startup %v: dialect %q", p, got)
		}
	}

	if _, err := admin.Exec(ctx, "ALTER DATABASE d1 SET sql_dialect = 'postgresql'"); err != nil {
		t.Fatal(err)
	}
	var pgErr *pgconn.PgError
	if _, err := admin.Exec(ctx, "ALTER DATABASE d1 SET sql_dialect = 'sqlite'"); !errors.As(err, &pgErr) || pgErr.Code != "22023" {
		t.Fatalf("bad value: %v", err)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE nosuch SET sql_dialect = 'postgresql'"); !errors.As(err, &pgErr) || pgErr.Code != "3D000" {
		t.Fatalf("unknown database: %v", err)
	}
	if got := showDialect(t, admin); got != "yql" {
		t.Fatalf("ALTER DATABASE changed the current session: %q", got)
	}
	if got := showDialect(t, s.dial(t, "alice", "d1", nil)); got != "postgresql" {
		t.Fatalf("database setting: %q", got)
	}
	if got := showDialect(t, s.dial(t, "alice", "d2", nil)); got != "yql" {
		t.Fatalf("other database: %q", got)
	}
	// role beats database, role in database beats role.
	if _, err := admin.Exec(ctx, "ALTER ROLE alice SET sql_dialect TO yql"); err != nil {
		t.Fatal(err)
	}
	if got := showDialect(t, s.dial(t, "alice", "d1", nil)); got != "yql" {
		t.Fatalf("role over database: %q", got)
	}
	if _, err := admin.Exec(ctx, "ALTER USER alice IN DATABASE d1 SET sql_dialect = 'postgresql'"); err != nil {
		t.Fatal(err)
	}
	if got := showDialect(t, s.dial(t, "alice", "d1", nil)); got != "postgresql" {
		t.Fatalf("role in database over role: %q", got)
	}
	if got := showDialect(t, s.dial(t, "bob", "d1", nil)); got != "postgresql" {
		t.Fatalf("bob gets the database's: %q", got)
	}
	// The startup packet beats everything stored; RESET returns to it.
	c := s.dial(t, "alice", "d1", map[string]string{"options": "-c sql_dialect=yql"})
	if got := showDialect(t, c); got != "yql" {
		t.Fatalf("startup over stored: %q", got)
	}
	if _, err := c.Exec(ctx, "SET sql_dialect = postgresql"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "RESET sql_dialect"); err != nil {
		t.Fatal(err)
	}
	if got := showDialect(t, c); got != "yql" {
		t.Fatalf("RESET after startup option: %q", got)
	}

	// Stored settings survive a restart; RESET removes them.
	s.restart()
	if got := showDialect(t, s.dial(t, "bob", "d1", nil)); got != "postgresql" {
		t.Fatalf("after restart: %q", got)
	}
	admin = s.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{"ALTER DATABASE d1 RESET sql_dialect", "ALTER ROLE alice IN DATABASE d1 RESET ALL"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := showDialect(t, s.dial(t, "bob", "d1", nil)); got != "yql" {
		t.Fatalf("after RESET: %q", got)
	}
	if got := showDialect(t, s.dial(t, "alice", "d1", nil)); got != "yql" {
		t.Fatalf("alice keeps her role setting: %q", got)
	}

	// A statement prepared in one dialect re-parses in the other.
	c = s.dial(t, "pivotdb", "d2", nil)
	if _, err := c.Exec(ctx, `CREATE TABLE t (k Int32, v Utf8, PRIMARY KEY (k))`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO t (k, v) VALUES (1, 'one')`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(ctx, "q", `SELECT "v" FROM t`); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := c.QueryRow(ctx, "q").Scan(&v); err != nil || v != "v" {
		t.Fatalf("yql: %q %v", v, err)
	}
	if _, err := c.Exec(ctx, "SET sql_dialect = postgresql"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "q").Scan(&v); err != nil || v != "one" {
		t.Fatalf("postgresql: %q %v", v, err)
	}
	if _, err := c.Exec(ctx, "SELECT 1/0"); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
}

// TestTimestampTZOverTheWire checks timestamptz as drivers see it: OID
// 1184, the binary format both ways (pgx scans and sends time.Time), and
// text printed in the zone the startup packet asked for.
func TestTimestampTZOverTheWire(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	c := s.dial(t, "pivotdb", "pivotdb", map[string]string{"timezone": "Europe/Berlin"})
	want := time.Date(2024, 7, 1, 12, 0, 0, 500000000, time.UTC)

	rows, err := c.Query(ctx, "SELECT '2024-07-01 12:00:00.5+00'::timestamptz, now()")
	if err != nil {
		t.Fatal(err)
	}
	if fd := rows.FieldDescriptions(); fd[0].DataTypeOID != 1184 || fd[1].DataTypeOID != 1184 {
		t.Fatalf("OIDs %d, %d, want 1184", fd[0].DataTypeOID, fd[1].DataTypeOID)
	}
	var got, now time.Time
	for rows.Next() {
		if err := rows.Scan(&got, &now); err != nil {
			t.Fatal(err)
		}
	}
	if rows.Err() != nil || !got.Equal(want) {
		t.Fatalf("binary timestamptz %v (%v), want %v", got, rows.Err(), want)
	}
	if d := time.Since(now); d < -time.Minute || d > time.Minute {
		t.Fatalf("now() = %v", now)
	}

	var text string
	if err := c.QueryRow(ctx, "SELECT $1::timestamptz::text", want).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "2024-07-01 14:00:00.5+02" {
		t.Fatalf("binary parameter as text in Europe/Berlin: %q", text)
	}
	if err := c.QueryRow(ctx, "SELECT '2024-01-01 12:00:00+00'::timestamptz", pgx.QueryExecModeSimpleProtocol).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "2024-01-01 13:00:00+01" {
		t.Fatalf("text output in Europe/Berlin: %q", text)
	}
	if _, err := c.Exec(ctx, "SET TIME ZONE 'UTC'"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT '2024-01-01 12:00:00+00'::timestamptz", pgx.QueryExecModeSimpleProtocol).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "2024-01-01 12:00:00+00" {
		t.Fatalf("text output in UTC: %q", text)
	}
}
