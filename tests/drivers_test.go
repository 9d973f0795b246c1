package tests

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/lib/pq"
)

// Client drivers against a real server (issue 7): pgx v5 in every mode,
// lib/pq through database/sql, pgjdbc, node-postgres, psycopg2 and pgbench.
// The non-Go clients run small programs kept in tests/drivers/; `make deps`
// (.ci/install-deps) installs them. A test skips when its tool is missing,
// except in CI (CI=true), where a missing tool is a failure: CI must run
// every client.

// requireTool returns the path of an installed program, or skips the test
// (fails it in CI) when there is none.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		missing(t, fmt.Sprintf("%s is not installed", name))
	}
	return path
}

// requireFile is requireTool for a file a Debian package installs.
func requireFile(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		missing(t, fmt.Sprintf("%s is missing", path))
	}
	return path
}

func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI must run every client test; make deps installs it)", what)
	}
	t.Skipf("%s (make deps installs it)", what)
}

// runClient runs a client program with the server's address in the PG*
// environment variables and fails the test with its output when it exits
// non-zero.
func runClient(t *testing.T, srv *testServer, dir string, name string, args ...string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(srv.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PGHOST="+host, "PGPORT="+port, "PGUSER=pivotdb", "PGDATABASE=pivotdb",
		"PGSSLMODE=disable", "PGTZ=UTC", "TZ=UTC")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s\nserver log:\n%s", name, strings.Join(args, " "), err, out, srv.log)
	}
	return string(out)
}

// TestNodePostgres runs tests/drivers/node/test.js with node-postgres.
func TestNodePostgres(t *testing.T) {
	node := requireTool(t, "node")
	dir, _ := filepath.Abs("drivers/node")
	requireFile(t, filepath.Join(dir, "node_modules", "pg", "package.json"))
	srv := startServer(t)
	out := runClient(t, srv, dir, node, "test.js")
	if !strings.Contains(out, "node-postgres: all checks passed") {
		t.Fatalf("node test did not finish:\n%s", out)
	}
}

// TestPsycopg2 runs tests/drivers/python/test_psycopg2.py with Debian's
// python3-psycopg2 and the system Python.
func TestPsycopg2(t *testing.T) {
	py := requireFile(t, "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import psycopg2").Run(); err != nil {
		missing(t, "python3-psycopg2 is not installed")
	}
	dir, _ := filepath.Abs("drivers/python")
	srv := startServer(t)
	out := runClient(t, srv, dir, py, "test_psycopg2.py")
	if !strings.Contains(out, "psycopg2: all checks passed") {
		t.Fatalf("psycopg2 test did not finish:\n%s", out)
	}
}

// TestSQLAlchemy runs tests/drivers/python/test_sqlalchemy.py with Debian's
// python3-sqlalchemy over psycopg2: ORM autoincrement keys, a relationship,
// inserted_primary_key, ON CONFLICT.
func TestSQLAlchemy(t *testing.T) {
	py := requireFile(t, "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import sqlalchemy, psycopg2").Run(); err != nil {
		missing(t, "python3-sqlalchemy is not installed")
	}
	dir, _ := filepath.Abs("drivers/python")
	srv := startServer(t)
	out := runClient(t, srv, dir, py, "test_sqlalchemy.py")
	if !strings.Contains(out, "sqlalchemy: all checks passed") {
		t.Fatalf("SQLAlchemy test did not finish:\n%s", out)
	}
}

// TestPgJDBC compiles tests/drivers/java/DriverTest.java against Debian's
// pgjdbc and runs it.
func TestPgJDBC(t *testing.T) {
	javac := requireTool(t, "javac")
	java := requireTool(t, "java")
	jar := requireFile(t, "/usr/share/java/postgresql.jar")
	src, _ := filepath.Abs("drivers/java/DriverTest.java")
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "-cp", jar, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	srv := startServer(t)
	url := "jdbc:postgresql://" + srv.addr + "/pivotdb?sslmode=disable"
	out := runClient(t, srv, classes, java, "-cp", classes+string(os.PathListSeparator)+jar, "DriverTest", url)
	if !strings.Contains(out, "pgjdbc: all checks passed") {
		t.Fatalf("pgjdbc test did not finish:\n%s", out)
	}
}

// TestPgbenchCustomScript runs tests/drivers/pgbench/custom.sql with
// pgbench -n -f in each query mode and checks that every transaction ran.
func TestPgbenchCustomScript(t *testing.T) {
	pgbench := requireTool(t, "pgbench")
	script, _ := filepath.Abs("drivers/pgbench/custom.sql")
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, "CREATE TABLE bench_kv (k Int64, v Int64, PRIMARY KEY (k))")
	processed := regexp.MustCompile(`number of transactions actually processed: (\d+)/(\d+)`)
	for _, mode := range []string{"simple", "extended", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			// Two clients write the same keys; a transaction that loses a
			// conflict (40001) is retried by pgbench.
			out := runClient(t, srv, ".", pgbench, "-n", "-f", script, "-M", mode, "-c", "2", "-t", "25",
				"--max-tries", "20", "pivotdb")
			m := processed.FindStringSubmatch(out)
			if m == nil || m[1] != m[2] || m[2] != "50" {
				t.Fatalf("pgbench -M %s:\n%s", mode, out)
			}
			if !strings.Contains(out, "query mode: "+mode) {
				t.Fatalf("pgbench did not run in mode %s:\n%s", mode, out)
			}
		})
	}
	var n int64
	if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM bench_kv").Scan(&n); err != nil || n == 0 || n > 100 {
		t.Fatalf("bench_kv has %d rows (%v)", n, err)
	}
}

// TestLibPQ uses lib/pq through database/sql with sslmode=disable:
// parameters, types, transactions, prepared statements and errors.
func TestLibPQ(t *testing.T) {
	srv := startServer(t)
	db, err := sql.Open("postgres", srv.connString("pivotdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := ctxT(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE pq_t (id Int64, s Utf8, f Double, d Decimal(10,2), b String, ts Timestamp, ok Bool, PRIMARY KEY (id))"); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)
	for i := 1; i <= 5; i++ {
		if _, err := db.ExecContext(ctx, "INSERT INTO pq_t (id, s, f, d, b, ts, ok) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			i, fmt.Sprintf("row %d", i), float64(i)/4, fmt.Sprintf("%d.25", i), []byte{0, byte(i), 0xff}, ts, i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	var (
		s  string
		f  float64
		d  string
		b  []byte
		gt time.Time
		ok bool
	)
	if err := db.QueryRowContext(ctx, "SELECT s, f, d, b, ts, ok FROM pq_t WHERE id = $1", 2).Scan(&s, &f, &d, &b, &gt, &ok); err != nil {
		t.Fatal(err)
	}
	if s != "row 2" || f != 0.5 || d != "2.25" || string(b) != "\x00\x02\xff" || !gt.Equal(ts) || !ok {
		t.Fatalf("got %q %v %q %x %v %v", s, f, d, b, gt, ok)
	}

	// A prepared statement reused.
	st, err := db.PrepareContext(ctx, "SELECT count(*) FROM pq_t WHERE id <= $1")
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 5; i++ {
		var n int64
		if err := st.QueryRowContext(ctx, i).Scan(&n); err != nil || n != i {
			t.Fatalf("count(id <= %d) = %d, %v", i, n, err)
		}
	}
	st.Close()

	// Transactions.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM pq_t WHERE id = $1", 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM pq_t").Scan(&n); err != nil || n != 5 {
		t.Fatalf("after rollback: %d, %v", n, err)
	}

	// Errors carry the SQLSTATE.
	_, err = db.ExecContext(ctx, "INSERT INTO pq_t (id) VALUES ($1)", 1)
	var pqe *pq.Error
	if !errors.As(err, &pqe) || pqe.Code != "23505" {
		t.Fatalf("duplicate key: %v", err)
	}
	// Multiple statements in one simple query (no parameters).
	if _, err := db.ExecContext(ctx, "UPSERT INTO pq_t (id, s) VALUES (9, 'x'); DELETE FROM pq_t WHERE id = 9"); err != nil {
		t.Fatal(err)
	}
}

// allTypesDDL has a column of every type of design §3.1.
const allTypesDDL = `CREATE TABLE all_types (
	k Int64, b Bool, i8 Int8, i16 Int16, u8 Uint8, i32 Int32, u16 Uint16, i64 Int64, u32 Uint32, u64 Uint64,
	f4 Float, f8 Double, num Decimal(12,3), s String, u Utf8, j Json, d Date, dt Datetime, ts Timestamp,
	iv Interval, PRIMARY KEY (k))`

const allTypesInsert = `INSERT INTO all_types VALUES (1, true, -8, -16000, 200, -2000000000, 65000,
	-9000000000000000000, 4000000000, Uint64("18446744073709551615"), 1.5, -2.25, 123456789.125,
	'\x0001ff'::bytea, 'héllo', '{"a":[1,2]}', Date("2024-02-29"), Datetime("2024-01-02T03:04:05Z"),
	Timestamp("2024-01-02T03:04:05.123456Z"), Interval("P1DT2H3M4.5S")),
	(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`

// TestPgxAllTypes reads a row with every type of design §3.1 in each pgx
// mode: text results (simple protocol) and binary results (extended
// protocol with the statement cache, and describe-exec).
func TestPgxAllTypes(t *testing.T) {
	srv := startServer(t)
	setup := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, setup, allTypesDDL)
	mustExec(t, setup, allTypesInsert)
	u64, _ := new(big.Int).SetString("18446744073709551615", 10)
	for name, mode := range execModes {
		t.Run(name, func(t *testing.T) {
			c := srv.connect(t, mode)
			var (
				b           bool
				i8, i16, u8 int16
				i32, u16    int32
				i64, u32    int64
				u64v, dec   pgtype.Numeric
				f4          float32
				f8          float64
				s           []byte
				u           string
				j           map[string]any
				d, dt, ts   time.Time
				iv          pgtype.Interval
			)
			err := c.QueryRow(ctxT(t), "SELECT b, i8, i16, u8, i32, u16, i64, u32, u64, f4, f8, num, s, u, j, d, dt, ts, iv FROM all_types WHERE k = $1", 1).
				Scan(&b, &i8, &i16, &u8, &i32, &u16, &i64, &u32, &u64v, &f4, &f8, &dec, &s, &u, &j, &d, &dt, &ts, &iv)
			if err != nil {
				t.Fatal(err)
			}
			if !b || i8 != -8 || i16 != -16000 || u8 != 200 || i32 != -2000000000 || u16 != 65000 ||
				i64 != -9000000000000000000 || u32 != 4000000000 || f4 != 1.5 || f8 != -2.25 || u != "héllo" {
				t.Fatalf("scalars: %v %v %v %v %v %v %v %v %v %v %q", b, i8, i16, u8, i32, u16, i64, u32, f4, f8, u)
			}
			if u64v.Int.Cmp(u64) != 0 || u64v.Exp != 0 {
				t.Fatalf("Uint64: %v e%d", u64v.Int, u64v.Exp)
			}
			if dec.Int.Int64() != 123456789125 || dec.Exp != -3 {
				t.Fatalf("Decimal: %v e%d", dec.Int, dec.Exp)
			}
			if string(s) != "\x00\x01\xff" {
				t.Fatalf("String: %x", s)
			}
			if fmt.Sprint(j["a"]) != "[1 2]" {
				t.Fatalf("Json: %v", j)
			}
			if !d.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) {
				t.Fatalf("Date: %v", d)
			}
			if !dt.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)) {
				t.Fatalf("Datetime: %v", dt)
			}
			if !ts.Equal(time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)) {
				t.Fatalf("Timestamp: %v", ts)
			}
			if iv.Days != 1 || iv.Months != 0 || iv.Microseconds != (2*3600+3*60+4)*1e6+500000 {
				t.Fatalf("Interval: %+v", iv)
			}

			// Every column NULL.
			vals := make([]any, 19)
			for i := range vals {
				vals[i] = new(any)
			}
			if err := c.QueryRow(ctxT(t), "SELECT b, i8, i16, u8, i32, u16, i64, u32, u64, f4, f8, num, s, u, j, d, dt, ts, iv FROM all_types WHERE k = 2").Scan(vals...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if *(v.(*any)) != nil {
					t.Fatalf("column %d of the NULL row: %v", i, *(v.(*any)))
				}
			}

			// The same values as parameters round-trip.
			var back int64
			err = c.QueryRow(ctxT(t), "SELECT count(*) FROM all_types WHERE i32 = $1 AND u = $2 AND s = $3 AND ts = $4 AND d = $5 AND num = $6",
				int32(-2000000000), "héllo", []byte{0, 1, 0xff}, ts, d, dec).Scan(&back)
			if err != nil || back != 1 {
				t.Fatalf("parameters: %d, %v", back, err)
			}
		})
	}
}

// TestPgxBinaryFormats checks that the extended protocol really returns
// binary results: pgx asks for binary for every type it knows but text.
func TestPgxBinaryFormats(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, allTypesDDL)
	mustExec(t, c, allTypesInsert)
	rows, err := c.Query(ctxT(t), "SELECT b, i16, i32, i64, u64, f4, f8, num, s, u, d, ts, iv FROM all_types WHERE k = 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	for i, fd := range rows.FieldDescriptions() {
		// pgx reads text as text: the two formats are the same bytes.
		if fd.DataTypeOID != pgtype.TextOID && fd.Format != pgx.BinaryFormatCode {
			t.Errorf("column %d (%s, OID %d) came in format %d", i, fd.Name, fd.DataTypeOID, fd.Format)
		}
	}
}

// TestPgxStatementCache runs the same statements many times through pgx's
// statement cache (prepared once, then Bind/Execute only); a schema change
// under a cached statement must not return stale columns.
func TestPgxStatementCache(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE sc (k Int64, v Utf8, PRIMARY KEY (k))")
	for i := 0; i < 20; i++ {
		mustExec(t, c, "UPSERT INTO sc (k, v) VALUES ($1, $2)", i, fmt.Sprint(i))
		var v string
		if err := c.QueryRow(ctxT(t), "SELECT v FROM sc WHERE k = $1", i).Scan(&v); err != nil || v != fmt.Sprint(i) {
			t.Fatalf("k=%d: %q, %v", i, v, err)
		}
	}
	// Recreate the table with another type under the cached statement.
	mustExec(t, c, "DROP TABLE sc")
	mustExec(t, c, "CREATE TABLE sc (k Int64, v Int64, PRIMARY KEY (k))")
	mustExec(t, c, "INSERT INTO sc (k, v) VALUES (1, 42)")
	var v any
	err := c.QueryRow(ctxT(t), "SELECT v FROM sc WHERE k = $1", 1).Scan(&v)
	if err != nil {
		// PostgreSQL answers "cached plan must not change result type"
		// (0A000), and pgx then drops the statement from its cache.
		wantCode(t, err, "0A000")
		err = c.QueryRow(ctxT(t), "SELECT v FROM sc WHERE k = $1", 1).Scan(&v)
	}
	if err != nil || fmt.Sprint(v) != "42" {
		t.Fatalf("after the schema change: %v, %v", v, err)
	}
}
