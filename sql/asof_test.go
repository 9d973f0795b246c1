package sql

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

func asOfLiteral(ts hlc.Timestamp) string { return fmt.Sprintf("%d.%010d", ts.WallTime, ts.Logical) }

// TestAsOfSchemaChanges: the catalog keeps only today's definitions, so a
// historical read before a change of a table's columns, or through an
// index created after its time, is refused clearly; one after the change,
// or of a change that does not touch how rows read (a setting), works.
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
	query(t, s, "CREATE TABLE a (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO a VALUES (1, 10), (2, 20)")
	t1 := now()
	query(t, s, `ALTER TABLE a SET (GC_TTL = Interval("PT2H"))`)
	if got := formatRows(query(t, s, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t1)+" ORDER BY k")); got != "1,10|2,20" {
		t.Fatalf("after a settings change: %q", got)
	}
	query(t, s, "CREATE INDEX a_v ON a (v)")
	_, err := tryQuery(s, "SELECT k FROM a AS OF SYSTEM TIME "+asOfLiteral(t1)+" WHERE v = 10")
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.FeatureNotSupported || !strings.Contains(e.Message, `before index "a_v" of table "a" was created`) {
		t.Fatalf("through a newer index: %v", err)
	}
	query(t, s, "ALTER TABLE a ADD COLUMN w Int64 DEFAULT 5")
	_, err = tryQuery(s, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t1))
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.FeatureNotSupported || !strings.Contains(e.Message, `before the last change of the columns of table "a"`) {
		t.Fatalf("before ADD COLUMN: %v", err)
	}
	t2 := now()
	query(t, s, "UPDATE a SET w = 6 WHERE k = 1")
	if got := formatRows(query(t, s, "SELECT k, w FROM a AS OF SYSTEM TIME "+asOfLiteral(t2)+" ORDER BY k")); !strings.Contains(got, "1,5") {
		t.Fatalf("after ADD COLUMN, before the update: %q", got)
	}
	// A block AS OF SYSTEM TIME refuses the same way, and the failed block
	// rolls back.
	query(t, s, "BEGIN AS OF SYSTEM TIME "+asOfLiteral(t1))
	if _, err := tryQuery(s, "SELECT count(*) FROM a"); sqlerr.As(err).Code != sqlerr.FeatureNotSupported {
		t.Fatalf("in a block before ADD COLUMN: %v", err)
	}
	query(t, s, "ROLLBACK")
	// A rewrite (ALTER COLUMN TYPE) makes a new table: before it, no table.
	query(t, s, "ALTER TABLE a ALTER COLUMN v TYPE Int32")
	_, err = tryQuery(s, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t2))
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.UndefinedTable {
		t.Fatalf("before a rewrite: %v", err)
	}
	// Restarted, the schema times are still known.
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
	if _, err := tryQuery(s2, "SELECT * FROM a AS OF SYSTEM TIME "+asOfLiteral(t2)); sqlerr.As(err).Code != sqlerr.UndefinedTable {
		t.Fatalf("after a restart, before a rewrite: %v", err)
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
