package placement

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
)

// KindLeaseTransfer is the job kind of a leadership move (sys.jobs'
// job_type; CockroachDB calls a range's leadership its lease).
const KindLeaseTransfer = "LEASE TRANSFER"

// The allocator's hysteresis (see rebalance).
const (
	// rebalanceSettle: an imbalance must be seen this long, in every round,
	// before a leadership moves for it: an election that just moved a
	// leadership, or a node that just joined, settles first.
	rebalanceSettle = 2 * time.Second
	// rebalanceCooldown: a group whose leadership the allocator moved is
	// left alone this long, so two rounds never bounce it back and forth.
	rebalanceCooldown = 30 * time.Second
)

// freshWindow is how recently a node must have answered a ping for the
// allocator to act (every replica holder) and to move a leadership to it:
// four ping intervals, at least 2 s (a round of pings waits up to a second
// for each answer, so a healthy node's last answer may be over a second
// old on a loaded machine), never longer than liveness allows. Live
// (sys.nodes) allows 5 s; a node killed a moment ago still counts as live
// then, and a transfer to it would only wait out its timeout, holding up
// the loop's healing.
func (m *Manager) freshWindow() time.Duration {
	return min(m.liveWindow(), max(4*m.cfg.Interval, 2*time.Second))
}

// rebalanceTransfer bounds one leadership move of the allocator.
const rebalanceTransfer = 5 * time.Second

// allocState is the allocator's memory between rounds (Manager.mu).
type allocState struct {
	imbalanced map[raft.GroupID]time.Time // first round a move was wanted
	moved      map[raft.GroupID]time.Time // last leadership move
}

// nodeLoad is what the allocator counts per node.
type nodeLoad struct {
	leaders int
	voters  int
	bytes   int64 // the sizes of the groups it leads (Group.Size)
}

// rebalance is one round of the allocator (Run, on the serving node). It
// acts only while every node that holds a replica answers pings: a node
// that stopped answering is healed first (or comes back), and a
// leadership moved meanwhile could land on a node about to die. It
// spreads the groups' leaderships over the live, active nodes by count,
// then by the bytes they lead. A group's leadership moves from its leader
// L to the voter T (live, active) that leads the fewest groups, then the
// fewest bytes, then votes in the fewest groups, then has the lowest id,
// and only when L leads at least two groups more than T: a move never just
// swaps which node is one ahead, so it cannot flap. The imbalance must
// have lasted rebalanceSettle, a group moved is left alone for
// rebalanceCooldown, and one leadership moves per round. A group whose
// leader serves SQL (Group.Serving) is never moved by the allocator: see
// doc.go for why. Voters are not moved either (doc.go: the nodes keep a
// replica of every group, and a removed replica never comes back).
//
// Each move is a LEASE TRANSFER job. It reports whether it moved one.
func (m *Manager) rebalance(ctx context.Context) (bool, error) {
	if m.cfg.NoRebalance {
		return false, nil
	}
	h := m.cfg.Node.Host()
	load := map[uint64]*nodeLoad{}
	loadOf := func(id uint64) *nodeLoad {
		l := load[id]
		if l == nil {
			l = &nodeLoad{}
			load[id] = l
		}
		return l
	}
	type groupView struct {
		g      Group
		mem    raft.Membership
		leader uint64
	}
	var views []groupView
	holders := map[uint64]bool{} // nodes holding a replica of a group
	for _, g := range m.cfg.Groups {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return false, err
		}
		for v := range mem.Voters {
			loadOf(uint64(v)).voters++
			holders[uint64(v)] = true
		}
		for nv := range mem.NonVoters {
			holders[uint64(nv)] = true
		}
		l, _, ok, err := h.Leader(g.ID)
		if err != nil || !ok {
			continue // an election runs: count it next round
		}
		ll := loadOf(uint64(l))
		ll.leaders++
		if g.Size != nil {
			if n, err := g.Size(ctx); err == nil {
				ll.bytes += n
			}
		}
		views = append(views, groupView{g: g, mem: mem, leader: uint64(l)})
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for id := range holders {
		if !m.heardWithinLocked(id, m.freshWindow()) {
			// A node that does not answer: healing goes first, and the
			// imbalance is measured again once every node answers.
			clear(m.alloc.imbalanced)
			return false, nil
		}
	}
	var move *groupView
	var target uint64
	for i := range views {
		v := &views[i]
		if v.g.Serving {
			continue
		}
		var cands []uint64
		for r := range v.mem.Voters {
			id := uint64(r)
			if id != v.leader && m.eligibleLocked(id) && m.heardWithinLocked(id, m.freshWindow()) {
				cands = append(cands, id)
			}
		}
		if len(cands) == 0 {
			delete(m.alloc.imbalanced, v.g.ID)
			continue
		}
		slices.SortFunc(cands, func(a, b uint64) int {
			la, lb := loadOf(a), loadOf(b)
			switch {
			case la.leaders != lb.leaders:
				return la.leaders - lb.leaders
			case la.bytes != lb.bytes:
				return cmpInt64(la.bytes, lb.bytes)
			case la.voters != lb.voters:
				return la.voters - lb.voters
			}
			return cmpInt64(int64(a), int64(b))
		})
		t := cands[0]
		if loadOf(v.leader).leaders < loadOf(t).leaders+2 {
			delete(m.alloc.imbalanced, v.g.ID)
			continue
		}
		since, seen := m.alloc.imbalanced[v.g.ID]
		if !seen {
			m.alloc.imbalanced[v.g.ID] = now
			continue
		}
		if now.Sub(since) < rebalanceSettle || now.Sub(m.alloc.moved[v.g.ID]) < rebalanceCooldown || move != nil {
			continue
		}
		move, target = v, t
	}
	if move == nil {
		return false, nil
	}
	from := move.leader
	delete(m.alloc.imbalanced, move.g.ID)
	m.alloc.moved[move.g.ID] = now
	m.mu.Unlock()
	tctx, cancel := context.WithTimeout(ctx, rebalanceTransfer)
	defer cancel()
	err := m.transferLeadership(tctx, move.g, from, target,
		fmt.Sprintf("move the leadership of %s from node %d to node %d (rebalancing: it led %d groups, node %d led %d)",
			move.g.Name, from, target, loadOf(from).leaders, target, loadOf(target).leaders))
	m.mu.Lock()
	return err == nil, err
}

// transferLeadership moves g's leadership from node from to node to as a
// LEASE TRANSFER job with one step.
func (m *Manager) transferLeadership(ctx context.Context, g Group, from, to uint64, description string) error {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	job := m.startJob(KindLeaseTransfer, description)
	job.progress(0, 1)
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := m.cfg.Node.Host().TransferLeadership(tctx, g.ID, raft.ReplicaID(to))
	cancel()
	if err != nil {
		err = fmt.Errorf("moving the leadership of %s from node %d to node %d: %w", g.Name, from, to, err)
	} else {
		job.progress(1, 1)
		m.cfg.Logf("node %d: moved the leadership of %s from node %d to node %d", m.self, g.Name, from, to)
	}
	job.finish(err)
	return err
}

// heardWithinLocked reports whether node id answered a ping within d.
func (m *Manager) heardWithinLocked(id uint64, d time.Duration) bool {
	if id == m.self {
		return true
	}
	t, ok := m.heard[id]
	return ok && time.Since(t) < d
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
