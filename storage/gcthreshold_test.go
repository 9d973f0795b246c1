package storage

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestGCThreshold: a pass over a shard raises its threshold to now minus
// the TTL, keeps it in the shard's key space across a reopen, and refuses
// reads below it (iterators, point reads, batches) while reads at or above
// it and of other tables work.
func TestGCThreshold(t *testing.T) {
	fs := NewMemFS()
	e := openMem(t, fs, Options{NoSync: true, GCInterval: time.Hour})
	k := func(table uint64, s string) []byte { return append(TablePrefix(table), s...) }
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k(1, "a"), []byte("old"))); must(t, b.Set(k(2, "a"), []byte("x"))) })
	before, err := e.ReadTimestamp()
	must(t, err)
	time.Sleep(5 * time.Millisecond)
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k(1, "a"), []byte("new"))) })
	if v, _, err := e.At(before).Get(k(1, "a")); err != nil || string(v) != "old" {
		t.Fatalf("before GC: %q %v", v, err)
	}
	time.Sleep(5 * time.Millisecond) // the new version leaves the 1ms window
	st, err := e.GCSpan(context.Background(), TableSpan(1), time.Millisecond)
	must(t, err)
	if !before.Less(st.Threshold) || st.Deleted != 1 {
		t.Fatalf("GC: %+v; want a threshold above %s and 1 version deleted", st, before)
	}
	check := func(e *Engine) {
		t.Helper()
		var below *BelowGCThresholdError
		if _, err := e.At(before).NewIter(TableSpan(1)); !errors.As(err, &below) {
			t.Fatalf("iterator below the threshold: %v", err)
		}
		if _, _, err := e.At(before).Get(k(1, "a")); !errors.As(err, &below) {
			t.Fatalf("point read below the threshold: %v", err)
		}
		b := e.NewBatch()
		defer b.Close()
		b.SetReadTimestamp(before)
		if _, err := b.NewIter(TableSpan(1)); !errors.As(err, &below) {
			t.Fatalf("batch iterator below the threshold: %v", err)
		}
		pr, err := b.NewPointReader()
		must(t, err)
		if _, _, err := pr.Get(k(1, "a")); !errors.As(err, &below) {
			t.Fatalf("batch point reader below the threshold: %v", err)
		}
		pr.Close()
		if below.Threshold != st.Threshold || below.ReadTimestamp != before {
			t.Fatalf("error %+v, want threshold %s", below, st.Threshold)
		}
		// Table 2 was not collected: readable at the old timestamp.
		if v, ok, err := e.At(before).Get(k(2, "a")); err != nil || !ok || string(v) != "x" {
			t.Fatalf("other table at the old timestamp: %q %v %v", v, ok, err)
		}
		if v, _, err := e.At(st.Threshold).Get(k(1, "a")); err != nil || string(v) != "new" {
			t.Fatalf("at the threshold: %q %v", v, err)
		}
		if got := e.GCThresholdOf(TableSpan(1)); got != st.Threshold {
			t.Fatalf("GCThresholdOf = %s, want %s", got, st.Threshold)
		}
	}
	check(e)
	must(t, e.Close())
	e = openMem(t, fs, Options{NoSync: true, GCInterval: time.Hour})
	defer e.Close()
	check(e)
	// Never lowered: a pass with a longer TTL keeps it.
	st2, err := e.GCSpan(context.Background(), TableSpan(1), time.Hour)
	must(t, err)
	if st2.Threshold != st.Threshold {
		t.Fatalf("a longer TTL moved the threshold from %s to %s", st.Threshold, st2.Threshold)
	}
}

// TestGCThresholdHolds: a pass never raises a threshold above an open
// read's hold, so the read keeps every version it needs.
func TestGCThresholdHolds(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true, GCInterval: time.Hour})
	defer e.Close()
	key := append(TablePrefix(1), 'a')
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(key, []byte("v1"))) })
	h, err := e.HoldReads(hlc.Timestamp{})
	must(t, err)
	ts, err := e.ReadTimestamp()
	must(t, err)
	if ts.Less(h.Timestamp()) {
		t.Fatalf("read timestamp %s below its hold %s", ts, h.Timestamp())
	}
	if old, ok := e.OldestReadHold(); !ok || old != h.Timestamp() {
		t.Fatalf("oldest hold %s %v", old, ok)
	}
	time.Sleep(5 * time.Millisecond)
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(key, []byte("v2"))) })
	st, err := e.GCSpan(context.Background(), TableSpan(1), time.Nanosecond)
	must(t, err)
	if ts.Less(st.Threshold) {
		t.Fatalf("threshold %s above the open read at %s", st.Threshold, ts)
	}
	if v, _, err := e.At(ts).Get(key); err != nil || string(v) != "v1" {
		t.Fatalf("held read after GC: %q %v", v, err)
	}
	h.Release()
	h.Release()
	if _, ok := e.OldestReadHold(); ok {
		t.Fatal("hold still registered after Release")
	}
	st, err = e.GCSpan(context.Background(), TableSpan(1), time.Nanosecond)
	must(t, err)
	if !ts.Less(st.Threshold) || st.Deleted != 1 {
		t.Fatalf("after release: %+v, want the old version gone", st)
	}
}

// TestGCThresholdSplitMerge: a threshold key covers its shard up to the
// next one of its table, so a split's right half keeps its parent's
// threshold and a merged shard gets the higher of its parts'.
func TestGCThresholdSplitMerge(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true, GCInterval: time.Hour})
	defer e.Close()
	tbl := TableSpan(7)
	mid := append(TablePrefix(7), 'm')
	left, right := Span{Start: tbl.Start, End: mid}, Span{Start: mid, End: tbl.End}
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(append(TablePrefix(7), 'a'), []byte("1"))) })
	whole, err := e.GCSpan(context.Background(), tbl, time.Nanosecond)
	must(t, err)
	// Split at m: both halves are covered by the whole table's key.
	if got := e.GCThresholdOf(right); got != whole.Threshold {
		t.Fatalf("right half after a split: %s, want %s", got, whole.Threshold)
	}
	// The right half is collected again: its own, higher threshold.
	time.Sleep(2 * time.Millisecond)
	r, err := e.GCSpan(context.Background(), right, time.Nanosecond)
	must(t, err)
	if !whole.Threshold.Less(r.Threshold) {
		t.Fatalf("right pass %s not above %s", r.Threshold, whole.Threshold)
	}
	if got := e.GCThresholdOf(left); got != whole.Threshold {
		t.Fatalf("left half: %s, want %s", got, whole.Threshold)
	}
	// Merged back: the higher of the two.
	if got := e.GCThresholdOf(tbl); got != r.Threshold {
		t.Fatalf("merged: %s, want %s", got, r.Threshold)
	}
	// Another table is not covered by table 7's keys.
	if got := e.GCThresholdOf(TableSpan(8)); !got.IsEmpty() {
		t.Fatalf("table 8: %s", got)
	}
}

// TestGCPolicyPass: a pass collects each target with its own window, and
// the background loop's due pass skips a shard collected less than a
// quarter of its window ago.
func TestGCPolicyPass(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	short, long := TableSpan(1), TableSpan(2)
	e.SetGCPolicy(GCPolicy{
		Targets: func() []GCTarget { return []GCTarget{{Span: short}, {Span: long, TTL: time.Hour}} },
		TTL: func(id uint64) (time.Duration, bool) {
			if id == 1 {
				return 4 * time.Millisecond, true
			}
			return 0, false
		},
	})
	for _, span := range []Span{short, long} {
		key := append(bytes.Clone(span.Start), 'k')
		mustCommit(t, e, func(b *Batch) { must(t, b.Set(key, []byte("1"))) })
		mustCommit(t, e, func(b *Batch) { must(t, b.Set(key, []byte("2"))) })
	}
	time.Sleep(10 * time.Millisecond)
	st, err := e.RunGC(context.Background())
	must(t, err)
	if st.Deleted != 1 {
		t.Fatalf("pass: %+v, want the short-window table's old version deleted only", st)
	}
	if e.GCThresholdOf(long).IsEmpty() || !e.GCThresholdOf(long).Less(e.GCThresholdOf(short)) {
		t.Fatalf("thresholds: short %s, long %s", e.GCThresholdOf(short), e.GCThresholdOf(long))
	}
	// Due passes: the long window's shard was just collected (period 15m),
	// the short one's period is the 1s floor.
	_, next, err := e.gc.pass(context.Background(), true)
	must(t, err)
	if next > time.Second {
		t.Fatalf("next pass in %s, want at most the 1s floor", next)
	}
	before := e.GCThresholdOf(long)
	_, _, err = e.gc.pass(context.Background(), true)
	must(t, err)
	if e.GCThresholdOf(long) != before {
		t.Fatal("a due pass collected a shard whose period had not passed")
	}
}

// TestGCWaitsForPolicy: an engine opened with GCWaitsForPolicy runs no GC
// pass before the SQL layer sets its policy (a pass without one would
// collect every table, and the catalog's history, with the engine's
// window); one opened without it collects the table area at once; once
// the policy is set, passes run.
func TestGCWaitsForPolicy(t *testing.T) {
	k := append(TablePrefix(1), 'a')
	setup := func(wait bool) (*Engine, hlc.Timestamp) {
		e := openMem(t, NewMemFS(), Options{NoSync: true, GCTTL: time.Millisecond, GCInterval: 5 * time.Millisecond,
			GCWaitsForPolicy: wait})
		mustCommit(t, e, func(b *Batch) { must(t, b.Set(k, []byte("old"))) })
		before, err := e.ReadTimestamp()
		must(t, err)
		time.Sleep(2 * time.Millisecond)
		mustCommit(t, e, func(b *Batch) { must(t, b.Set(k, []byte("new"))) })
		return e, before
	}
	collected := func(e *Engine, before hlc.Timestamp, within time.Duration) bool {
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if before.Less(e.GCThresholdOf(TableSpan(1))) {
				return true
			}
		}
		return false
	}
	if e, before := setup(false); !collected(e, before, 5*time.Second) {
		t.Fatal("without GCWaitsForPolicy no pass ran")
	}
	e, before := setup(true)
	if collected(e, before, 300*time.Millisecond) {
		t.Fatal("a pass ran before the policy was set")
	}
	if v, _, err := e.At(before).Get(k); err != nil || string(v) != "old" {
		t.Fatalf("the old version before the policy: %q, %v", v, err)
	}
	e.SetGCPolicy(GCPolicy{Targets: func() []GCTarget { return []GCTarget{{Span: TableSpan(1), TTL: time.Millisecond}} }})
	if !collected(e, before, 5*time.Second) {
		t.Fatal("no pass ran after the policy was set")
	}
}
