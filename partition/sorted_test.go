package partition

import (
	"errors"
	"testing"
	"time"
)

// TestSortedWrites: the deltas of a sorted load over two tables of
// several shards land in the shards that hold the keys (checked against
// a count of each span), with one write operation per key; a split waits
// for the locks; a table without a map is refused.
func TestSortedWrites(t *testing.T) {
	e := newEnv(t)
	const table, other = 10, 11
	e.create(table, key(table, 100), key(table, 200))
	e.create(other, key(other, 50))
	s, err := e.m.BeginSorted([]uint64{other, table, table})
	if err != nil {
		t.Fatal(err)
	}
	// A split of table waits for the load's locks.
	split := make(chan error, 1)
	go func() {
		_, err := e.m.Split(table, [][]byte{key(table, 150)})
		split <- err
	}()
	b := e.eng.NewBatch()
	defer b.Close()
	put := func(id uint64, k []byte, v string) {
		t.Helper()
		if err := b.Set(k, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(id, k, len(v)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 300; i += 3 {
		put(table, key(table, i), "value")
	}
	for i := 0; i < 100; i += 7 {
		put(other, key(other, i), "v")
	}
	put(table, key(table, 1), "out of order") // still counted where it lands
	if err := s.Put(99, key(99, 1), 1); err == nil {
		t.Fatal("a table not given to BeginSorted was accepted")
	}
	select {
	case err := <-split:
		t.Fatalf("split ran during the load: %v", err)
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
	if _, err := e.m.BeginSorted([]uint64{table, 42}); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("table 42: %v", err)
	}
	// Close without Commit releases the locks: a split goes through.
	s, err = e.m.BeginSorted([]uint64{table})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := e.m.Split(table, [][]byte{key(table, 250)}); err != nil {
		t.Fatal(err)
	}
	e.check()
}
