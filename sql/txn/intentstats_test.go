package txn

import (
	"context"
	"fmt"
	"testing"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// skey is a key of table 1 that can be a pivot (it starts like a key
// column).
func skey(s string) []byte { return key(1, string([]byte{byte(storage.TagValue)})+s) }

// checkShardStats compares table 1's per-shard statistics with a count of
// its newest rows.
func checkShardStats(t *testing.T, m *Manager) {
	t.Helper()
	sm := m.shards.Map(1)
	st, err := m.shards.Stats(sm)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sm.Shards() {
		var rows, size int64
		if err := storage.Scan(m.Engine(), s.Span, func(k, v []byte) error {
			rows++
			size += partition.RowSize(k, len(v))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if st[i].Rows != rows || st[i].Bytes != size {
			t.Errorf("shard %d %s: statistics say %d rows, %d bytes; the data has %d rows, %d bytes",
				s.ID, s.Span, st[i].Rows, st[i].Bytes, rows, size)
		}
	}
}

// TestIntentsStats: the shard statistics of a block whose writes went to
// intents are right after its commit (updates, deletes, inserts, a key
// written twice, a key inserted then deleted, a split while the block is
// open), and the block keeps no per-row record of them meanwhile (its
// memory does not grow with the rows it writes).
func TestIntentsStats(t *testing.T) {
	m := newIntentsManager(t)
	ctx := context.Background()
	// Committed rows, through the one-batch commit.
	seed := begin(t, m, ReadCommitted)
	for i := range 200 {
		iput(t, seed, skey(fmt.Sprintf("k%03d", i)), "0123456789")
	}
	if err := seed.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.shards.Split(1, [][]byte{skey("k100")}); err != nil {
		t.Fatal(err)
	}
	checkShardStats(t, m)

	withFlushBytes(t, 2<<10)
	tx := begin(t, m, ReadCommitted)
	maxWrites := 0
	note := func() { maxWrites = max(maxWrites, tx.writes.Len()) }
	for i := range 50 { // longer values
		k := skey(fmt.Sprintf("k%03d", i*4))
		if err := tx.Lock(ctx, k); err != nil {
			t.Fatal(err)
		}
		if err := tx.PutRow(1, k, []byte("a longer value than before"), true, 10); err != nil {
			t.Fatal(err)
		}
		note()
	}
	for i := range 50 { // deletes
		k := skey(fmt.Sprintf("k%03d", i*4+1))
		if err := tx.Lock(ctx, k); err != nil {
			t.Fatal(err)
		}
		if err := tx.DeleteRow(1, k, 10); err != nil {
			t.Fatal(err)
		}
		note()
	}
	// A split while the block's intents wait.
	if _, err := m.shards.Split(1, [][]byte{skey("k050"), skey("n150")}); err != nil {
		t.Fatal(err)
	}
	for i := range 300 { // inserts
		iput(t, tx, skey(fmt.Sprintf("n%03d", i)), fmt.Sprintf("value %d", i))
		note()
	}
	for i := range 20 { // inserted, then deleted
		k := skey(fmt.Sprintf("x%03d", i))
		iput(t, tx, k, "short-lived")
		if err := tx.DeleteRow(1, k, len("short-lived")); err != nil {
			t.Fatal(err)
		}
		note()
	}
	// Written twice: the second value counts.
	k := skey("k002")
	if err := tx.Lock(ctx, k); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"first", "second, longer"} {
		if err := tx.PutRow(1, k, []byte(v), true, 10); err != nil {
			t.Fatal(err)
		}
	}
	if !tx.HasIntents() {
		t.Fatal("the block wrote no intents")
	}
	// 2 KB of batch holds a few dozen rows: the record of writes must not
	// keep the hundreds written.
	if maxWrites > 100 {
		t.Fatalf("the block recorded up to %d writes in memory at once", maxWrites)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := intentsIn(t, m); n != 0 {
		t.Fatalf("%d intents after the commit", n)
	}
	checkShardStats(t, m)
}

// TestIntentsStatsRecovered: the intents of a transaction whose process
// died after its commit point are counted once by the recovery that
// resolves them.
func TestIntentsStatsRecovered(t *testing.T) {
	withFlushBytes(t, 0)
	m := newIntentsManager(t)
	seed := begin(t, m, ReadCommitted)
	iput(t, seed, skey("a"), "old")
	if err := seed.Commit(); err != nil {
		t.Fatal(err)
	}
	committed := begin(t, m, ReadCommitted)
	iput(t, committed, skey("a"), "a new value")
	iput(t, committed, skey("b"), "b1")
	idel(t, committed, skey("c")) // never existed
	lb := m.Engine().NewLocalBatch()
	if err := committed.putCommittedRecord(lb, now(t, m), committed.batch.IntentSpans()); err != nil {
		t.Fatal(err)
	}
	if err := lb.CommitNoSync(); err != nil {
		t.Fatal(err)
	}
	lb.Close()
	m2 := NewManager(m.Engine(), m.shards)
	if _, _, err := m2.Recover(); err != nil {
		t.Fatal(err)
	}
	checkShardStats(t, m)
	// A second recovery finds nothing to count again.
	if _, _, err := NewManager(m.Engine(), m.shards).Recover(); err != nil {
		t.Fatal(err)
	}
	checkShardStats(t, m)
}

// TestIntentsSavepointLocks: with a savepoint open (psql's
// ON_ERROR_ROLLBACK), a flush drops the lock records of the keys locked
// after it, so a block's lock records do not grow with the rows it
// writes; ROLLBACK TO the savepoint still frees those keys, keeps the
// locks taken before it, and the savepoint works again afterwards.
func TestIntentsSavepointLocks(t *testing.T) {
	withFlushBytes(t, 2<<10)
	m := newIntentsManager(t)
	ctx := context.Background()
	tx := begin(t, m, ReadCommitted)
	// Locked before the savepoint, written after it.
	if err := tx.LockStrength(ctx, skey("held"), mvcc.Share); err != nil {
		t.Fatal(err)
	}
	if err := tx.Savepoint("s"); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		iput(t, tx, skey("held"), "written after the savepoint")
		for i := range 500 {
			iput(t, tx, skey(fmt.Sprintf("r%03d", i)), "a row written after the savepoint")
		}
		if !tx.HasIntents() {
			t.Fatal("the block wrote no intents")
		}
		if n := countLockRecords(t, m); n > 100 {
			t.Fatalf("round %d: %d lock records with a savepoint open after 500 rows", round, n)
		}
		if err := tx.RollbackToSavepoint("s"); err != nil {
			t.Fatal(err)
		}
		if n := intentsIn(t, m); n != 0 {
			t.Fatalf("round %d: %d intents after ROLLBACK TO the savepoint", round, n)
		}
		other := begin(t, m, ReadCommitted)
		for i := range 500 {
			if err := other.TryLockStrength(skey(fmt.Sprintf("r%03d", i)), mvcc.Update); err != nil {
				t.Fatalf("round %d: row %d still locked after ROLLBACK TO: %v", round, i, err)
			}
		}
		if err := other.TryLockStrength(skey("held"), mvcc.Share); err != nil {
			t.Fatalf("round %d: FOR SHARE of the key locked before the savepoint: %v", round, err)
		}
		if err := other.TryLockStrength(skey("held"), mvcc.Update); err != ErrLockNotAvailable {
			t.Fatalf("round %d: FOR UPDATE of the key locked FOR SHARE before the savepoint: %v, want it held", round, err)
		}
		other.Rollback()
	}
	iput(t, tx, skey("r000"), "committed")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	v, ok, err := m.Engine().Get(skey("r000"))
	if err != nil || !ok || string(v) != "committed" {
		t.Fatalf("r000 after the commit: %q %v %v", v, ok, err)
	}
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d lock records after the commit", n)
	}
	checkShardStats(t, m)
}
