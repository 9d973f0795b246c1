package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// syncReplicator applies each write to the engine's Pebble, as a replica's
// state machine does, from any goroutine; it can fail the write numbered
// failAt (from 1), before applying it, with failErr.
type syncReplicator struct {
	e         *Engine
	mu        sync.Mutex
	writes    [][]Mutation
	failAt    int
	failErr   error
	abandoned error
}

func (r *syncReplicator) Replicate(ts hlc.Timestamp, ms []Mutation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.writes) + 1
	var cp []Mutation
	for _, m := range ms {
		cp = append(cp, Mutation{Kind: m.Kind, Key: bytes.Clone(m.Key), Value: bytes.Clone(m.Value)})
	}
	r.writes = append(r.writes, cp)
	if n == r.failAt {
		return r.failErr
	}
	db, _, _ := r.e.PebbleForReplication()
	b := db.NewBatch()
	defer b.Close()
	if err := ApplyMutations(b, ms); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

func (r *syncReplicator) AbandonServing(err error) {
	r.mu.Lock()
	r.abandoned = err
	r.mu.Unlock()
}

func smallBulkChunks(t *testing.T) {
	old := replBulkChunkBytes
	replBulkChunkBytes = 200
	t.Cleanup(func() { replBulkChunkBytes = old })
}

func bulkRows(n int) (keys, vals [][]byte) {
	for i := 0; i < n; i++ {
		keys = append(keys, append(TablePrefix(7), fmt.Sprintf("k%04d", i)...))
		vals = append(vals, []byte(fmt.Sprintf("v%d", i)))
	}
	return keys, vals
}

func ingestRows(e *Engine, keys, vals [][]byte) error {
	d, err := e.NewBulkDir()
	if err != nil {
		return err
	}
	defer d.Close()
	return e.IngestVersioned(context.Background(), d, 1<<20, func(w *SSTWriter) error {
		for i := range keys {
			if err := w.Set(keys[i], vals[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// versionsAt counts the versions in the table area and the pending load
// records.
func bulkLeft(t *testing.T, e *Engine) (versions, records int) {
	t.Helper()
	it, err := e.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		uk, ok := enginekey.UserKeyOf(it.Key())
		if !ok {
			uk = it.Key()[:enginekey.Split(it.Key())-1]
		}
		switch {
		case bytes.HasPrefix(uk, bulkRecordPrefix):
			records++
		case isVersioned(uk):
			versions++
		}
	}
	return versions, records
}

// TestReplicatedBulkLoad: on a replicated engine a bulk load goes as
// bounded writes at one commit timestamp, the first setting a pending
// record and the last deleting it; every row is then readable.
func TestReplicatedBulkLoad(t *testing.T) {
	smallBulkChunks(t)
	e := openMem(t, NewMemFS(), Options{GCTTL: -1})
	defer e.Close()
	r := &syncReplicator{e: e}
	if err := e.SetReplicator(r); err != nil {
		t.Fatal(err)
	}
	keys, vals := bulkRows(100)
	if err := ingestRows(e, keys, vals); err != nil {
		t.Fatal(err)
	}
	if len(r.writes) < 5 {
		t.Fatalf("%d writes for 100 keys in chunks of 200 bytes", len(r.writes))
	}
	first, last := r.writes[0], r.writes[len(r.writes)-1]
	if !bytes.Contains(first[0].Key, bulkRecordPrefix) || first[0].Kind != MutationSet {
		t.Fatalf("the first write does not start with the pending record: %s %x", first[0].Kind, first[0].Key)
	}
	if len(last) != 1 || last[0].Kind != MutationDelete || !bytes.Equal(last[0].Key, first[0].Key) {
		t.Fatalf("the last write does not delete the record: %v", last)
	}
	total := 0
	for _, w := range r.writes {
		size := 0
		for _, m := range w {
			size += len(m.Key) + len(m.Value)
		}
		if size > 2*replBulkChunkBytes {
			t.Fatalf("a write of %d bytes (chunks of %d)", size, replBulkChunkBytes)
		}
		if w[0].Kind == MutationSet {
			total += len(w)
		}
	}
	if total != 101 {
		t.Fatalf("%d sets written, want 100 rows and the record", total)
	}
	for i := range keys {
		if got := getString(t, e, string(keys[i])); got != string(vals[i]) {
			t.Fatalf("%s: %q", keys[i], got)
		}
	}
	if v, rec := bulkLeft(t, e); v != 100 || rec != 0 {
		t.Fatalf("%d versions, %d records left", v, rec)
	}
}

// TestReplicatedBulkLoadRollsBack: a load whose write fails for sure is
// rolled back at once (its versions and record deleted through the
// replicator); one whose outcome is unknown is left to the next serving
// node (the replicator is told to give up serving), whose
// RollBackBulkLoads removes it.
func TestReplicatedBulkLoadRollsBack(t *testing.T) {
	smallBulkChunks(t)
	keys, vals := bulkRows(100)
	for _, tc := range []struct {
		name    string
		failAt  int
		err     error
		abandon bool
	}{
		{"first write fails", 1, errors.New("no quorum"), false},
		{"a later write fails", 6, errors.New("no quorum"), false},
		{"a later write's outcome is unknown", 6, fmt.Errorf("%w: timed out", ErrOutcomeUnknown), true},
		{"the first write's outcome is unknown", 1, fmt.Errorf("%w: timed out", ErrOutcomeUnknown), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := openMem(t, NewMemFS(), Options{GCTTL: -1})
			defer e.Close()
			r := &syncReplicator{e: e, failAt: tc.failAt, failErr: tc.err}
			if err := e.SetReplicator(r); err != nil {
				t.Fatal(err)
			}
			if err := ingestRows(e, keys, vals); !errors.Is(err, tc.err) {
				t.Fatalf("ingest: %v", err)
			}
			if (r.abandoned != nil) != tc.abandon {
				t.Fatalf("abandoned: %v", r.abandoned)
			}
			if !tc.abandon {
				if v, rec := bulkLeft(t, e); v != 0 || rec != 0 {
					t.Fatalf("after the rollback: %d versions, %d records", v, rec)
				}
				return
			}
			v, rec := bulkLeft(t, e)
			if tc.failAt > 1 && (v == 0 || rec != 1) {
				t.Fatalf("left for the next node: %d versions, %d records", v, rec)
			}
			n, err := e.RollBackBulkLoads(context.Background())
			if err != nil || n != rec {
				t.Fatalf("RollBackBulkLoads: %d, %v", n, err)
			}
			if v, rec := bulkLeft(t, e); v != 0 || rec != 0 {
				t.Fatalf("after RollBackBulkLoads: %d versions, %d records", v, rec)
			}
		})
	}
}

// TestReplicaEngineGC: a replica's engine (Options.Replica) keeps its GC
// loop idle until it has a replicator, then collects through it.
func TestReplicaEngineGC(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{Replica: true, GCTTL: 1})
	defer e.Close()
	row := append(TablePrefix(5), 'a')
	db, _, _ := e.PebbleForReplication()
	// The replica's state machine wrote two versions.
	b := db.NewBatch()
	for i, v := range []string{"v1", "v2"} {
		k := enginekey.AppendVersionKey(nil, row, hlc.Timestamp{WallTime: int64(i + 1)})
		if err := b.Set(k, append([]byte{tagValue}, v...), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if st, err := e.RunGC(context.Background()); err != nil || st.Deleted != 0 {
		t.Fatalf("GC without a replicator: %+v %v", st, err)
	}
	if _, err := e.GCVersions(context.Background(), TablesSpan(), hlc.MaxTimestamp); !errors.Is(err, ErrReplicated) {
		t.Fatalf("GCVersions without a replicator: %v", err)
	}
	if v, _ := bulkLeft(t, e); v != 2 {
		t.Fatalf("%d versions", v)
	}
	r := &syncReplicator{e: e}
	if err := e.SetReplicator(r); err != nil {
		t.Fatal(err)
	}
	st, err := e.RunGC(context.Background())
	if err != nil || st.Deleted != 1 {
		t.Fatalf("GC with a replicator: %+v %v", st, err)
	}
	if v, _ := bulkLeft(t, e); v != 1 {
		t.Fatalf("%d versions after GC", v)
	}
	// The threshold key, then the deletion.
	if len(r.writes) != 2 || !bytes.Contains(r.writes[0][0].Key, gcThresholdPrefix) || r.writes[1][0].Kind != MutationDelete {
		t.Fatalf("replicated: %v", r.writes)
	}
	if _, _, err := e.At(hlc.Timestamp{WallTime: 1}).Get(row); err == nil {
		t.Fatal("a read below the threshold was not refused")
	}
}
