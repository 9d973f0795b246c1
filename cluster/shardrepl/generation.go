package shardrepl

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
)

// Replica-id generations of the shard group (cluster/placement's
// generations.go): placement's allocator moves the group's voters, and a
// node whose voter moved away rejoins as a non-voter under the next
// generation of its replica id, which the managing node added and
// recorded in the metadata group. This node's side: the id it runs
// (replicaID), the watcher that rejoins when the record changes
// (watchGeneration), and the caught-up record that names the replica it
// is about (a record of an older generation does not let the new replica
// be promoted before it caught up).

// pollGeneration is how often a node reads its recorded replica id.
const pollGeneration = time.Second

// replicaID is this node's replica id in FirstGroup now.
func (c *Cluster) replicaID() raft.ReplicaID { return raft.ReplicaID(c.replica.Load()) }

// currentReplica reads this node's recorded replica id in FirstGroup.
func (c *Cluster) currentReplica(ctx context.Context) (raft.ReplicaID, error) {
	return placement.CurrentReplica(ctx, c.Node.Host(), FirstGroup, c.id)
}

// caughtUpValue is what the caught-up record of replica r says: "1" for
// generation 0 (the record's value before generations), else the id.
func caughtUpValue(r raft.ReplicaID) string {
	if placement.GenOf(r) == 0 {
		return "1"
	}
	return strconv.FormatUint(uint64(r), 10)
}

// caughtUp reports whether node id's current replica recorded that it
// caught up (placement's Group.CaughtUp and the manager loop's promotion).
func (c *Cluster) caughtUp(ctx context.Context, id uint64) (bool, error) {
	v, ok, err := c.metaGet(ctx, idKey(keyShardCaughtUp, id))
	if err != nil || !ok {
		return false, err
	}
	cur, err := placement.CurrentReplica(ctx, c.Node.Host(), FirstGroup, id)
	if err != nil {
		return false, err
	}
	return v == caughtUpValue(cur), nil
}

// watchGeneration rejoins FirstGroup under the replica id the metadata
// group records for this node once it is a later generation than the one
// running.
func (c *Cluster) watchGeneration(ctx context.Context) {
	defer c.wg.Done()
	for ctx.Err() == nil {
		sleep(ctx, pollGeneration)
		// The split children this node founded but does not run
		// (groups.go), then those the serving node added it to
		// (groupplace.go).
		c.startMissedChildren()
		if err := c.joinChildren(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logf("node %d: joining shard groups (retrying): %v", c.id, err)
		}
		// The serving node finds founders that run nothing by these
		// records (groupplace.go's reseedFounders).
		if err := c.recordRunningChildren(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logf("node %d: recording its shard group replicas (retrying): %v", c.id, err)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cur, err := c.currentReplica(rctx)
		cancel()
		if err != nil || placement.GenOf(cur) <= placement.GenOf(c.replicaID()) {
			continue
		}
		if err := c.rejoin(ctx, cur); err != nil && ctx.Err() == nil {
			c.cfg.Logf("node %d: rejoining the shard group as replica %#x (retrying): %v", c.id, cur, err)
		}
	}
}

// rejoin switches the replica to generation cur (placement.Rejoin) and
// catches it up. Never while this node serves: its replica leads then,
// and the allocator moves no leader's voter (the serving node gives up
// serving first, and StepDown runs under the same lock).
func (c *Cluster) rejoin(ctx context.Context, cur raft.ReplicaID) error {
	c.regenMu.Lock()
	defer c.regenMu.Unlock()
	c.srv.mu.Lock()
	state := c.srv.state
	c.srv.mu.Unlock()
	if state != roleIdle {
		return fmt.Errorf("the node still serves SQL")
	}
	old := c.replicaID()
	st := c.Store
	err := placement.Rejoin(ctx, c.Node.Host(), FirstGroup, old, cur, func() error { return st.DropGroup(FirstGroup) }, st.NewStateMachine)
	if err != nil {
		return err
	}
	c.replica.Store(uint64(cur))
	c.nonVoter = true
	c.cfg.Logf("node %d: its shard voter moved away; rejoined the shard group as a non-voter (replica %#x)", c.id, cur)
	c.wg.Add(1)
	go c.catchUp(ctx)
	return nil
}

// groupApplied is the shard group's applied index on this node's replica:
// placement weighs leaderships by its rate (the group's writes).
func (c *Cluster) groupApplied(context.Context) (uint64, error) {
	v, err := c.Node.Host().StaleRead(FirstGroup, shardsm.State{})
	if err != nil {
		return 0, err
	}
	return v.(shardsm.StateResult).Applied, nil
}

// metaApplied is the metadata group's applied index here.
func (c *Cluster) metaApplied(context.Context) (uint64, error) {
	v, err := c.Node.Host().StaleRead(node.MetaGroup, kvsm.Applied{})
	if err != nil {
		return 0, err
	}
	return v.(uint64), nil
}
