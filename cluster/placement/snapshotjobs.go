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
	j    *jobs.Job
	what string // the description without its target
}

// StartSnapshotJob starts the job of a snapshot of group g this node
// begins to stream, of about estimate bytes (cluster/shardsm's
// Store.SetSnapshotTracker calls it, through cluster/shardrepl). It
// returns nil while no job registry is attached: only the serving node
// keeps sys.jobs, so a snapshot another node streams (a group it leads
// that does not serve) is in that node's log only. The job names the
// receiving node once SnapshotSent told it (before or after the start).
func (m *Manager) StartSnapshotJob(g raft.GroupID, estimate int64) *SnapshotJob {
	m.mu.Lock()
	r := m.jobs
	m.mu.Unlock()
	if r == nil {
		return nil
	}
	m.snapMu.Lock()
	defer m.snapMu.Unlock()
	name := fmt.Sprintf("group %d", g)
	for _, cg := range m.cfg.Groups {
		if cg.ID == g {
			name = fmt.Sprintf("%s (group %d)", cg.Name, g)
		}
	}
	sj := &SnapshotJob{what: fmt.Sprintf("send a snapshot of %s, about %.1f MB,", name, float64(estimate)/(1<<20))}
	sj.j = r.Start(KindReplicaSnapshot, sj.description(0, false), jobUser)
	m.snapSends.waitTarget(g, sj)
	sj.j.Progress(0, max(estimate, 1))
	return sj
}

// SnapshotSent is told that this node started sending a snapshot of group
// g to replica to (cluster/raft's OnSnapshotSend: the stream's first
// chunk, which comes after the state machine began the stream, and so
// after its job started): the oldest running job of g without a target
// names to's node. A target without a job (a stream begun while this node
// kept no jobs) is dropped: it must not name a later stream's job.
func (m *Manager) SnapshotSent(g raft.GroupID, to raft.ReplicaID) {
	m.mu.Lock()
	r := m.jobs
	m.mu.Unlock()
	if r == nil {
		return // no jobs: nothing to name
	}
	m.snapMu.Lock()
	defer m.snapMu.Unlock()
	if sj := m.snapSends.takeWaiting(g); sj != nil {
		sj.j.Describe(sj.description(NodeOf(to), true))
	}
}

// snapshotSends pairs stream targets with the jobs of their group, in
// order; under Manager.snapMu.
type snapshotSends struct {
	waiting map[raft.GroupID][]*SnapshotJob
}

func (s *snapshotSends) waitTarget(g raft.GroupID, sj *SnapshotJob) {
	if s.waiting == nil {
		s.waiting = map[raft.GroupID][]*SnapshotJob{}
	}
	s.waiting[g] = append(s.waiting[g], sj)
}

// takeWaiting returns the oldest job of g still running without a target.
func (s *snapshotSends) takeWaiting(g raft.GroupID) *SnapshotJob {
	ws := s.waiting[g]
	for len(ws) > 0 && !ws[0].running() {
		ws = ws[1:]
	}
	if len(ws) == 0 {
		delete(s.waiting, g)
		return nil
	}
	sj := ws[0]
	if ws = ws[1:]; len(ws) == 0 {
		delete(s.waiting, g)
	} else {
		s.waiting[g] = ws
	}
	return sj
}

func (sj *SnapshotJob) description(nodeID uint64, known bool) string {
	if known {
		return fmt.Sprintf("%s to node %d (a replica catching up)", sj.what, nodeID)
	}
	return sj.what + " to a replica catching up"
}

func (sj *SnapshotJob) running() bool { return sj.j.Record().Status == jobs.Running }

// Progress records the bytes sent of about total.
func (s *SnapshotJob) Progress(sent, total int64) { s.j.Progress(sent, total) }

// Finish ends the job: succeeded when the whole stream was sent, failed
// with err (the receiver went away, the node stopped) otherwise.
func (s *SnapshotJob) Finish(err error) { s.j.Finish(err) }
