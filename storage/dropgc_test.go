package storage

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCollectDropped: a dropped table's keys stay until its window has
// passed the drop and no read holds a timestamp before it; then one call
// removes its rows and its GC threshold keys, leaves other tables alone,
// and a read that starts while it runs is refused, not served half a
// table.
func TestCollectDropped(t *testing.T) {
	fs := NewMemFS()
	e := openMem(t, fs, Options{NoSync: true, GCInterval: time.Hour})
	defer e.Close()
	ctx := context.Background()
	k := func(table uint64, s string) []byte { return append(TablePrefix(table), s...) }
	mustCommit(t, e, func(b *Batch) {
		must(t, b.Set(k(1, "a"), []byte("v1")))
		must(t, b.Set(k(1, "b"), []byte("v1")))
		must(t, b.Set(k(2, "a"), []byte("x")))
	})
	time.Sleep(2 * time.Millisecond)
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k(1, "a"), []byte("v2"))) })
	time.Sleep(2 * time.Millisecond)
	// A version GC pass leaves a threshold key inside table 1.
	if _, err := e.GCSpan(ctx, Span{Start: k(1, "b"), End: TableSpan(1).End}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	before, err := e.ReadTimestamp()
	must(t, err)
	dropped, err := e.ReadTimestamp() // the drop's commit timestamp
	must(t, err)
	hold, err := e.HoldReads(before)
	must(t, err)
	// Inside the window: nothing happens.
	if ok, err := e.CollectDropped(ctx, TableSpan(1), dropped, time.Hour, nil); ok || err != nil {
		t.Fatalf("inside the window: %v %v", ok, err)
	}
	time.Sleep(2 * time.Millisecond)
	// Past the window, but a read holds a time before the drop.
	if ok, err := e.CollectDropped(ctx, TableSpan(1), dropped, time.Millisecond, nil); ok || err != nil {
		t.Fatalf("under a read hold: %v %v", ok, err)
	}
	if v, ok, err := e.At(before).Get(k(1, "a")); err != nil || !ok || string(v) != "v2" {
		t.Fatalf("kept rows at the old time: %q %v %v", v, ok, err)
	}
	hold.Release()
	var refused error
	forgot := false
	ok, err := e.CollectDropped(ctx, TableSpan(1), dropped, time.Millisecond, func() {
		forgot = true
		// Between the deletion and the end of the call, reads of the
		// span are refused by the threshold in memory.
		_, refused = e.At(before).NewIter(TableSpan(1))
	})
	if !ok || err != nil || !forgot {
		t.Fatalf("collect: %v %v (forget called: %v)", ok, err, forgot)
	}
	var below *BelowGCThresholdError
	if !errors.As(refused, &below) || below.Threshold.Less(dropped) {
		t.Fatalf("a read during the collection: %v", refused)
	}
	// Gone at every time, thresholds included; table 2 untouched.
	it, err := e.NewIter(TableSpan(1))
	must(t, err)
	if it.First() {
		t.Fatalf("table 1 still has %s", FormatKey(it.Key()))
	}
	must(t, it.Close())
	if got := e.GCThresholdOf(TableSpan(1)); !got.IsEmpty() {
		t.Fatalf("threshold of the collected span: %s", got)
	}
	n := 0
	lower, upper := engineBounds(PrefixSpan(gcThresholdPrefix))
	pit, err := e.db.NewIter(nil)
	must(t, err)
	for ok := pit.SeekGE(lower); ok && string(pit.Key()) < string(upper); ok = pit.Next() {
		n++
	}
	must(t, pit.Close())
	if n != 0 {
		t.Fatalf("%d GC threshold keys left", n)
	}
	if v, ok, err := e.At(before).Get(k(2, "a")); err != nil || !ok || string(v) != "x" {
		t.Fatalf("other table: %q %v %v", v, ok, err)
	}
}
