package placement

import (
	"fmt"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/jobs"
)

// KindReplicaSnapshot is the job of a snapshot a node streams to another
// replica of a group: the copy of a replica move (a new non-voter catches
// up from it), or a replica that fell behind the leader's log.
const KindReplicaSnapshot = "REPLICA SNAPSHOT"

// SnapshotJob is the sys.jobs row of one snapshot stream; its rows_done
// and rows_total are the bytes sent and the stream's bytes (estimated from
// the replica's stats counter until it ends, then exact).
type SnapshotJob struct {
	j *jobs.Job
}

// StartSnapshotJob starts the job of a snapshot of group g this node
// begins to stream, of about estimate bytes (cluster/shardsm's
// Store.SetSnapshotTracker calls it, through cluster/shardrepl). It
// returns nil while no job registry is attached: only the serving node
// keeps sys.jobs, so a snapshot another node streams (a group it leads
// that does not serve) is in that node's log only.
func (m *Manager) StartSnapshotJob(g raft.GroupID, estimate int64) *SnapshotJob {
	m.mu.Lock()
	r := m.jobs
	m.mu.Unlock()
	if r == nil {
		return nil
	}
	name := fmt.Sprintf("group %d", g)
	for _, cg := range m.cfg.Groups {
		if cg.ID == g {
			name = fmt.Sprintf("%s (group %d)", cg.Name, g)
		}
	}
	j := r.Start(KindReplicaSnapshot, fmt.Sprintf("send a snapshot of %s, about %.1f MB, to a replica catching up",
		name, float64(estimate)/(1<<20)), jobUser)
	j.Progress(0, max(estimate, 1))
	return &SnapshotJob{j: j}
}

// Progress records the bytes sent of about total.
func (s *SnapshotJob) Progress(sent, total int64) { s.j.Progress(sent, total) }

// Finish ends the job: succeeded when the whole stream was sent, failed
// with err (the receiver went away, the node stopped) otherwise.
func (s *SnapshotJob) Finish(err error) { s.j.Finish(err) }
