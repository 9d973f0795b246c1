package partition

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage"
)

// fill writes rows (i, 'r') for i in [lo, hi) with values of i%50 bytes.
func fill(e *env, table uint64, lo, hi int) {
	e.t.Helper()
	var keys, values [][]byte
	for i := lo; i < hi; i++ {
		keys = append(keys, key(table, i, "r"))
		values = append(values, bytes.Repeat([]byte{'x'}, i%50))
	}
	e.mustWrite(table, keys, values)
}

// deleteRows deletes rows (i, 'r') for i in [lo, hi).
func deleteRows(e *env, table uint64, lo, hi int) {
	e.t.Helper()
	var keys, values [][]byte
	for i := lo; i < hi; i++ {
		keys = append(keys, key(table, i, "r"))
		values = append(values, nil)
	}
	e.mustWrite(table, keys, values)
}

func pendingCount(t *testing.T, e *env, table uint64) int {
	t.Helper()
	st, err := e.m.Stats(e.m.Map(table))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range st {
		if s.Pending {
			n++
		}
	}
	return n
}

// TestCrashBeforeLanding simulates a crash after a reshape's swap batch
// committed and before the new shards' base counts landed: the knob stops
// the reshape there, writes continue (their deltas go to the new shards),
// and the engine is closed and reopened. Load must find the pending markers
// and recount those shards, so that every count is exact again.
//
//	before   |            #1                 |
//	swap     |     #2 (pending)  |  #3 (pending)   <- crash here
//	writes   deltas to #2 and #3 only
//	Load     recount #2 and #3 from the data: exact
func TestCrashBeforeLanding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reshape func(m *Manager, table uint64) error
		pending int
	}{
		{"split", func(m *Manager, table uint64) error {
			_, err := m.Split(table, [][]byte{key(table, 500)})
			return err
		}, 2},
		{"split in three", func(m *Manager, table uint64) error {
			_, err := m.Split(table, [][]byte{key(table, 300), key(table, 600, "r")})
			return err
		}, 3},
		{"reshard", func(m *Manager, table uint64) error {
			_, err := m.Reshard(table, [][]byte{key(table, 100), key(table, 700)})
			return err
		}, 3},
		{"recount", func(m *Manager, table uint64) error {
			_, err := m.Recount(table)
			return err
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			const table = 7
			e.create(table)
			fill(e, table, 0, 1000)
			e.checkStats(table)

			e.m.knobs.beforeLanding = func(uint64) error { return errSimulatedCrash }
			if err := tc.reshape(e.m, table); !errors.Is(err, errSimulatedCrash) {
				t.Fatalf("reshape: %v", err)
			}
			e.m.knobs.beforeLanding = nil
			if n := pendingCount(t, e, table); n != tc.pending {
				t.Fatalf("%d shards pending, want %d", n, tc.pending)
			}
			// The map itself is valid: the swap is atomic.
			e.check()

			// Writes after the swap: updates, inserts and deletes on both
			// sides of every new pivot.
			fill(e, table, 900, 1200)
			deleteRows(e, table, 0, 50)
			deleteRows(e, table, 450, 550)

			e.reopen()
			if n := pendingCount(t, e, table); n != 0 {
				t.Fatalf("%d shards still pending after Load", n)
			}
			e.check()
			e.checkStats(table)
		})
	}
}

// TestPendingRepairedByNextReshape leaves shards pending (a landing that
// never happened, without a restart) and checks that the table's next
// reshape recounts them, whether it touches them or not.
func TestPendingRepairedByNextReshape(t *testing.T) {
	for _, next := range []string{"merge of the pending shards", "split elsewhere", "recount"} {
		t.Run(next, func(t *testing.T) {
			e := newEnv(t)
			const table = 7
			e.create(table, key(table, 800))
			fill(e, table, 0, 1000)
			e.m.knobs.beforeLanding = func(uint64) error { return errSimulatedCrash }
			if _, err := e.m.Split(table, [][]byte{key(table, 400)}); !errors.Is(err, errSimulatedCrash) {
				t.Fatal(err)
			}
			e.m.knobs.beforeLanding = nil
			fill(e, table, 350, 450)
			deleteRows(e, table, 0, 100)
			sm := e.m.Map(table)
			var err error
			switch next {
			case "merge of the pending shards":
				_, err = e.m.Merge(table, sm.Shard(0).ID, 2)
			case "split elsewhere":
				_, err = e.m.Split(table, [][]byte{key(table, 900)})
			case "recount":
				_, err = e.m.Recount(table)
			}
			if err != nil {
				t.Fatal(err)
			}
			e.check()
			e.checkStats(table)
		})
	}
}

// TestEnsureTable adopts a table whose rows were written without statistics
// (as before shard maps existed), with and without a crash before its count
// landed.
func TestEnsureTable(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			e := newEnv(t)
			const table = 7
			b := e.eng.NewBatch()
			for i := range 300 {
				if err := b.Set(key(table, i), bytes.Repeat([]byte{'y'}, i%7)); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			b.Close()
			if crash {
				e.m.knobs.beforeLanding = func(uint64) error { return errSimulatedCrash }
			}
			err := e.m.EnsureTable(table)
			if crash {
				if !errors.Is(err, errSimulatedCrash) {
					t.Fatal(err)
				}
				e.reopen()
			} else if err != nil {
				t.Fatal(err)
			}
			if e.m.Map(table).Len() != 1 {
				t.Fatalf("map:\n%s", e.m.Map(table))
			}
			e.check()
			e.checkStats(table)
			// Again: a no-op.
			if err := e.m.EnsureTable(table); err != nil {
				t.Fatal(err)
			}
			if st, _ := e.m.Stats(e.m.Map(table)); st[0].Rows != 300 {
				t.Fatalf("stats %+v", st[0])
			}
		})
	}
}

// TestCommitHoldsOffSwap stops a commit between routing its deltas and
// committing its batch, and starts a split of the shard it writes to
// meanwhile. The split must wait for the commit (the table's commit lock),
// or the deltas would go to a retired shard while the rows are missing from
// the split's snapshot.
func TestCommitHoldsOffSwap(t *testing.T) {
	e := newEnv(t)
	const table = 7
	e.create(table)
	fill(e, table, 0, 100)

	var wg sync.WaitGroup
	var splitErr error
	splitDone := make(chan struct{})
	e.m.knobs.afterRoute = func() {
		e.m.knobs.afterRoute = nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(splitDone)
			_, splitErr = e.m.Split(table, [][]byte{key(table, 50)})
		}()
		// Give the split every chance to run into the window; it must not
		// finish while the commit is held here.
		select {
		case <-splitDone:
			t.Error("split finished while a routed commit was in flight")
		case <-time.After(50 * time.Millisecond):
		}
	}
	fill(e, table, 0, 100) // Updates: deltas only in bytes.
	fill(e, table, 100, 150)
	wg.Wait()
	if splitErr != nil {
		t.Fatal(splitErr)
	}
	e.check()
	e.checkStats(table)
}

// TestLoadRejectsCorruptMap checks that Load refuses a persisted map that
// breaks the invariants rather than serving it.
func TestLoadRejectsCorruptMap(t *testing.T) {
	e := newEnv(t)
	const table = 7
	e.create(table, key(table, 10))
	// Remove pivot 0's record behind the manager's back.
	b := e.eng.NewBatch()
	if err := b.Delete(shardRecordKey(table, storage.TablePrefix(table))); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := e.m.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Fatalf("CheckInvariants: %v", err)
	}
	if err := e.eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, err := storage.Open("db", storage.Options{FS: e.fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	e.eng = eng
	if _, err := Load(eng, e.opts); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("Load: %v", err)
	}
}

// TestSplitInBackground: the split returns with its halves pending while
// the count is held back; writes on both sides of the pivot go on; once
// the count lands the statistics are exact, and the next reshape waits for
// it.
func TestSplitInBackground(t *testing.T) {
	e := newEnv(t)
	const table = 7
	e.create(table)
	fill(e, table, 0, 1000)
	release := make(chan struct{})
	e.m.knobs.beforeLanding = func(uint64) error { <-release; return nil }
	sm, err := e.m.SplitInBackground(table, [][]byte{key(table, 500)})
	if err != nil || sm.Len() != 2 {
		t.Fatalf("split: %v, %v", sm, err)
	}
	st, err := e.m.Stats(sm)
	if err != nil || !st[0].Pending || !st[1].Pending {
		t.Fatalf("stats before the count: %+v, %v", st, err)
	}
	// Writes while the count waits: they land as deltas after the
	// snapshot, on both halves.
	fill(e, table, 900, 1200)
	deleteRows(e, table, 0, 50)
	deleteRows(e, table, 450, 550)
	merged := make(chan error, 1)
	go func() {
		_, err := e.m.Merge(table, sm.Shard(0).ID, 2)
		merged <- err
	}()
	select {
	case err := <-merged:
		t.Fatalf("merge did not wait for the background count: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if err := <-merged; err != nil {
		t.Fatal(err)
	}
	e.m.WaitBackground()
	e.m.knobs.beforeLanding = nil
	e.check()
	e.checkStats(table)

	// A background count interrupted by a crash is repaired by Load.
	if _, err := e.m.SplitInBackground(table, [][]byte{key(table, 700)}); err != nil {
		t.Fatal(err)
	}
	e.m.WaitBackground()
	e.check()
	e.checkStats(table)
	e.m.knobs.beforeLanding = func(uint64) error { return errSimulatedCrash }
	if _, err := e.m.SplitInBackground(table, [][]byte{key(table, 300)}); err != nil {
		t.Fatal(err)
	}
	e.m.WaitBackground()
	e.m.knobs.beforeLanding = nil
	if n := pendingCount(t, e, table); n != 2 {
		t.Fatalf("%d shards pending after a failed background count, want 2", n)
	}
	e.reopen()
	e.check()
	e.checkStats(table)
}

// TestLoadMovesLegacyStats opens a data directory whose shard counters are
// in the layout before they were shard-local (system keys by shard id):
// Load must move each to its shard's key, drop the counter of a shard that
// no longer exists, and leave every count exact.
func TestLoadMovesLegacyStats(t *testing.T) {
	e := newEnv(t)
	e.create(7, key(7, 300), key(7, 600))
	e.create(8)
	fill(e, 7, 0, 1000)
	fill(e, 8, 0, 100)
	e.checkStats(7)
	e.checkStats(8)

	// Rewrite the counters into the old layout, as a binary before the
	// change left them, plus one of an unknown shard.
	b := e.m.store.NewBatch()
	for _, table := range []uint64{7, 8} {
		for _, s := range e.m.Map(table).shards {
			v, ok, err := e.m.store.Get(s.statsKey)
			if err != nil || !ok {
				t.Fatalf("counter of shard %d: %v %v", s.ID, ok, err)
			}
			if err := b.Delete(s.statsKey); err != nil {
				t.Fatal(err)
			}
			if err := b.Set(legacyStatsKey(table, s.ID), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Set(legacyStatsKey(7, 999), storage.AppendCounters(nil, 5, 50)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, err := e.m.Stats(e.m.Map(7)); err != nil || st[0].Rows != 0 {
		t.Fatalf("before Load, shard 0 counts %v (%v): want 0, the counter is in the old layout", st, err)
	}

	// A read-only manager (a follower's) leaves them for the writer.
	if _, err := Load(e.eng, Options{KeyColumns: keyColumns, ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.m.store.Get(legacyStatsKey(8, e.m.Map(8).shards[0].ID)); err != nil || !ok {
		t.Fatalf("a read-only Load moved the old counters: %v %v", ok, err)
	}

	e.reopen()
	e.check() // also: no counter left in the old layout
	e.checkStats(7)
	e.checkStats(8)
	// And they keep counting.
	deleteRows(e, 7, 250, 350)
	e.checkStats(7)
}
