package partition

import (
	"errors"
	"testing"
	"time"
)

// TestSortedWrites: the deltas of a sorted load over two tables of
// several shards land in the shards that hold the keys (checked against
// a count of each span), with one write operation per key; a split
// between BeginSorted and Lock makes Lock ask for the keys again; a split
// waits while the locks are held; a table without a map is refused.
func TestSortedWrites(t *testing.T) {
	e := newEnv(t)
	const table, other = 10, 11
	e.create(table, key(table, 100), key(table, 200))
	e.create(other, key(other, 50))
	b := e.eng.NewBatch()
	defer b.Close()
	// load writes the keys to b (once) and Puts them to s.
	load := func(s *SortedWrites, from int, write bool) {
		t.Helper()
		put := func(id uint64, k []byte, v string) {
			t.Helper()
			if write {
				if err := b.Set(k, []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Put(id, k, len(v)); err != nil {
				t.Fatal(err)
			}
		}
		for i := from; i < 300; i += 3 {
			put(table, key(table, i), "value")
		}
		for i := from; i < 100; i += 7 {
			put(other, key(other, i), "v")
		}
		if from == 0 {
			put(table, key(table, 1), "out of order") // still counted where it lands
		}
	}
	s, err := e.m.BeginSorted([]uint64{other, table, table})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(99, key(99, 1), 1); err == nil {
		t.Fatal("a table not given to BeginSorted was accepted")
	}
	load(s, 0, true)
	if reroute, err := s.Lock(); err != nil || reroute {
		t.Fatalf("lock: %v %v", reroute, err)
	}
	split := make(chan error, 1)
	go func() {
		_, err := e.m.Split(table, [][]byte{key(table, 250)})
		split <- err
	}()
	select {
	case err := <-split:
		t.Fatalf("a split landed while the load held the locks: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := <-split; err != nil {
		t.Fatal(err)
	}
	e.checkStats(table)
	e.checkStats(other)
	st, err := e.m.Stats(e.m.Map(other))
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Rows != 8 || st[1].Rows != 7 || st[0].Writes != 8 || st[1].Writes != 7 {
		t.Fatalf("stats of other: %+v", st)
	}

	// A split after BeginSorted: Lock asks for the keys again, which
	// then land in the new shards.
	b2 := e.eng.NewBatch()
	defer b2.Close()
	b = b2
	s, err = e.m.BeginSorted([]uint64{table, other})
	if err != nil {
		t.Fatal(err)
	}
	load(s, 2, true)
	if _, err := e.m.Split(table, [][]byte{key(table, 150)}); err != nil {
		t.Fatal(err)
	}
	if reroute, err := s.Lock(); err != nil || !reroute {
		t.Fatalf("lock after a split: %v %v", reroute, err)
	}
	load(s, 2, false)
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	s.Close() // after Commit: nothing to release
	e.checkStats(table)
	e.checkStats(other)

	if _, err := e.m.BeginSorted([]uint64{table, 42}); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("table 42: %v", err)
	}
	s, _ = e.m.BeginSorted([]uint64{table})
	if err := s.Commit(b); !errors.Is(err, ErrInvariant) {
		t.Fatalf("commit without lock: %v", err)
	}
	e.check()
}
