package sql

import (
	"fmt"
	"testing"

	"github.com/pivotdb/pivotdb/sql/txn"
)

// TestModifyStreams: an UPDATE or DELETE that matches more rows than
// modifyKeysLimit does not hold their keys: it scans a view of the
// statement's start and changes each row as it finds it. Rows whose key
// moves forward (across shards too) are changed once, a block's own
// earlier writes (flushed to intents or not) are seen, and the block's
// later statements and the commit see the result.
func TestModifyStreams(t *testing.T) {
	oldLimit, oldFlush := modifyKeysLimit, txn.IntentFlushBytes
	modifyKeysLimit, txn.IntentFlushBytes = 4, 1<<10
	t.Cleanup(func() { modifyKeysLimit, txn.IntentFlushBytes = oldLimit, oldFlush })
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE m (k Int64, v Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = (50, 1000))")
	query(t, s, "INSERT INTO m SELECT x, x FROM generate_series(1, 40) AS g(x)")
	before := modifyStreams.Load()
	query(t, s, "BEGIN")
	query(t, s, "INSERT INTO m SELECT x, x FROM generate_series(41, 60) AS g(x)")
	// Every key moves forward past the others, into the next shards.
	if got := query(t, s, "UPDATE m SET k = k + 1000 RETURNING k"); len(got) != 60 {
		t.Fatalf("UPDATE changed %d rows, want 60", len(got))
	}
	if got := fmt.Sprint(query(t, s, "SELECT count(*), min(k), max(k), sum(v) FROM m")); got != "[[60 1001 1060 1830]]" {
		t.Fatalf("after the UPDATE: %s", got)
	}
	query(t, s, "DELETE FROM m WHERE v % 2 = 0")
	query(t, s, "COMMIT")
	if got := fmt.Sprint(query(t, s, "SELECT count(*), min(k), max(k), sum(v) FROM m")); got != "[[30 1001 1059 900]]" {
		t.Fatalf("after the commit: %s", got)
	}
	if n := modifyStreams.Load() - before; n != 2 {
		t.Fatalf("%d statements streamed, want 2 (the UPDATE and the DELETE)", n)
	}
	// A small one collects its keys.
	query(t, s, "UPDATE m SET v = v + 1 WHERE k IN (1001, 1003)")
	if n := modifyStreams.Load() - before; n != 2 {
		t.Fatalf("a 2-row UPDATE streamed")
	}
}
