package shardrepl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
)

// Replicas of split children on the nodes that were not among a child's
// founders (a non-voter of the parent at the split, a node added later):
// the rule is that every member of FirstGroup holds a replica of every
// group, and every voter of FirstGroup votes in every group, because the
// serving node (FirstGroup's leader) reads its own engine and any voter
// may serve next.
//
// The serving node's manager loop (manageChildren) adds, for each child
// group it runs, a non-voter for every member node of FirstGroup that has
// no replica of it, under the replica id the node has in FirstGroup, and
// records it in the metadata group first:
//
//	"group-replica/" + node (8 BE) + group (8 BE)   the replica id added
//	"group-caught-up/" + node (8 BE) + group (8 BE) that replica applied
//	                                                the group's log (the id)
//
// The node's watcher (joinChildren, with watchGeneration's poll) starts
// each recorded replica it does not run (Join, NonVoter: a snapshot brings
// the rows; whatever state of the group the store held from a split it
// applied as a non-voter of the parent is dropped first), catches it up
// and records it; the manager loop promotes it once the node votes in
// FirstGroup. It removes a child's voter once its node stops voting in
// FirstGroup (placement moved, replaced or drained it there) and every
// voter of FirstGroup votes in the child (trimChild), and a child's
// replica on a node that left FirstGroup; a node added again under a
// later generation of its FirstGroup id rejoins the child under it.
const (
	keyGroupReplica  = "group-replica/"
	keyGroupCaughtUp = "group-caught-up/"
)

func groupNodeKey(prefix string, id uint64, g raft.GroupID) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefix, id), uint64(g))
}

// manageChildren gives every child group a replica on each member node of
// FirstGroup (first: FirstGroup's membership) and promotes those of the
// nodes that vote in FirstGroup once they caught up.
func (c *Cluster) manageChildren(ctx context.Context, first raft.Membership) error {
	h := c.Node.Host()
	members := map[raft.ReplicaID]string{}
	for r, a := range first.NonVoters {
		members[r] = a
	}
	for r, a := range first.Voters {
		members[r] = a
	}
	for _, g := range c.knownChildren() {
		if c.childInOrder(g, first) {
			continue // closedts.go's quiesce note: no read wakes it
		}
		m, err := h.Membership(ctx, g)
		if err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
		c.noteChildOrder(g, first, m, members)
		for r1, addr := range members {
			id := placement.NodeOf(r1)
			_, votesFirst := first.Voters[r1]
			r, voter, ok := replicaOnNode(m, id)
			switch {
			case !ok:
				if !c.Placement.Eligible(id) || m.Removed[r1] {
					continue
				}
				// The record first: the node starts a joining replica,
				// which waits until the group adds it.
				if err := c.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: groupNodeKey(keyGroupReplica, id, g),
					Value: binary.BigEndian.AppendUint64(nil, uint64(r1))}); err != nil {
					return err
				}
				// The child's log starts without the rows its founders
				// took from the parent: the new replica must get a
				// snapshot, so the log is compacted where it is sent from,
				// on the leader, which is this node then.
				if err := c.leadChild(ctx, g); err != nil {
					return err
				}
				if _, err := h.CompactLog(ctx, g); err != nil {
					return fmt.Errorf("compacting group %d's log before adding node %d: %w", g, id, err)
				}
				if err := h.AddNonVoter(ctx, g, r1, addr); err != nil {
					return fmt.Errorf("adding node %d to group %d: %w", id, g, err)
				}
				c.cfg.Logf("node %d: added node %d to shard group %d as a non-voter", c.id, id, g)
			case !voter && votesFirst:
				v, found, err := c.metaGet(ctx, groupNodeKey(keyGroupCaughtUp, id, g))
				if err != nil {
					return err
				}
				if !found || v != strconv.FormatUint(uint64(r), 10) {
					continue
				}
				if _, err := h.PromoteIf(ctx, g, r, func(raft.Membership) bool { return true }); err != nil {
					return fmt.Errorf("promoting node %d in group %d: %w", id, g, err)
				}
				c.cfg.Logf("node %d: node %d votes in shard group %d", c.id, id, g)
			}
		}
		if err := c.trimChild(ctx, g, m, first); err != nil {
			return err
		}
	}
	return nil
}

// trimChild removes g's replicas on nodes that left FirstGroup, and g's
// voters on nodes that no longer vote in FirstGroup (placement moved,
// replaced or drained them there) once every voter node of FirstGroup
// votes in g, so that g's quorum stays on FirstGroup's voters.
func (c *Cluster) trimChild(ctx context.Context, g raft.GroupID, m, first raft.Membership) error {
	h := c.Node.Host()
	firstVoters, firstMembers := map[uint64]bool{}, map[uint64]bool{}
	for r := range first.Voters {
		firstVoters[placement.NodeOf(r)] = true
		firstMembers[placement.NodeOf(r)] = true
	}
	for r := range first.NonVoters {
		firstMembers[placement.NodeOf(r)] = true
	}
	childVoters := map[uint64]bool{}
	for r := range m.Voters {
		childVoters[placement.NodeOf(r)] = true
	}
	covered := true
	for id := range firstVoters {
		covered = covered && childVoters[id]
	}
	remove := func(r raft.ReplicaID, why string) error {
		if err := h.RemoveReplica(ctx, g, r); err != nil {
			return fmt.Errorf("removing replica %#x from group %d: %w", r, g, err)
		}
		c.cfg.Logf("node %d: removed node %d's replica %#x from shard group %d (%s)", c.id, placement.NodeOf(r), r, g, why)
		return nil
	}
	for r := range m.NonVoters {
		if !firstMembers[placement.NodeOf(r)] {
			if err := remove(r, "it left the first group"); err != nil {
				return err
			}
		}
	}
	if !covered {
		return nil
	}
	for r := range m.Voters {
		if !firstVoters[placement.NodeOf(r)] {
			if err := remove(r, "it does not vote in the first group"); err != nil {
				return err
			}
		}
	}
	return nil
}

// leadChild makes this node's replica lead g (the serving node proposes
// every commit, so it leads the children anyway when it can).
func (c *Cluster) leadChild(ctx context.Context, g raft.GroupID) error {
	h := c.Node.Host()
	c.regenMu.Lock()
	me := c.children[g]
	c.regenMu.Unlock()
	if me == 0 {
		return fmt.Errorf("group %d does not run here", g)
	}
	if l, _, ok, err := h.Leader(g); err == nil && ok && l == me {
		return nil
	}
	if err := h.TransferLeadership(ctx, g, me); err != nil {
		return fmt.Errorf("taking the leadership of group %d: %w", g, err)
	}
	return nil
}

// replicaOnNode returns node id's replica in m (any generation) and
// whether it votes; ok is false when the node holds none.
func replicaOnNode(m raft.Membership, id uint64) (r raft.ReplicaID, voter, ok bool) {
	for v := range m.Voters {
		if placement.NodeOf(v) == id {
			return v, true, true
		}
	}
	for nv := range m.NonVoters {
		if placement.NodeOf(nv) == id {
			return nv, false, true
		}
	}
	return 0, false, false
}

// joinedChildren reads the child replicas recorded for this node
// (manageChildren): group → replica id.
func (c *Cluster) joinedChildren(ctx context.Context) (map[raft.GroupID]raft.ReplicaID, error) {
	start := idKey(keyGroupReplica, c.id)
	end := idKey(keyGroupReplica, c.id+1)
	v, err := c.Node.Host().Read(ctx, node.MetaGroup, kvsm.Scan{Start: start, End: end})
	if err != nil {
		return nil, err
	}
	out := map[raft.GroupID]raft.ReplicaID{}
	for _, kv := range v.([]kvsm.KV) {
		if len(kv.Key) != len(start)+8 || len(kv.Value) != 8 {
			continue
		}
		out[raft.GroupID(binary.BigEndian.Uint64(kv.Key[len(start):]))] = raft.ReplicaID(binary.BigEndian.Uint64(kv.Value))
	}
	return out, nil
}

// joinChildren starts every child replica recorded for this node that does
// not run here yet (a joining non-voter), and catches each up.
func (c *Cluster) joinChildren(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	joined, err := c.joinedChildren(rctx)
	cancel()
	if err != nil || len(joined) == 0 {
		return err
	}
	c.regenMu.Lock()
	defer c.regenMu.Unlock()
	h := c.Node.Host()
	for g, r := range joined {
		if cur := c.children[g]; cur != 0 {
			if cur == r || placement.NodeOf(cur) != placement.NodeOf(r) || placement.GenOf(r) <= placement.GenOf(cur) {
				continue
			}
			// Its voter was removed (it stopped voting in FirstGroup) and
			// the serving node added it again under its later FirstGroup
			// id: rejoin under that one.
			if err := placement.Rejoin(ctx, h, g, cur, r, func() error { return c.Store.DropGroup(g) }, c.Store.NewStateMachine); err != nil {
				return err
			}
			c.runs(g, r)
			c.joined[g] = r
			c.cfg.Logf("node %d: rejoined shard group %d as a non-voter (replica %#x)", c.id, g, r)
			c.wg.Add(1)
			go c.catchUpChild(ctx, g, r)
			continue
		}
		spec := raft.ReplicaSpec{Group: g, Replica: r, NonVoter: true}
		if !h.HasReplicaData(g, r) {
			// A split this node applied as a parent's non-voter seeded
			// the group's state here; the snapshot replaces it.
			if err := c.Store.DropGroup(g); err != nil {
				return err
			}
			spec.Join = true
		}
		if err := h.StartReplica(spec, c.Store.NewStateMachine); err != nil && !errors.Is(err, raft.ErrGroupExists) {
			return fmt.Errorf("starting replica %#x of group %d: %w", r, g, err)
		}
		c.runs(g, r)
		c.joined[g] = r
		c.cfg.Logf("node %d: joined shard group %d as a non-voter (replica %#x)", c.id, g, r)
		c.wg.Add(1)
		go c.catchUpChild(ctx, g, r)
	}
	return nil
}

// catchUpChild records, once replica r of g applied the group's log, that
// it caught up.
func (c *Cluster) catchUpChild(ctx context.Context, g raft.GroupID, r raft.ReplicaID) {
	defer c.wg.Done()
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := c.Node.Host().Read(rctx, g, shardsm.State{})
		cancel()
		if err == nil {
			err = c.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: groupNodeKey(keyGroupCaughtUp, c.id, g),
				Value: []byte(strconv.FormatUint(uint64(r), 10))})
		}
		if err == nil {
			c.cfg.Logf("node %d: its replica of shard group %d caught up", c.id, g)
			return
		}
		sleep(ctx, time.Second)
	}
}
