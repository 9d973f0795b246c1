package placement

import (
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
)

// TestSnapshotJobNamesTarget: a REPLICA SNAPSHOT job names the node its
// stream goes to once the transport reports the stream's first chunk
// (SnapshotSent); jobs and targets of one group pair in order, another
// group's target does not name them, a target without a job is dropped
// (it names no later job), and a job that finished first keeps its
// description.
func TestSnapshotJobNamesTarget(t *testing.T) {
	r := openJobRegistry(t)
	m := &Manager{}
	if j := m.StartSnapshotJob(7, 1<<20); j != nil {
		t.Fatal("a job without a registry")
	}
	m.SnapshotSent(7, 2) // no registry: nothing to name
	m.AttachJobs(r)
	desc := func(sj *SnapshotJob) string { return sj.j.Record().Description }
	const waiting = "to a replica catching up"

	a := m.StartSnapshotJob(7, 8<<20)
	b := m.StartSnapshotJob(7, 1<<20)
	if got := desc(a); !strings.Contains(got, waiting) {
		t.Fatalf("before its first chunk: %q", got)
	}
	m.SnapshotSent(9, 5)                             // another group's
	m.SnapshotSent(7, raft.ReplicaID(1<<genShift|4)) // generation 1's replica of node 4
	m.SnapshotSent(7, 6)
	if got, next := desc(a), desc(b); !strings.Contains(got, "to node 4 (") || !strings.Contains(next, "to node 6 (") {
		t.Fatalf("after their first chunks: %q, %q", got, next)
	}
	// Group 9's target had no job: dropped.
	if got := desc(m.StartSnapshotJob(9, 1<<20)); !strings.Contains(got, waiting) {
		t.Fatalf("a job after a target without one: %q", got)
	}
	// A job that finished first keeps its description, and the target
	// goes to the next running one.
	e := m.StartSnapshotJob(7, 1<<20)
	f := m.StartSnapshotJob(7, 1<<20)
	e.Finish(nil)
	m.SnapshotSent(7, 3)
	if got, next := desc(e), desc(f); !strings.Contains(got, waiting) || !strings.Contains(next, "to node 3 (") {
		t.Fatalf("a finished job and the next: %q, %q", got, next)
	}
}
