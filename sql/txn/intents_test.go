package txn

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// withFlushBytes runs the test with IntentFlushBytes at n.
func withFlushBytes(t *testing.T, n int) {
	old := IntentFlushBytes
	IntentFlushBytes = n
	t.Cleanup(func() { IntentFlushBytes = old })
}

// iput locks key and writes value through tx (a table-1 row).
func iput(t *testing.T, tx *Txn, k []byte, v string) {
	t.Helper()
	if err := tx.Lock(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if err := tx.PutRow(1, k, []byte(v), false, 0); err != nil {
		t.Fatal(err)
	}
}

// idel locks key and deletes it through tx.
func idel(t *testing.T, tx *Txn, k []byte) {
	t.Helper()
	if err := tx.Lock(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if err := tx.DeleteRow(1, k, 1); err != nil {
		t.Fatal(err)
	}
}

// rows renders what r shows of table 1, by a scan and by point reads of
// the keys a..e, which must agree.
func rows(t *testing.T, r storage.Reader) string {
	t.Helper()
	var out string
	if err := storage.Scan(r, storage.Span{Start: storage.TablePrefix(1), End: storage.TablePrefix(2)}, func(k, v []byte) error {
		out += fmt.Sprintf("%s=%s ", k[len(storage.TablePrefix(1)):], v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var points string
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		v, ok, err := r.Get(key(1, s))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			points += fmt.Sprintf("%s=%s ", s, v)
		}
	}
	if points != out {
		t.Fatalf("a scan shows %q, point reads %q", out, points)
	}
	// Backwards too.
	it, err := r.NewIter(storage.Span{Start: storage.TablePrefix(1), End: storage.TablePrefix(2)})
	if err != nil {
		t.Fatal(err)
	}
	var back []string
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append([]string{fmt.Sprintf("%s=%s ", it.Key()[len(storage.TablePrefix(1)):], it.Value())}, back...)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	var bs string
	for _, s := range back {
		bs += s
	}
	if bs != out {
		t.Fatalf("a forward scan shows %q, a backward one %q", out, bs)
	}
	return out
}

// newIntentsManager is newTestManager with table 1's shard map, for
// PutRow's statistics.
func newIntentsManager(t *testing.T) *Manager {
	t.Helper()
	m := newTestManager(t)
	if err := m.shards.EnsureTable(1); err != nil {
		t.Fatal(err)
	}
	return m
}

// intentsIn counts the versions at intent timestamps in table 1.
func intentsIn(t *testing.T, m *Manager) int {
	t.Helper()
	it, err := m.Engine().LocalReader().NewIter(&pebble.IterOptions{
		LowerBound: enginekey.AppendBareKey(nil, storage.TablePrefix(1)),
		UpperBound: enginekey.AppendBareKey(nil, storage.TablePrefix(2)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if _, ts, versioned := enginekey.DecodeVersion(it.Key()); versioned && ts.WallTime == hlc.MaxTimestamp.WallTime {
			n++
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return n
}

func now(t *testing.T, m *Manager) hlc.Timestamp {
	t.Helper()
	ts, err := m.Engine().ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestIntentsVisibility: a block's writes flushed as intents show to its
// own reads (scan both ways, point reads, the locked re-read) and to no
// one else's, and the commit makes them versions at one timestamp.
func TestIntentsVisibility(t *testing.T) {
	withFlushBytes(t, 0)
	m := newIntentsManager(t)
	setup := begin(t, m, ReadCommitted)
	iput(t, setup, key(1, "a"), "a0")
	iput(t, setup, key(1, "c"), "c0")
	if err := setup.Commit(); err != nil {
		t.Fatal(err)
	}
	before := now(t, m)

	tx := begin(t, m, ReadCommitted)
	iput(t, tx, key(1, "b"), "b1")
	iput(t, tx, key(1, "a"), "a1")
	idel(t, tx, key(1, "c"))
	if !tx.HasIntents() {
		t.Fatal("no intents with IntentFlushBytes 0")
	}
	if n := intentsIn(t, m); n != 3 {
		t.Fatalf("%d intents in the store, want 3", n)
	}
	if got, want := rows(t, tx.Reader()), "a=a1 b=b1 "; got != want {
		t.Fatalf("own reads show %q, want %q", got, want)
	}
	if got, want := rows(t, tx.LatestReader()), "a=a1 b=b1 "; got != want {
		t.Fatalf("own latest reads show %q, want %q", got, want)
	}
	if got, want := rows(t, m.Engine().At(now(t, m))), "a=a0 c=c0 "; got != want {
		t.Fatalf("others see %q, want %q", got, want)
	}
	if got, want := rows(t, m.Engine()), "a=a0 c=c0 "; got != want {
		t.Fatalf("the newest state shows %q, want %q", got, want)
	}
	other := begin(t, m, ReadCommitted)
	if got, want := rows(t, other.LatestReader()), "a=a0 c=c0 "; got != want {
		t.Fatalf("another transaction sees %q, want %q", got, want)
	}
	// The intents are the locks of their keys: the lock records went,
	// pg_locks lists them still.
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d lock records beside the intents, want 0", n)
	}
	locks, err := m.Locks()
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, l := range locks {
		if l.Txn != tx.ID() || !l.Granted || l.Strength != mvcc.Update {
			t.Fatalf("pg_locks lists %+v", l)
		}
		held[l.Key] = true
	}
	if len(locks) != 3 || !held[string(key(1, "a"))] || !held[string(key(1, "b"))] || !held[string(key(1, "c"))] {
		t.Fatalf("pg_locks lists %+v, want a, b and c held by the writer", locks)
	}
	// Another writer waits for the key's holder, a block or an
	// autocommit statement alike, at any strength.
	for _, st := range []mvcc.Strength{mvcc.KeyShare, mvcc.Update} {
		if err := other.TryLockStrength(key(1, "b"), st); err != ErrLockNotAvailable {
			t.Fatalf("another writer got the %v lock of an intent's key: %v", st, err)
		}
	}
	other.Rollback()
	auto := begin(t, m, ReadCommitted)
	auto.SetOnePhase()
	if err := auto.TryLockStrength(key(1, "a"), mvcc.Update); err != ErrLockNotAvailable {
		t.Fatalf("an autocommit writer got the lock of an intent's key: %v", err)
	}
	auto.Rollback()
	// The transaction itself holds them still.
	if err := tx.TryLockStrength(key(1, "c"), mvcc.Update); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := intentsIn(t, m); n != 0 {
		t.Fatalf("%d intents after commit", n)
	}
	if got, want := rows(t, m.Engine().At(before)), "a=a0 c=c0 "; got != want {
		t.Fatalf("a read before the commit sees %q, want %q", got, want)
	}
	if got, want := rows(t, m.Engine().At(now(t, m))), "a=a1 b=b1 "; got != want {
		t.Fatalf("after the commit: %q, want %q", got, want)
	}
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d lock records after the commit", n)
	}
	var recs int
	if err := mvcc.ScanTxnRecords(m.Engine().LocalReader(), func([]byte, mvcc.TxnID, mvcc.TxnRecord) error { recs++; return nil }); err != nil || recs != 0 {
		t.Fatalf("%d transaction records after the commit (%v)", recs, err)
	}
}

// TestIntentsReadView: a statement's read view (NewReadView) sees the
// intents flushed before it and none flushed after, while the batch sees
// all.
func TestIntentsReadView(t *testing.T) {
	withFlushBytes(t, 0)
	m := newIntentsManager(t)
	tx := begin(t, m, ReadCommitted)
	iput(t, tx, key(1, "a"), "a1")
	view, done, err := tx.NewReadView()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	iput(t, tx, key(1, "a"), "a2")
	iput(t, tx, key(1, "b"), "b2")
	if got, want := rows(t, view), "a=a1 "; got != want {
		t.Fatalf("the view shows %q, want %q", got, want)
	}
	if got, want := rows(t, tx.Reader()), "a=a2 b=b2 "; got != want {
		t.Fatalf("the batch shows %q, want %q", got, want)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := rows(t, m.Engine()), "a=a2 b=b2 "; got != want {
		t.Fatalf("after the commit: %q, want %q", got, want)
	}
}

// TestIntentsSavepoints: ROLLBACK TO SAVEPOINT removes the intents flushed
// after the savepoint, and the ones before show again; a rollback removes
// them all.
func TestIntentsSavepoints(t *testing.T) {
	for _, flush := range []int{0, 1 << 30} {
		t.Run(fmt.Sprintf("flush=%d", flush), func(t *testing.T) {
			withFlushBytes(t, flush)
			m := newIntentsManager(t)
			tx := begin(t, m, ReadCommitted)
			iput(t, tx, key(1, "a"), "a1")
			iput(t, tx, key(1, "b"), "b1")
			if err := tx.Savepoint("s1"); err != nil {
				t.Fatal(err)
			}
			iput(t, tx, key(1, "a"), "a2")
			idel(t, tx, key(1, "b"))
			iput(t, tx, key(1, "c"), "c2")
			if err := tx.Savepoint("s2"); err != nil {
				t.Fatal(err)
			}
			iput(t, tx, key(1, "d"), "d3")
			if got, want := rows(t, tx.Reader()), "a=a2 c=c2 d=d3 "; got != want {
				t.Fatalf("before any rollback: %q, want %q", got, want)
			}
			if err := tx.RollbackToSavepoint("s2"); err != nil {
				t.Fatal(err)
			}
			if got, want := rows(t, tx.Reader()), "a=a2 c=c2 "; got != want {
				t.Fatalf("after ROLLBACK TO s2: %q, want %q", got, want)
			}
			if err := tx.RollbackToSavepoint("s1"); err != nil {
				t.Fatal(err)
			}
			if got, want := rows(t, tx.Reader()), "a=a1 b=b1 "; got != want {
				t.Fatalf("after ROLLBACK TO s1: %q, want %q", got, want)
			}
			// Again, after more writes: the savepoint still holds.
			iput(t, tx, key(1, "e"), "e4")
			if err := tx.RollbackToSavepoint("s1"); err != nil {
				t.Fatal(err)
			}
			iput(t, tx, key(1, "e"), "e5")
			if err := tx.RollbackToSavepoint("s1"); err != nil {
				t.Fatal(err)
			}
			iput(t, tx, key(1, "d"), "d5")
			if got, want := rows(t, tx.Reader()), "a=a1 b=b1 d=d5 "; got != want {
				t.Fatalf("after a second ROLLBACK TO s1: %q, want %q", got, want)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got, want := rows(t, m.Engine()), "a=a1 b=b1 d=d5 "; got != want {
				t.Fatalf("after the commit: %q, want %q", got, want)
			}
			if n := intentsIn(t, m); n != 0 {
				t.Fatalf("%d intents after commit", n)
			}

			rb := begin(t, m, ReadCommitted)
			iput(t, rb, key(1, "a"), "gone")
			iput(t, rb, key(1, "e"), "gone")
			rb.Rollback()
			if n := intentsIn(t, m); n != 0 {
				t.Fatalf("%d intents after rollback", n)
			}
			if got, want := rows(t, m.Engine()), "a=a1 b=b1 d=d5 "; got != want {
				t.Fatalf("after the rollback: %q, want %q", got, want)
			}
			if n := countLockRecords(t, m); n != 0 {
				t.Fatalf("%d lock records left", n)
			}
		})
	}
}

// TestIntentsRecover: a process that died with intents in the store (kill
// -9) leaves its record; recovery resolves the intents of a COMMITTED
// record at its timestamp (a crash during the resolution) and removes
// those of a PENDING one.
func TestIntentsRecover(t *testing.T) {
	withFlushBytes(t, 0)
	m := newIntentsManager(t)
	pending := begin(t, m, ReadCommitted)
	iput(t, pending, key(1, "a"), "pending")
	committed := begin(t, m, ReadCommitted)
	iput(t, committed, key(1, "b"), "b1")
	iput(t, committed, key(1, "c"), "c1")
	// committed's commit point landed, none of its resolution did.
	commitTS := now(t, m)
	lb := m.Engine().NewLocalBatch()
	if err := committed.putCommittedRecord(lb, commitTS, committed.batch.IntentSpans()); err != nil {
		t.Fatal(err)
	}
	if err := lb.CommitNoSync(); err != nil {
		t.Fatal(err)
	}
	lb.Close()
	if n := intentsIn(t, m); n != 3 {
		t.Fatalf("%d intents, want 3", n)
	}
	// The process dies: a new one opens the same store.
	m2 := NewManager(m.Engine(), m.shards)
	if _, recs, err := m2.Recover(); err != nil || recs != 2 {
		t.Fatalf("Recover removed %d records (%v), want 2", recs, err)
	}
	if n := intentsIn(t, m); n != 0 {
		t.Fatalf("%d intents after recovery", n)
	}
	if got, want := rows(t, m.Engine().At(commitTS)), "b=b1 c=c1 "; got != want {
		t.Fatalf("at the commit timestamp: %q, want %q", got, want)
	}
	if got, want := rows(t, m.Engine().At(commitTS.Prev())), ""; got != want {
		t.Fatalf("below the commit timestamp: %q, want %q", got, want)
	}
}

// TestIntentsBigBlock writes many rows in one block through intents with
// the default threshold: the batch stays below it.
func TestIntentsBigBlock(t *testing.T) {
	withFlushBytes(t, 64<<10)
	m := newIntentsManager(t)
	tx := begin(t, m, ReadCommitted)
	const n = 5000
	val := make([]byte, 100)
	for i := range n {
		k := key(1, fmt.Sprintf("k%06d", i))
		if err := tx.Lock(context.Background(), k); err != nil {
			t.Fatal(err)
		}
		if err := tx.PutRow(1, k, val, false, 0); err != nil {
			t.Fatal(err)
		}
		if tx.batch.Len() > IntentFlushBytes+1024 {
			t.Fatalf("the batch holds %d bytes, past %d", tx.batch.Len(), IntentFlushBytes)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	count := 0
	if err := storage.Scan(m.Engine(), storage.Span{Start: storage.TablePrefix(1), End: storage.TablePrefix(2)}, func(k, v []byte) error {
		count++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("%d rows after the commit, want %d", count, n)
	}
	if k := intentsIn(t, m); k != 0 {
		t.Fatalf("%d intents after commit", k)
	}
}
