package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
)

// Shard groups besides FirstGroup: split children (shardsm.Split). A split
// makes the child on the parent's replicas without moving rows; each
// replica that applies it tells its node (shardsm.SplitEvent), and the
// node starts its replica of the child under the replica id it has in the
// parent, with the split's founding members. The child's state stays on
// the store (shardsm.Store.Groups), so a node that restarts, or reopens
// its engine after serving (StepDown), starts every group it finds there:
// a restart of the replica when the log store holds it, else with the
// founding members the split recorded (seeded but never started).
//
// The node's replica of every child has the id of its FirstGroup replica
// at the split; children do not move on their own (placement keeps every
// group's voters on FirstGroup's nodes: the serving node reads its own
// engine, so every node that may serve holds a replica of every group).

// knownChildren returns every child group this node started since it
// began (groups never go away: there are no merges), whether it runs now
// or not (StepDown stops them for a while).
func (c *Cluster) knownChildren() []raft.GroupID {
	if p := c.known.Load(); p != nil {
		return *p
	}
	return nil
}

// runs records that child g runs here under r. Hold regenMu.
func (c *Cluster) runs(g raft.GroupID, r raft.ReplicaID) {
	c.children[g] = r
	known := c.knownChildren()
	if !slices.Contains(known, g) {
		known = append(slices.Clone(known), g)
		slices.Sort(known)
		c.known.Store(&known)
	}
}

// watchSplits makes st's replicas start the child of every split they
// apply; the serving node also adds it to its Replicator.
func (c *Cluster) watchSplits(st *shardsm.Store) {
	st.SetSplitHandler(func(e shardsm.SplitEvent) {
		// The handler runs on the parent's apply path: it must not block.
		// (Not in c.wg: an apply may come while Close waits for it; a
		// start after the host closed fails with ErrClosed.)
		go c.startChild(st, e)
	})
}

// startChild starts this node's replica of e.Child, unless st is no longer
// the node's store (StepDown reopened the engine and starts every group it
// holds) or the replica already runs.
func (c *Cluster) startChild(st *shardsm.Store, e shardsm.SplitEvent) {
	if !c.startChildReplica(st, e) {
		return
	}
	// Outside regenMu: AddGroup reads the child, which waits for its
	// first election (about a second on one node). Under the lock the
	// children of a table's partitions started one election after
	// another, and a commit to the last of 16 waited longer than the
	// Replicator's bound for a split child to reach the map (XX000 "no
	// shard group of the map holds key" loading a UNIFORM_PARTITIONS = 16
	// table on --one-node-cluster). Either order is right
	// (Replicator.setLocked keeps the newer generation where entries
	// overlap); the parent's refresh saves a commit a stale answer.
	c.addToReplicator(e.Parent, e.Child)
}

// startChildReplica is startChild's part under regenMu; it reports whether
// it started the replica.
func (c *Cluster) startChildReplica(st *shardsm.Store, e shardsm.SplitEvent) bool {
	c.regenMu.Lock()
	defer c.regenMu.Unlock()
	if st != c.Store || c.children[e.Child] != 0 {
		return false
	}
	if _, ok := e.Members[e.Replica]; !ok {
		// A non-voter of the parent is no founding member of the child:
		// the serving node's manager loop adds it.
		c.cfg.Logf("node %d: group %d split into group %d; replica %#x is not among its founders", c.id, e.Parent, e.Child, e.Replica)
		return false
	}
	if err := StartReplica(c.Node.Host(), st, e.Child, e.Replica, e.Members); err != nil {
		if !errors.Is(err, raft.ErrClosed) {
			c.cfg.Logf("node %d: starting its replica of shard group %d: %v", c.id, e.Child, err)
		}
		return false
	}
	c.runs(e.Child, e.Replica)
	c.cfg.Logf("node %d: shard group %d split at index %d; started its replica %#x of group %d", c.id, e.Parent, e.Index, e.Replica, e.Child)
	return true
}

// addToReplicator adds groups, in order, to the serving node's shard map
// (their descriptors as they are now), so that its commits route to them.
func (c *Cluster) addToReplicator(groups ...raft.GroupID) {
	c.srv.mu.Lock()
	rep := c.srv.rep
	c.srv.mu.Unlock()
	if rep == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultProposeTimeout)
	defer cancel()
	for _, g := range groups {
		if err := rep.AddGroup(ctx, g); err != nil {
			c.cfg.Logf("node %d: adding shard group %d to the shard map: %v", c.id, g, err)
		}
	}
}

// startChildren starts the replica of every group on the store but
// FirstGroup that does not run yet (start, StepDown). joined are the
// replicas this node joined as non-voters (groupplace.go): from the
// metadata group at start, from memory in StepDown, which must not wait
// on the cluster (a node that steps down may be cut off). Hold regenMu.
func (c *Cluster) startChildren(joined map[raft.GroupID]raft.ReplicaID) error {
	gs, err := c.Store.Groups()
	if err != nil {
		return err
	}
	h := c.Node.Host()
	for _, g := range gs {
		if g == FirstGroup || c.children[g] != 0 {
			continue
		}
		if r, ok := joined[g]; ok && h.HasReplicaData(g, r) {
			c.joined[g] = r
			// It joined as a non-voter, and must say so at every start.
			spec := raft.ReplicaSpec{Group: g, Replica: r, NonVoter: true}
			if err := h.StartReplica(spec, c.Store.NewStateMachine); err != nil {
				return fmt.Errorf("shardrepl: starting group %d: %w", g, err)
			}
			c.runs(g, r)
			// Its caught-up record may be missing (it stopped first).
			c.wg.Add(1)
			go c.catchUpChild(c.bg, g, r)
			continue
		}
		r, members, err := c.childReplica(g)
		if err != nil {
			return err
		}
		if r == 0 {
			c.cfg.Logf("node %d: the store holds shard group %d, but no replica of it is this node's", c.id, g)
			continue
		}
		if err := StartReplica(h, c.Store, g, r, members); err != nil {
			return fmt.Errorf("shardrepl: starting group %d: %w", g, err)
		}
		c.runs(g, r)
	}
	return nil
}

// startMissedChildren starts this node's founding replica of every group
// the store holds that does not run here. A split can land between the
// two places that start children: its parent's replica may apply it while
// StepDown swaps the store (startChild then sees the old store and leaves
// it to startChildren, which listed the store's groups before the split
// arrived). The child's membership names this node, so the serving
// node's manager loop would never add it, and the group would run on
// fewer replicas than it counts (TestClusterGroupsFollowShards saw a node
// without a group a takeover created). The watcher calls it every poll.
func (c *Cluster) startMissedChildren() {
	c.regenMu.Lock()
	defer c.regenMu.Unlock()
	if c.Store == nil {
		return
	}
	gs, err := c.Store.Groups()
	if err != nil {
		return
	}
	for _, g := range gs {
		if g == FirstGroup || c.children[g] != 0 || c.joined[g] != 0 || c.missedFailed[g] {
			continue
		}
		r, members, err := c.childReplica(g)
		if err != nil || r == 0 {
			continue // not a founder here: the manager loop adds the node
		}
		if err := StartReplica(c.Node.Host(), c.Store, g, r, members); err != nil {
			if errors.Is(err, raft.ErrGroupExists) {
				c.runs(g, r)
				continue
			}
			if !errors.Is(err, raft.ErrClosed) {
				if c.missedFailed == nil {
					c.missedFailed = map[raft.GroupID]bool{}
				}
				c.missedFailed[g] = true
				c.cfg.Logf("node %d: starting its replica %#x of shard group %d, which a split left stopped: %v", c.id, r, g, err)
			}
			continue
		}
		c.runs(g, r)
		c.cfg.Logf("node %d: started its replica %#x of shard group %d, which a split left stopped", c.id, r, g)
		c.addToReplicator(g)
	}
}

// childReplica returns this node's founding replica of child group g
// and, when the log store does not hold it yet (seeded, never started),
// g's founding members; 0 when the node was no founder.
func (c *Cluster) childReplica(g raft.GroupID) (raft.ReplicaID, map[raft.ReplicaID]string, error) {
	members, _, err := c.Store.FoundingMembers(g)
	if err != nil {
		return 0, nil, err
	}
	var founder raft.ReplicaID
	for r := range members {
		if placement.NodeOf(r) == c.id {
			founder = r
		}
	}
	if founder != 0 && c.Node.Host().HasReplicaData(g, founder) {
		return founder, nil, nil
	}
	return founder, members, nil
}

// stopChildren stops every child replica (StepDown, before the engine
// closes). Hold regenMu.
func (c *Cluster) stopChildren() error {
	h := c.Node.Host()
	for g := range c.children {
		if err := h.StopReplica(g); err != nil && !errors.Is(err, raft.ErrClosed) {
			return fmt.Errorf("shardrepl: stopping group %d: %w", g, err)
		}
		delete(c.children, g)
	}
	return nil
}

// ShardGroups returns every shard group, ascending: FirstGroup and the
// split children, as this node learns them by reading each group it holds
// linearizably (which applies every split the group committed, seeding
// its child on this store) until no new group appears. A node that leads
// FirstGroup holds every group (the voters of every group are on
// FirstGroup's nodes), so the answer is complete there; RecoverCommits
// relies on it (a group it missed would lose its staged parts'
// decisions).
func (c *Cluster) ShardGroups(ctx context.Context) ([]raft.GroupID, error) {
	h := c.Node.Host()
	read := map[raft.GroupID]bool{}
	for {
		gs, err := c.Store.Groups()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(gs, FirstGroup) {
			gs = append(gs, FirstGroup)
			slices.Sort(gs)
		}
		fresh := false
		for _, g := range gs {
			if read[g] {
				continue
			}
			fresh = true
			if err := readGroup(ctx, h, g); err != nil {
				return nil, err
			}
			read[g] = true
		}
		if !fresh {
			return gs, nil
		}
	}
}

// readGroup reads g linearizably, waiting while the replica has not
// started yet (a split child this node's split handler is starting).
func readGroup(ctx context.Context, h raft.Host, g raft.GroupID) error {
	rctx, cancel := context.WithTimeout(ctx, DefaultProposeTimeout)
	defer cancel()
	for {
		_, err := h.Read(rctx, g, shardsm.State{})
		if err == nil {
			return nil
		}
		if rctx.Err() != nil {
			return fmt.Errorf("shardrepl: reading shard group %d: %w", g, err)
		}
		sleep(rctx, 20*time.Millisecond)
	}
}
