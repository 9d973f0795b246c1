package placement

import (
	"fmt"
	"time"

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
	to, known := m.snapSends.takeTarget(g, time.Now())
	if !known {
		m.snapSends.waitTarget(g, sj)
	}
	sj.j = r.Start(KindReplicaSnapshot, sj.description(to, known), jobUser)
	sj.j.Progress(0, max(estimate, 1))
	return sj
}

// SnapshotSent is told that this node started sending a snapshot of group
// g to replica to (cluster/raft's OnSnapshotSend, dragonboat's
// SendSnapshotStarted event): the oldest job of g still without a target
// names to's node, or the next one started does.
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
		return
	}
	m.snapSends.addTarget(g, NodeOf(to), time.Now())
}

// snapshotTargetTTL is how long a target nobody took waits for its job
// (the stream's state machine part begins within milliseconds normally;
// one that never begins must not name a later stream's job).
const snapshotTargetTTL = 10 * time.Second

// snapshotSends matches dragonboat's events (targets) with jobs, per
// group, in order; under Manager.snapMu.
type snapshotSends struct {
	targets map[raft.GroupID][]sentTarget
	waiting map[raft.GroupID][]*SnapshotJob
}

type sentTarget struct {
	node uint64
	at   time.Time
}

func (s *snapshotSends) takeTarget(g raft.GroupID, now time.Time) (uint64, bool) {
	ts := s.targets[g]
	for len(ts) > 0 && now.Sub(ts[0].at) > snapshotTargetTTL {
		ts = ts[1:]
	}
	if len(ts) == 0 {
		delete(s.targets, g)
		return 0, false
	}
	t := ts[0]
	if ts = ts[1:]; len(ts) == 0 {
		delete(s.targets, g)
	} else {
		s.targets[g] = ts
	}
	return t.node, true
}

func (s *snapshotSends) addTarget(g raft.GroupID, nodeID uint64, now time.Time) {
	if s.targets == nil {
		s.targets = map[raft.GroupID][]sentTarget{}
	}
	ts := append(s.targets[g], sentTarget{node: nodeID, at: now})
	if len(ts) > 8 {
		ts = ts[len(ts)-8:] // streams of one group at once: a few
	}
	s.targets[g] = ts
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
