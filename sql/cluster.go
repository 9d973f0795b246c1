package sql

import (
	"context"
	"time"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// ClusterAdmin is what SQL sees of the cluster a node belongs to
// (Options.Cluster; cmd/pivotdb adapts cluster/placement's Manager): the
// rows of sys.nodes and decommissioning. The sql package does not import
// the cluster packages.
type ClusterAdmin interface {
	// AttachJobs gives the cluster the engine's job registry: replica
	// moves are rows of sys.jobs.
	AttachJobs(r *jobs.Registry)
	// Nodes returns the rows of sys.nodes.
	Nodes(ctx context.Context) ([]ClusterNode, error)
	// Decommission drains node id and marks it decommissioned, reporting
	// the replicas moved (done of total) as it goes; its errors carry
	// SQLSTATEs. A non-empty notice is sent to the client (NOTICE): the
	// node that serves SQL hands serving over, and another node finishes
	// its drain after the statement returned.
	Decommission(ctx context.Context, id uint64, progress func(done, total int64)) (notice string, err error)
	// Recommission makes a node that is being decommissioned active again;
	// its errors carry SQLSTATEs.
	Recommission(ctx context.Context, id uint64) error
}

// ClusterNode is one row of sys.nodes (bind.NodeColumns).
type ClusterNode struct {
	ID                  uint64
	Address, SQLAddress string
	Live                bool
	Membership          string // active, decommissioning, decommissioned
	// Replicas, Voters and Leaders count every group; the Placed ones the
	// groups placement moves (bind.NodeColumns).
	Replicas, Voters, Leaders                   int
	PlacedReplicas, PlacedVoters, PlacedLeaders int
	Bytes                                       int64
	Locality                                    string // --locality ("az=a,rack=1"); "": none (NULL)
	// ClockKnown: ClockOffset and ClockUncertainty hold this node's
	// estimate of the node's clock (the node's minus this one's); else
	// both are NULL.
	ClockKnown                    bool
	ClockOffset, ClockUncertainty time.Duration
}

// KindDecommission is the job_type of ALTER CLUSTER DECOMMISSION NODE.
const KindDecommission = "DECOMMISSION"

// Jobs returns the engine's job registry.
func (e *Engine) Jobs() *jobs.Registry { return e.jobs }

// nodeRows are the rows of sys.nodes. A server without --join is a
// cluster of one node with no Raft groups: one row, without addresses.
func (s *Session) nodeRows() ([][]types.Value, error) {
	c := s.e.opts.Cluster
	if c == nil {
		return [][]types.Value{{types.NewInt64(1), types.NullValue, types.NullValue, types.NewBool(true),
			types.NewBool(false), types.NewUtf8("active"), types.NewInt64(0), types.NewInt64(0), types.NewInt64(0), types.NewInt64(0), types.NullValue,
			types.NewDouble(0), types.NewDouble(0), types.NewInt64(0), types.NewInt64(0), types.NewInt64(0)}}, nil
	}
	nodes, err := c.Nodes(context.Background())
	if err != nil {
		return nil, err
	}
	text := func(s string) types.Value {
		if s == "" {
			return types.NullValue
		}
		return types.NewUtf8(s)
	}
	ms := func(known bool, d time.Duration) types.Value {
		if !known {
			return types.NullValue
		}
		return types.NewDouble(float64(d) / float64(time.Millisecond))
	}
	out := make([][]types.Value, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, []types.Value{types.NewInt64(int64(n.ID)), text(n.Address), text(n.SQLAddress),
			types.NewBool(n.Live), types.NewBool(n.Membership == "decommissioned"), types.NewUtf8(n.Membership),
			types.NewInt64(int64(n.Replicas)), types.NewInt64(int64(n.Voters)), types.NewInt64(int64(n.Leaders)), types.NewInt64(n.Bytes), text(n.Locality),
			ms(n.ClockKnown, n.ClockOffset), ms(n.ClockKnown, n.ClockUncertainty),
			types.NewInt64(int64(n.PlacedReplicas)), types.NewInt64(int64(n.PlacedVoters)), types.NewInt64(int64(n.PlacedLeaders))})
	}
	return out, nil
}

// runCluster runs ALTER CLUSTER DECOMMISSION NODE n and ALTER CLUSTER
// RECOMMISSION NODE n: a superuser's statements, outside transaction
// blocks (they move replicas, which no rollback could undo). A
// decommission runs as a job whose progress counts the node's replicas
// moved away, and returns once the node is decommissioned (or, for the
// node that serves SQL, once serving was handed over: see the NOTICE).
func (s *Session) runCluster(ctx context.Context, st *bind.ClusterStatement) (Result, error) {
	verb, stmt := "decommission", "ALTER CLUSTER DECOMMISSION NODE"
	if st.Kind == parser.ClusterRecommission {
		verb, stmt = "recommission", "ALTER CLUSTER RECOMMISSION NODE"
	}
	if !s.access(s.catalogSnap()).Superuser() {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "must be superuser to %s a node", verb)
	}
	if s.inTxnBlock() {
		return nil, sqlerr.New(sqlerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", stmt)
	}
	if st.Node <= 0 {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "node %d does not exist", st.Node)
	}
	c := s.e.opts.Cluster
	if c == nil {
		switch {
		case st.Node != 1:
			return nil, sqlerr.New(sqlerr.UndefinedObject, "node %d does not exist", st.Node)
		case st.Kind == parser.ClusterRecommission:
			return &tagResult{tag: "ALTER CLUSTER"}, nil // active: nothing to do
		}
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
			"cannot decommission node 1: it is the only node, and its replicas would have nowhere to go")
	}
	if st.Kind == parser.ClusterRecommission {
		if err := c.Recommission(ctx, uint64(st.Node)); err != nil {
			return nil, err
		}
		return &tagResult{tag: "ALTER CLUSTER"}, nil
	}
	var notice string
	err := s.runJob(ctx, KindDecommission, false, func(ctx context.Context) error {
		w := jobWorkFrom(ctx)
		var err error
		notice, err = c.Decommission(ctx, uint64(st.Node), func(done, total int64) {
			w.job.Progress(done, total)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if notice != "" {
		s.notice("NOTICE", "00000", "%s", notice)
	}
	return &tagResult{tag: "ALTER CLUSTER"}, nil
}
