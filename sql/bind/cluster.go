package bind

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/types"
)

// ClusterStatement is ALTER CLUSTER DECOMMISSION NODE n.
type ClusterStatement struct{ *parser.ClusterStmt }

func (*ClusterStatement) Columns() []planner.Column { return nil }

// NodeColumns are the columns of sys.nodes, one row per node of the
// cluster (cluster/placement): CockroachDB's crdb_internal.gossip_nodes
// and kv_node_status in brief. membership is active, decommissioning or
// decommissioned; replicas counts the node's replicas of every Raft group
// (the metadata group, the first shard group and each split child; voters
// and non-voters), voters the voting ones, leaders the groups it leads as
// the answering node knows, bytes the data of the groups it holds a
// replica of (as the answering node's replicas count it; the metadata
// group counts as 0). placed_replicas, placed_voters and placed_leaders
// count the same of the two groups placement moves and balances (the
// metadata group and the first shard group; the split children follow
// the first one's voters). clock_offset_ms is the node's clock minus the
// answering node's, as the answering node's pings last estimated it, and
// clock_uncertainty_ms how far the true offset may be from it (half the
// ping's round trip); NULL when it has no fresh estimate (cluster/node's
// clockoffset.go), 0 for the answering node itself.
var NodeColumns = []planner.Column{
	{Name: "node_id", Type: types.TypeInt64},
	{Name: "address", Type: types.TypeUtf8},
	{Name: "sql_address", Type: types.TypeUtf8},
	{Name: "is_live", Type: types.TypeBool},
	{Name: "is_decommissioned", Type: types.TypeBool},
	{Name: "membership", Type: types.TypeUtf8},
	{Name: "replicas", Type: types.TypeInt64},
	{Name: "voters", Type: types.TypeInt64},
	{Name: "leaders", Type: types.TypeInt64},
	{Name: "bytes", Type: types.TypeInt64},
	{Name: "locality", Type: types.TypeUtf8},
	{Name: "clock_offset_ms", Type: types.TypeDouble},
	{Name: "clock_uncertainty_ms", Type: types.TypeDouble},
	{Name: "placed_replicas", Type: types.TypeInt64},
	{Name: "placed_voters", Type: types.TypeInt64},
	{Name: "placed_leaders", Type: types.TypeInt64},
}
