package placement

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// Read replicas (READ_REPLICAS_SETTINGS, issue 18 item 6).
//
// A group's read replicas are non-voting replicas that serve stale reads
// (cmd/pivotdb/follower.go routes a stale read-only connection to the
// nearest node holding one). The tables whose shards a group holds ask for
// them (ReadReplicaGroup.Want: the most that any of them asks, per zone
// and in total), and each round of Run chooses the nodes
// (chooseReadReplicas) and records the choice in the metadata group:
//
//	"read-replica/" + group (8 BE) + node (8 BE)   node serves the group's
//	                                               stale reads ("" value)
//
// A read replica is a caught-up non-voter on a live, active node: never a
// voter of the group (a voter that the allocator promoted there loses the
// record next round, and another node is chosen), never a dead,
// decommissioning or decommissioned node (replaced next round). Lowering
// or resetting the setting deletes the records beyond the new count.
const (
	keyReadReplica    = "read-replica/"
	keyReadReplicaEnd = "read-replica0" // '/'+1

	// KindReadReplicas is sys.jobs' job_type of a change of a group's
	// read replicas.
	KindReadReplicas = "READ REPLICAS"
)

func readReplicaKey(g raft.GroupID, id uint64) []byte {
	k := binary.BigEndian.AppendUint64([]byte(keyReadReplica), uint64(g))
	return binary.BigEndian.AppendUint64(k, id)
}

// ReadReplicaWant is what READ_REPLICAS_SETTINGS asks of a group:
// PerZone replicas in every zone that has nodes ("PER_AZ:n"), and at
// least Total in all ("ANY_AZ:n"), spread over the zones.
type ReadReplicaWant struct {
	PerZone int
	Total   int
}

// Max is the want that satisfies both w and o: a group holding shards of
// several tables gets the most any of them asks for.
func (w ReadReplicaWant) Max(o ReadReplicaWant) ReadReplicaWant {
	return ReadReplicaWant{PerZone: max(w.PerZone, o.PerZone), Total: max(w.Total, o.Total)}
}

// None reports whether w asks for no read replica.
func (w ReadReplicaWant) None() bool { return w.PerZone <= 0 && w.Total <= 0 }

func (w ReadReplicaWant) String() string {
	var parts []string
	if w.PerZone > 0 {
		parts = append(parts, fmt.Sprintf("PER_AZ:%d", w.PerZone))
	}
	if w.Total > 0 {
		parts = append(parts, fmt.Sprintf("ANY_AZ:%d", w.Total))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " and ")
}

// ReadReplicaGroup is a shard group and the read replicas its tables ask
// for (Config.ReadReplicaGroups).
type ReadReplicaGroup struct {
	ID   raft.GroupID
	Name string // for the log and job descriptions
	Want ReadReplicaWant
}

// rrNode is a node as the read-replica choice sees it.
type rrNode struct {
	id   uint64
	zone string // first locality tier; "" for none (one zone of its own)
	// usable: live, active, holds a caught-up non-voter of the group.
	usable bool
	held   int // read replicas it holds in other groups (spreads them)
}

// rrChoice is chooseReadReplicas' answer.
type rrChoice struct {
	chosen      []uint64 // ascending
	add, remove []uint64 // against the current records, ascending
	short       []string // what could not be placed, for the log
}

// zoneName renders a zone for messages.
func zoneName(z string) string {
	if z == "" {
		return "(no locality)"
	}
	return z
}

// chooseReadReplicas picks a group's read replicas: want.PerZone usable
// nodes in every zone of nodes (a zone whose nodes all vote, are down or
// are draining gets fewer, reported in short), then more, one at a time
// in the zone with fewest so far, until want.Total. Within a zone the
// current read replicas go first (no churn), then the nodes holding
// fewest read replicas of other groups, then the lowest id. A current one
// that is no longer usable, or beyond the want, is removed.
func chooseReadReplicas(want ReadReplicaWant, nodes []rrNode, current []uint64) rrChoice {
	cur := map[uint64]bool{}
	for _, id := range current {
		cur[id] = true
	}
	better := func(a, b rrNode) int {
		if cur[a.id] != cur[b.id] {
			if cur[a.id] {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.held, b.held), cmp.Compare(a.id, b.id))
	}
	byZone := map[string][]rrNode{} // usable candidates, best first
	var zones []string
	seen := map[string]bool{}
	for _, n := range nodes {
		if !seen[n.zone] {
			seen[n.zone] = true
			zones = append(zones, n.zone)
		}
		if n.usable {
			byZone[n.zone] = append(byZone[n.zone], n)
		}
	}
	slices.Sort(zones)
	for _, z := range zones {
		slices.SortFunc(byZone[z], better)
	}
	var ch rrChoice
	picked := map[string]int{}
	take := func(z string) {
		ch.chosen = append(ch.chosen, byZone[z][0].id)
		byZone[z] = byZone[z][1:]
		picked[z]++
	}
	if want.PerZone > 0 {
		for _, z := range zones {
			for picked[z] < want.PerZone && len(byZone[z]) > 0 {
				take(z)
			}
			if picked[z] < want.PerZone {
				ch.short = append(ch.short, fmt.Sprintf("zone %s: %d of %d (its other nodes vote, are not live or are draining)",
					zoneName(z), picked[z], want.PerZone))
			}
		}
	}
	for len(ch.chosen) < want.Total {
		best := ""
		found := false
		for _, z := range zones {
			if len(byZone[z]) == 0 {
				continue
			}
			if !found {
				best, found = z, true
				continue
			}
			// Fewest so far; on a tie the zone whose best node is a
			// current read replica, so that a spread choice stays put.
			if d := picked[z] - picked[best]; d < 0 || d == 0 && cur[byZone[z][0].id] && !cur[byZone[best][0].id] {
				best = z
			}
		}
		if !found {
			ch.short = append(ch.short, fmt.Sprintf("%d of %d in all (no other node holds a caught-up non-voter)",
				len(ch.chosen), want.Total))
			break
		}
		take(best)
	}
	slices.Sort(ch.chosen)
	in := map[uint64]bool{}
	for _, id := range ch.chosen {
		in[id] = true
		if !cur[id] {
			ch.add = append(ch.add, id)
		}
	}
	for _, id := range current {
		if !in[id] {
			ch.remove = append(ch.remove, id)
		}
	}
	slices.Sort(ch.remove)
	return ch
}

// ReadReplicas returns every group's read replicas as the metadata group
// records them, ascending by node. stale reads this node's replica of the
// metadata group without asking its leader (a router that must answer
// while the leader is stopped); else the read is linearizable.
func (m *Manager) ReadReplicas(ctx context.Context, stale bool) (map[raft.GroupID][]uint64, error) {
	q := kvsm.Scan{Start: []byte(keyReadReplica), End: []byte(keyReadReplicaEnd)}
	h := m.cfg.Node.Host()
	var v any
	var err error
	if stale {
		v, err = h.StaleRead(node.MetaGroup, q)
	} else {
		v, err = h.Read(ctx, node.MetaGroup, q)
	}
	if err != nil {
		return nil, err
	}
	out := map[raft.GroupID][]uint64{}
	for _, kv := range v.([]kvsm.KV) {
		if len(kv.Key) != len(keyReadReplica)+16 {
			continue
		}
		g := raft.GroupID(binary.BigEndian.Uint64(kv.Key[len(keyReadReplica):]))
		out[g] = append(out[g], binary.BigEndian.Uint64(kv.Key[len(keyReadReplica)+8:]))
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out, nil
}

// Zones returns each node's zone (the first tier of its --locality) as
// this node last read them ("" for none).
func (m *Manager) Zones() map[uint64]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[uint64]string{}
	for _, nd := range m.nodes {
		out[nd.ID] = m.zoneLocked(nd.ID)
	}
	out[m.self] = m.zoneLocked(m.self)
	return out
}

// placeReadReplicas is Run's read-replica round: it chooses every group's
// read replicas (Config.ReadReplicaGroups) and records the changes, one
// READ REPLICAS job per group that changes. Records of groups that are no
// longer listed (no table asks any more, or the group is gone) are
// deleted.
func (m *Manager) placeReadReplicas(ctx context.Context) error {
	if m.cfg.ReadReplicaGroups == nil {
		return nil
	}
	groups, err := m.cfg.ReadReplicaGroups(ctx)
	if err != nil {
		return err
	}
	records, err := m.ReadReplicas(ctx, false)
	if err != nil {
		return err
	}
	caughtUp := map[uint64]bool{} // Config.ReadReplicaCaughtUp, once a round
	held := map[uint64]int{}
	for _, ids := range records {
		for _, id := range ids {
			held[id]++
		}
	}
	listed := map[raft.GroupID]bool{}
	var errs []error
	for _, g := range groups {
		listed[g.ID] = true
		if g.Want.None() && len(records[g.ID]) == 0 {
			continue
		}
		if err := m.placeGroupReadReplicas(ctx, g, records[g.ID], held, caughtUp); err != nil {
			errs = append(errs, fmt.Errorf("read replicas of %s: %w", g.Name, err))
		}
	}
	for gid, ids := range records {
		if listed[gid] {
			continue
		}
		g := ReadReplicaGroup{ID: gid, Name: fmt.Sprintf("shard group %d", gid)}
		if err := m.placeGroupReadReplicas(ctx, g, ids, held, caughtUp); err != nil {
			errs = append(errs, fmt.Errorf("read replicas of %s: %w", g.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) placeGroupReadReplicas(ctx context.Context, g ReadReplicaGroup, current []uint64, held map[uint64]int,
	caughtUp map[uint64]bool) error {
	var mem raft.Membership
	if !g.Want.None() {
		var err error
		if mem, err = m.cfg.Node.Host().Membership(ctx, g.ID); err != nil {
			return err
		}
	}
	nonVoter := map[uint64]bool{}
	for r := range mem.NonVoters {
		nonVoter[NodeOf(r)] = true
	}
	for r := range mem.Voters {
		delete(nonVoter, NodeOf(r)) // a node voting under another generation
	}
	m.mu.Lock()
	var nodes []rrNode
	// Nodes whose locality is not known yet (just joined) sit this round
	// out: taken for a zone of their own they would get a read replica
	// of their own, moved to their real zone's one a round later. A
	// current read replica on such a node stays (pending).
	var known, pending []uint64
	for _, nd := range m.nodes {
		if m.stateLocked(nd.ID) == stateDecommissoned {
			continue // gone for good: its zone has no nodes
		}
		if !m.localityKnownLocked(nd.ID) {
			if slices.Contains(current, nd.ID) {
				pending = append(pending, nd.ID)
			}
			continue
		}
		mine := 0
		if slices.Contains(current, nd.ID) {
			mine = 1
		}
		nodes = append(nodes, rrNode{id: nd.ID, zone: m.zoneLocked(nd.ID),
			usable: nonVoter[nd.ID] && m.eligibleLocked(nd.ID) && m.liveLocked(nd.ID), held: held[nd.ID] - mine})
	}
	m.mu.Unlock()
	for i := range nodes {
		id := nodes[i].id
		if !nodes[i].usable || m.cfg.ReadReplicaCaughtUp == nil {
			continue
		}
		ok, known := caughtUp[id]
		if !known {
			var err error
			if ok, err = m.cfg.ReadReplicaCaughtUp(ctx, id); err != nil {
				return err
			}
			caughtUp[id] = ok
		}
		nodes[i].usable = ok
	}
	for _, id := range current {
		if !slices.Contains(pending, id) {
			known = append(known, id)
		}
	}
	ch := chooseReadReplicas(g.Want, nodes, known)
	ch.chosen = append(ch.chosen, pending...)
	slices.Sort(ch.chosen)
	for _, s := range ch.short {
		m.logOnce(fmt.Sprintf("read replicas %d %s %s", g.ID, g.Want, s),
			"node %d: placement: %s asks for read replicas %s; placed %s", m.self, g.Name, g.Want, s)
	}
	if len(ch.add) == 0 && len(ch.remove) == 0 {
		return nil
	}
	var ops []kvsm.Op
	var what []string
	for _, id := range ch.add {
		ops = append(ops, kvsm.Op{Kind: kvsm.OpPut, Key: readReplicaKey(g.ID, id), Value: []byte{}})
		what = append(what, fmt.Sprintf("add node %d", id))
	}
	for _, id := range ch.remove {
		ops = append(ops, kvsm.Op{Kind: kvsm.OpDelete, Key: readReplicaKey(g.ID, id)})
		what = append(what, fmt.Sprintf("remove node %d", id))
	}
	desc := fmt.Sprintf("read replicas of %s (%s): %s", g.Name, g.Want, strings.Join(what, ", "))
	job := m.startJob(KindReadReplicas, desc)
	job.progress(0, int64(len(ops)))
	err := m.metaPut(ctx, ops...)
	if err == nil {
		job.progress(int64(len(ops)), int64(len(ops)))
		for _, id := range ch.add {
			held[id]++
		}
		for _, id := range ch.remove {
			held[id]--
		}
		m.cfg.Logf("node %d: placement: %s; read replicas now on %v", m.self, desc, ch.chosen)
	}
	job.finish(err)
	return err
}
