package placement

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// TestSnapshotJobNamesTarget: a REPLICA SNAPSHOT job names the node its
// stream goes to, whether dragonboat's SendSnapshotStarted (SnapshotSent)
// comes before the job starts or after; targets and jobs of one group
// pair in order, other groups' do not mix in, and a finished job keeps
// its description.
func TestSnapshotJobNamesTarget(t *testing.T) {
	eng, err := storage.Open(t.TempDir(), storage.Options{NoSync: true, Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	r, err := jobs.Open(meta.Open(eng), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{}
	if j := m.StartSnapshotJob(7, 1<<20); j != nil {
		t.Fatal("a job without a registry")
	}
	m.SnapshotSent(7, raft.ReplicaID(1<<genShift|4)) // no registry: forgotten
	m.AttachJobs(r)
	desc := func(sj *SnapshotJob) string { return sj.j.Record().Description }

	// The event first: the job names node 4 (generation 1's replica).
	m.SnapshotSent(7, raft.ReplicaID(1<<genShift|4))
	a := m.StartSnapshotJob(7, 8<<20)
	if got := desc(a); !strings.Contains(got, "to node 4 ") {
		t.Fatalf("event before the job: %q", got)
	}
	// The job first: named once the event comes; another group's event
	// does not name it.
	b := m.StartSnapshotJob(7, 1<<20)
	c := m.StartSnapshotJob(7, 1<<20)
	if got := desc(b); !strings.Contains(got, "to a replica catching up") {
		t.Fatalf("job before its event: %q", got)
	}
	m.SnapshotSent(9, 5)
	m.SnapshotSent(7, 5)
	m.SnapshotSent(7, 6)
	if got, other := desc(b), desc(c); !strings.Contains(got, "to node 5 ") || !strings.Contains(other, "to node 6 ") {
		t.Fatalf("jobs before their events: %q, %q", got, other)
	}
	// Group 9's event waits for group 9's job.
	d := m.StartSnapshotJob(9, 1<<20)
	if got := desc(d); !strings.Contains(got, "to node 5 ") {
		t.Fatalf("group 9's job: %q", got)
	}
	// A job that finished before its event keeps its description; the
	// event then waits for the next job.
	e := m.StartSnapshotJob(7, 1<<20)
	e.Finish(nil)
	m.SnapshotSent(7, 3)
	if got := desc(e); !strings.Contains(got, "to a replica catching up") {
		t.Fatalf("a finished job: %q", got)
	}
	if got := desc(m.StartSnapshotJob(7, 1<<20)); !strings.Contains(got, "to node 3 ") {
		t.Fatalf("the job after a finished one: %q", got)
	}
}
