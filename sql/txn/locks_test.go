package txn

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// countLockRecords counts the lock records in m's store.
func countLockRecords(t *testing.T, m *Manager) int {
	t.Helper()
	n := 0
	if err := mvcc.ScanLocks(m.Engine().LocalReader(), storage.Span{}, func(mvcc.LockRecord) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSpanLock: LockSpan waits for the holders of key locks inside the
// span; while it is held, other transactions' Lock of keys inside waits
// and TryLock fails, keys outside are free; two span owners that wait on
// each other's keys get 40P01 rather than hanging.
func TestSpanLock(t *testing.T) {
	m := newTestManager(t)
	ctx := context.Background()
	t1, t2, t3, t4 := m.Begin(), m.Begin(), m.Begin(), m.Begin()
	if err := t1.Lock(ctx, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	var got atomic.Bool
	done := make(chan func())
	go func() {
		unlock, err := t2.LockSpan(ctx, []byte("b"), []byte("c"))
		if err != nil {
			t.Error(err)
		}
		got.Store(true)
		done <- unlock
	}()
	time.Sleep(20 * time.Millisecond)
	if got.Load() {
		t.Fatal("span taken while txn 1 holds b1")
	}
	t1.Rollback()
	unlock := <-done
	if t3.TryLock([]byte("b5")) {
		t.Fatal("TryLock inside a held span succeeded")
	}
	if err := t3.Lock(ctx, []byte("c1")); err != nil {
		t.Fatal("a key outside the span:", err)
	}
	var locked atomic.Bool
	waited := make(chan error)
	go func() {
		err := t3.Lock(ctx, []byte("b5"))
		locked.Store(true)
		waited <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if locked.Load() {
		t.Fatal("Lock inside a held span did not wait")
	}
	// The span owner locks a key inside its own span freely.
	if err := t2.Lock(ctx, []byte("b7")); err != nil {
		t.Fatal(err)
	}
	unlock()
	t2.Rollback()
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	// Txn 3 holds b5 and c1. A span over them by txn 4 waits for txn 3;
	// if txn 3 then waits for a key of txn 4, that is a deadlock.
	if err := t4.Lock(ctx, []byte("z")); err != nil {
		t.Fatal(err)
	}
	spanErr := make(chan error)
	go func() {
		unlock, err := t4.LockSpan(ctx, []byte("b"), []byte("d"))
		if unlock != nil {
			unlock()
		}
		spanErr <- err
	}()
	time.Sleep(20 * time.Millisecond)
	err := t3.Lock(ctx, []byte("z"))
	if err == nil {
		err = <-spanErr
	} else {
		t3.Rollback()
		if e := <-spanErr; e != nil {
			t.Fatalf("the span after the deadlock victim gave up: %v", e)
		}
	}
	if sqlerr.Code(err) != sqlerr.DeadlockDetected {
		t.Fatalf("want 40P01, got %v", err)
	}
	t3.Rollback()
	t4.Rollback()
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d lock records left", n)
	}
}

// TestLockRecordsInStore: a lock is a record in the store while its
// transaction is open, of the strength taken and naming the transaction;
// ROLLBACK TO SAVEPOINT deletes the records taken after the savepoint; the
// commit batch deletes the rest; a record of a transaction that is gone
// (a crash) is removed by the first transaction that meets it, and
// Recover removes them all at startup.
func TestLockRecordsInStore(t *testing.T) {
	m := newTestManager(t)
	ctx := context.Background()
	k := key(1, "row")
	records := func() []mvcc.LockRecord {
		var out []mvcc.LockRecord
		if err := mvcc.ScanLocks(m.Engine().LocalReader(), storage.Span{}, func(r mvcc.LockRecord) error {
			out = append(out, r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := begin(t, m, ReadCommitted)
	if err := a.LockStrength(ctx, k, mvcc.Share); err != nil {
		t.Fatal(err)
	}
	if rs := records(); len(rs) != 1 || rs[0].Strength != mvcc.Share || rs[0].Txn.ID != a.meta.ID || string(rs[0].Key) != string(k) {
		t.Fatalf("records %+v", rs)
	}
	// Its transaction record: PENDING, anchored at its first lock's key.
	if rec, ok, err := mvcc.GetTxnRecord(m.Engine().LocalReader(), k, a.meta.ID); err != nil || !ok || rec.Status != mvcc.Pending {
		t.Fatalf("transaction record %+v found %v (%v), want PENDING", rec, ok, err)
	}
	if err := a.Savepoint("s"); err != nil {
		t.Fatal(err)
	}
	if err := a.LockStrength(ctx, k, mvcc.Update); err != nil {
		t.Fatal(err)
	}
	if err := a.Lock(ctx, key(1, "other")); err != nil {
		t.Fatal(err)
	}
	if n := len(records()); n != 3 {
		t.Fatalf("%d records after the savepoint, want 3", n)
	}
	if err := a.RollbackToSavepoint("s"); err != nil {
		t.Fatal(err)
	}
	if rs := records(); len(rs) != 1 || rs[0].Strength != mvcc.Share {
		t.Fatalf("after ROLLBACK TO: %+v", rs)
	}
	// Another transaction's FOR UPDATE waits for a's FOR SHARE and gets
	// the key once a commits.
	b := begin(t, m, ReadCommitted)
	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx, k) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("FOR UPDATE granted over FOR SHARE: %v", err)
	default:
	}
	if err := a.Batch().Set(key(1, "w"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if rs := records(); len(rs) != 1 || rs[0].Txn.ID != b.meta.ID || rs[0].Strength != mvcc.Update {
		t.Fatalf("after a's commit: %+v", rs)
	}
	if _, ok, err := mvcc.GetTxnRecord(m.Engine().LocalReader(), k, a.meta.ID); err != nil || ok {
		t.Fatalf("a's transaction record after its commit: found %v (%v)", ok, err)
	}
	b.Rollback()
	if n := len(records()); n != 0 {
		t.Fatalf("%d records after rollback", n)
	}

	// Records of transactions this process does not know: a crash left
	// them. The first to meet one removes it; Recover removes the rest.
	orphan := func(k []byte) {
		lb := m.Engine().NewLocalBatch()
		defer lb.Close()
		meta := mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: k}
		if _, err := mvcc.AcquireLock(lb, k, &meta, storage.MaxTimestamp, mvcc.Update); err != nil {
			t.Fatal(err)
		}
		if err := mvcc.PutTxnRecord(lb, k, meta.ID, &mvcc.TxnRecord{Status: mvcc.Pending}); err != nil {
			t.Fatal(err)
		}
		if err := lb.CommitNoSync(); err != nil {
			t.Fatal(err)
		}
	}
	orphan(k)
	orphan(key(1, "a"))
	orphan(key(2, "b"))
	c := begin(t, m, ReadCommitted)
	if err := c.TryLockStrength(k, mvcc.Update); err != nil {
		t.Fatalf("a dead transaction's record held the key: %v", err)
	}
	locks, err := m.Locks()
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) != 1 || locks[0].Txn != c.ID() {
		t.Fatalf("pg_locks shows %+v, want c's lock only", locks)
	}
	c.Rollback()
	if n, nrec, err := m.Recover(); err != nil || n != 2 || nrec != 3 {
		t.Fatalf("Recover removed %d lock records and %d transaction records (%v), want 2 and 3", n, nrec, err)
	}
	if n := len(records()); n != 0 {
		t.Fatalf("%d records after Recover", n)
	}
	var left int
	if err := mvcc.ScanTxnRecords(m.Engine().LocalReader(), func([]byte, mvcc.TxnID, mvcc.TxnRecord) error { left++; return nil }); err != nil || left != 0 {
		t.Fatalf("%d transaction records left (%v)", left, err)
	}
	if _, counted := lockTableCounts(m); counted != 0 {
		t.Fatalf("the latch shards count %d records, want 0", counted)
	}
}
