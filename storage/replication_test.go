package storage

import (
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// loopReplicator records each commit and applies it to the engine's own
// Pebble, as a replica's state machine does.
type loopReplicator struct {
	e       *Engine
	commits []recordedCommit
	fail    error
}

type recordedCommit struct {
	ts  hlc.Timestamp
	ops []Mutation
}

func (r *loopReplicator) Replicate(ts hlc.Timestamp, writes []Mutation) error {
	if r.fail != nil {
		return r.fail
	}
	c := recordedCommit{ts: ts}
	for _, m := range writes {
		c.ops = append(c.ops, Mutation{Kind: m.Kind, Key: append([]byte{}, m.Key...), Value: append([]byte{}, m.Value...)})
	}
	r.commits = append(r.commits, c)
	db, _, _ := r.e.PebbleForReplication()
	b := db.NewBatch()
	defer b.Close()
	if err := ApplyMutations(b, writes); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

func TestReplicatorTakesCommits(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{GCTTL: -1})
	defer e.Close()
	r := &loopReplicator{e: e}
	if err := e.SetReplicator(r); err != nil {
		t.Fatal(err)
	}
	if err := e.SetReplicator(r); err == nil {
		t.Fatal("a second replicator was accepted")
	}
	row := append(TablePrefix(5), 'a')
	sys := []byte{SystemPrefix, 'x'}
	mustCommit(t, e, func(b *Batch) {
		if err := b.Set(row, []byte("v1")); err != nil {
			t.Fatal(err)
		}
		if err := b.Set(sys, []byte("s")); err != nil {
			t.Fatal(err)
		}
	})
	mustCommit(t, e, func(b *Batch) {
		if err := b.Delete(row); err != nil {
			t.Fatal(err)
		}
	})
	mustCommit(t, e, func(b *Batch) { // system keys only: no timestamp
		if err := b.DeleteRange(Span{Start: []byte{SystemPrefix}, End: []byte{SystemPrefix + 1}}); err != nil {
			t.Fatal(err)
		}
	})
	if len(r.commits) != 3 {
		t.Fatalf("%d commits replicated, want 3", len(r.commits))
	}
	c := r.commits[0]
	if c.ts.IsEmpty() || len(c.ops) != 2 {
		t.Fatalf("first commit: ts %v, %d mutations", c.ts, len(c.ops))
	}
	for _, m := range c.ops {
		uk, ts, versioned, err := enginekey.DecodeKey(m.Key)
		if err != nil || m.Kind != MutationSet {
			t.Fatalf("mutation %s %x: %v", m.Kind, m.Key, err)
		}
		if string(uk) == string(row) && (!versioned || ts != c.ts) {
			t.Fatalf("row written at %v (versioned %v), commit at %v", ts, versioned, c.ts)
		}
		if string(uk) == string(sys) && versioned {
			t.Fatal("a system key was versioned")
		}
	}
	if d := r.commits[1]; d.ts.Compare(c.ts) <= 0 || d.ops[0].Kind != MutationSet {
		t.Fatalf("delete: ts %v after %v, %s (a tombstone version is a set)", d.ts, c.ts, d.ops[0].Kind)
	}
	if d := r.commits[2]; !d.ts.IsEmpty() || d.ops[0].Kind != MutationDeleteRange {
		t.Fatalf("range deletion: ts %v, %s", d.ts, d.ops[0].Kind)
	}
	// What the replicator applied is what reads see.
	if got := getString(t, e.At(c.ts), string(row)); got != "v1" {
		t.Fatalf("row at the first commit: %q", got)
	}
	if got := getString(t, e, string(row)); got != "<absent>" {
		t.Fatalf("row now: %q", got)
	}

	// A failed replication is a failed commit.
	r.fail = errors.New("no quorum")
	b := e.NewBatch()
	defer b.Close()
	if err := b.Set(row, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); !errors.Is(err, r.fail) {
		t.Fatalf("commit: %v", err)
	}

	// GC goes through the replicator too.
	r.fail = nil
	n := len(r.commits)
	if _, err := e.GCVersions(context.Background(), TablesSpan(), hlc.MaxTimestamp); err != nil {
		t.Fatalf("GC: %v", err)
	}
	if len(r.commits) != n+1 || !r.commits[n].ts.IsEmpty() {
		t.Fatalf("GC replicated %d writes (want 1, without a timestamp)", len(r.commits)-n)
	}
	for _, m := range r.commits[n].ops {
		if uk, _, _, err := enginekey.DecodeKey(m.Key); err != nil || m.Kind != MutationDelete || string(uk) != string(row) {
			t.Fatalf("GC wrote %s %x", m.Kind, m.Key)
		}
	}
	if got := getString(t, e.At(c.ts), string(row)); got != "<absent>" {
		t.Fatalf("row at the first commit after GC: %q", got)
	}
}

func TestReplicatorNeedsGCOff(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	if err := e.SetReplicator(&loopReplicator{e: e}); !errors.Is(err, ErrReplicated) {
		t.Fatalf("SetReplicator with GC running: %v", err)
	}
}
