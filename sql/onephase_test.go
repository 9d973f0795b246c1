package sql

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// lockRecordCount counts the lock records in e's store.
func lockRecordCount(t *testing.T, e *Engine) int {
	t.Helper()
	n := 0
	if err := mvcc.ScanLocks(e.txns.Engine().LocalReader(), storage.Span{}, func(mvcc.LockRecord) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// rowLockWait is pg_locks' picture of one session waiting for a row:
// an ungranted ShareLock on the holder's transaction ID, which the holder
// has granted (ExclusiveLock), and the holder's granted tuple lock.
type rowLockWait struct {
	waiting, holderListed, tupleHeld bool
}

func pgLockWait(t *testing.T, s *Session) rowLockWait {
	t.Helper()
	rows := query(t, s, "SELECT locktype, transactionid, granted FROM pg_locks WHERE locktype IN ('tuple', 'transactionid')")
	var w rowLockWait
	granted := map[string]bool{}
	var awaited []string
	for _, r := range rows {
		switch {
		case r[0].Str() == "tuple" && r[2].Bool():
			w.tupleHeld = true
		case r[0].Str() == "transactionid" && r[2].Bool():
			granted[r[1].String()] = true
		case r[0].Str() == "transactionid":
			awaited = append(awaited, r[1].String())
		}
	}
	for _, id := range awaited {
		w.waiting = true
		w.holderListed = w.holderListed || granted[id]
	}
	return w
}

// TestAutocommitLocksInMemory: an autocommit statement's row locks (a
// one-phase transaction's) are not lock records, yet a transaction
// block's write waits for them and pg_locks shows both the hold and the
// wait; an autocommit write waits for a block's record the same way; BEGIN
// after a write in one protocol cycle makes that write's lock a record.
func TestAutocommitLocksInMemory(t *testing.T) {
	// It counts lock records, which a block's writes past the intent
	// threshold give up for their intents (sql/txn/intents.go): keep the
	// block's writes buffered whatever PIVOTDB_INTENT_FLUSH_BYTES says.
	old := txn.IntentFlushBytes
	txn.IntentFlushBytes = 1 << 30
	t.Cleanup(func() { txn.IntentFlushBytes = old })
	e := testEngine(t)
	a, b, c, d := testSession(t, e), testSession(t, e), testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE c (id Int64, v Int64, PRIMARY KEY (id))")
	query(t, a, "INSERT INTO c VALUES (1, 0), (2, 0)")
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}

	// a's protocol cycle holds row 1: in memory, no record.
	a.BeginImplicit()
	if tag := inCycle(t, a, "UPDATE c SET v = v + 1 WHERE id = 1"); tag != "UPDATE 1" {
		t.Fatal(tag)
	}
	if n := lockRecordCount(t, e); n != 0 {
		t.Fatalf("an autocommit UPDATE wrote %d lock records", n)
	}
	query(t, b, "BEGIN")
	bDone := make(chan error, 1)
	go func() {
		_, err := tryQuery(b, "UPDATE c SET v = v + 1 WHERE id = 1")
		bDone <- err
	}()
	waitUntil("the block's UPDATE to wait in pg_locks", func() bool {
		w := pgLockWait(t, c)
		return w.waiting && w.holderListed && w.tupleHeld
	})
	select {
	case err := <-bDone:
		t.Fatalf("the block's UPDATE did not wait for the autocommit one: %v", err)
	default:
	}
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	if n := lockRecordCount(t, e); n != 1 {
		t.Fatalf("the block's UPDATE left %d lock records, want 1", n)
	}

	// An autocommit UPDATE waits for the block's record.
	dDone := make(chan error, 1)
	go func() {
		_, err := tryQuery(d, "UPDATE c SET v = v + 1 WHERE id = 1")
		dDone <- err
	}()
	waitUntil("the autocommit UPDATE to wait in pg_locks", func() bool {
		w := pgLockWait(t, c)
		return w.waiting && w.holderListed && w.tupleHeld
	})
	select {
	case err := <-dDone:
		t.Fatalf("the autocommit UPDATE did not wait for the block: %v", err)
	default:
	}
	query(t, b, "COMMIT")
	if err := <-dDone; err != nil {
		t.Fatal(err)
	}

	// BEGIN inside a cycle after its write: the write's lock becomes a
	// record, and the block holds it until COMMIT.
	a.BeginImplicit()
	inCycle(t, a, "UPDATE c SET v = v + 1 WHERE id = 2")
	if n := lockRecordCount(t, e); n != 0 {
		t.Fatalf("%d lock records before BEGIN", n)
	}
	inCycle(t, a, "BEGIN")
	if n := lockRecordCount(t, e); n != 1 {
		t.Fatalf("%d lock records after BEGIN, want 1", n)
	}
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	query(t, d, "SET lock_timeout = '50ms'")
	if _, err := tryQuery(d, "UPDATE c SET v = v + 1 WHERE id = 2"); err == nil {
		t.Fatal("an UPDATE of a row the block holds did not wait")
	}
	query(t, a, "COMMIT")
	query(t, d, "UPDATE c SET v = v + 1 WHERE id = 2")
	if got := query(t, c, "SELECT id, v FROM c ORDER BY id"); fmt.Sprint(got) != "[[1 3] [2 2]]" {
		t.Fatalf("rows %v, want [[1 3] [2 2]]", got)
	}
	if n := lockRecordCount(t, e); n != 0 {
		t.Fatalf("%d lock records left", n)
	}
}

// TestAutocommitIncrementsLoseNothing: autocommit UPDATE v = v + 1 from
// several sessions, and a session doing the same in transaction blocks,
// lose no increment (READ COMMITTED re-reads the row under its lock,
// whichever kind of lock the last writer held).
func TestAutocommitIncrementsLoseNothing(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE inc (id Int64, v Int64, PRIMARY KEY (id))")
	query(t, s, "INSERT INTO inc VALUES (1, 0)")
	const sessions, each = 4, 25
	var wg sync.WaitGroup
	for i := range sessions + 1 {
		x := testSession(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				stmts := []string{"UPDATE inc SET v = v + 1 WHERE id = 1"}
				if i == sessions {
					stmts = []string{"BEGIN", stmts[0], "COMMIT"}
				}
				for _, q := range stmts {
					if _, err := tryQuery(x, q); err != nil {
						t.Error(q, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if got := query(t, s, "SELECT v FROM inc"); got[0][0].Int() != (sessions+1)*each {
		t.Fatalf("v = %v, want %d", got[0][0], (sessions+1)*each)
	}
	if n := lockRecordCount(t, e); n != 0 {
		t.Fatalf("%d lock records left", n)
	}
}
