package partition

import (
	"testing"

	"github.com/pivotdb/pivotdb/panics"
)

// TestPanicInBackgroundCount: a panic while a SplitInBackground counts its
// new shards is recovered and counted; the shards stay pending (as after a
// failed count), the table's op lock is released, and the next reshape
// recounts them, so the statistics come out exact.
func TestPanicInBackgroundCount(t *testing.T) {
	e := newEnv(t)
	const table = 7
	e.create(table)
	fill(e, table, 0, 1000)
	before := panics.Count()
	disarm := panics.Arm("partition.land", 1)
	defer disarm()
	if _, err := e.m.SplitInBackground(table, [][]byte{key(table, 500)}); err != nil {
		t.Fatal(err)
	}
	e.m.WaitBackground()
	if panics.Count() != before+1 {
		t.Fatalf("%d panics recovered, want 1", panics.Count()-before)
	}
	if n := pendingCount(t, e, table); n != 2 {
		t.Fatalf("%d shards pending after the panic, want 2", n)
	}
	e.check()
	// The op lock was released: the next reshape runs, and lands.
	if _, err := e.m.Recount(table); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, e, table); n != 0 {
		t.Fatalf("%d shards pending after a recount", n)
	}
	e.check()
	e.checkStats(table)
}
