package shardrepl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/storage"
)

// The split reconciler: shard groups along partition's shards (CockroachDB's
// split queue, driven by the tables' shard boundaries).
//
// While the node serves, every reconcileInterval it compares the keys
// where a shard group must begin (SetSplitKeys: every pivot of every
// table's and index's shard map, pivot 0 being the table's prefix, so no
// table shares a group with the table before it) with its Replicator's
// map, and proposes a shardsm.Split at each key that falls inside a
// group instead of starting one. The keys are split from the highest
// down, so that the lower ones stay in the same parent and one round
// splits a new table's shards without waiting for the children to start.
// The child's id comes from the metadata group's counter
// (keyGroupIDCounter, kvsm.OpAdd): a node that serves after another never
// reuses one, and a split whose outcome is unknown wastes at most its id.
// The child's voters are the parent's; groupplace.go adds the other
// members of FirstGroup. A split the parent refuses (it holds staged parts
// of a commit across groups) or that fails is tried again next round.
//
// The system area (0x01: catalog, shard maps, statistics) and table id 0
// (the catalog's history) lie below every table's prefix, so they stay in
// FirstGroup; lock records are the serving node's local state and never
// in a group's data. Merges of partition's shards (AUTO_PARTITIONING_BY_SIZE,
// DROP TABLE) leave the groups as they are: there is no shardsm Merge, a
// group outliving its shard still holds its span (writes route by key: a
// dropped table's GC goes through its groups), and a table created later
// splits off where its prefix begins.
//
// At most maxShardGroups groups are made: every group is a Raft group on
// every node. Idle children cost little since they quiesce and get their
// closed timestamps over the side channel (closedside.go), but a
// three-node cluster splitting toward 200 groups on a loaded 2-core
// machine still lost and moved serving during the splits, and the next
// node's start timed out (Serve takes the epoch in, and reads, every
// group): the work per group when a node starts serving is the limit.
// Past the limit the remaining boundaries are left inside their groups
// (several shards share one, as all did before); the reconciler logs it.
const (
	keyGroupIDCounter = "group-id-counter"
	reconcileInterval = 200 * time.Millisecond
	maxShardGroups    = 64
)

// SplitsShardGroups tells whether this node was configured to give each
// partition shard a shard group of its own (ClusterConfig.SplitShardGroups).
func (c *Cluster) SplitsShardGroups() bool { return c.cfg.SplitShardGroups }

// SetSplitKeys gives the serving node the keys where shard groups must
// begin: f is called every reconcileInterval while the node serves
// (cmd/pivotdb passes sql.Engine.ShardBoundaries after it opened SQL);
// nil stops the reconciler's splits. StepDown clears it.
func (c *Cluster) SetSplitKeys(f func() [][]byte) {
	if f == nil {
		c.splitKeys.Store(nil)
		return
	}
	c.splitKeys.Store(&f)
}

// reconcileSplits runs the reconciler while ctx (the serving lease's) is
// live.
func (c *Cluster) reconcileSplits(ctx context.Context, rep *Replicator) {
	defer c.wg.Done()
	var lastErr string
	for ctx.Err() == nil {
		err := c.reconcileOnce(ctx, rep)
		if err != nil && ctx.Err() == nil && err.Error() != lastErr {
			// Once per distinct error: a refused split is retried every
			// round.
			c.cfg.Logf("node %d: splitting shard groups: %v", c.id, err)
		}
		lastErr = ""
		if err != nil {
			lastErr = err.Error()
		}
		sleep(ctx, reconcileInterval)
	}
}

// splitPoint is a key where a group must begin and the group holding it.
type splitPoint struct {
	key    []byte
	parent raft.GroupID
}

// missingSplits returns the keys of keys (ascending) that fall inside a
// group of rep's map rather than at its start. A key no group holds (a
// child not in the map yet) waits for the next round.
func missingSplits(rep *Replicator, keys [][]byte) []splitPoint {
	rep.mu.RLock()
	defer rep.mu.RUnlock()
	var out []splitPoint
	for _, k := range keys {
		rt, ok := rep.findLocked(k)
		if !ok || bytes.Equal(rt.desc.Span.Start, k) {
			continue
		}
		out = append(out, splitPoint{key: k, parent: rt.group})
	}
	return out
}

// reconcileOnce proposes the splits the map misses, highest key first.
func (c *Cluster) reconcileOnce(ctx context.Context, rep *Replicator) error {
	f := c.splitKeys.Load()
	if f == nil {
		return nil
	}
	keys := (*f)()
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	missing := missingSplits(rep, keys)
	if len(missing) > 0 {
		ready, err := c.splitsReady(ctx)
		if err != nil || !ready {
			return err
		}
	}
	if room := maxShardGroups - len(rep.Groups()); len(missing) > room {
		if room <= 0 {
			c.leadGroups(ctx, rep)
			return fmt.Errorf("%d shard boundaries stay inside groups: the node runs the most groups it may (%d)", len(missing), maxShardGroups)
		}
		missing = missing[len(missing)-room:]
	}
	for i := len(missing) - 1; i >= 0 && ctx.Err() == nil; i-- {
		if err := c.splitGroup(ctx, rep, missing[i]); err != nil {
			return err
		}
	}
	c.leadGroups(ctx, rep)
	return nil
}

// splitsReady reports whether FirstGroup's voters are complete: it has
// shardVoters voters, or no non-voter waiting to be promoted. A child's
// founders are its parent's voters, and a child founded on fewer voters
// (a cluster still forming) would depend on them until the manager loop
// promoted the others in it too (groupplace.go), a second or more: a
// founder lost meanwhile would leave the child without a quorum.
func (c *Cluster) splitsReady(ctx context.Context) (bool, error) {
	m, err := c.Node.Host().Membership(ctx, FirstGroup)
	if err != nil {
		return false, err
	}
	return len(m.Voters) >= shardVoters || len(m.NonVoters) == 0, nil
}

// leadGroups asks for the leadership of every group of the map this node
// votes in and does not lead: the serving node proposes every commit, and
// a commit to a group led elsewhere takes a forwarding hop (and, with a
// bulk load, waits on the other node's pace). A request the group does
// not follow within a moment is tried again next round.
func (c *Cluster) leadGroups(ctx context.Context, rep *Replicator) {
	h := c.Node.Host()
	for g := range rep.Groups() {
		if g == FirstGroup {
			continue // serving follows its leadership, not the reverse
		}
		c.regenMu.Lock()
		me := c.children[g]
		c.regenMu.Unlock()
		l, _, ok, err := h.Leader(g)
		if me == 0 || err != nil || !ok || l == me {
			continue
		}
		m, err := h.Membership(ctx, g)
		if _, voter := m.Voters[me]; err != nil || !voter {
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		if err := h.TransferLeadership(tctx, g, me); err == nil {
			c.cfg.Logf("node %d: leads shard group %d", c.id, g)
		}
		cancel()
	}
}

// splitGroup proposes the split of p.parent at p.key into a new group on
// the parent's voters, and refreshes the parent in rep's map (the child
// joins it when its replica starts here: groups.go).
func (c *Cluster) splitGroup(ctx context.Context, rep *Replicator, p splitPoint) error {
	h := c.Node.Host()
	ctx, cancel := context.WithTimeout(ctx, DefaultProposeTimeout)
	defer cancel()
	m, err := h.Membership(ctx, p.parent)
	if err != nil {
		return fmt.Errorf("group %d's members: %w", p.parent, err)
	}
	child, err := c.allocGroupID(ctx)
	if err != nil {
		return err
	}
	cmd, err := shardsm.EncodeSplit(shardsm.Split{Key: p.key, Child: child, Members: m.Voters})
	if err != nil {
		return err
	}
	res, err := h.Propose(ctx, p.parent, cmd)
	if err != nil {
		return fmt.Errorf("splitting group %d at %s: %w", p.parent, storage.FormatKey(p.key), err)
	}
	err = shardsm.DecodeResult(res)
	var se *shardsm.StaleError
	switch {
	case errors.As(err, &se):
		// The map was behind (the key is no longer the parent's).
		if se.Initialized {
			rep.mu.Lock()
			rep.setLocked(p.parent, se.Descriptor)
			rep.mu.Unlock()
		}
		return nil
	case err != nil:
		return fmt.Errorf("splitting group %d at %s: %w", p.parent, storage.FormatKey(p.key), err)
	}
	c.cfg.Logf("node %d: split shard group %d at %s into group %d", c.id, p.parent, storage.FormatKey(p.key), child)
	if err := rep.AddGroup(ctx, p.parent); err != nil {
		return err
	}
	return nil
}

// allocGroupID hands out the next child group id from the metadata
// group's counter: FirstGroup + n for the n-th.
func (c *Cluster) allocGroupID(ctx context.Context) (raft.GroupID, error) {
	cmd, err := kvsm.Command{Ops: []kvsm.Op{{Kind: kvsm.OpAdd, Key: []byte(keyGroupIDCounter), Delta: 1}}}.Encode()
	if err != nil {
		return 0, err
	}
	res, err := c.Node.Host().Propose(ctx, node.MetaGroup, cmd)
	if err != nil {
		return 0, fmt.Errorf("allocating a shard group id: %w", err)
	}
	vals, err := kvsm.DecodeResult(res.Value, res.Data)
	if err != nil {
		return 0, fmt.Errorf("allocating a shard group id: %w", err)
	}
	if len(vals) != 1 || vals[0] <= 0 {
		return 0, fmt.Errorf("allocating a shard group id: counter answered %v", vals)
	}
	return FirstGroup + raft.GroupID(vals[0]), nil
}

// GroupInfo is one shard group as the serving node's map has it, with its
// leader's and replicas' nodes (sys.partitions).
type GroupInfo struct {
	Group      raft.GroupID
	Span       storage.Span
	LeaderNode uint64   // 0: no leader known here
	Nodes      []uint64 // every node holding a replica, ascending
}

// GroupInfos lists the groups of the serving node's map, ascending by
// span, with their leaders (as this node knows them) and members (read
// from each group). It fails while the node does not serve.
func (c *Cluster) GroupInfos(ctx context.Context) ([]GroupInfo, error) {
	c.srv.mu.Lock()
	rep := c.srv.rep
	c.srv.mu.Unlock()
	if rep == nil {
		return nil, errors.New("shardrepl: this node does not serve SQL")
	}
	rep.mu.RLock()
	routes := slices.Clone(rep.routes)
	rep.mu.RUnlock()
	h := c.Node.Host()
	members := map[raft.GroupID][]uint64{}
	out := make([]GroupInfo, 0, len(routes))
	for _, rt := range routes {
		nodes, ok := members[rt.group]
		if !ok {
			m, err := h.Membership(ctx, rt.group)
			if err != nil {
				return nil, fmt.Errorf("shardrepl: group %d's members: %w", rt.group, err)
			}
			for r := range m.Voters {
				nodes = append(nodes, placement.NodeOf(r))
			}
			for r := range m.NonVoters {
				nodes = append(nodes, placement.NodeOf(r))
			}
			slices.Sort(nodes)
			nodes = slices.Compact(nodes)
			members[rt.group] = nodes
		}
		gi := GroupInfo{Group: rt.group, Span: rt.desc.Span, Nodes: nodes}
		if l, _, ok, err := h.Leader(rt.group); err == nil && ok {
			gi.LeaderNode = placement.NodeOf(l)
		}
		out = append(out, gi)
	}
	return out, nil
}
