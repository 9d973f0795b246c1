package sql

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestGCTableSetting: a table updated many times keeps its old versions
// inside its GC_TTL; a short GC_TTL lets GC remove them (old_bytes in
// sys.partitions falls to 0, on the table's shards and its index's), but
// never those an open REPEATABLE READ transaction still reads; afterwards
// a read AS OF SYSTEM TIME before the shard's GC threshold is refused with
// CockroachDB's error.
func TestGCTableSetting(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE g (k Int64, v Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = ((50)), GC_TTL = Interval("PT1H"))`)
	query(t, s, "CREATE INDEX g_v ON g (v)")
	var vals []string
	for k := range 100 {
		vals = append(vals, fmt.Sprintf("(%d, 0)", k))
	}
	query(t, s, "INSERT INTO g VALUES "+strings.Join(vals, ", "))
	before, err := e.storage.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		query(t, s, "UPDATE g SET v = v + 1")
	}
	oldBytes := func() (table, index int64) {
		t.Helper()
		for _, r := range query(t, s, "SELECT table_name, old_bytes FROM sys.partitions WHERE table_name LIKE 'g%'") {
			if r[0].Str() == "g" {
				table += r[1].Int()
			} else {
				index += r[1].Int()
			}
		}
		return table, index
	}
	tb, ib := oldBytes()
	live := query(t, s, "SELECT sum(data_size_bytes)::Int64 FROM sys.partitions WHERE table_name = 'g'")[0][0].Int()
	if tb < 5*live || ib == 0 {
		t.Fatalf("after 10 updates: old_bytes %d (table), %d (index), live %d; want the table's > 5x live", tb, ib, live)
	}
	// VACUUM runs GC now; inside the 1h window it keeps every version.
	query(t, s, "VACUUM g")
	if tb2, _ := oldBytes(); tb2 != tb {
		t.Fatalf("GC inside GC_TTL removed versions: old_bytes %d -> %d", tb, tb2)
	}
	if got := query(t, s, fmt.Sprintf("SELECT sum(v)::Int64 FROM g AS OF SYSTEM TIME %d.%010d", before.WallTime, before.Logical))[0][0]; got.Int() != 0 {
		t.Fatalf("AS OF before the updates: sum %v, want 0", got)
	}

	// An open REPEATABLE READ transaction holds its snapshot.
	rr := testSession(t, e)
	query(t, rr, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	if got := query(t, rr, "SELECT sum(v)::Int64 FROM g")[0][0].Int(); got != 1000 {
		t.Fatalf("sum %d", got)
	}
	query(t, s, "UPDATE g SET v = v + 1")
	query(t, s, `ALTER TABLE g SET (GC_TTL = Interval("PT0.001S"))`)
	if got := query(t, s, "SHOW CREATE TABLE g")[0][1].Str(); !strings.Contains(got, `GC_TTL = Interval("PT0.001S")`) {
		t.Fatalf("SHOW CREATE TABLE: %s", got)
	}
	time.Sleep(10 * time.Millisecond)
	query(t, s, "VACUUM g")
	if got := query(t, rr, "SELECT sum(v)::Int64 FROM g")[0][0].Int(); got != 1000 {
		t.Fatalf("REPEATABLE READ after GC: sum %d, want 1000", got)
	}
	if got := query(t, rr, "SELECT count(*) FROM g WHERE v = 10")[0][0].Int(); got != 100 {
		t.Fatalf("REPEATABLE READ through the index after GC: %d rows, want 100", got)
	}
	query(t, rr, "COMMIT")

	time.Sleep(10 * time.Millisecond)
	query(t, s, "VACUUM g")
	if tb, ib := oldBytes(); tb != 0 || ib != 0 {
		t.Fatalf("after GC with a short GC_TTL: old_bytes %d (table), %d (index); want 0", tb, ib)
	}
	if got := query(t, s, "SELECT sum(v)::Int64, count(*) FROM g"); got[0][0].Int() != 1100 || got[0][1].Int() != 100 {
		t.Fatalf("after GC: %v", got)
	}
	if got := query(t, s, "SELECT count(*) FROM sys.partitions WHERE table_name LIKE 'g%' AND gc_threshold IS NULL")[0][0].Int(); got != 0 {
		t.Fatalf("%d shards without a GC threshold after VACUUM", got)
	}
	_, err = tryQuery(s, fmt.Sprintf("SELECT * FROM g AS OF SYSTEM TIME %d.%010d", before.WallTime, before.Logical))
	if e := sqlerr.As(err); e == nil || e.Code != "XXUUU" || !strings.Contains(e.Message, "must be after replica GC threshold") {
		t.Fatalf("AS OF below the GC threshold: %v", err)
	}
	query(t, s, "ALTER TABLE g RESET (GC_TTL)")
	if got := query(t, s, "SHOW CREATE TABLE g")[0][1].Str(); strings.Contains(got, "GC_TTL") {
		t.Fatalf("SHOW CREATE TABLE after RESET: %s", got)
	}
}
