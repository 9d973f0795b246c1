package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// COPY over the wire (issue 20): pgx's CopyFrom and CopyTo, the copy
// sub-protocol's failure paths with a raw client, atomicity. psql's \copy
// is in tests/psql/copy.sql, psycopg2's copy_expert and copy_from in
// tests/drivers/python/test_psycopg2.py, JDBC's CopyManager in
// tests/drivers/java/DriverTest.java.

// copyRows are n rows of cp's columns; copyText is what COPY cp TO STDOUT
// prints for them.
func copyRows(n int) ([][]any, string) {
	rows := make([][]any, n)
	var b strings.Builder
	for i := range rows {
		k := int64(i*7 - n)
		v := fmt.Sprintf("row %d\twith tab, comma and \\ backslash", i)
		var f any = float64(i) / 4
		fText := fmt.Sprint(float64(i) / 4)
		if i%10 == 3 {
			f, fText = nil, `\N`
		}
		ok := i%2 == 0
		d := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%1000)
		rows[i] = []any{k, v, f, ok, d}
		okText := "f"
		if ok {
			okText = "t"
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\t%s\n", k, strings.NewReplacer(`\`, `\\`, "\t", `\t`).Replace(v), fText, okText, d.Format("2006-01-02"))
	}
	return rows, b.String()
}

const copyTable = "(k Int64, v Utf8, f Double, ok Bool, d Date, PRIMARY KEY (k))"

func copyTo(t *testing.T, c *pgx.Conn, sql string) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := c.PgConn().CopyTo(ctxT(t), &buf, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return buf.String()
}

func copyFrom(t *testing.T, c *pgx.Conn, sql, data string) (int64, error) {
	t.Helper()
	tag, err := c.PgConn().CopyFrom(ctxT(t), strings.NewReader(data), sql)
	return tag.RowsAffected(), err
}

func count(t *testing.T, c *pgx.Conn, table string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPgxCopyFrom: 100k rows through pgx's CopyFrom (binary format), then
// COPY TO in each format gives them back, and a binary COPY TO feeds a
// binary COPY FROM into a second table with the same result.
func TestPgxCopyFrom(t *testing.T) {
	srv := startServer(t)
	// pgx's CopyFrom learns the column types from SELECT "k", ... FROM
	// "cp", whose "k" is a string in the yql dialect: it needs the
	// postgresql one.
	cfg, err := pgx.ParseConfig(srv.connString("pivotdb"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["sql_dialect"] = "postgresql"
	c, err := pgx.ConnectConfig(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctxT(t))
	mustExec(t, c, "CREATE TABLE cp "+copyTable)
	const n = 100000
	rows, text := copyRows(n)
	got, err := c.CopyFrom(ctxT(t), pgx.Identifier{"cp"}, []string{"k", "v", "f", "ok", "d"}, pgx.CopyFromRows(rows))
	if err != nil || got != n {
		t.Fatalf("CopyFrom: %d rows, %v", got, err)
	}
	if cnt := count(t, c, "cp"); cnt != n {
		t.Fatalf("table has %d rows, want %d", cnt, n)
	}
	if out := copyTo(t, c, "COPY cp TO STDOUT"); out != text {
		a, b := strings.Split(out, "\n"), strings.Split(text, "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("COPY TO text differs at line %d:\ngot  %q\nwant %q", i+1, a[i], b[i])
			}
		}
		t.Fatalf("COPY TO text differs: %d lines, want %d", len(a), len(b))
	}
	bin := copyTo(t, c, "COPY cp TO STDOUT (FORMAT binary)")
	mustExec(t, c, "CREATE TABLE cp2 "+copyTable)
	if k, err := copyFrom(t, c, "COPY cp2 FROM STDIN WITH BINARY", bin); err != nil || k != n {
		t.Fatalf("binary COPY FROM: %d, %v", k, err)
	}
	if out := copyTo(t, c, "COPY cp2 TO STDOUT"); out != text {
		t.Fatal("binary round trip changed the rows")
	}
	csv := copyTo(t, c, "COPY (SELECT * FROM cp WHERE k < 0 ORDER BY k DESC) TO STDOUT (FORMAT csv, HEADER, FORCE_QUOTE (v))")
	lines := strings.Split(csv, "\n")
	if lines[0] != "k,v,f,ok,d" || !strings.HasPrefix(lines[1], `-5,"row 14285	`) {
		t.Fatalf("CSV COPY TO: %q", lines[:2])
	}
	mustExec(t, c, "CREATE TABLE cp3 "+copyTable)
	if k, err := copyFrom(t, c, "COPY cp3 FROM STDIN WITH CSV HEADER", csv); err != nil || int(k) != len(lines)-2 {
		t.Fatalf("CSV COPY FROM: %d, %v", k, err)
	}
	if a, b := copyTo(t, c, "COPY cp3 TO STDOUT"), copyTo(t, c, "COPY (SELECT * FROM cp WHERE k < 0) TO STDOUT"); a != b {
		t.Fatal("CSV round trip changed the rows")
	}
}

// TestCopyErrors: a bad row fails the COPY with its line in CONTEXT and
// PostgreSQL's SQLSTATE, and leaves nothing; inside a transaction block
// COPY is part of the transaction.
func TestCopyErrors(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE ce (k Int64 NOT NULL, v Utf8, s varchar(3), n Int32 NOT NULL DEFAULT 5, PRIMARY KEY (k))")
	mustExec(t, c, "CREATE UNIQUE INDEX ce_s ON ce (s)")
	for _, tc := range []struct {
		sql, data, code, where string
	}{
		{"COPY ce (k, v) FROM STDIN", "1\ta\n2\tb\nx\tc\n", "22P02", `COPY ce, line 3, column k: "x"`},
		{"COPY ce (k, v) FROM STDIN", "1\ta\n2\tb\t9\n", "22P04", "COPY ce, line 2: \"2\tb\t9\""},
		{"COPY ce (k, v) FROM STDIN", "1\ta\n1\tb\n", "23505", "COPY ce, line 2"},
		{"COPY ce (k, s) FROM STDIN", "1\tab\n2\tab\n", "23505", "COPY ce, line 2"},
		{"COPY ce (k, s) FROM STDIN", "1\tab\n2\tabcd\n", "22001", `COPY ce, line 2, column s: "abcd"`},
		{"COPY ce (k, n) FROM STDIN (FORMAT csv)", "1,1\n2,\n", "23502", "COPY ce, line 2"},
		{"COPY ce (k, v) FROM STDIN (FORMAT csv)", "1,\"abc\n", "22P04", "COPY ce, line 1"},
		{"COPY ce (k) FROM STDIN (FORMAT binary)", "PGCOPY\n", "22P04", "COPY ce, line 0"},
	} {
		_, err := copyFrom(t, c, tc.sql, tc.data)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.code || !strings.HasPrefix(pe.Where, tc.where) {
			t.Errorf("%s with %q: got %v (where %q), want %s with CONTEXT %q", tc.sql, tc.data, err, pe.Where, tc.code, tc.where)
		}
		if n := count(t, c, "ce"); n != 0 {
			t.Fatalf("%s: the failed COPY left %d rows", tc.sql, n)
		}
	}
	// Defaults apply to the columns not copied.
	if n, err := copyFrom(t, c, "COPY ce (k, v) FROM STDIN", "1\ta\n"); err != nil || n != 1 {
		t.Fatalf("COPY: %d %v", n, err)
	}
	if out := copyTo(t, c, "COPY ce TO STDOUT"); out != "1\ta\t\\N\t5\n" {
		t.Fatalf("default not applied: %q", out)
	}

	// In a block: rolled back with it; a failed COPY fails the block.
	mustExec(t, c, "BEGIN")
	if _, err := copyFrom(t, c, "COPY ce (k) FROM STDIN", "2\n3\n"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, c, "ce"); n != 3 {
		t.Fatalf("the block sees %d rows, want 3", n)
	}
	mustExec(t, c, "ROLLBACK")
	if n := count(t, c, "ce"); n != 1 {
		t.Fatalf("after ROLLBACK %d rows, want 1", n)
	}
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO ce (k) VALUES (10)")
	if _, err := copyFrom(t, c, "COPY ce (k) FROM STDIN", "11\nbad\n"); err == nil {
		t.Fatal("bad COPY accepted")
	}
	if _, err := c.Exec(ctxT(t), "SELECT 1"); err == nil || !strings.Contains(err.Error(), "25P02") {
		t.Fatalf("after a failed COPY in a block: %v", err)
	}
	mustExec(t, c, "ROLLBACK")
	if n := count(t, c, "ce"); n != 1 {
		t.Fatalf("after the failed block %d rows, want 1", n)
	}

	// Server files and programs.
	for _, sql := range []string{"COPY ce FROM '/etc/passwd'", "COPY ce TO '/tmp/x'", "COPY ce TO PROGRAM 'true'"} {
		if _, err := c.Exec(ctxT(t), sql); err == nil || !strings.Contains(err.Error(), "0A000") {
			t.Errorf("%s as superuser: %v, want 0A000", sql, err)
		}
	}
	mustExec(t, c, "CREATE USER plain")
	mustExec(t, c, "GRANT ALL ON ce TO plain")
	cfg, _ := pgx.ParseConfig(strings.Replace(srv.connString("pivotdb"), "pivotdb@", "plain@", 1))
	pc, err := pgx.ConnectConfig(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctxT(t))
	if _, err := pc.Exec(ctxT(t), "COPY ce FROM '/etc/passwd'"); err == nil || !strings.Contains(err.Error(), "42501") {
		t.Errorf("COPY FROM a file as a plain user: %v, want 42501", err)
	}
	if n, err := copyFrom(t, pc, "COPY ce (k) FROM STDIN", "20\n"); err != nil || n != 1 {
		t.Errorf("COPY FROM STDIN as a plain user: %d %v", n, err)
	}
}

// TestCopyProtocol drives the copy sub-protocol by hand: CopyFail, a
// message that does not belong, CopyData after the COPY failed, and COPY
// in the extended protocol. The connection never wedges.
func TestCopyProtocol(t *testing.T) {
	srv := startServer(t)
	fe, nc := rawConnect(t, srv)
	defer nc.Close()
	simpleQuery(t, fe, nc, "CREATE TABLE cpp (k Int64, PRIMARY KEY (k))")
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))

	// expect reads messages up to one of type want and returns it; an
	// ErrorResponse is returned too.
	expect := func(want string) pgproto3.BackendMessage {
		t.Helper()
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%T", msg)
			if strings.HasSuffix(name, "."+want) || (want != "ReadyForQuery" && strings.HasSuffix(name, ".ErrorResponse")) {
				return msg
			}
		}
	}
	send := func(msgs ...pgproto3.FrontendMessage) {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	errorCode := func(msg pgproto3.BackendMessage) string {
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			return e.Code + " " + e.Message
		}
		return fmt.Sprintf("%T", msg)
	}

	// CopyFail: 57014 with the client's message; nothing written.
	send(&pgproto3.Query{String: "COPY cpp FROM STDIN"})
	if m := expect("CopyInResponse"); errorCode(m) != "*pgproto3.CopyInResponse" {
		t.Fatalf("COPY FROM STDIN: %s", errorCode(m))
	}
	send(&pgproto3.CopyData{Data: []byte("1\n2\n")}, &pgproto3.CopyFail{Message: "client gave up"})
	if got := errorCode(expect("ErrorResponse")); got != "57014 COPY from stdin failed: client gave up" {
		t.Fatalf("CopyFail: %s", got)
	}
	expect("ReadyForQuery")

	// A Parse in copy mode: 08P01; copy messages sent after the failure are
	// dropped; the connection carries on.
	send(&pgproto3.Query{String: "COPY cpp FROM STDIN"})
	expect("CopyInResponse")
	send(&pgproto3.CopyData{Data: []byte("1\n")}, &pgproto3.Parse{Query: "SELECT 1"})
	if got := errorCode(expect("ErrorResponse")); !strings.HasPrefix(got, "08P01 unexpected message type 0x50 during COPY from stdin") {
		t.Fatalf("Parse during COPY: %s", got)
	}
	expect("ReadyForQuery")
	send(&pgproto3.CopyData{Data: []byte("3\n")}, &pgproto3.CopyDone{})

	// A bad row: the error comes at once, the rest of the data is dropped.
	send(&pgproto3.Query{String: "COPY cpp FROM STDIN"})
	expect("CopyInResponse")
	send(&pgproto3.CopyData{Data: []byte("1\nx\n")})
	if got := errorCode(expect("ErrorResponse")); !strings.HasPrefix(got, "22P02") {
		t.Fatalf("bad row: %s", got)
	}
	expect("ReadyForQuery")
	send(&pgproto3.CopyData{Data: []byte("4\n")}, &pgproto3.CopyDone{}, &pgproto3.Query{String: "SELECT count(*) FROM cpp"})
	if m := expect("DataRow"); string(m.(*pgproto3.DataRow).Values[0]) != "0" {
		t.Fatalf("rows after the failed COPYs: %s", m.(*pgproto3.DataRow).Values[0])
	}
	expect("ReadyForQuery")

	// The extended protocol: Parse/Bind/Describe/Execute, copy, Sync.
	send(&pgproto3.Parse{Query: "COPY cpp FROM STDIN (FORMAT csv)"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{}, &pgproto3.Flush{})
	expect("NoData")
	expect("CopyInResponse")
	send(&pgproto3.CopyData{Data: []byte("5\n6\n")}, &pgproto3.Sync{}, &pgproto3.CopyDone{}, &pgproto3.Sync{})
	if m := expect("CommandComplete"); string(m.(*pgproto3.CommandComplete).CommandTag) != "COPY 2" {
		t.Fatalf("extended COPY FROM: %s", errorCode(m))
	}
	expect("ReadyForQuery")
	send(&pgproto3.Parse{Query: "COPY (SELECT k FROM cpp ORDER BY k) TO STDOUT"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect("CopyOutResponse")
	var out []string
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := m.(*pgproto3.CopyData); ok {
			out = append(out, string(d.Data))
			continue
		}
		if cc, ok := m.(*pgproto3.CommandComplete); ok {
			if string(cc.CommandTag) != "COPY 2" {
				t.Fatalf("extended COPY TO tag %q", cc.CommandTag)
			}
			break
		}
		if _, ok := m.(*pgproto3.CopyDone); !ok {
			t.Fatalf("extended COPY TO: %s", errorCode(m))
		}
	}
	if strings.Join(out, "") != "5\n6\n" {
		t.Fatalf("extended COPY TO: %q", out)
	}
	expect("ReadyForQuery")
	// CopyFail in the extended protocol: the error, then nothing until Sync.
	send(&pgproto3.Parse{Query: "COPY cpp FROM STDIN"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Flush{})
	expect("CopyInResponse")
	send(&pgproto3.CopyData{Data: []byte("7\n")}, &pgproto3.CopyFail{Message: "no"}, &pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Sync{})
	if got := errorCode(expect("ErrorResponse")); got != "57014 COPY from stdin failed: no" {
		t.Fatalf("extended CopyFail: %s", got)
	}
	expect("ReadyForQuery")
	simpleQuery(t, fe, nc, "SELECT 1")

	// A COPY followed by a failing statement in the same query string:
	// one implicit transaction, so the COPY's rows go too.
	send(&pgproto3.Query{String: "COPY cpp FROM STDIN; INSERT INTO cpp (k) VALUES (5)"})
	expect("CopyInResponse")
	send(&pgproto3.CopyData{Data: []byte("100\n101\n")}, &pgproto3.CopyDone{})
	if m := expect("CommandComplete"); errorCode(m) != "*pgproto3.CommandComplete" {
		t.Fatalf("COPY in a script: %s", errorCode(m))
	}
	if got := errorCode(expect("ErrorResponse")); !strings.HasPrefix(got, "23505") {
		t.Fatalf("INSERT after the COPY: %s", got)
	}
	expect("ReadyForQuery")

	// COPY TO's rows were the two of the extended COPY FROM.
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	if got := copyTo(t, c, "COPY cpp TO STDOUT"); got != "5\n6\n" {
		t.Fatalf("table after the protocol test: %q", got)
	}
}

// TestCopyFreeze checks PostgreSQL's rule for COPY ... FREEZE over the
// wire with psql: allowed for a table created or truncated in the current
// subtransaction (with a NOTICE that it changes nothing here), else 55000.
func TestCopyFreeze(t *testing.T) {
	srv := startServer(t)
	script := filepath.Join(t.TempDir(), "freeze.sql")
	// A COPY refused before it starts reads no data (psql would take the
	// lines for SQL), so those have none.
	if err := os.WriteFile(script, []byte(`CREATE TABLE f (id int8 PRIMARY KEY);
COPY f FROM STDIN (FREEZE);
BEGIN;
TRUNCATE f;
COPY f FROM STDIN WITH (FREEZE ON);
1
2
\.
COMMIT;
BEGIN;
CREATE TABLE g (id int8 PRIMARY KEY);
SAVEPOINT a;
COPY g FROM STDIN (FREEZE);
ROLLBACK TO a;
TRUNCATE g;
COPY g FROM STDIN (FREEZE true);
4
\.
COMMIT;
COPY f TO STDOUT (FREEZE);
SELECT (SELECT count(*) FROM f) AS f, (SELECT count(*) FROM g) AS g;
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runPsql(t, srv, "-f", script)
	for _, want := range []string{
		"ERROR:  cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction",
		"NOTICE:  COPY FREEZE is accepted but changes nothing",
		"COPY 2",
		"COPY 1",
		"ERROR:  COPY FREEZE cannot be used with COPY TO",
		" f | g \n---+---\n 2 | 1",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "not created or truncated in the current subtransaction"); n != 2 {
		t.Fatalf("%d refusals, want 2 (autocommit, and after SAVEPOINT):\n%s", n, out)
	}
}
