package txn

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// beginMode starts a transaction whose locks are records (onePhase false,
// a transaction block's) or memory holds (a one-phase transaction's).
func beginMode(t *testing.T, m *Manager, onePhase bool) *Txn {
	t.Helper()
	tx := begin(t, m, ReadCommitted)
	if onePhase {
		tx.SetOnePhase()
	}
	return tx
}

func modeName(onePhase bool) string {
	if onePhase {
		return "one-phase"
	}
	return "block"
}

// TestOnePhaseLockConflicts: PostgreSQL's row lock conflict table holds
// between any two kinds of holders (records and memory holds, each way
// round), and a one-phase transaction writes no lock record and no
// transaction record.
func TestOnePhaseLockConflicts(t *testing.T) {
	strengths := []mvcc.Strength{mvcc.KeyShare, mvcc.Share, mvcc.NoKeyUpdate, mvcc.Update}
	m := newTestManager(t)
	k := key(1, "k")
	for _, aMem := range []bool{false, true} {
		for _, bMem := range []bool{false, true} {
			for _, held := range strengths {
				for _, want := range strengths {
					name := fmt.Sprintf("%s holds %v, %s asks %v", modeName(aMem), held, modeName(bMem), want)
					a, b := beginMode(t, m, aMem), beginMode(t, m, bMem)
					if err := a.LockStrength(context.Background(), k, held); err != nil {
						t.Fatal(name, err)
					}
					if aMem {
						if n := countLockRecords(t, m); n != 0 {
							t.Fatalf("%s: a one-phase lock wrote %d records", name, n)
						}
					}
					err := b.TryLockStrength(k, want)
					if got := errors.Is(err, ErrLockNotAvailable); got != held.Conflicts(want) {
						t.Errorf("%s: conflict %v (%v), want %v", name, got, err, held.Conflicts(want))
					}
					a.Rollback()
					b.Rollback()
				}
			}
		}
	}
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d lock records left", n)
	}
	var recs int
	if err := mvcc.ScanTxnRecords(m.Engine().LocalReader(), func([]byte, mvcc.TxnID, mvcc.TxnRecord) error { recs++; return nil }); err != nil || recs != 0 {
		t.Fatalf("%d transaction records left (%v)", recs, err)
	}
	if n := leftover(m); n != 0 {
		t.Fatalf("%d memory holds or counted records left", n)
	}
}

// memHoldCount counts the memory holds of m's lock table.
func memHoldCount(m *Manager) int {
	n, _ := lockTableCounts(m)
	return n
}

// leftover counts the memory holds and the records counted by the latch
// shards (latchShard.records): both 0 once no transaction is open.
func leftover(m *Manager) int {
	holds, records := lockTableCounts(m)
	return holds + records
}

func lockTableCounts(m *Manager) (holds, records int) {
	for i := range m.locks.latches {
		sh := &m.locks.latches[i]
		sh.Lock()
		for _, hs := range sh.mem {
			holds += len(hs)
		}
		records += sh.records
		sh.Unlock()
	}
	return holds, records
}

// TestOnePhaseIncrements: concurrent read-modify-write transactions of one
// counter, most one-phase and some blocks (records), lose no increment:
// each waits for the other kind as for its own.
func TestOnePhaseIncrements(t *testing.T) {
	m := newTestManager(t)
	k := key(1, "counter")
	put(t, m, k, string(binary.BigEndian.AppendUint64(nil, 0)))
	const workers, each = 6, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tx := beginMode(t, m, (w+i)%3 != 0)
				if err := tx.Lock(context.Background(), k); err != nil {
					t.Error(err)
					return
				}
				v, ok, err := tx.Get(k)
				if err != nil || !ok {
					t.Error(ok, err)
					return
				}
				if err := tx.Batch().Set(k, binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(v)+1)); err != nil {
					t.Error(err)
					return
				}
				if err := tx.Commit(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	tx := beginMode(t, m, true)
	defer tx.Rollback()
	v, _, err := tx.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint64(v); got != workers*each {
		t.Fatalf("counter %d, want %d", got, workers*each)
	}
	tx.Rollback()
	if n := countLockRecords(t, m); n != 0 || leftover(m) != 0 {
		t.Fatalf("%d lock records, %d memory holds or counted records left", n, leftover(m))
	}
}

// TestOnePhaseWaitsListedAndDeadlock: a block waiting for a one-phase
// transaction's memory hold, and a one-phase transaction waiting for a
// block's record, are in pg_locks (the holder granted, the waiter not);
// a cycle through both kinds is a deadlock (40P01).
func TestOnePhaseWaitsListedAndDeadlock(t *testing.T) {
	m := newTestManager(t)
	ctx := context.Background()
	k1, k2 := key(1, "a"), key(1, "b")
	one, blk := beginMode(t, m, true), beginMode(t, m, false)
	if err := one.Lock(ctx, k1); err != nil {
		t.Fatal(err)
	}
	if err := blk.Lock(ctx, k2); err != nil {
		t.Fatal(err)
	}
	// The block waits for the one-phase transaction's k1.
	got := make(chan error, 1)
	go func() { got <- blk.Lock(ctx, k1) }()
	waitFor := func(waiter, holder uint64) []LockInfo {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			locks, err := m.Locks()
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range locks {
				if !l.Granted && l.Txn == waiter && l.Holder == holder {
					return locks
				}
			}
		}
		t.Fatalf("no wait of %d for %d in pg_locks", waiter, holder)
		return nil
	}
	locks := waitFor(blk.ID(), one.ID())
	granted := map[string]uint64{}
	for _, l := range locks {
		if l.Granted {
			granted[l.Key] = l.Txn
		}
	}
	if granted[string(k1)] != one.ID() || granted[string(k2)] != blk.ID() {
		t.Fatalf("pg_locks %+v: want k1 held by %d (memory), k2 by %d (record)", locks, one.ID(), blk.ID())
	}
	// The one-phase transaction now asks for k2: a cycle.
	err := one.Lock(ctx, k2)
	if sqlerr.Code(err) != sqlerr.DeadlockDetected {
		t.Fatalf("one-phase after block: want 40P01, got %v", err)
	}
	one.Rollback()
	if err := <-got; err != nil {
		t.Fatalf("the block's wait once the one-phase transaction ended: %v", err)
	}
	// And the other way round: a one-phase transaction waits for a record.
	one = beginMode(t, m, true)
	go func() { got <- one.Lock(ctx, k1) }()
	waitFor(one.ID(), blk.ID())
	if err := blk.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	one.Rollback()
	if n := countLockRecords(t, m); n != 0 || leftover(m) != 0 {
		t.Fatalf("%d lock records, %d memory holds or counted records left", n, leftover(m))
	}
}

// TestKeepLocksInStore: a one-phase transaction that becomes a block
// (BEGIN after a write in one protocol cycle) turns its memory holds into
// records, one per strength taken, with its transaction record; its later
// locks are records, ROLLBACK TO SAVEPOINT gives them back, and its commit
// removes every record.
func TestKeepLocksInStore(t *testing.T) {
	m := newTestManager(t)
	ctx := context.Background()
	k := key(1, "k")
	a := beginMode(t, m, true)
	if err := a.LockStrength(ctx, k, mvcc.Share); err != nil {
		t.Fatal(err)
	}
	if err := a.LockStrength(ctx, k, mvcc.Update); err != nil {
		t.Fatal(err)
	}
	if err := a.KeepLocksInStore(); err != nil {
		t.Fatal(err)
	}
	if a.OnePhase() || memHoldCount(m) != 0 || countLockRecords(t, m) != 2 {
		t.Fatalf("one-phase %v, %d memory holds, %d records; want false, 0, 2", a.OnePhase(), memHoldCount(m), countLockRecords(t, m))
	}
	if rec, ok, err := mvcc.GetTxnRecord(m.Engine().LocalReader(), k, a.meta.ID); err != nil || !ok || rec.Status != mvcc.Pending {
		t.Fatalf("transaction record %+v found %v (%v), want PENDING", rec, ok, err)
	}
	b := beginMode(t, m, true)
	if err := b.TryLockStrength(k, mvcc.KeyShare); !errors.Is(err, ErrLockNotAvailable) {
		t.Fatalf("FOR KEY SHARE against the converted FOR UPDATE: %v", err)
	}
	if err := a.Savepoint("s"); err != nil {
		t.Fatal(err)
	}
	if err := a.Lock(ctx, key(1, "other")); err != nil {
		t.Fatal(err)
	}
	if n := countLockRecords(t, m); n != 3 {
		t.Fatalf("%d records, want 3", n)
	}
	if err := a.RollbackToSavepoint("s"); err != nil {
		t.Fatal(err)
	}
	if err := b.TryLockStrength(key(1, "other"), mvcc.Update); err != nil {
		t.Fatalf("a key given back by ROLLBACK TO: %v", err)
	}
	if err := a.Batch().Set(k, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := b.TryLockStrength(k, mvcc.Update); err != nil {
		t.Fatalf("after the block's commit: %v", err)
	}
	b.Rollback()
	if n := countLockRecords(t, m); n != 0 || leftover(m) != 0 {
		t.Fatalf("%d lock records, %d memory holds or counted records left", n, leftover(m))
	}
}

// TestOnePhaseSpanLock: a bulk load's span lock waits for a one-phase
// transaction's memory hold inside the span, and a one-phase lock inside
// a held span waits for it.
func TestOnePhaseSpanLock(t *testing.T) {
	m := newTestManager(t)
	ctx := context.Background()
	one, bulk := beginMode(t, m, true), beginMode(t, m, false)
	if err := one.Lock(ctx, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := bulk.LockSpan(ctx, []byte("b"), []byte("c"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("span taken over a memory hold inside it: %v", err)
	case <-time.After(30 * time.Millisecond):
	}
	one.Rollback()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	two := beginMode(t, m, true)
	if two.TryLock([]byte("b2")) {
		t.Fatal("a one-phase TryLock inside a held span succeeded")
	}
	if !two.TryLock([]byte("c2")) {
		t.Fatal("a one-phase TryLock outside the span failed")
	}
	two.Rollback()
	bulk.Rollback()
	if leftover(m) != 0 {
		t.Fatalf("%d memory holds or counted records left", leftover(m))
	}
}

// TestLockMeetsIntent: a lock on a key whose newest version is another
// transaction's intent (what a block's write becomes with issue 16 item 9
// step 2) waits while that transaction runs, whether the locker is a block
// or one-phase; once the intent's transaction is gone the intent is an
// orphan, which the locker aborts (the committed version under it is the
// newest again) before taking the key.
func TestLockMeetsIntent(t *testing.T) {
	for _, onePhase := range []bool{false, true} {
		t.Run(modeName(onePhase), func(t *testing.T) {
			m := newTestManager(t)
			ctx := context.Background()
			k := key(1, "k")
			put(t, m, k, "committed")
			// a is a live transaction (registered by its lock on another
			// key); its intent on k is written straight to the store.
			a := beginMode(t, m, false)
			if err := a.Lock(ctx, key(1, "a")); err != nil {
				t.Fatal(err)
			}
			now, err := m.Engine().Clock().Now()
			if err != nil {
				t.Fatal(err)
			}
			meta := a.meta
			meta.WriteTimestamp = now
			// Under the key's latch and counted, as a record is
			// (latchShard.records).
			sh := m.locks.latch(k)
			sh.Lock()
			lb := m.Engine().NewLocalBatch()
			if _, err := mvcc.WriteIntent(lb, k, &meta, now, []byte("provisional"), false, mvcc.Update); err != nil {
				t.Fatal(err)
			}
			if err := lb.CommitNoSync(); err != nil {
				t.Fatal(err)
			}
			lb.Close()
			sh.records++
			sh.Unlock()
			b := beginMode(t, m, onePhase)
			if err := b.TryLockStrength(k, mvcc.KeyShare); !errors.Is(err, ErrLockNotAvailable) {
				t.Fatalf("FOR KEY SHARE over a live intent: %v", err)
			}
			got := make(chan error, 1)
			go func() { got <- b.Lock(ctx, k) }()
			select {
			case err := <-got:
				t.Fatalf("a lock over a live transaction's intent did not wait: %v", err)
			case <-time.After(30 * time.Millisecond):
			}
			a.Rollback() // it does not know the intent: an orphan now
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			if lce, err := mvcc.CheckLock(m.Engine().LocalReader(), k, mvcc.KeyShare); err != nil || (lce != nil && lce.Intent) {
				t.Fatalf("the orphan intent is still there: %v %v", lce, err)
			}
			v, ok, err := b.Get(k)
			if err != nil || !ok || string(v) != "committed" {
				t.Fatalf("after the orphan's abort: %q %v %v, want the committed value", v, ok, err)
			}
			b.Rollback()
		})
	}
}
