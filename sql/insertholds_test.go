package sql

import (
	"os"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// lockRecords counts the lock records in the store.
func lockRecords(t testing.TB, e *Engine) int {
	t.Helper()
	n := 0
	if err := mvcc.ScanLocks(e.storage.LocalReader(), storage.Span{}, func(mvcc.LockRecord) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestInsertSelectWriteHolds: INSERT ... SELECT in a block takes its rows'
// locks as write holds (sql/txn's writeholds.go): no lock record per row
// (the block's first lock is one, with its transaction record), and the
// rows are locked all the same — another session's write of one waits
// (55P03 under lock_timeout) — until the block ends.
func TestInsertSelectWriteHolds(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE src (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, a, "CREATE TABLE dst (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, a, "INSERT INTO src SELECT x, x FROM generate_series(1, 200) AS g(x)")
	for _, holds := range []bool{false, true} {
		insertWriteHolds = holds
		query(t, a, "BEGIN")
		query(t, a, "INSERT INTO dst SELECT k, v FROM src")
		// (Every write flushed as an intent drops its record at once.)
		n := lockRecords(t, e)
		if os.Getenv("PIVOTDB_INTENT_FLUSH_BYTES") == "" && (holds && n > 1 || !holds && n < 200) {
			t.Fatalf("write holds %v: %d lock records after INSERT ... SELECT of 200 rows", holds, n)
		}
		query(t, b, "SET lock_timeout = '50ms'")
		_, err := tryQuery(b, "INSERT INTO dst VALUES (150, 0)")
		if e := sqlerr.As(err); e == nil || e.Code != sqlerr.LockNotAvailable {
			t.Fatalf("write holds %v: another session's write of a held row: %v", holds, err)
		}
		query(t, a, "ROLLBACK")
		if n := lockRecords(t, e); n != 0 {
			t.Fatalf("write holds %v: %d lock records after ROLLBACK", holds, n)
		}
		query(t, b, "INSERT INTO dst VALUES (150, 0)")
		query(t, b, "DELETE FROM dst")
	}
	insertWriteHolds = true
	// The block commits its rows as before.
	query(t, a, "BEGIN")
	query(t, a, "INSERT INTO dst SELECT k, v FROM src WHERE k <= 3")
	query(t, a, "INSERT INTO dst SELECT k + 1000, v FROM src WHERE k <= 2")
	query(t, a, "COMMIT")
	if got := formatRows(query(t, b, "SELECT k FROM dst ORDER BY k")); got != "1|2|3|1001|1002" {
		t.Fatalf("after COMMIT: %q", got)
	}
}

// BenchmarkInsertSelectBlock: INSERT ... SELECT of 1,000 rows inside
// BEGIN ... ROLLBACK, with the rows' locks as write holds ("holds") and as
// lock records written and then deleted at the flush ("records", before).
func BenchmarkInsertSelectBlock(b *testing.B) {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE src (k Int64, v Utf8, PRIMARY KEY (k))")
	query(b, s, "CREATE TABLE dst (k Int64, v Utf8, PRIMARY KEY (k))")
	query(b, s, "INSERT INTO src SELECT x, 'value-' || x::Utf8 FROM generate_series(1, 1000) AS g(x)")
	for _, c := range []struct {
		name  string
		holds bool
	}{{"records", false}, {"holds", true}} {
		b.Run(c.name, func(b *testing.B) {
			insertWriteHolds = c.holds
			defer func() { insertWriteHolds = true }()
			b.ReportAllocs()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				query(b, s, "BEGIN")
				query(b, s, "INSERT INTO dst SELECT k, v FROM src")
				query(b, s, "ROLLBACK")
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestPartitionsLockRecords: sys.partitions' lock_records counts the lock
// records in each shard's keys: a block's locking reads leave them in the
// shards of the rows they lock, and its end removes them.
func TestPartitionsLockRecords(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE pl (k Int64, v Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = ((10)))")
	query(t, a, "INSERT INTO pl SELECT x, x FROM generate_series(1, 20) AS g(x)")
	counts := func() string {
		return formatRows(query(t, b, "SELECT partition_index, lock_records FROM sys.partitions WHERE table_name = 'pl' ORDER BY partition_index"))
	}
	if got := counts(); got != "0,0|1,0" {
		t.Fatalf("before: %q", got)
	}
	query(t, a, "BEGIN")
	query(t, a, "SELECT * FROM pl WHERE k IN (1, 2, 15) FOR SHARE")
	if got := counts(); got != "0,2|1,1" {
		t.Fatalf("a block's FOR SHARE of keys 1, 2 and 15: %q", got)
	}
	query(t, a, "COMMIT")
	if got := counts(); got != "0,0|1,0" {
		t.Fatalf("after COMMIT: %q", got)
	}
}
