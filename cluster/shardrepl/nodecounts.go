package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// NodeGroupCounts is what one node holds of the split children: the
// replicas, the voting ones among them, and the children it leads.
type NodeGroupCounts struct {
	Replicas, Voters, Leaders int
}

// ChildCounts counts, per node, its replicas, voters and leaderships of
// the split children this node knows (the ones it runs and, while it
// serves, the groups of its map): sys.nodes adds them to what placement
// counts of the metadata group and FirstGroup, so that its columns cover
// every group a node holds. Each child's membership is read
// linearizably (a quiet child wakes for it); the leader is the one this
// node knows. A child not running here (just split, or stopped for a
// moment by StepDown) is left out.
func (c *Cluster) ChildCounts(ctx context.Context) (map[uint64]NodeGroupCounts, error) {
	groups := slices.Clone(c.knownChildren())
	c.srv.mu.Lock()
	rep := c.srv.rep
	c.srv.mu.Unlock()
	if rep != nil {
		for g := range rep.Groups() {
			if g != FirstGroup && !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
	}
	h := c.Node.Host()
	out := map[uint64]NodeGroupCounts{}
	for _, g := range groups {
		m, err := h.Membership(ctx, g)
		if errors.Is(err, raft.ErrGroupNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("shardrepl: group %d's members: %w", g, err)
		}
		for r := range m.Voters {
			n := out[placement.NodeOf(r)]
			n.Replicas++
			n.Voters++
			out[placement.NodeOf(r)] = n
		}
		for r := range m.NonVoters {
			n := out[placement.NodeOf(r)]
			n.Replicas++
			out[placement.NodeOf(r)] = n
		}
		if l, _, ok, err := h.Leader(g); err == nil && ok {
			n := out[placement.NodeOf(l)]
			n.Leaders++
			out[placement.NodeOf(l)] = n
		}
	}
	return out, nil
}
