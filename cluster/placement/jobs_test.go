package placement

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// Jobs started before the serving node's SQL engine attached sys.jobs'
// registry show once it does, with their progress and outcome; detaching
// drops the ones still pending.
func TestJobsStartedBeforeTheRegistry(t *testing.T) {
	r := openJobRegistry(t)
	m := &Manager{}
	drained := m.startJob(KindDecommission, "finish decommissioning node 1")
	drained.progress(2, 2)
	drained.finish(nil)
	moving := m.startJob(KindReplicaMove, "move the replica of g from node 1 to node 4")
	moving.progress(1, 3)
	failed := m.startJob(KindReplicaMove, "move the replica of h from node 1 to node 4")
	failed.finish(errors.New("no target"))

	m.AttachJobs(r)
	moving.progress(3, 3) // after the attach: goes to the registry
	moving.finish(nil)
	want := map[string]jobs.Status{
		"finish decommissioning node 1":               "succeeded",
		"move the replica of g from node 1 to node 4": "succeeded",
		"move the replica of h from node 1 to node 4": "failed",
	}
	got := map[string]jobs.Record{}
	for _, rec := range r.List() {
		got[rec.Description] = rec
	}
	for d, st := range want {
		rec, ok := got[d]
		if !ok || rec.Status != st {
			t.Errorf("%q: %+v (found %v), want status %s", d, rec, ok, st)
		}
	}
	if rec := got["move the replica of g from node 1 to node 4"]; rec.RowsDone != 3 || rec.RowsTotal != 3 {
		t.Errorf("the move's progress: %d of %d, want 3 of 3", rec.RowsDone, rec.RowsTotal)
	}

	m.AttachJobs(nil)
	m.startJob(KindReplicaMove, "while not serving")
	m.AttachJobs(nil) // stepped down again: dropped
	m.AttachJobs(r)
	for _, rec := range r.List() {
		if rec.Description == "while not serving" {
			t.Errorf("a job pending when the registry was detached shows: %+v", rec)
		}
	}
}

// openJobRegistry opens a job registry over a fresh engine, closed when t
// ends.
func openJobRegistry(t *testing.T) *jobs.Registry {
	t.Helper()
	eng, err := storage.Open(t.TempDir(), storage.Options{NoSync: true, Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	r, err := jobs.Open(meta.Open(eng), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
