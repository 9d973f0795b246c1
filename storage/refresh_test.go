package storage

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestCheckRefresh: a span refreshes from a read timestamp to a later one
// unless a key in it has a version in between (a tombstone counts, a
// version at or below the read timestamp or above the target does not);
// system keys and keys outside the span are not looked at.
func TestCheckRefresh(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	k := func(s string) []byte { return append(TablePrefix(1), s...) }
	now := func() hlc.Timestamp {
		t.Helper()
		ts, err := e.ReadTimestamp()
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k("a"), []byte("1"))); must(t, b.Set(k("c"), []byte("1"))) })
	r0 := now()
	mustCommit(t, e, func(b *Batch) { must(t, b.Delete(k("c"))); must(t, b.Set([]byte{SystemPrefix, 'x'}, []byte("1"))) })
	r1 := now()
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k("e"), []byte("1"))) })
	r2 := now()
	for _, c := range []struct {
		span     Span
		from, to hlc.Timestamp
		conflict string // the key's suffix; "" none
	}{
		{Span{Start: k("a"), End: k("b")}, r0, r2, ""},
		{Span{Start: k("a"), End: k("d")}, r0, r2, "c"},             // the tombstone
		{Span{Start: k("a"), End: k("d")}, r1, r2, ""},              // at the read ts
		{Span{Start: k("d"), End: k("f")}, r0, r1, ""},              // above the target
		{Span{Start: k("d"), End: k("f")}, r0, r2, "e"},             // a phantom
		{Span{Start: k("a"), End: nil}, r1, r2, "e"},                // unbounded
		{Span{Start: []byte{SystemPrefix}, End: k("")}, r0, r2, ""}, // system area
	} {
		err := e.CheckRefresh(c.span, c.from, c.to)
		var rc *RefreshConflictError
		switch {
		case c.conflict == "" && err != nil:
			t.Errorf("%s from %s to %s: %v, want none", c.span, c.from, c.to, err)
		case c.conflict != "" && !errors.As(err, &rc):
			t.Errorf("%s from %s to %s: %v, want a conflict on %s", c.span, c.from, c.to, err, c.conflict)
		case c.conflict != "" && string(rc.Key) != string(k(c.conflict)):
			t.Errorf("%s: conflict on %s, want %s", c.span, FormatKey(rc.Key), c.conflict)
		}
	}
	if err := e.CheckRefresh(Span{Start: k("a"), End: k("b")}, r2, r0); err == nil {
		t.Error("a refresh backwards succeeded")
	}
	// A provisional version (an intent, which this engine does not write
	// yet) below the target is a conflict even below the read timestamp:
	// its transaction may still commit above it.
	ik := enginekey.AppendVersionKey(nil, k("g"), r0)
	if err := e.db.Set(ik, []byte{0x03, 0}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	var rc *RefreshConflictError
	if err := e.CheckRefresh(Span{Start: k("f"), End: k("h")}, r1, r2); !errors.As(err, &rc) || string(rc.Key) != string(k("g")) {
		t.Errorf("refresh over an intent: %v", err)
	}
}

// TestCommitCheckWaitsForCommitsBelow: a commit check runs with the commit
// timestamp only once every commit registered before it (a smaller
// timestamp) whose keys are unknown is visible, and a failing check writes
// nothing.
func TestCommitCheckWaitsForCommitsBelow(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	k := append(TablePrefix(1), 'a')
	before, id, err := e.commits.begin()
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Bool
	done := make(chan error)
	go func() {
		b := e.NewBatch()
		defer b.Close()
		must(t, b.Set(k, []byte("1")))
		b.SetCommitCheck(func(ts hlc.Timestamp, _ InFlight) error {
			if !before.Less(ts) {
				t.Errorf("commit timestamp %s not above the earlier commit's %s", ts, before)
			}
			ran.Store(true)
			return nil
		})
		done <- b.Commit()
	}()
	time.Sleep(30 * time.Millisecond)
	if ran.Load() {
		t.Fatal("the check ran while a commit below was in flight")
	}
	e.commits.end(id)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ran.Load() {
		t.Fatal("the check never ran")
	}

	// A failing check: nothing lands, the error is the check's.
	b := e.NewBatch()
	defer b.Close()
	must(t, b.Set(append(TablePrefix(1), 'b'), []byte("1")))
	boom := errors.New("boom")
	b.SetCommitCheck(func(hlc.Timestamp, InFlight) error { return boom })
	if err := b.Commit(); !errors.Is(err, boom) {
		t.Fatalf("commit: %v, want the check's error", err)
	}
	if got := scanAll(t, e); got != "a=1" {
		t.Fatalf("after the failed commit: %q", got)
	}
}

// TestCommitCheckSeesKeysInFlight: while a transaction that may refresh is
// open, commits record their keys; a commit check then does not wait for
// such a commit below it but gets its keys, which the store does not show
// yet. Once the last refreshing transaction ends, commits stop recording.
func TestCommitCheckSeesKeysInFlight(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	k := func(s string) []byte { return append(TablePrefix(1), s...) }
	done := e.Refreshing()
	// A commit below, in flight: registered with its keys, not landed.
	below := e.NewBatch()
	defer below.Close()
	must(t, below.Set(k("c"), []byte("1")))
	must(t, below.Delete(k("a")))
	must(t, below.Set([]byte{SystemPrefix, 'x'}, []byte("1")))
	keys, err := collectKeys(below.b)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys.keys) != 2 || string(keys.keys[0]) != string(k("a")) || string(keys.keys[1]) != string(k("c")) {
		t.Fatalf("keys %q", keys.keys)
	}
	_, id, err := e.commits.beginWith(keys)
	if err != nil {
		t.Fatal(err)
	}
	b := e.NewBatch()
	defer b.Close()
	must(t, b.Set(k("z"), []byte("1")))
	var conflict, clear []byte
	b.SetCommitCheck(func(_ hlc.Timestamp, f InFlight) error {
		conflict = f.Conflict(Span{Start: k("b"), End: k("d")})
		clear = f.Conflict(Span{Start: k("d"), End: k("y")})
		return nil
	})
	if err := b.Commit(); err != nil { // does not wait: end(id) comes later
		t.Fatal(err)
	}
	e.commits.end(id)
	if string(conflict) != string(k("c")) || clear != nil {
		t.Fatalf("conflicts %q, %q; want c and none", conflict, clear)
	}
	done()
	done() // twice is harmless
	if n := e.commits.refreshers.Load(); n != 0 {
		t.Fatalf("%d refreshers", n)
	}
}
