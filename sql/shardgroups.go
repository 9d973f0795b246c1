package sql

import (
	"bytes"
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// ShardBoundaries returns the start key of every shard of every table and
// index (each shard map's pivots, pivot 0 being the table's prefix), in
// no particular order. A cluster's serving node splits its shard groups
// at these keys (cluster/shardrepl's split reconciler, through
// cmd/pivotdb), so each partition shard is a Raft group of its own and no
// table shares a group with another. It reads the in-memory maps only,
// so it is cheap to call often, and it sees DDL and partition's splits as
// soon as they are installed.
func (e *Engine) ShardBoundaries() [][]byte {
	var out [][]byte
	for _, id := range e.shards.Tables() {
		if m := e.shards.Map(id); m != nil {
			out = append(out, m.Pivots()...)
		}
	}
	return out
}

// ShardGroup is one Raft shard group of a cluster as sys.partitions shows
// it: its span of row keys, its leader's node and the nodes holding a
// replica.
type ShardGroup struct {
	ID         uint64
	Start, End []byte
	LeaderNode uint64   // 0: unknown
	Nodes      []uint64 // ascending
	// ReadReplicaNodes are the nodes placement chose to serve the group's
	// stale reads (READ_REPLICAS_SETTINGS), ascending.
	ReadReplicaNodes []uint64
}

// ShardGroupLister is implemented by an Options.Cluster that serves its
// commits through shard groups (cmd/pivotdb over cluster/shardrepl):
// sys.partitions names each shard's group from it.
type ShardGroupLister interface {
	ShardGroups(ctx context.Context) ([]ShardGroup, error)
}

// groupColumns are a shard's group_id, leader_node_id, replica_node_ids
// and read_replica_node_ids: the group holding the shard's first key. On
// one node (no cluster) there is no group: group_id is NULL, node 1 leads
// and holds everything, and there are no read replicas (”).
type groupColumns struct {
	groups []ShardGroup // ascending by Start; nil on one node
}

func (s *Session) shardGroupColumns(ctx context.Context) (*groupColumns, error) {
	l, ok := s.e.opts.Cluster.(ShardGroupLister)
	if !ok {
		return &groupColumns{}, nil
	}
	gs, err := l.ShardGroups(ctx)
	if err != nil {
		return nil, err
	}
	return &groupColumns{groups: gs}, nil
}

func (g *groupColumns) values(start []byte) []types.Value {
	if g.groups == nil {
		return []types.Value{types.NullValue, types.NewInt64(1), types.NewUtf8("1"), types.NewUtf8("")}
	}
	i := sort.Search(len(g.groups), func(i int) bool { return bytes.Compare(g.groups[i].End, start) > 0 })
	if i == len(g.groups) || bytes.Compare(g.groups[i].Start, start) > 0 {
		return []types.Value{types.NullValue, types.NullValue, types.NullValue, types.NullValue}
	}
	sg := g.groups[i]
	leader := types.NullValue
	if sg.LeaderNode != 0 {
		leader = types.NewInt64(int64(sg.LeaderNode))
	}
	return []types.Value{types.NewInt64(int64(sg.ID)), leader, types.NewUtf8(nodeList(sg.Nodes)),
		types.NewUtf8(nodeList(sg.ReadReplicaNodes))}
}

// nodeList renders node ids as sys.partitions shows them: "1,2,3".
func nodeList(nodes []uint64) string {
	ids := make([]string, len(nodes))
	for k, n := range nodes {
		ids[k] = strconv.FormatUint(n, 10)
	}
	return strings.Join(ids, ",")
}
