package shardrepl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
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
//	                                                (8 BE), then 0x01 when
//	                                                it is a founder to start
//	                                                from a snapshot
//	"group-caught-up/" + node (8 BE) + group (8 BE) that replica applied
//	                                                the group's log (the id,
//	                                                in decimal)
//
// Every node records "group-caught-up/" for each child replica it runs,
// founders included (recordRunningChildren), once it caught up and
// compacted its own log of the child (compactCaughtUp): a founder's log
// starts at index 1 without the rows it took from the parent, and any
// voter may lead when a replica is added, so the serving node adds one
// only once every voter on a live node has recorded. A founder that missed the
// split (its node was down or stepping down while the parent split, and
// its replica of the parent caught up by a snapshot taken after the
// split, so its store never saw the child) is named by the child's
// membership but runs nothing: the serving node finds it by its missing
// record (reseedFounders: reseedAfter after it first looked, while the
// node is live), compacts the child's log on its own replica, the leader,
// so that the founder's replica is sent a snapshot rather than the log
// from index 1, and records "group-replica/" with the founder flag; the
// node's watcher then starts the replica as a joining voter
// (TestClusterFounderThatMissedSplitGetsChild).
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
	// founderFlag ends a "group-replica/" value that names a founding
	// voter to start from a snapshot, not a non-voter added to the group.
	founderFlag byte = 0x01
)

// testAfterChildAdd, when a test sets it, runs on the serving node right
// after it added a replica to child group g (membership m: the one before
// the add), as if the leadership moved then (TestClusterChildFollowsFirstGroup).
var testAfterChildAdd func(ctx context.Context, h raft.Host, g raft.GroupID, m raft.Membership)

// reseedAfter is how long a founder of a child may go without recording
// that its replica runs before the serving node asks its node to start it
// from a snapshot. Founders record within a watcher poll or two; a late
// request is harmless (the node ignores it while the replica runs, and
// the compaction only makes slow replicas catch up by snapshot).
const reseedAfter = 5 * time.Second

// groupReplica names one replica of a child group.
type groupReplica struct {
	group   raft.GroupID
	replica raft.ReplicaID
}

// founderWatch is the serving node's view of the children's founders
// (reseedFounders): which ones recorded that they run, since when the
// others have been missing while their node was live, and when each was
// last asked to start.
type founderWatch struct {
	mu      sync.Mutex
	running map[groupReplica]bool
	missing map[groupReplica]time.Time
	asked   map[groupReplica]time.Time
}

// childRecord is a "group-replica/" record: the replica the node must run,
// and whether it is a founder that starts from a snapshot (a voter) or a
// non-voter the serving node added.
type childRecord struct {
	replica raft.ReplicaID
	founder bool
}

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
	firstNodes := map[uint64]bool{}
	for r := range members {
		firstNodes[placement.NodeOf(r)] = true
	}
	memberships := map[raft.GroupID]raft.Membership{}
	var caughtUp map[nodeGroup]string // read once, when a replica is to be added
	for _, g := range c.knownChildren() {
		if m, ok := c.childInOrder(g, first); ok {
			memberships[g] = m // for reseedFounders, which reads no membership
			continue           // closedts.go's quiesce note: no read wakes it
		}
		m, err := h.Membership(ctx, g)
		if err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
		c.noteChildOrder(g, first, m, members)
		memberships[g] = m
		for r1, addr := range members {
			id := placement.NodeOf(r1)
			_, votesFirst := first.Voters[r1]
			r, voter, ok := replicaOnNode(m, id)
			switch {
			case !ok:
				if !c.Placement.Eligible(id) || m.Removed[r1] {
					continue
				}
				if caughtUp == nil {
					if caughtUp, err = c.scanGroupRecords(ctx, keyGroupCaughtUp); err != nil {
						return err
					}
				}
				if !c.votersRecorded(g, m, caughtUp) {
					// A voter that has not compacted its log of g yet
					// could lead and send the new replica g's log from
					// index 1 (compactCaughtUp): next round.
					continue
				}
				if reused, err := c.freeAddress(ctx, g, m, id, addr, firstNodes); err != nil || reused {
					if err != nil {
						return err
					}
					continue // a member of the first group holds it: leave it
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
				if err := c.markLeaderApplied(ctx, g); err != nil {
					return err
				}
				if _, err := h.CompactLog(ctx, g); err != nil {
					return fmt.Errorf("compacting group %d's log before adding node %d: %w", g, id, err)
				}
				if err := h.AddNonVoter(ctx, g, r1, addr); err != nil {
					return fmt.Errorf("adding node %d to group %d: %w", id, g, err)
				}
				c.cfg.Logf("node %d: added node %d to shard group %d as a non-voter", c.id, id, g)
				if testAfterChildAdd != nil {
					testAfterChildAdd(ctx, h, g, m)
				}
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
	return c.reseedFounders(ctx, memberships)
}

// reseedFounders asks every live node whose founding replica of a child
// has not recorded that it runs, reseedAfter after the serving node first
// saw it missing, to start it from a snapshot (see the top of the file).
// memberships are the children's, as manageChildren just read them. The
// records are read only while some founder is unaccounted for.
func (c *Cluster) reseedFounders(ctx context.Context, memberships map[raft.GroupID]raft.Membership) error {
	h := c.Node.Host()
	w := &c.founders
	var unknown []groupReplica
	for g, m := range memberships {
		for r := range m.Voters {
			gr := groupReplica{g, r}
			w.mu.Lock()
			known := w.running[gr]
			w.mu.Unlock()
			if !known && placement.NodeOf(r) != c.id {
				unknown = append(unknown, gr)
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	caughtUp, err := c.scanGroupRecords(ctx, keyGroupCaughtUp)
	if err != nil {
		return err
	}
	added, err := c.scanGroupRecords(ctx, keyGroupReplica)
	if err != nil {
		return err
	}
	now := time.Now()
	w.mu.Lock()
	if w.running == nil {
		w.running, w.missing, w.asked = map[groupReplica]bool{}, map[groupReplica]time.Time{}, map[groupReplica]time.Time{}
	}
	var ask []groupReplica
	for _, gr := range unknown {
		id := placement.NodeOf(gr.replica)
		key := nodeGroup{id, gr.group}
		if v, ok := caughtUp[key]; ok && v == strconv.FormatUint(uint64(gr.replica), 10) {
			w.running[gr] = true
			delete(w.missing, gr)
			continue
		}
		if v, ok := added[key]; ok && len(v) == 8 && raft.ReplicaID(binary.BigEndian.Uint64([]byte(v))) == gr.replica {
			// Added as a non-voter and promoted: joinChildren starts it.
			continue
		}
		if !c.Placement.Live(id) || !c.Placement.Eligible(id) {
			delete(w.missing, gr) // a node that is down is not missing a split
			continue
		}
		since, ok := w.missing[gr]
		if !ok {
			w.missing[gr] = now
			continue
		}
		if now.Sub(since) >= reseedAfter && now.Sub(w.asked[gr]) >= 6*reseedAfter {
			ask = append(ask, gr)
		}
	}
	w.mu.Unlock()
	for _, gr := range ask {
		id := placement.NodeOf(gr.replica)
		// The compaction first: once the record is there, the node's
		// replica starts empty and must be sent a snapshot.
		if err := c.leadChild(ctx, gr.group); err != nil {
			return err
		}
		if err := c.markLeaderApplied(ctx, gr.group); err != nil {
			return err
		}
		if _, err := h.CompactLog(ctx, gr.group); err != nil {
			return fmt.Errorf("compacting group %d's log before node %d starts its replica: %w", gr.group, id, err)
		}
		v := append(binary.BigEndian.AppendUint64(nil, uint64(gr.replica)), founderFlag)
		if err := c.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: groupNodeKey(keyGroupReplica, id, gr.group), Value: v}); err != nil {
			return err
		}
		w.mu.Lock()
		w.asked[gr] = time.Now()
		w.mu.Unlock()
		c.cfg.Logf("node %d: node %d's founding replica %#x of shard group %d has not recorded that it runs for %s (it may have missed the split): asked it to start it from a snapshot",
			c.id, id, gr.replica, gr.group, reseedAfter)
	}
	return nil
}

// nodeGroup keys the metadata group's per-node, per-group records.
type nodeGroup struct {
	node  uint64
	group raft.GroupID
}

// scanGroupRecords reads every record under prefix ("group-replica/",
// "group-caught-up/"), by node and group.
func (c *Cluster) scanGroupRecords(ctx context.Context, prefix string) (map[nodeGroup]string, error) {
	start := []byte(prefix)
	end := append([]byte(prefix[:len(prefix)-1]), prefix[len(prefix)-1]+1)
	v, err := c.Node.Host().Read(ctx, node.MetaGroup, kvsm.Scan{Start: start, End: end})
	if err != nil {
		return nil, err
	}
	out := map[nodeGroup]string{}
	for _, kv := range v.([]kvsm.KV) {
		if len(kv.Key) != len(start)+16 {
			continue
		}
		id := binary.BigEndian.Uint64(kv.Key[len(start):])
		g := raft.GroupID(binary.BigEndian.Uint64(kv.Key[len(start)+8:]))
		out[nodeGroup{id, g}] = string(kv.Value)
	}
	return out, nil
}

// freeAddress removes from g (membership m) the replica of another node
// that has addr, the Raft address node id is to be added at, when that
// node left FirstGroup: a node whose data directory was wiped joins again
// under a new id at the same address, and dragonboat refuses to add a
// replica at an address a member has ("rej add exist"), while trimChild
// removes the old node's voter only once every voter of FirstGroup votes
// in g, which the new node cannot until it is added
// (TestClusterWipedNodeReplaced with groups on). reused: a member of
// FirstGroup holds addr, and id is not added.
func (c *Cluster) freeAddress(ctx context.Context, g raft.GroupID, m raft.Membership, id uint64, addr string, firstNodes map[uint64]bool) (reused bool, err error) {
	for _, set := range []map[raft.ReplicaID]string{m.Voters, m.NonVoters} {
		for r, a := range set {
			old := placement.NodeOf(r)
			if a != addr || old == id {
				continue
			}
			if firstNodes[old] {
				return true, nil
			}
			if err := c.Node.Host().RemoveReplica(ctx, g, r); err != nil {
				return false, fmt.Errorf("removing replica %#x from group %d: %w", r, g, err)
			}
			c.cfg.Logf("node %d: removed node %d's replica %#x from shard group %d (it left the first group, and node %d joins at its address)", c.id, old, r, g, id)
		}
	}
	return false, nil
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
// (manageChildren, reseedFounders): group → record.
func (c *Cluster) joinedChildren(ctx context.Context) (map[raft.GroupID]childRecord, error) {
	start := idKey(keyGroupReplica, c.id)
	end := idKey(keyGroupReplica, c.id+1)
	v, err := c.Node.Host().Read(ctx, node.MetaGroup, kvsm.Scan{Start: start, End: end})
	if err != nil {
		return nil, err
	}
	out := map[raft.GroupID]childRecord{}
	for _, kv := range v.([]kvsm.KV) {
		if len(kv.Key) != len(start)+8 || len(kv.Value) < 8 || len(kv.Value) > 9 {
			continue
		}
		rec := childRecord{replica: raft.ReplicaID(binary.BigEndian.Uint64(kv.Value)),
			founder: len(kv.Value) == 9 && kv.Value[8] == founderFlag}
		out[raft.GroupID(binary.BigEndian.Uint64(kv.Key[len(start):]))] = rec
	}
	return out, nil
}

// nonVoterJoins keeps the records of replicas added as non-voters: those
// a start must name so (startChildren).
func nonVoterJoins(recs map[raft.GroupID]childRecord) map[raft.GroupID]raft.ReplicaID {
	out := map[raft.GroupID]raft.ReplicaID{}
	for g, rec := range recs {
		if !rec.founder {
			out[g] = rec.replica
		}
	}
	return out
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
	for g, rec := range joined {
		r := rec.replica
		if rec.founder {
			if err := c.startFounder(ctx, g, r); err != nil {
				return err
			}
			continue
		}
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

// startFounder starts this node's founding replica r of g, which the
// serving node found running nowhere here (reseedFounders). Hold regenMu.
// A replica that ran here before restarts; one whose split the store
// holds is startMissedChildren's; else the node missed the split: the
// replica joins as the voter it is, with whatever of the group the store
// held dropped, and the leader (whose log of the group the serving node
// compacted before it asked) sends it a snapshot.
func (c *Cluster) startFounder(ctx context.Context, g raft.GroupID, r raft.ReplicaID) error {
	if c.children[g] != 0 {
		return nil
	}
	h := c.Node.Host()
	spec := raft.ReplicaSpec{Group: g, Replica: r}
	if !h.HasReplicaData(g, r) {
		if _, seeded, err := c.Store.Descriptor(g); err != nil || seeded {
			return err
		}
		if err := c.Store.DropGroup(g); err != nil {
			return err
		}
		spec.Join = true
	}
	if err := h.StartReplica(spec, c.Store.NewStateMachine); err != nil && !errors.Is(err, raft.ErrGroupExists) {
		return fmt.Errorf("starting founding replica %#x of group %d: %w", r, g, err)
	}
	c.runs(g, r)
	c.cfg.Logf("node %d: started its founding replica %#x of shard group %d, whose split it missed, from a snapshot", c.id, r, g)
	return nil
}

// recordRunningChildren records "group-caught-up/" for every child
// replica running here that has not recorded it yet, once a linearizable
// read of it returns: the serving node looks for founders without one
// (reseedFounders). The watcher calls it every poll; it reads the
// metadata group only while some replica is not known to be recorded.
func (c *Cluster) recordRunningChildren(ctx context.Context) error {
	c.regenMu.Lock()
	var todo []groupReplica
	for g, r := range c.children {
		if c.recorded[g] != r {
			todo = append(todo, groupReplica{g, r})
		}
	}
	c.regenMu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	have, err := c.scanGroupRecords(rctx, keyGroupCaughtUp)
	if err != nil {
		return err
	}
	var ops []kvsm.Op
	var done []groupReplica
	for _, gr := range todo {
		v := strconv.FormatUint(uint64(gr.replica), 10)
		if have[nodeGroup{c.id, gr.group}] == v {
			done = append(done, gr)
			continue
		}
		if rctx.Err() != nil {
			break // the rest next poll
		}
		gctx, gcancel := context.WithTimeout(rctx, 2*time.Second)
		err := c.compactCaughtUp(gctx, gr)
		gcancel()
		if err != nil {
			continue // not caught up yet: next poll
		}
		ops = append(ops, kvsm.Op{Kind: kvsm.OpPut, Key: groupNodeKey(keyGroupCaughtUp, c.id, gr.group), Value: []byte(v)})
		done = append(done, gr)
	}
	if len(ops) > 0 {
		pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.metaPut(pctx, ops...)
		pcancel()
		if err != nil {
			return err
		}
	}
	c.regenMu.Lock()
	for _, gr := range done {
		c.recorded[gr.group] = gr.replica
	}
	c.regenMu.Unlock()
	return nil
}

// catchUpChild records, once replica r of g applied the group's log, that
// it caught up.
func (c *Cluster) catchUpChild(ctx context.Context, g raft.GroupID, r raft.ReplicaID) {
	defer c.wg.Done()
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.compactCaughtUp(rctx, groupReplica{g, r})
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

// errNoRows is a replica that applied its group's log but holds no shard:
// it was sent a child's log from index 1, which lacks the rows the
// founders took from the parent (see compactCaughtUp), or a snapshot
// stamped with on-disk index 0, which dragonboat skips (markApplied).
var errNoRows = errors.New("the replica applied the group's log but holds no shard: it was sent the log from its start, or a snapshot of a child that applied no command (skipped), instead of the rows")

// compactCaughtUp checks, by a linearizable read, that this node's replica
// gr caught up with its group and holds the shard, then compacts its log
// of the group, before the caller records "group-caught-up/".
//
// Why the compaction: a child's log starts at index 1 without the rows its
// founders took from their copy of the parent, so a replica added later
// must be sent a snapshot, never the log from its start. The leader sends
// from its own log, and any voter may lead (an election under load, a
// leadership transfer), so every replica compacts its own once before it
// records, and manageChildren adds a replica to a group only when every
// voter of it has recorded (votersRecorded). Compacting a replica that
// came by snapshot, or one compacted before, changes nothing. A snapshot
// only carries the rows once the replica applied a command (markApplied):
// a compacted log alone is not enough.
func (c *Cluster) compactCaughtUp(ctx context.Context, gr groupReplica) error {
	h := c.Node.Host()
	v, err := h.Read(ctx, gr.group, shardsm.State{})
	if err != nil {
		return err
	}
	st := v.(shardsm.StateResult)
	if !st.Initialized {
		c.regenMu.Lock()
		first := !c.noRows[gr]
		c.noRows[gr] = true
		c.regenMu.Unlock()
		if first {
			c.cfg.Logf("node %d: replica %#x of shard group %d: %v", c.id, gr.replica, gr.group, errNoRows)
		}
		return errNoRows
	}
	if err := c.markApplied(ctx, gr.group, st.Applied); err != nil {
		return err
	}
	_, err = h.CompactLog(ctx, gr.group)
	return err
}

// markApplied makes sure this node's replica of child g applied a command
// (applied: its applied index as last read; 0 is none), by proposing a
// shardsm.Mark when it did not, before its log is compacted for a replica
// to be added. A founder's state machine opens at applied index 0 (its
// rows came from the parent), and dragonboat stamps the snapshot it
// streams with the last index its state machine applied a command at; a
// child that nothing was proposed to since the split (a table loaded
// before the split and not written since, and the closer's closes going
// by the side channel) streams snapshots stamped 0, which a new replica,
// itself at 0, takes as state it already holds: it skips the recovery and
// holds no shard (TestOneNodeCluster's joining nodes with groups on). The
// Mark applies on every replica of g, so any voter that may lead next
// stamps its snapshots past 0 once it applied it; compactCaughtUp runs
// this on each before it records.
func (c *Cluster) markApplied(ctx context.Context, g raft.GroupID, applied uint64) error {
	if applied > 0 {
		return nil
	}
	h := c.Node.Host()
	res, err := h.Propose(ctx, g, shardsm.EncodeMark())
	if err == nil {
		err = shardsm.DecodeResult(res)
	}
	if err != nil {
		return fmt.Errorf("marking group %d's applied index: %w", g, err)
	}
	// Read back through this replica: the leader applied the Mark, and a
	// linearizable read here waits until this replica did too.
	v, err := h.Read(ctx, g, shardsm.State{})
	if err != nil {
		return err
	}
	if v.(shardsm.StateResult).Applied == 0 {
		return fmt.Errorf("group %d: this replica applied no command after a Mark", g)
	}
	c.cfg.Logf("node %d: shard group %d had applied no command since its split: proposed a mark so that its snapshots carry its rows", c.id, g)
	return nil
}

// markLeaderApplied reads this node's replica of g (its leader) and marks
// it (markApplied) if it applied no command yet, before the log is
// compacted for a replica to be added or reseeded.
func (c *Cluster) markLeaderApplied(ctx context.Context, g raft.GroupID) error {
	v, err := c.Node.Host().Read(ctx, g, shardsm.State{})
	if err != nil {
		return fmt.Errorf("group %d: %w", g, err)
	}
	return c.markApplied(ctx, g, v.(shardsm.StateResult).Applied)
}

// votersRecorded reports whether every voter of g (membership m) on a live
// node recorded that it caught up (caughtUp: the "group-caught-up/"
// records), which it does only after it compacted its log of g
// (compactCaughtUp). A voter on a node that is down cannot lead, and
// waiting for it would keep healing from adding the replicas that replace
// it.
func (c *Cluster) votersRecorded(g raft.GroupID, m raft.Membership, caughtUp map[nodeGroup]string) bool {
	for r := range m.Voters {
		id := placement.NodeOf(r)
		if id != c.id && !c.Placement.Live(id) {
			continue
		}
		if caughtUp[nodeGroup{id, g}] != strconv.FormatUint(uint64(r), 10) {
			return false
		}
	}
	return true
}
