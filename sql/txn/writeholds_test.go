package txn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// TestWriteHolds: with write holds on (COPY's block path), a block's
// write locks are memory holds that no other transaction gets past (a
// block's lock, a one-phase lock, a waiter that waits until the commit),
// no lock record is written per row, a flush turns the holds into the
// intents (or, for a key locked and not written, a record), ROLLBACK TO
// SAVEPOINT and the end give them back.
func TestWriteHolds(t *testing.T) {
	withFlushBytes(t, 2<<10)
	m := newIntentsManager(t)
	ctx := context.Background()
	tx := begin(t, m, ReadCommitted)
	iput(t, tx, skey("first"), "the first lock is a record, with the transaction record")
	tx.SetWriteHolds(true)
	// Locked, never written: it must become a record at the flush.
	if err := tx.Lock(ctx, skey("locked only")); err != nil {
		t.Fatal(err)
	}
	const n = 300
	maxRecords := 0
	for i := range n {
		iput(t, tx, skey(fmt.Sprintf("r%03d", i)), "a row of the block")
		if i%50 == 0 {
			maxRecords = max(maxRecords, countLockRecords(t, m))
		}
	}
	if !tx.HasIntents() {
		t.Fatal("the block wrote no intents")
	}
	if maxRecords > 2 {
		t.Fatalf("up to %d lock records while writing %d rows with write holds", maxRecords, n)
	}
	// The last rows are still in the batch, held in memory; the first are
	// intents; "locked only" is a record now.
	last, first := skey(fmt.Sprintf("r%03d", n-1)), skey("r000")
	other := begin(t, m, ReadCommitted)
	for _, k := range [][]byte{last, first, skey("locked only")} {
		if err := other.TryLockStrength(k, mvcc.KeyShare); err != ErrLockNotAvailable {
			t.Fatalf("another block's FOR KEY SHARE of %q: %v, want it held", k, err)
		}
	}
	if n := countLockRecords(t, m); n != 1 {
		t.Fatalf("%d lock records after the flushes, want 1 (the key locked only)", n)
	}
	one := m.Begin()
	one.SetOnePhase()
	if one.TryLock(last) {
		t.Fatal("a one-phase transaction locked a key the block holds in memory")
	}
	one.Rollback()
	// A savepoint: the holds taken after it go with ROLLBACK TO.
	if err := tx.Savepoint("s"); err != nil {
		t.Fatal(err)
	}
	iput(t, tx, skey("after savepoint"), "x")
	if err := other.TryLockStrength(skey("after savepoint"), mvcc.Update); err != ErrLockNotAvailable {
		t.Fatalf("a key held after the savepoint: %v", err)
	}
	if err := tx.RollbackToSavepoint("s"); err != nil {
		t.Fatal(err)
	}
	if err := other.TryLockStrength(skey("after savepoint"), mvcc.Update); err != nil {
		t.Fatalf("the key held after the savepoint, after ROLLBACK TO: %v", err)
	}
	other.Rollback()
	// A waiter on a held key gets it once the block commits, and then
	// reads the committed row.
	waiter := begin(t, m, ReadCommitted)
	got := make(chan error, 1)
	go func() { got <- waiter.Lock(ctx, last) }()
	select {
	case err := <-got:
		t.Fatalf("the waiter got the key while the block holds it: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if v, ok, err := waiter.Get(last); err != nil || !ok || string(v) != "a row of the block" {
		t.Fatalf("the waiter reads %q %v %v", v, ok, err)
	}
	waiter.Rollback()
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d lock records after the end", n)
	}
	for i := range m.locks.latches {
		if sh := &m.locks.latches[i]; len(sh.mem) != 0 || sh.records != 0 {
			t.Fatalf("latch shard %d: %d memory holds, %d records counted after the end", i, len(sh.mem), sh.records)
		}
	}
	checkShardStats(t, m)
}
