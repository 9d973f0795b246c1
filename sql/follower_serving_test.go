package sql

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestServingFollowerReadWithoutLease: on an engine that serves, a read AS
// OF SYSTEM TIME at or below the node's closed timestamp
// (FollowerReads.LocalClosed) answers while the read gate (a cluster
// node's read lease) refuses every other read: follower_read_timestamp()
// in a statement and in BEGIN READ ONLY AS OF SYSTEM TIME, and an older
// explicit time; a plain read and one above the closed timestamp still
// fail with the gate's error.
func TestServingFollowerReadWithoutLease(t *testing.T) {
	var closed atomic.Pointer[hlc.Timestamp]
	localClosed := func() (hlc.Timestamp, bool) {
		if ts := closed.Load(); ts != nil {
			return *ts, true
		}
		return hlc.Timestamp{}, false
	}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: testEngineLogger(),
		FollowerReads: &FollowerReads{Target: 50 * time.Millisecond, LocalClosed: localClosed}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := testSession(t, e)
	query(t, s, "CREATE TABLE f (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO f VALUES (1, 'a')")
	written, err := e.storage.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	// follower_read_timestamp() is 80 ms back for a 50 ms target: past
	// the write once 80 ms went by.
	time.Sleep(150 * time.Millisecond)
	now, err := e.storage.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	closed.Store(&now)
	lapsed := sqlerr.New(sqlerr.AdminShutdown, "test: the read lease lapsed")
	e.storage.SetReadGate(func() error { return lapsed })
	defer e.storage.SetReadGate(nil)

	if got := formatRows(query(t, s, "SELECT count(*) FROM f AS OF SYSTEM TIME follower_read_timestamp()")); got != "1" {
		t.Fatalf("AS OF SYSTEM TIME follower_read_timestamp() without the lease: %q", got)
	}
	query(t, s, "BEGIN READ ONLY AS OF SYSTEM TIME follower_read_timestamp()")
	if got := formatRows(query(t, s, "SELECT k, v FROM f")); got != `1,"a"` {
		t.Fatalf("a block AS OF SYSTEM TIME follower_read_timestamp() without the lease: %q", got)
	}
	query(t, s, "COMMIT")
	if got := formatRows(query(t, s, "SELECT count(*) FROM f AS OF SYSTEM TIME "+asOfLiteral(written))); got != "1" {
		t.Fatalf("AS OF SYSTEM TIME the write's time without the lease: %q", got)
	}
	gateErr := func(what, q string) {
		t.Helper()
		if _, err := tryQuery(s, q); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.AdminShutdown {
			t.Fatalf("%s without the lease: %s, want the gate's 57P01", what, errCode(err))
		}
	}
	gateErr("a plain read", "SELECT count(*) FROM f")
	// Above the closed timestamp the read needs the lease.
	older := hlc.Timestamp{WallTime: written.WallTime - int64(time.Second)}
	closed.Store(&older)
	gateErr("a read above the closed timestamp", "SELECT count(*) FROM f AS OF SYSTEM TIME follower_read_timestamp()")
	// With no closed timestamp known, likewise.
	closed.Store(nil)
	gateErr("a read without a closed timestamp", "SELECT count(*) FROM f AS OF SYSTEM TIME "+asOfLiteral(written))
}
