package sql

import (
	"fmt"
	"testing"
	"time"
)

// TestTTLAtReadTimestamp: TTL is judged at the read's timestamp. A row
// that expired before it is hidden, one that expires after it is shown: a
// read AS OF SYSTEM TIME before the expiry shows the row the present hides,
// and a REPEATABLE READ transaction keeps showing what its snapshot showed.
func TestTTLAtReadTimestamp(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE x (k Int64, ts Timestamp, PRIMARY KEY (k)) WITH (TTL = Interval("PT0.3S") ON ts)`)
	query(t, s, "CREATE INDEX x_ts ON x (ts)")
	query(t, s, "INSERT INTO x VALUES (1, CurrentUtcTimestamp()), (2, CurrentUtcTimestamp() + Interval('PT1H'))")
	then, err := e.storage.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	rr := testSession(t, e)
	query(t, rr, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	count := func(s *Session, sql string) int64 { t.Helper(); return query(t, s, sql)[0][0].Int() }
	if n := count(rr, "SELECT count(*) FROM x"); n != 2 {
		t.Fatalf("before the expiry: %d rows", n)
	}
	time.Sleep(400 * time.Millisecond)
	if n := count(s, "SELECT count(*) FROM x"); n != 1 {
		t.Fatalf("after the expiry: %d rows, want 1", n)
	}
	asOf := fmt.Sprintf("%d.%010d", then.WallTime, then.Logical)
	if n := count(s, "SELECT count(*) FROM x AS OF SYSTEM TIME "+asOf); n != 2 {
		t.Fatalf("AS OF SYSTEM TIME before the expiry: %d rows, want 2", n)
	}
	if n := count(s, "SELECT count(*) FROM x AS OF SYSTEM TIME "+asOf+" WHERE ts < CurrentUtcTimestamp()"); n != 1 {
		t.Fatalf("AS OF SYSTEM TIME through the index: %d rows, want 1", n)
	}
	if n := count(rr, "SELECT count(*) FROM x"); n != 2 {
		t.Fatalf("REPEATABLE READ after the expiry: %d rows, want its snapshot's 2", n)
	}
	query(t, rr, "COMMIT")
	if n := count(rr, "SELECT count(*) FROM x"); n != 1 {
		t.Fatalf("after the transaction: %d rows, want 1", n)
	}
}
