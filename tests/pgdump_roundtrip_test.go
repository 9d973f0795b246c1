package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgDumpRoundTrip dumps a PivotDB database with PostgreSQL 15's
// pg_dump, in plain format (restored with psql) and in custom format
// (restored with pg_restore), each into a fresh database, and checks that
// the copy is the same: every row, the column types (YQL's Uint64 stays
// uint64), the table settings with the current pivots
// (pg_class.reloptions, written back as WITH (...)), indexes and unique
// constraints, a view, a sequence's position, and the owners. Then
// pg_dumpall's output (roles and databases) restores into a fresh server.
//
// pg_dump adds a primary key after the rows (ALTER TABLE ... ADD PRIMARY
// KEY), which makes its columns NOT NULL as in PostgreSQL; the key columns
// of "pairs" allow NULL (YQL's PRIMARY KEY (...) leaves them nullable) and
// hold NULLs, and come back so through pg_class.reloptions'
// nullable_key_columns.
func TestPgDumpRoundTrip(t *testing.T) {
	pgDump := requireTool(t, "pg_dump")
	pgRestore := requireTool(t, "pg_restore")
	psql := requireTool(t, "psql")
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{"CREATE ROLE dump_owner", "CREATE DATABASE src", "CREATE DATABASE plain_copy", "CREATE DATABASE custom_copy"} {
		mustExec(t, c, q)
	}
	src := srv.dial(t, "pivotdb", "src", nil)
	for _, q := range []string{
		`CREATE TABLE items (id Uint64 NOT NULL, name Utf8, qty Int32, price Double, ok Bool, made Date, at Timestamp, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 4)`,
		`INSERT INTO items VALUES (1, 'a', 10, 1.5, true, Date('2024-01-02'), Timestamp('2024-01-02T03:04:05Z')), (18446744073709551615, 'it''s', -3, NULL, false, NULL, NULL), (7, 'tab	and\newline', 0, -0.25, NULL, Date('1999-12-31'), NULL)`,
		`CREATE UNIQUE INDEX items_name ON items (name)`,
		`CREATE TABLE orders (oid Int64 NOT NULL, item Uint64, note Utf8, PRIMARY KEY (oid))`,
		`INSERT INTO orders VALUES (1, 1, 'x'), (2, 18446744073709551615, NULL), (-5, 7, '\backslash')`,
		`CREATE INDEX orders_item ON orders (item)`,
		`ALTER TABLE orders OWNER TO dump_owner`,
		`CREATE TABLE words (k Utf8 NOT NULL, n Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = ("m"), AUTO_PARTITIONING_BY_LOAD = ENABLED)`,
		`INSERT INTO words VALUES ('a', 1), ('z', 2)`,
		`CREATE TABLE pairs (a Int64, b Utf8 NOT NULL, c Utf8, v Int32, PRIMARY KEY (a, b, c))`,
		`INSERT INTO pairs VALUES (NULL, 'x', NULL, 1), (1, 'y', NULL, 2), (NULL, 'y', 'z', 3), (2, 'w', 'q', 4)`,
		// time, time(p) and qualified intervals (issue 22 item 8): pg_dump
		// writes their format_type spellings and COPY text back.
		`CREATE TABLE clocks (id Int32 NOT NULL, t time, p time(0), iv interval day to second(2), ym interval year to month, PRIMARY KEY (id))`,
		`INSERT INTO clocks VALUES (1, '04:05:06.789', '12:00:00.4', '1 day 02:03:04.567', '1-2'), (2, '24:00:00', '23:59:59.6', '-3 days', '-5'), (3, NULL, NULL, NULL, NULL)`,
		`CREATE VIEW a_view AS SELECT id, name FROM items WHERE qty > 0`,
		`CREATE SEQUENCE seq1 START WITH 100`,
		`SELECT nextval('seq1')`,
		`SELECT nextval('seq1')`,
	} {
		if _, err := src.Exec(ctxT(t), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dir := t.TempDir()
	dump := func(args ...string) {
		t.Helper()
		out, err := pgTool(srv, dir, pgDump, append([]string{"-d", "src"}, args...)...)
		if err != nil && strings.Contains(out, "ORDER BY inside an aggregate call is not supported yet") {
			// pg_dump's index query needs array_agg(... ORDER BY ...),
			// which lands with issue 19's aggregate ORDER BY.
			t.Skip("pg_dump needs aggregate ORDER BY")
		}
		if err != nil {
			t.Fatalf("pg_dump %v: %v\n%s\nserver log:\n%s", args, err, out, srv.log)
		}
	}
	dump("-f", "plain.sql")
	dump("-Fc", "-f", "custom.dump")
	mustRun := func(name string, args ...string) {
		t.Helper()
		if out, err := pgTool(srv, dir, name, args...); err != nil || strings.Contains(out, "ERROR") {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	mustRun(psql, "-d", "plain_copy", "-v", "ON_ERROR_STOP=1", "-q", "-f", "plain.sql")
	mustRun(pgRestore, "-d", "custom_copy", "--exit-on-error", "custom.dump")

	want := dbSnapshot(t, srv, "src")
	for _, w := range []string{"18446744073709551615|it's", "uint64", `"partition_at_keys=((\"m\"))"`, "auto_partitioning_by_load=ENABLED",
		"orders|r|NULL|dump_owner", "items_name|CREATE UNIQUE INDEX", "101|t", "pairs|a|bigint|f", "pairs|b|text|t",
		`nullable_key_columns=(\"a\", \"c\")`, "NULL|y|z|3",
		"1|04:05:06.789|12:00:00|1 day 02:03:04.57|1 year 2 mons", "clocks|iv|interval day to second(2)", "clocks|p|time(0) without time zone"} {
		if !strings.Contains(want, w) {
			t.Fatalf("the source lacks %q (the test checks nothing):\n%s", w, want)
		}
	}
	for _, db := range []string{"plain_copy", "custom_copy"} {
		if got := dbSnapshot(t, srv, db); got != want {
			t.Errorf("%s differs from the source:\n%s\nsource:\n%s", db, got, want)
		}
	}

	// pg_dump -t: one table (its pattern query has OPERATOR(pg_catalog.=)
	// ANY (array[...])).
	mustExec(t, c, "CREATE DATABASE one_table")
	dump("-t", "pairs", "-f", "pairs.sql")
	mustRun(psql, "-d", "one_table", "-v", "ON_ERROR_STOP=1", "-q", "-f", "pairs.sql")
	table := func(db string) string {
		t.Helper()
		var out string
		q := `SELECT string_agg(coalesce(a::text, 'N') || b || coalesce(c, 'N') || v, ',' ORDER BY v) ||
		        (SELECT string_agg(attname || attnotnull::text, ',' ORDER BY attnum) FROM pg_attribute
		         WHERE attrelid = 'pairs'::regclass AND attnum > 0) FROM pairs`
		if err := srv.dial(t, "pivotdb", db, nil).QueryRow(ctxT(t), q).Scan(&out); err != nil {
			t.Fatalf("%s: %v", db, err)
		}
		return out
	}
	if got, want := table("one_table"), table("src"); got != want || !strings.Contains(want, "af,bt,cf") {
		t.Errorf("pg_dump -t pairs restored %q, the source has %q", got, want)
	}

	// pg_dumpall: roles and every database, restored into a fresh server.
	// Its only errors are PostgreSQL's own in that case: the bootstrap
	// role and the default database exist already.
	pgDumpall := requireTool(t, "pg_dumpall")
	if out, err := pgTool(srv, dir, pgDumpall, "-l", "pivotdb", "-f", "all.sql"); err != nil {
		t.Fatalf("pg_dumpall: %v\n%s", err, out)
	}
	srv2 := startServer(t)
	out, err := pgTool(srv2, dir, psql, "-d", "pivotdb", "-q", "-f", "all.sql")
	if err != nil {
		t.Fatalf("psql -f all.sql: %v\n%s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "ERROR") && !strings.Contains(line, `role "pivotdb" already exists`) &&
			!strings.Contains(line, `database "pivotdb" already exists`) {
			t.Fatalf("restoring pg_dumpall's output:\n%s", out)
		}
	}
	if got := dbSnapshot(t, srv2, "src"); got != want {
		t.Errorf("src restored by pg_dumpall differs from the source:\n%s\nsource:\n%s", got, want)
	}
	var login bool
	if err := srv2.connect(t, pgx.QueryExecModeSimpleProtocol).QueryRow(ctxT(t),
		"SELECT rolcanlogin FROM pg_roles WHERE rolname = 'dump_owner'").Scan(&login); err != nil || login {
		t.Fatalf("role dump_owner after pg_dumpall: login %v, %v", login, err)
	}
}

// pgTool runs a PostgreSQL client program against srv in dir and returns
// its combined output.
func pgTool(srv *testServer, dir, name string, args ...string) (string, error) {
	host, port, _ := net.SplitHostPort(srv.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PGHOST="+host, "PGPORT="+port, "PGUSER=pivotdb", "PGSSLMODE=disable", "PGTZ=UTC")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// dbSnapshot prints what a dump must carry over from database db.
func dbSnapshot(t *testing.T, srv *testServer, db string) string {
	t.Helper()
	c := srv.dial(t, "pivotdb", db, nil)
	var b strings.Builder
	for _, q := range []string{
		"SELECT * FROM items ORDER BY id",
		"SELECT * FROM orders ORDER BY oid",
		"SELECT * FROM words ORDER BY k",
		"SELECT * FROM pairs ORDER BY v",
		"SELECT * FROM clocks ORDER BY id",
		"SELECT * FROM a_view ORDER BY id",
		"SELECT last_value, is_called FROM seq1",
		`SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a
		   JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname IN ('items', 'orders', 'words', 'pairs', 'a_view', 'clocks') AND a.attnum > 0
		   ORDER BY c.relname, a.attnum`,
		"SELECT relname, relkind, reloptions, pg_get_userbyid(relowner) FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY relname",
		"SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
		"SELECT conname, contype FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY conname",
	} {
		rows, err := c.Query(ctxT(t), q, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %s: %v", db, q, err)
		}
		fmt.Fprintf(&b, "-- %s\n", strings.Fields(q)[len(strings.Fields(q))-1])
		for rows.Next() {
			// The values as the server prints them (text format).
			vals := rows.RawValues()
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = "NULL"
				if v != nil {
					parts[i] = string(v)
				}
			}
			b.WriteString(strings.Join(parts, "|") + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %s: %v", db, q, err)
		}
	}
	return b.String()
}
