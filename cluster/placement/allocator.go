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
	imbalanced map[string]time.Time       // first round a move (allocMove.key) was wanted
	moved      map[raft.GroupID]time.Time // last move of the group's leadership or voters
	rates      map[raft.GroupID]rateSample
}

// rateSample is a group's applied index when last sampled and its rate.
type rateSample struct {
	index uint64
	at    time.Time
	rate  float64 // commands per second, smoothed
}

// rateSmoothing: each round's rate counts this much into the smoothed one
// (rounds are Interval apart: half a second by default, so a change of
// load shows within a few seconds).
const rateSmoothing = 0.3

// sampleRate updates g's smoothed rate from its applied index now.
func (m *Manager) sampleRateLocked(g raft.GroupID, index uint64, now time.Time) float64 {
	s, ok := m.alloc.rates[g]
	if !ok || index < s.index {
		m.alloc.rates[g] = rateSample{index: index, at: now}
		return 0
	}
	if dt := now.Sub(s.at).Seconds(); dt > 0 {
		r := float64(index-s.index) / dt
		s.rate = rateSmoothing*r + (1-rateSmoothing)*s.rate
		s.index, s.at = index, now
		m.alloc.rates[g] = s
	}
	return s.rate
}

// rebalance is one round of the allocator (Run, on the serving node). It
// acts only while every node that holds a replica answers pings: a node
// that stopped answering is healed first (or comes back), and a move made
// meanwhile could land on a node about to die. It builds the view plan
// decides on (plan.go: zone diversity of voters, leaderships weighed by
// the groups' rates, voters per node), and makes the first wanted move
// that has been wanted for rebalanceSettle on a group not moved within
// rebalanceCooldown: one move per round. A leadership move is a LEASE
// TRANSFER job, a voter's a REPLICA MOVE (moveVoter). A group whose leader
// serves SQL (Group.Serving) never has its leadership moved by the
// allocator: see doc.go for why. It reports whether it moved something.
func (m *Manager) rebalance(ctx context.Context) (bool, error) {
	if m.cfg.NoRebalance {
		return false, nil
	}
	h := m.cfg.Node.Host()
	holders := map[uint64]bool{} // nodes holding a replica of a group
	var groups []allocGroup
	byID := map[raft.GroupID]Group{}
	now := time.Now()
	for _, g := range m.cfg.Groups {
		byID[g.ID] = g
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return false, err
		}
		ag := allocGroup{id: g.ID, name: g.Name, serving: g.Serving, movable: g.Generations}
		for v := range mem.Voters {
			ag.voters = append(ag.voters, NodeOf(v))
			holders[NodeOf(v)] = true
		}
		for nv := range mem.NonVoters {
			n := NodeOf(nv)
			holders[n] = true
			if !g.Generations {
				continue
			}
			up := g.CaughtUp == nil
			if !up {
				if up, err = g.CaughtUp(ctx, n); err != nil {
					return false, err
				}
			}
			if up {
				ag.ready = append(ag.ready, n)
			}
		}
		slices.Sort(ag.voters)
		slices.Sort(ag.ready)
		if l, _, ok, err := h.Leader(g.ID); err == nil && ok {
			ag.leader = NodeOf(l)
		}
		if g.Size != nil {
			if n, err := g.Size(ctx); err == nil {
				ag.bytes = n
			}
		}
		if g.Applied != nil {
			if idx, err := g.Applied(ctx); err == nil {
				m.mu.Lock()
				ag.rate = m.sampleRateLocked(g.ID, idx, now)
				m.mu.Unlock()
			}
		}
		groups = append(groups, ag)
	}
	m.mu.Lock()
	for id := range holders {
		if !m.heardWithinLocked(id, m.freshWindow()) {
			// A node that does not answer: healing goes first, and the
			// imbalance is measured again once every node answers.
			clear(m.alloc.imbalanced)
			m.mu.Unlock()
			return false, nil
		}
	}
	var nodes []allocNode
	for _, nd := range m.nodes {
		nodes = append(nodes, allocNode{id: nd.ID, zone: m.zoneLocked(nd.ID),
			target: m.eligibleLocked(nd.ID) && m.heardWithinLocked(nd.ID, m.freshWindow())})
	}
	if !slices.ContainsFunc(nodes, func(n allocNode) bool { return n.id == m.self }) {
		nodes = append(nodes, allocNode{id: m.self, zone: m.zoneLocked(m.self), target: m.eligibleLocked(m.self)})
	}
	moves := plan(nodes, groups)
	wanted := map[string]bool{}
	var move *allocMove
	for i := range moves {
		mv := &moves[i]
		wanted[mv.key()] = true
		since, seen := m.alloc.imbalanced[mv.key()]
		if !seen {
			m.alloc.imbalanced[mv.key()] = now
			continue
		}
		if move == nil && now.Sub(since) >= rebalanceSettle && now.Sub(m.alloc.moved[mv.group]) >= rebalanceCooldown {
			move = mv
		}
	}
	for k := range m.alloc.imbalanced {
		if !wanted[k] {
			delete(m.alloc.imbalanced, k) // balanced again: settle anew
		}
	}
	if move == nil {
		m.mu.Unlock()
		return false, nil
	}
	delete(m.alloc.imbalanced, move.key())
	m.alloc.moved[move.group] = now
	m.mu.Unlock()
	g := byID[move.group]
	if move.voter {
		err := m.moveVoter(ctx, g, move.from, move.to, move.why)
		return err == nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, rebalanceTransfer)
	defer cancel()
	err := m.transferLeadership(tctx, g, move.from, move.to,
		fmt.Sprintf("move the leadership of %s from node %d to node %d (%s)", g.Name, move.from, move.to, move.why))
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
