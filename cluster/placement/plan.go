package placement

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pivotdb/pivotdb/cluster/raft"
)

// The allocator's decision function (plan) is pure: a view of the nodes
// and groups in, the moves it wants out. rebalance (allocator.go) builds
// the view, applies the hysteresis (a move must be wanted for
// rebalanceSettle, a group moved is left alone for rebalanceCooldown) and
// makes at most one move a round.

// allocNode is one node as the allocator sees it.
type allocNode struct {
	id uint64
	// zone is the node's first locality tier (az in --locality
	// az=NAME,rack=R); "" when it has none, which counts as a zone of its
	// own.
	zone string
	// target: the node may receive a leadership or a voter (active, not
	// dead, answered a ping lately).
	target bool
}

// allocGroup is one group as the allocator sees it.
type allocGroup struct {
	id      raft.GroupID
	name    string
	serving bool // its leadership is never moved (Group.Serving)
	movable bool // its voters may move (Group.Generations)
	leader  uint64
	voters  []uint64 // nodes
	// ready lists the nodes whose non-voter of the group has caught up:
	// a voter can move there.
	ready []uint64
	rate  float64 // commands applied per second (Group.Applied)
	bytes int64   // Group.Size
}

// allocMove is one move the allocator wants.
type allocMove struct {
	group    raft.GroupID
	voter    bool // a voter moves (from's replica rejoins as a non-voter); else the leadership
	from, to uint64
	why      string
}

func (mv allocMove) key() string {
	if mv.voter {
		return fmt.Sprintf("voter %d", mv.group)
	}
	return fmt.Sprintf("leader %d", mv.group)
}

// plan returns the moves that would improve the placement, at most one of
// each kind per group, the most urgent first:
//
//  1. diversity: a movable group with two voters in one zone while a
//     caught-up non-voter sits in a zone without any of its voters moves
//     one of them there (CockroachDB's rule: a group's replicas go to
//     distinct localities where possible);
//  2. leaderships, weighed by load: a group's leadership weighs
//     0.5 + 0.5·n·rate/Σrate over the n groups with a known leader (1 for
//     every group while nothing is applied, which is balancing by count);
//     it moves from its leader L to the voter T that weighs least when
//     W(L) − W(T) ≥ 2·w (after the move T is not ahead of L: a move never
//     just swaps who is ahead, so it cannot flap), from the heaviest
//     leader first;
//  3. voter counts: a movable group's voter on the node with most voters
//     (over all groups) moves to a caught-up non-voter on the node with
//     fewest when they differ by two or more, and the group's distinct
//     zones do not drop.
//
// A group's leader never gives up its voter (its leadership moves first,
// by rule 2, or never: the serving group's), and neither does a node that
// could not take one (decommissioning, dead, silent): draining and
// healing move those.
func plan(nodes []allocNode, groups []allocGroup) []allocMove {
	byID := map[uint64]allocNode{}
	for _, n := range nodes {
		byID[n.id] = n
	}
	isTarget := func(id uint64) bool { return byID[id].target }
	zone := func(id uint64) string { return byID[id].zone }

	votes := map[uint64]int{}
	for _, g := range groups {
		for _, v := range g.voters {
			votes[v]++
		}
	}
	weights, led, bytesLed := leaderWeights(groups)

	var diversity, leaders, counts []allocMove
	for _, g := range groups {
		if g.leader == 0 {
			continue // an election runs: decide next round
		}
		if g.movable {
			if mv, ok := diversityMove(g, votes, isTarget, zone); ok {
				diversity = append(diversity, mv)
			} else if mv, ok := countMove(g, votes, isTarget, zone); ok {
				counts = append(counts, mv)
			}
		}
		if g.serving {
			continue
		}
		w := weights[g.id]
		var cands []uint64
		for _, v := range g.voters {
			if v != g.leader && isTarget(v) {
				cands = append(cands, v)
			}
		}
		if len(cands) == 0 {
			continue
		}
		slices.SortFunc(cands, func(a, b uint64) int {
			return cmp.Or(cmp.Compare(led[a], led[b]), cmp.Compare(bytesLed[a], bytesLed[b]),
				cmp.Compare(votes[a], votes[b]), cmp.Compare(a, b))
		})
		t := cands[0]
		// A small epsilon: the weights are sums of floats.
		if led[g.leader]-led[t] >= 2*w-1e-9 {
			leaders = append(leaders, allocMove{group: g.id, from: g.leader, to: t,
				why: fmt.Sprintf("rebalancing: node %d's leaderships weigh %.2f, node %d's %.2f; this one %.2f", g.leader, led[g.leader], t, led[t], w)})
		}
	}
	slices.SortStableFunc(leaders, func(a, b allocMove) int { return cmp.Compare(led[b.from], led[a.from]) })
	return slices.Concat(diversity, leaders, counts)
}

// leaderWeights weighs each group's leadership by its rate (see plan) and
// sums, per node, the weights and bytes of the groups it leads.
func leaderWeights(groups []allocGroup) (weights map[raft.GroupID]float64, led map[uint64]float64, bytesLed map[uint64]int64) {
	var total float64
	n := 0
	for _, g := range groups {
		if g.leader != 0 {
			total += max(g.rate, 0)
			n++
		}
	}
	weights, led, bytesLed = map[raft.GroupID]float64{}, map[uint64]float64{}, map[uint64]int64{}
	for _, g := range groups {
		if g.leader == 0 {
			continue
		}
		w := 1.0
		if total > 0 {
			w = 0.5 + 0.5*float64(n)*max(g.rate, 0)/total
		}
		weights[g.id] = w
		led[g.leader] += w
		bytesLed[g.leader] += g.bytes
	}
	return weights, led, bytesLed
}

// diversityMove moves a voter out of a zone holding two or more of g's
// voters to a ready node in a zone holding none.
func diversityMove(g allocGroup, votes map[uint64]int, isTarget func(uint64) bool, zone func(uint64) string) (allocMove, bool) {
	inZone := map[string]int{}
	for _, v := range g.voters {
		inZone[zone(v)]++
	}
	var tos []uint64
	for _, r := range g.ready {
		if isTarget(r) && inZone[zone(r)] == 0 && !slices.Contains(g.voters, r) {
			tos = append(tos, r)
		}
	}
	var froms []uint64
	for _, v := range g.voters {
		if v != g.leader && isTarget(v) && inZone[zone(v)] >= 2 {
			froms = append(froms, v)
		}
	}
	if len(tos) == 0 || len(froms) == 0 {
		return allocMove{}, false
	}
	slices.SortFunc(tos, func(a, b uint64) int { return cmp.Or(cmp.Compare(votes[a], votes[b]), cmp.Compare(a, b)) })
	slices.SortFunc(froms, func(a, b uint64) int { return cmp.Or(cmp.Compare(votes[b], votes[a]), cmp.Compare(b, a)) })
	from, to := froms[0], tos[0]
	return allocMove{group: g.id, voter: true, from: from, to: to,
		why: fmt.Sprintf("diversity: %s has %d voters in zone %q, none in node %d's zone %q", g.name, inZone[zone(from)], zone(from), to, zone(to))}, true
}

// countMove moves a voter from the node with most voters to a ready node
// with at least two fewer, keeping the group's distinct zones.
func countMove(g allocGroup, votes map[uint64]int, isTarget func(uint64) bool, zone func(uint64) string) (allocMove, bool) {
	distinct := func(vs []uint64) int {
		z := map[string]bool{}
		for _, v := range vs {
			z[zone(v)] = true
		}
		return len(z)
	}
	before := distinct(g.voters)
	froms := slices.DeleteFunc(slices.Clone(g.voters), func(v uint64) bool { return v == g.leader || !isTarget(v) })
	slices.SortFunc(froms, func(a, b uint64) int { return cmp.Or(cmp.Compare(votes[b], votes[a]), cmp.Compare(b, a)) })
	var tos []uint64
	for _, r := range g.ready {
		if isTarget(r) && !slices.Contains(g.voters, r) {
			tos = append(tos, r)
		}
	}
	slices.SortFunc(tos, func(a, b uint64) int { return cmp.Or(cmp.Compare(votes[a], votes[b]), cmp.Compare(a, b)) })
	for _, from := range froms {
		for _, to := range tos {
			if votes[from] < votes[to]+2 {
				break // tos ascend: no later one is further below
			}
			after := append(slices.DeleteFunc(slices.Clone(g.voters), func(v uint64) bool { return v == from }), to)
			if distinct(after) < before {
				continue
			}
			return allocMove{group: g.id, voter: true, from: from, to: to,
				why: fmt.Sprintf("rebalancing: node %d votes in %d groups, node %d in %d", from, votes[from], to, votes[to])}, true
		}
	}
	return allocMove{}, false
}
