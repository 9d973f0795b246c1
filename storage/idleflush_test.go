package storage

import (
	"encoding/binary"
	"testing"
	"time"
)

// TestIdleFlush drives the idle flusher's look by hand (its own loop is
// off): memtables are flushed at the first look after one that saw no new
// writes, only when they hold at least idleFlushMinBytes, never while
// writes go on, and not again while the flush runs.
func TestIdleFlush(t *testing.T) {
	e, err := Open(t.TempDir(), Options{NoSync: true, Logger: quietLogger{}, IdleFlushTick: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	f := &idleFlusher{db: e.db}
	value := make([]byte, 1000)
	next := 0
	write := func(bytes int) {
		t.Helper()
		b := e.NewBatch()
		for n := 0; n < bytes; n += len(value) {
			if err := b.Set(binary.BigEndian.AppendUint64(TablePrefix(1), uint64(next)), value); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	l0 := func() int64 { return e.Metrics().Levels[0].TablesCount }

	write(2 << 20)
	if f.look() {
		t.Fatal("flushed at a look that saw new writes")
	}
	for range 3 {
		write(64 << 10)
		if f.look() {
			t.Fatal("flushed while writes go on")
		}
	}
	if !f.look() {
		t.Fatal("did not flush 2 MB of idle memtable")
	}
	if f.look() {
		t.Fatal("flushed again while the first flush ran")
	}
	deadline := time.Now().Add(10 * time.Second)
	for l0() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle flush made no L0 file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for f.pending != nil {
		f.look()
		time.Sleep(10 * time.Millisecond)
	}
	before := l0()
	if f.look() || f.look() {
		t.Fatal("flushed an empty memtable")
	}
	write(256 << 10)
	f.look()
	if f.look() {
		t.Fatal("flushed an idle memtable under idleFlushMinBytes")
	}
	if got := f.flushes.Load(); got != 1 || l0() != before {
		t.Fatalf("%d flushes, L0 files %d -> %d; want 1 flush and no new file", got, before, l0())
	}
}
