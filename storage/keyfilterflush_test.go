package storage

import (
	"testing"
	"time"
)

// TestKeyFilterFlushAfterWrites: rows committed to a table with a key
// filter reach an sstable with its filter without waiting for the memtable
// to fill (64 MB here, far from full); rows of other tables arm nothing.
func TestKeyFilterFlushAfterWrites(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{KeyFilterFlushDelay: time.Millisecond})
	defer e.Close()
	e.SetKeyFilter(1, true)

	write := func(table uint64, from int) {
		t.Helper()
		b := e.NewBatch()
		defer b.Close()
		for k := from; k < from+500; k++ {
			if err := b.Set(rowKey(table, uint64(k)), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	// Table 2 has no filter: its commit arms no flush.
	write(2, 0)
	if e.flusher.armed.Load() || e.flusher.flushes.Load() != 0 {
		t.Fatalf("a commit to a table without a filter armed a flush")
	}

	write(1, 0)
	waitFilterBytes(t, e, 1, 500*KeyFilterBitsPerKey/8)
	if e.flusher.flushes.Load() == 0 {
		t.Fatalf("the filter appeared without a flush of the flusher")
	}

	// Later rows (here deletions) are flushed again.
	flushes := e.flusher.flushes.Load()
	b := e.NewBatch()
	if err := b.Delete(rowKey(1, 7)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	deadline := time.Now().Add(30 * time.Second)
	for e.flusher.flushes.Load() == flushes {
		if time.Now().After(deadline) {
			t.Fatalf("no flush after a deletion of a filtered table's row")
		}
		time.Sleep(time.Millisecond)
	}
}

// waitFilterBytes waits until the table has at least min bytes of key
// filter in its sstables. The deadline is far beyond the flush delay: the
// test fails only when no flush happens at all.
func waitFilterBytes(t *testing.T, e *Engine, table, min uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := e.KeyFilterBytes()
		if err != nil {
			t.Fatal(err)
		}
		if got[table] >= min {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("table %d: %d bytes of key filter, want at least %d", table, got[table], min)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestKeyFilterFlushClose closes engines with flushes pending and starting:
// closing waits for the flusher, which never touches a closed database.
func TestKeyFilterFlushClose(t *testing.T) {
	for i := 0; i < 50; i++ {
		delay := time.Duration(i%5) * 100 * time.Microsecond
		e := openMem(t, NewMemFS(), Options{KeyFilterFlushDelay: max(delay, time.Nanosecond)})
		e.SetKeyFilter(1, true)
		b := e.NewBatch()
		if err := b.Set(rowKey(1, uint64(i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		b.Close()
		time.Sleep(delay)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
