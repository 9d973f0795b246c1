package sql

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestDropKeepsRowsAsOf: DROP TABLE, TRUNCATE, DROP INDEX and a block's
// DROP keep the rows for reads AS OF SYSTEM TIME before them (with the
// schema of then, through the indexes of then), each under a SCHEMA
// CHANGE GC job that sys.jobs shows waiting for its GC_TTL; a restart
// keeps both; once the window has passed the job removes the rows and
// such a read fails with the GC-threshold error (XXUUU), but not while a
// read at a time before the drop is open.
func TestDropKeepsRowsAsOf(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	now := func() hlc.Timestamp {
		t.Helper()
		ts, err := e.storage.Clock().Now()
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	at := func(sql string, ts hlc.Timestamp) string {
		return strings.Replace(sql, "@", "AS OF SYSTEM TIME "+asOfLiteral(ts), 1)
	}
	expect := func(s *Session, sql string, ts hlc.Timestamp, want string) {
		t.Helper()
		rows, err := tryQuery(s, at(sql, ts))
		if err != nil || formatRows(rows) != want {
			t.Fatalf("%s: %q %v, want %q", at(sql, ts), formatRows(rows), err, want)
		}
	}
	job := func(s *Session, like string) string {
		t.Helper()
		return strings.ReplaceAll(formatRows(query(t, s, "SELECT status, running_status, next_run IS NOT NULL, rows_done, rows_total FROM sys.jobs "+
			"WHERE job_type = 'SCHEMA CHANGE GC' AND description LIKE '"+like+"'")), `"`, "")
	}

	query(t, s, "CREATE TABLE d (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "CREATE INDEX d_v ON d (v)")
	query(t, s, "INSERT INTO d VALUES (1, 'a'), (2, 'b')")
	query(t, s, `CREATE TABLE u (k Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	query(t, s, "INSERT INTO u VALUES (1), (2), (3)")
	query(t, s, "CREATE TABLE x (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "CREATE INDEX x_v ON x (v)")
	query(t, s, "INSERT INTO x VALUES (1, 10)")
	query(t, s, "CREATE TABLE w (k Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO w VALUES (7)")
	t1 := now()
	query(t, s, "DROP TABLE d")
	query(t, s, "TRUNCATE u")
	query(t, s, "INSERT INTO u VALUES (9)")
	query(t, s, "DROP INDEX x_v")
	query(t, s, "BEGIN")
	query(t, s, "DROP TABLE w")
	query(t, s, "COMMIT")

	check := func(s *Session) {
		t.Helper()
		expect(s, "SELECT * FROM d @ ORDER BY k", t1, `1,"a"|2,"b"`)
		expect(s, "SELECT k FROM d @ WHERE v = 'b'", t1, "2") // through d_v
		expect(s, "SELECT k FROM u @ ORDER BY k", t1, "1|2|3")
		expect(s, "SELECT k FROM u ORDER BY k", now(), "9")
		expect(s, "SELECT k FROM x @ WHERE v = 10", t1, "1") // through x_v
		expect(s, "SELECT k FROM w @", t1, "7")
		for _, like := range []string{"GC for DROP TABLE d", "GC for DROP INDEX x_v", "GC for DROP TABLE w"} {
			if got := job(s, like); got != "running,waiting for GC TTL,t,0,"+map[bool]string{true: "2", false: "1"}[like == "GC for DROP TABLE d"] {
				t.Fatalf("job %q: %q", like, got)
			}
		}
		if got := job(s, "GC for TRUNCATE u"); got != "running,waiting for GC TTL,t,0,1" {
			t.Fatalf("TRUNCATE's job: %q", got)
		}
	}
	check(s)
	id := query(t, s, "SELECT job_id FROM sys.jobs WHERE description = 'GC for DROP TABLE d'")[0][0].Int()
	if _, err := tryQuery(s, fmt.Sprintf("CANCEL JOB %d", id)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.FeatureNotSupported {
		t.Fatalf("CANCEL JOB of a GC job: %v", err)
	}
	if _, err := tryQuery(s, "SELECT * FROM d"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedTable {
		t.Fatalf("today: %v", err)
	}

	// A short GC_TTL: the job removes the rows once no read at a time
	// before the drop is open.
	query(t, s, `CREATE TABLE g (k Int64, v Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT0.05S"))`)
	query(t, s, "CREATE INDEX g_v ON g (v)")
	query(t, s, "INSERT INTO g VALUES (5, 6)")
	t2 := now()
	reader := testSession(t, e)
	query(t, reader, "BEGIN AS OF SYSTEM TIME "+asOfLiteral(t2))
	query(t, s, "DROP TABLE g")
	// Due after 50ms, but the block reads at a time before the drop.
	for wait := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got := job(s, "GC for DROP TABLE g")
		if got == "running,waiting for reads at times before the drop to end,t,0,2" {
			break
		}
		if time.Now().After(wait) {
			t.Fatalf("under a read at a time before the drop: %q", got)
		}
	}
	time.Sleep(100 * time.Millisecond)
	expect(reader, "SELECT k FROM g WHERE v = 6", t2, "5")
	gt, _ := e.catalog.At(t2)
	g, ok := gt.Table(s.db.ID, "g")
	if !ok {
		t.Fatal("g is not in the catalog of its time")
	}
	query(t, reader, "COMMIT")
	deadline := time.Now().Add(10 * time.Second)
	for job(s, "GC for DROP TABLE g") != "succeeded,NULL,f,2,2" {
		if time.Now().After(deadline) {
			t.Fatalf("the GC job did not finish: %q", job(s, "GC for DROP TABLE g"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err := tryQuery(s, at("SELECT * FROM g @", t2))
	if e := sqlerr.As(err); e == nil || e.Code != "XXUUU" || !strings.Contains(e.Message, "GC threshold") {
		t.Fatalf("after the GC job: %v", err)
	}
	if tableHasKeys(t, e, g.ID) || tableHasKeys(t, e, g.Indexes[0].ID) {
		t.Fatal("the GC job left rows or index entries")
	}
	// A restart: the jobs resume, the rows are still there.
	dir := e.opts.DataDir
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(Options{DataDir: dir, NoSync: true, Logger: e.opts.Logger})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s = testSession(t, e)
	check(s)

	// The engine's clock may run ahead after a restart (its high-water
	// mark): the short-window part ran before it.
	_, err = tryQuery(s, at("SELECT * FROM g @", t2))
	if e := sqlerr.As(err); e == nil || e.Code != "XXUUU" || !strings.Contains(e.Message, "GC threshold") {
		t.Fatalf("after the GC job and a restart: %v", err)
	}
	// The rows of the kept tables are still there.
	expect(s, "SELECT * FROM d @ ORDER BY k", t1, `1,"a"|2,"b"`)
}
