package sql

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// fakeCluster is a ClusterAdmin whose decommission reports two replicas
// moved, or fails with err.
type fakeCluster struct {
	mu       sync.Mutex
	attached *jobs.Registry
	asked    []uint64
	// recommissioned: the nodes Recommission was asked for.
	recommissioned []uint64
	err            error
}

func (f *fakeCluster) AttachJobs(r *jobs.Registry) { f.attached = r }

func (f *fakeCluster) Nodes(context.Context) ([]ClusterNode, error) {
	return []ClusterNode{
		{ID: 1, Address: "127.0.0.1:7101", SQLAddress: "127.0.0.1:5431", Live: true, Membership: "active", Replicas: 2, Voters: 2, Leaders: 2, Bytes: 4096},
		{ID: 3, Address: "127.0.0.1:7103", Membership: "decommissioned"},
	}, nil
}

func (f *fakeCluster) Decommission(ctx context.Context, id uint64, progress func(done, total int64)) (string, error) {
	f.mu.Lock()
	f.asked = append(f.asked, id)
	f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	progress(0, 2)
	progress(1, 2)
	progress(2, 2)
	if id == 1 {
		return "node 1 handed serving over", nil
	}
	return "", nil
}

func (f *fakeCluster) Recommission(ctx context.Context, id uint64) error {
	f.mu.Lock()
	f.recommissioned = append(f.recommissioned, id)
	f.mu.Unlock()
	return f.err
}

// TestClusterStatements: sys.nodes and ALTER CLUSTER DECOMMISSION NODE go
// through Options.Cluster; the decommission is a job whose progress is
// what the cluster reports, and the cluster's errors keep their SQLSTATEs.
func TestClusterStatements(t *testing.T) {
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	fc := &fakeCluster{}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if fc.attached != e.Jobs() || fc.attached == nil {
		t.Fatal("the job registry was not attached")
	}
	s := testSession(t, e)
	rows := query(t, s, "SELECT node_id, address, sql_address, is_live, is_decommissioned, membership, replicas, voters, leaders, bytes FROM sys.nodes ORDER BY node_id")
	if len(rows) != 2 || rows[0][2].String() != `"127.0.0.1:5431"` || !rows[1][2].IsNull() || rows[1][4].String() != "t" ||
		rows[0][8].String() != "2" || rows[0][9].String() != "4096" || rows[1][9].String() != "0" {
		t.Fatalf("sys.nodes: %v", rows)
	}
	query(t, s, "ALTER CLUSTER DECOMMISSION NODE 3")
	rows = query(t, s, "SELECT status, rows_done, rows_total, fraction_completed FROM sys.jobs WHERE job_type = 'DECOMMISSION'")
	if len(rows) != 1 || rows[0][0].String() != `"succeeded"` || rows[0][1].String() != "2" || rows[0][2].String() != "2" {
		t.Fatalf("sys.jobs: %v", rows)
	}
	fc.err = sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot decommission node 2")
	_, err = tryQuery(s, "ALTER CLUSTER DECOMMISSION NODE 2")
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("refused decommission: %v", err)
	}
	rows = query(t, s, "SELECT count(*) FROM sys.jobs WHERE job_type = 'DECOMMISSION' AND status = 'failed'")
	if rows[0][0].String() != "1" {
		t.Fatalf("failed decommission jobs: %v", rows)
	}
	// The serving node's decommission returns once it handed serving
	// over; the cluster's note reaches the client as a NOTICE.
	fc.err = nil
	s.TakeNotices()
	query(t, s, "ALTER CLUSTER DECOMMISSION NODE 1")
	if n := s.TakeNotices(); len(n) != 1 || n[0].Message != "node 1 handed serving over" {
		t.Fatalf("notices %+v", n)
	}
	query(t, s, "ALTER CLUSTER RECOMMISSION NODE 3")
	fc.err = sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot recommission node 2")
	_, err = tryQuery(s, "ALTER CLUSTER RECOMMISSION NODE 2")
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("refused recommission: %v", err)
	}
	if len(fc.recommissioned) != 2 || fc.recommissioned[0] != 3 {
		t.Fatalf("recommissioned %v", fc.recommissioned)
	}
	// A non-superuser may not.
	query(t, s, "CREATE USER bob")
	bob, err := e.NewSession("pivotdb", "bob")
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	_, err = tryQuery(bob, "ALTER CLUSTER DECOMMISSION NODE 3")
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.InsufficientPrivilege {
		t.Fatalf("decommission by a non-superuser: %v", err)
	}
	_, err = tryQuery(bob, "ALTER CLUSTER RECOMMISSION NODE 3")
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.InsufficientPrivilege {
		t.Fatalf("recommission by a non-superuser: %v", err)
	}
	if len(fc.asked) != 3 || len(fc.recommissioned) != 2 {
		t.Fatalf("the cluster was asked %v and %v", fc.asked, fc.recommissioned)
	}
}
