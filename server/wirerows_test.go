package server

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/storage"
)

// startSQLServer starts a server over a real engine (no fsync).
func startSQLServer(t *testing.T) *testServer {
	t.Helper()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := sql.Open(sql.Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the server shuts down (its sessions
	// closed) before the engine closes.
	t.Cleanup(func() { e.Close() })
	return startServer(t, Config{}, FromSQL(e))
}

// TestWireRowsMatchTyped checks that rows encoded straight from their
// stored bytes (sql.WireRows: a plain projection of stored columns) read
// the same in pgx's binary and text formats as the same rows through
// typed values (the query under a LIMIT, which the straight way does not
// take), for every column type, NULLs, a column added with a DEFAULT
// after the rows, a filter, point lookups and another TimeZone.
func TestWireRowsMatchTyped(t *testing.T) {
	ts := startSQLServer(t)
	ctx := testContext(t)
	setup := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, stmt := range []string{
		"CREATE TABLE w (k Int64, s Utf8, i32 Int32, i16 Int16, u8 Uint8, u32 Uint32, u64 Uint64, bo Bool, b bytea, " +
			"ts timestamptz, d date, f Double, j Json, n numeric(10,2), PRIMARY KEY (k, s))",
		`INSERT INTO w VALUES (1, 'one', -5, 7, 200, 4000000000, 18446744073709551615, true, '\x00ff41', ` +
			`'2024-01-02 03:04:05+00', '2024-05-06', 1.5, '{"a": [1, 2]}', 12.34)`,
		"INSERT INTO w (k, s) VALUES (2, 'two')",
		"INSERT INTO w (k, s, i32, bo) VALUES (3, '', 0, false)",
		"ALTER TABLE w ADD COLUMN late Int64 DEFAULT 42",
		"INSERT INTO w (k, s, late) VALUES (4, 'four', NULL)",
		"CREATE TABLE h (h Uint64 AS (farm_hash(k)), k Int64, v Utf8, PRIMARY KEY (h, k)) WITH (UNIFORM_PARTITIONS = 4)",
		"INSERT INTO h (k, v) VALUES (1, 'a'), (2, NULL), (3, 'c')",
	} {
		if _, err := setup.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	all := "k, s, i32, i16, u8, u32, u64, bo, b, ts, d, f, j, n, late"
	queries := []string{
		"SELECT " + all + " FROM w",
		"SELECT late, k, k, s FROM w WHERE k >= 2",
		"SELECT s, i32 FROM w WHERE k >= 1 AND bo",
		"SELECT " + all + " FROM w WHERE k = 1 AND s = 'one'",
		"SELECT v, k FROM h WHERE k IN (1, 2, 3, 4)",
	}
	read := func(conn *pgx.Conn, q string) [][]any {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out [][]any
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			out = append(out, vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		conn := ts.connect(t, mode)
		for _, zone := range []string{"UTC", "Asia/Tokyo"} {
			if _, err := conn.Exec(ctx, "SET TimeZone = '"+zone+"'"); err != nil {
				t.Fatal(err)
			}
			for _, q := range queries {
				got, want := read(conn, q), read(conn, q+" LIMIT 100")
				if len(got) == 0 {
					t.Fatalf("%s: no rows", q)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("mode %v, zone %s, %s:\n got %v\nwant %v", mode, zone, q, got, want)
				}
			}
		}
	}
}

// TestWireRowsPortalSuspended checks an Execute with a row limit on a
// result sent straight from stored rows: the portal is suspended after
// each limit, resumes where it stopped, and the last Execute's tag counts
// its own rows.
func TestWireRowsPortalSuspended(t *testing.T) {
	ts := startSQLServer(t)
	ctx := testContext(t)
	setup := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, stmt := range []string{
		"CREATE TABLE p (k Int64, v Utf8, PRIMARY KEY (k))",
		"INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, NULL), (4, 'd'), (5, 'e')",
	} {
		if _, err := setup.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Parse{Query: "SELECT v, k FROM p WHERE k >= 2"},
		&pgproto3.Bind{ResultFormatCodes: []int16{0, 1}},
		&pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Sync{})
	got := rc.expectUntilReady()
	want := []string{"ParseComplete", "BindComplete",
		"DataRow b,\x00\x00\x00\x00\x00\x00\x00\x02", "DataRow NULL,\x00\x00\x00\x00\x00\x00\x00\x03", "PortalSuspended",
		"DataRow d,\x00\x00\x00\x00\x00\x00\x00\x04", "DataRow e,\x00\x00\x00\x00\x00\x00\x00\x05", "PortalSuspended",
		"ReadyForQuery I"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	rc.send(&pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 3}, &pgproto3.Execute{MaxRows: 3}, &pgproto3.Sync{})
	got = rc.expectUntilReady()
	want = []string{"BindComplete", "DataRow b,2", "DataRow NULL,3", "DataRow d,4", "PortalSuspended",
		"DataRow e,5", "CommandComplete SELECT 1", "ReadyForQuery I"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestWireRowsReuse checks the wire encoder memory a prepared statement
// keeps between executions (statement.wire): two portals of one statement
// open at once, with other result formats, each get their own; the next
// execution after a portal closes reuses its memory with new formats; and
// after a column before the projected one is dropped, the reused encoder
// reads the new layout, not the old one.
func TestWireRowsReuse(t *testing.T) {
	ts := startSQLServer(t)
	ctx := testContext(t)
	setup := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, stmt := range []string{
		"CREATE TABLE p (k Int64, a Utf8, v Utf8, PRIMARY KEY (k))",
		"INSERT INTO p VALUES (1, 'x', 'a'), (2, 'y', 'b'), (3, 'z', NULL), (4, 'w', 'd'), (5, 'u', 'e')",
	} {
		if _, err := setup.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	rc := ts.rawStartup(t)
	check := func(want ...string) {
		t.Helper()
		if got := rc.expectUntilReady(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
	}
	rc.send(&pgproto3.Parse{Name: "s", Query: "SELECT v, k FROM p WHERE k >= $1", ParameterOIDs: []uint32{20}},
		&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "p1", Parameters: [][]byte{[]byte("2")}, ResultFormatCodes: []int16{0, 1}},
		&pgproto3.Execute{Portal: "p1", MaxRows: 1},
		&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "p2", Parameters: [][]byte{[]byte("4")}},
		&pgproto3.Execute{Portal: "p2"},
		&pgproto3.Execute{Portal: "p1"},
		&pgproto3.Sync{})
	check("ParseComplete", "BindComplete", "DataRow b,\x00\x00\x00\x00\x00\x00\x00\x02", "PortalSuspended",
		"BindComplete", "DataRow d,4", "DataRow e,5", "CommandComplete SELECT 2",
		"DataRow NULL,\x00\x00\x00\x00\x00\x00\x00\x03", "DataRow d,\x00\x00\x00\x00\x00\x00\x00\x04",
		"DataRow e,\x00\x00\x00\x00\x00\x00\x00\x05", "CommandComplete SELECT 3", "ReadyForQuery I")
	rc.send(&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("5")}, ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	check("BindComplete", "DataRow e,\x00\x00\x00\x00\x00\x00\x00\x05", "CommandComplete SELECT 1", "ReadyForQuery I")
	if _, err := setup.Exec(ctx, "ALTER TABLE p DROP COLUMN a"); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Exec(ctx, "INSERT INTO p VALUES (6, 'f')"); err != nil {
		t.Fatal(err)
	}
	rc.send(&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("4")}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	check("BindComplete", "DataRow d,4", "DataRow e,5", "DataRow f,6", "CommandComplete SELECT 3", "ReadyForQuery I")
}
