package sql

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/storage"
)

// fakeGroups is a cluster whose shard groups are fixed (sys.partitions'
// group columns).
type fakeGroups struct {
	ClusterAdmin // nil: only AttachJobs and ShardGroups are called
	groups       []ShardGroup
}

func (f *fakeGroups) AttachJobs(*jobs.Registry) {}

func (f *fakeGroups) ShardGroups(context.Context) ([]ShardGroup, error) { return f.groups, nil }

// sys.partitions names each shard's group, its leader and replicas: NULL,
// 1 and '1' on one node, the cluster's groups on a cluster.
func TestPartitionsShowGroups(t *testing.T) {
	s := testSession(t, testEngine(t))
	query(t, s, "CREATE TABLE g (k Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = (10))")
	const q = "SELECT partition_index, group_id, leader_node_id, replica_node_ids, read_replica_node_ids FROM sys.partitions WHERE table_name = 'g' ORDER BY partition_index"
	if got, want := formatRows(query(t, s, q)), formatRows(query(t, s, "VALUES (0, NULL, 1, '1', ''), (1, NULL, 1, '1', '')")); got != want {
		t.Fatalf("one node: %s, want %s", got, want)
	}

	fake := &fakeGroups{}
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, Cluster: fake})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s = testSession(t, e)
	query(t, s, "CREATE TABLE g (k Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = (10))")
	b := e.ShardBoundaries()
	slices.SortFunc(b, bytes.Compare)
	if len(b) != 2 {
		t.Fatalf("boundaries %q, want the table's two shards", b)
	}
	fake.groups = []ShardGroup{
		{ID: 2, Start: []byte{storage.SystemPrefix}, End: b[0], LeaderNode: 1, Nodes: []uint64{1, 2, 3}},
		{ID: 3, Start: b[0], End: b[1], LeaderNode: 2, Nodes: []uint64{1, 2, 3, 4, 5}, ReadReplicaNodes: []uint64{4, 5}},
		{ID: 4, Start: b[1], End: []byte{storage.TableDataPrefix + 1}, Nodes: []uint64{1, 3}},
	}
	if got, want := formatRows(query(t, s, q)), formatRows(query(t, s, "VALUES (0, 3, 2, '1,2,3,4,5', '4,5'), (1, 4, NULL, '1,3', '')")); got != want {
		t.Fatalf("cluster: %s, want %s", got, want)
	}
}

// ReadReplicaSpans lists the spans of the tables with a
// READ_REPLICAS_SETTINGS, and of their indexes, and follows ALTER and
// RESET.
func TestReadReplicaSpans(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE plain (k Int64, PRIMARY KEY (k))")
	query(t, s, `CREATE TABLE rr (k Int64, v Int64, PRIMARY KEY (k), INDEX rr_v GLOBAL ON (v)) WITH (READ_REPLICAS_SETTINGS = "PER_AZ:1")`)
	spans := e.ReadReplicaSpans()
	if len(spans) != 2 {
		t.Fatalf("spans %+v, want the table's and its index's", spans)
	}
	for _, sp := range spans {
		if sp.Setting.String() != "PER_AZ:1" || bytes.Compare(sp.Start, sp.End) >= 0 {
			t.Fatalf("span %+v", sp)
		}
	}
	query(t, s, `ALTER TABLE rr SET READ_REPLICAS_SETTINGS = "ANY_AZ:2"`)
	if spans := e.ReadReplicaSpans(); len(spans) != 2 || spans[0].Setting.String() != "ANY_AZ:2" {
		t.Fatalf("after ALTER: %+v", spans)
	}
	query(t, s, "ALTER TABLE rr RESET (READ_REPLICAS_SETTINGS)")
	if spans := e.ReadReplicaSpans(); len(spans) != 0 {
		t.Fatalf("after RESET: %+v", spans)
	}
}
