package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

func asOfLiteral(ts hlc.Timestamp) string { return fmt.Sprintf("%d.%010d", ts.WallTime, ts.Logical) }

// TestAsOfSchemaChanges: a historical statement binds against the catalog
// of its time (its tables, columns and indexes), a table dropped or
// rewritten since is read from the rows the drop kept, and where the
// catalog does not know the schema of then (in a block AS OF SYSTEM
// TIME) a read of a table changed since is refused. After a restart the
// catalog's history on disk gives the same answers.
func TestAsOfSchemaChanges(t *testing.T) {
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
	code := func(err error) string {
		if e := sqlerr.As(err); e != nil {
			return e.Code + " " + e.Message
		}
		return fmt.Sprint(err)
	}
	t0 := now()
	query(t, s, "CREATE TABLE a (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO a VALUES (1, 10), (2, 20)")
	if _, err := tryQuery(s, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t0)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedTable {
		t.Fatalf("before the table was created: %v", err)
	}
	t1 := now()
	query(t, s, `ALTER TABLE a SET (GC_TTL = Interval("PT2H"))`)
	if got := formatRows(query(t, s, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t1)+" ORDER BY k")); got != "1,10|2,20" {
		t.Fatalf("after a settings change: %q", got)
	}
	// An index created since is not there at t1: the read scans the table.
	query(t, s, "CREATE INDEX a_v ON a (v)")
	if got := formatRows(query(t, s, "SELECT k FROM a AS OF SYSTEM TIME "+asOfLiteral(t1)+" WHERE v = 10")); got != "1" {
		t.Fatalf("before an index: %q", got)
	}
	// A column added since is not there at t1.
	query(t, s, "ALTER TABLE a ADD COLUMN w Int64 DEFAULT 5")
	if got := formatRows(query(t, s, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t1)+" ORDER BY k")); got != "1,10|2,20" {
		t.Fatalf("SELECT * before ADD COLUMN: %q", got)
	}
	if _, err := tryQuery(s, "SELECT w FROM a AS OF SYSTEM TIME "+asOfLiteral(t1)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedColumn {
		t.Fatalf("a column added since: %s", code(err))
	}
	t2 := now()
	query(t, s, "UPDATE a SET w = 6 WHERE k = 1")
	if got := formatRows(query(t, s, "SELECT k, w FROM a AS OF SYSTEM TIME "+asOfLiteral(t2)+" ORDER BY k")); got != "1,5|2,5" {
		t.Fatalf("after ADD COLUMN, before the update: %q", got)
	}
	// A prepared statement describes the columns of its time.
	p, err := s.Prepare(context.Background(), "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t1), nil)
	if err != nil || len(p.Columns) != 2 {
		t.Fatalf("prepared before ADD COLUMN: %v %v", p, err)
	}
	// A block AS OF SYSTEM TIME binds every statement against the
	// catalog of its time too.
	query(t, s, "BEGIN AS OF SYSTEM TIME "+asOfLiteral(t1))
	if got := formatRows(query(t, s, "SELECT * FROM a ORDER BY k")); got != "1,10|2,20" {
		t.Fatalf("in a block before ADD COLUMN: %q", got)
	}
	if _, err := tryQuery(s, "SELECT w FROM a"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedColumn {
		t.Fatalf("in a block, a column added since: %s", code(err))
	}
	query(t, s, "ROLLBACK")
	query(t, s, "BEGIN AS OF SYSTEM TIME "+asOfLiteral(t1))
	if _, err := tryQuery(s, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t2)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.FeatureNotSupported {
		t.Fatalf("in a block, another AS OF time: %s", code(err))
	}
	query(t, s, "ROLLBACK")
	if got := formatRows(query(t, s, "SELECT k, w FROM a ORDER BY k")); got != "1,6|2,5" {
		t.Fatalf("after the block: %q", got)
	}
	// A rewrite (ALTER COLUMN TYPE) makes a new table; the old one's rows
	// stay until its GC job removes them (sql/dropgc.go): before it, the
	// old table is read, with the old schema.
	query(t, s, "ALTER TABLE a ALTER COLUMN v TYPE Int32")
	dropped := func(ts hlc.Timestamp, sql, want string) {
		t.Helper()
		rows, err := tryQuery(s, strings.Replace(sql, "@", "AS OF SYSTEM TIME "+asOfLiteral(ts), 1))
		if err != nil || formatRows(rows) != want {
			t.Fatalf("%s: %q %s, want %q", sql, formatRows(rows), code(err), want)
		}
	}
	dropped(t2, "SELECT * FROM a @ ORDER BY k", "1,10,5|2,20,5")
	t3 := now()
	if got := formatRows(query(t, s, "SELECT k, v FROM a AS OF SYSTEM TIME "+asOfLiteral(t3)+" ORDER BY k")); got != "1,10|2,20" {
		t.Fatalf("after a rewrite: %q", got)
	}
	// A dropped table: named at a time before the drop, its rows kept.
	query(t, s, "CREATE TABLE d (k Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO d VALUES (1)")
	t4 := now()
	query(t, s, "DROP TABLE d")
	dropped(t4, "SELECT * FROM d @", "1")
	if _, err := tryQuery(s, "SELECT * FROM d AS OF SYSTEM TIME "+asOfLiteral(t3)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedTable {
		t.Fatalf("before the dropped table was created: %s", code(err))
	}
	// Restarted, the catalog's history on disk knows the schema of
	// before the start: the same answers as before the restart.
	dir := e.opts.DataDir
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(Options{DataDir: dir, NoSync: true, Logger: e.opts.Logger})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2 := testSession(t, e2)
	s = s2
	dropped(t2, "SELECT * FROM a @ ORDER BY k", "1,10,5|2,20,5")
	dropped(t4, "SELECT * FROM d @", "1")
	if _, err := tryQuery(s2, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t0)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedTable {
		t.Fatalf("after a restart, before the table was created: %s", code(err))
	}
	if got := formatRows(query(t, s2, "SELECT k, v FROM a AS OF SYSTEM TIME "+asOfLiteral(t3)+" ORDER BY k")); got != "1,10|2,20" {
		t.Fatalf("after a restart, after the rewrite: %q", got)
	}
	time.Sleep(time.Millisecond)
	if got := query(t, s2, "SELECT count(*) FROM a AS OF SYSTEM TIME '-1us'")[0][0].Int(); got != 2 {
		t.Fatalf("after a restart: %d rows", got)
	}
}

// TestAsOfGCThresholdSplit: a shard's GC threshold carries over a split
// (both halves refuse reads below it) and a merge.
func TestAsOfGCThresholdSplit(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE g (k Int64, v Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT0.001S"))`)
	query(t, s, "INSERT INTO g VALUES (1, 1), (100, 1)")
	before, _ := e.storage.Clock().Now()
	query(t, s, "UPDATE g SET v = 2")
	time.Sleep(5 * time.Millisecond)
	query(t, s, "VACUUM g")
	thresholds := func() string {
		return formatRows(query(t, s, "SELECT gc_threshold IS NOT NULL FROM sys.partitions WHERE table_name = 'g' ORDER BY partition_index"))
	}
	query(t, s, "ALTER TABLE g RESHARD AT ((50))")
	if got := thresholds(); strings.Count(got, "t") != 2 && strings.Count(got, "true") != 2 {
		t.Fatalf("after a split: %q", got)
	}
	for _, k := range []int{1, 100} {
		_, err := tryQuery(s, fmt.Sprintf("SELECT v FROM g AS OF SYSTEM TIME %s WHERE k = %d", asOfLiteral(before), k))
		if e := sqlerr.As(err); e == nil || e.Code != "XXUUU" {
			t.Fatalf("key %d below the threshold after a split: %v", k, err)
		}
	}
	query(t, s, "ALTER TABLE g RESHARD AT (())")
	if _, err := tryQuery(s, "SELECT * FROM g AS OF SYSTEM TIME "+asOfLiteral(before)); sqlerr.As(err).Code != "XXUUU" {
		t.Fatalf("below the threshold after a merge: %v", err)
	}
}

// TestClusterLogicalTimestamp: cluster_logical_timestamp() is the
// statement's read timestamp, in the decimal form AS OF SYSTEM TIME takes
// back: a read at it sees what that statement saw.
func TestClusterLogicalTimestamp(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE c (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO c VALUES (1, 1)")
	rows := query(t, s, "SELECT v, cluster_logical_timestamp()::Utf8 FROM c")
	then := rows[0][1].Str()
	if len(then) < 30 || then[len(then)-11] != '.' {
		t.Fatalf("cluster_logical_timestamp() = %q, want nanoseconds.logical(10 digits)", then)
	}
	query(t, s, "UPDATE c SET v = 2")
	if got := query(t, s, "SELECT v FROM c AS OF SYSTEM TIME "+then)[0][0].Int(); got != 1 {
		t.Fatalf("AS OF SYSTEM TIME cluster_logical_timestamp() of the first read: v = %d, want 1", got)
	}
	if got := query(t, s, "SELECT cluster_logical_timestamp()::Utf8 FROM c AS OF SYSTEM TIME "+then)[0][0].Str(); got != then {
		t.Fatalf("a historical statement's cluster_logical_timestamp() = %s, want %s", got, then)
	}
}

// TestAsOfBeforeCatalogHistory: a data directory written before the
// catalog kept its history (simulated by removing the history and its
// start) starts the history at its next open; a read AS OF SYSTEM TIME
// before that falls back to today's schema, and the schema times refuse
// a table whose columns changed since (0A000), one created since (42P01),
// and read one unchanged.
func TestAsOfBeforeCatalogHistory(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE same (k Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO same VALUES (1)")
	query(t, s, "CREATE TABLE changed (k Int64, PRIMARY KEY (k))")
	t1, err := e.storage.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	query(t, s, "ALTER TABLE changed ADD COLUMN v Int64")
	query(t, s, "CREATE TABLE later (k Int64, PRIMARY KEY (k))")
	dir := e.opts.DataDir
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(dir, storage.Options{NoSync: true, Logger: e.opts.Logger})
	if err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	if err := b.Delete(append(append([]byte(nil), meta.Catalog...), "history-start"...)); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteRange(meta.CatalogHistorySpan()); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(Options{DataDir: dir, NoSync: true, Logger: e.opts.Logger})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	s2 := testSession(t, e2)
	at := " AS OF SYSTEM TIME " + asOfLiteral(t1)
	if got := formatRows(query(t, s2, "SELECT k FROM same"+at)); got != "1" {
		t.Fatalf("an unchanged table before the history: %q", got)
	}
	for sql, code := range map[string]string{"SELECT * FROM changed": sqlerr.FeatureNotSupported, "SELECT * FROM later": sqlerr.UndefinedTable} {
		if _, err := tryQuery(s2, sql+at); sqlerr.As(err) == nil || sqlerr.As(err).Code != code {
			t.Fatalf("%s before the history: %v, want %s", sql, err, code)
		}
	}
	// After the history's start, exact again.
	t2, _ := e2.storage.Clock().Now()
	query(t, s2, "ALTER TABLE changed DROP COLUMN v")
	if got := formatRows(query(t, s2, "SELECT * FROM changed AS OF SYSTEM TIME "+asOfLiteral(t2))); got != "" {
		t.Fatalf("after the history's start: %q", got)
	}
	if p, err := s2.Prepare(context.Background(), "SELECT * FROM changed AS OF SYSTEM TIME "+asOfLiteral(t2), nil); err != nil || len(p.Columns) != 2 {
		t.Fatalf("after the history's start, the columns of then: %v %v", p, err)
	}
}

// TestCatalogHistoryGC: GC collects the catalog's history with the longest
// window of any table: while a table keeps versions for an hour, the
// schema of a minute-old time is known after a pass; once no table keeps
// them longer than the engine's window, a pass removes the history of
// then, and At reports the time inexact.
func TestCatalogHistoryGC(t *testing.T) {
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: testEngineLogger(), GCTTL: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := testSession(t, e)
	query(t, s, `CREATE TABLE h (k Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	t1, _ := e.storage.Clock().Now()
	query(t, s, "ALTER TABLE h ADD COLUMN v Int64")
	time.Sleep(100 * time.Millisecond)
	// Past the generations in memory: the history on disk answers.
	e.catalog.SetHistoryStart(hlc.Timestamp{WallTime: t1.WallTime + int64(time.Hour)})
	cols := func() (int, bool) {
		snap, exact := e.catalog.At(t1)
		db, ok := snap.Database("pivotdb")
		if !ok {
			return -1, exact
		}
		tb, ok := snap.Table(db.ID, "h")
		if !ok {
			return -1, exact
		}
		return len(tb.Columns), exact
	}
	if _, err := e.storage.RunGC(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, exact := cols(); !exact || n != 1 {
		t.Fatalf("with a table kept for an hour, after a GC pass: exact %v, %d columns", exact, n)
	}
	query(t, s, `ALTER TABLE h RESET (GC_TTL)`)
	time.Sleep(100 * time.Millisecond)
	if _, err := e.storage.RunGC(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, exact := cols(); exact {
		t.Fatal("the history below its GC threshold is still exact")
	}
}

// TestAsOfPrivilegesNow: a historical read needs the privileges of now as
// well as those of its time: a REVOKE is not undone by reading from
// before it, and a GRANT made since does not open what was closed then.
func TestAsOfPrivilegesNow(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE secret (k Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO secret VALUES (1)")
	query(t, s, "CREATE VIEW sv AS SELECT k FROM secret")
	query(t, s, "CREATE ROLE reader LOGIN")
	query(t, s, "GRANT SELECT ON secret, sv TO reader")
	t1, _ := e.storage.Clock().Now()
	query(t, s, "REVOKE SELECT ON secret, sv FROM reader")
	r, err := e.NewSession("pivotdb", "reader")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, rel := range []string{"secret", "sv"} {
		if _, err := tryQuery(r, "SELECT * FROM "+rel+" AS OF SYSTEM TIME "+asOfLiteral(t1)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.InsufficientPrivilege {
			t.Fatalf("%s AS OF before a REVOKE: %v", rel, err)
		}
	}
	query(t, r, "BEGIN AS OF SYSTEM TIME "+asOfLiteral(t1))
	if _, err := tryQuery(r, "SELECT * FROM secret"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.InsufficientPrivilege {
		t.Fatalf("in a block AS OF before a REVOKE: %v", err)
	}
	query(t, r, "ROLLBACK")
	// Granted since: still closed at t1's catalog.
	t2, _ := e.storage.Clock().Now()
	query(t, s, "GRANT SELECT ON secret TO reader")
	if _, err := tryQuery(r, "SELECT * FROM secret AS OF SYSTEM TIME "+asOfLiteral(t2)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.InsufficientPrivilege {
		t.Fatalf("AS OF before a GRANT: %v", err)
	}
	t3, _ := e.storage.Clock().Now()
	if got := formatRows(query(t, r, "SELECT * FROM secret AS OF SYSTEM TIME "+asOfLiteral(t3))); got != "1" {
		t.Fatalf("AS OF after the GRANT: %q", got)
	}
}
