package shardrepl

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestGCThroughShardGroup: a GC pass on the serving node (VACUUM of a table
// with a short GC_TTL) is a replicated write: every replica ends with the
// same data (fingerprints), no old version, the newest ones intact, and the
// same GC threshold, below which reads are refused on every replica once
// it loads its state (as a node taking over does).
func TestGCThroughShardGroup(t *testing.T) {
	ctx := testCtx(t)
	nodes := startGroupCluster(ctx, t, 1)
	nodes[0].serveSQL(ctx)
	conn, err := pgx.Connect(ctx, nodes[0].url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE kv (k Int64, v Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT0.1S"))`)
	exec("INSERT INTO kv SELECT x, 0 FROM generate_series(1, 50) AS g(x)")
	before, err := nodes[0].engine.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		exec("UPDATE kv SET v = v + 1")
	}
	oldCount := func(e *storage.Engine) int64 {
		t.Helper()
		vs, err := e.VersionBytes(ctx, storage.TablesSpan())
		if err != nil {
			t.Fatal(err)
		}
		return vs.OldCount
	}
	waitConverged(t, nodes, FirstGroup)
	for i, n := range nodes {
		if c := oldCount(n.engine); c < 500 {
			t.Fatalf("node %d: %d old versions before GC", i+1, c)
		}
	}
	time.Sleep(150 * time.Millisecond)
	exec("VACUUM kv")
	waitConverged(t, nodes, FirstGroup)
	var sum int64
	if err := conn.QueryRow(ctx, "SELECT sum(v)::Int64 FROM kv").Scan(&sum); err != nil || sum != 500 {
		t.Fatalf("sum after GC: %d %v", sum, err)
	}
	th := nodes[0].engine.GCThresholdOf(storage.TablesSpan())
	if th.IsEmpty() {
		t.Fatal("no GC threshold on the serving node")
	}
	for i, n := range nodes {
		if c := oldCount(n.engine); c != 0 {
			t.Fatalf("node %d: %d old versions after GC", i+1, c)
		}
		if err := n.engine.ReloadState(); err != nil {
			t.Fatal(err)
		}
		if got := n.engine.GCThresholdOf(storage.TablesSpan()); got != th {
			t.Fatalf("node %d: GC threshold %v, the serving node's %v", i+1, got, th)
		}
		it, err := n.engine.At(before).NewIter(storage.TablesSpan())
		var below *storage.BelowGCThresholdError
		if !errors.As(err, &below) {
			if it != nil {
				it.Close()
			}
			t.Fatalf("node %d: a read at %v below the threshold %v: %v", i+1, before, th, err)
		}
	}
}

// failAfter is a replicator whose writes after the first n answer that
// their outcome is unknown, without proposing them (a leader that died).
type failAfter struct {
	*Replicator
	n     int64
	calls atomic.Int64 // the load's writes go out several at once
}

func (f *failAfter) Replicate(ts hlc.Timestamp, ms []storage.Mutation) error {
	if f.calls.Add(1) > f.n {
		return fmt.Errorf("%w: test", storage.ErrOutcomeUnknown)
	}
	return f.Replicator.Replicate(ts, ms)
}

// TestBulkLoadThroughShardGroup: a bulk ingestion on the serving node goes
// to every replica as bounded writes; one cut off half way (the outcome of
// its writes unknown: the node died) is rolled back by the node that
// serves next, on every replica.
func TestBulkLoadThroughShardGroup(t *testing.T) {
	ctx := testCtx(t)
	nodes := startGroupCluster(ctx, t, 1)
	rep := New(nodes[0].host, nodes[0].engine)
	// Three replicas applying in one process under the race detector
	// on a loaded machine: generous.
	rep.SetProposeTimeout(time.Minute)
	if err := rep.AddGroup(ctx, FirstGroup); err != nil {
		t.Fatal(err)
	}
	f := &failAfter{Replicator: rep, n: 1 << 30}
	if err := nodes[0].engine.SetReplicator(f); err != nil {
		t.Fatal(err)
	}
	ingest := func(table uint64, rows int) error {
		d, err := nodes[0].engine.NewBulkDir()
		if err != nil {
			return err
		}
		defer d.Close()
		return nodes[0].engine.IngestVersioned(ctx, d, 1<<20, func(w *storage.SSTWriter) error {
			for i := range rows {
				k := append(storage.TablePrefix(table), fmt.Sprintf("%08d", i)...)
				if err := w.Set(k, fmt.Appendf(nil, "value %d with some padding to make it longer", i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	rows := func(e *storage.Engine, table uint64) int {
		it, err := e.NewIter(storage.TableSpan(table))
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		return n
	}
	if err := ingest(100, 20_000); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, nodes, FirstGroup)
	for i, n := range nodes {
		if got := rows(n.engine, 100); got != 20_000 {
			t.Fatalf("node %d: %d rows loaded", i+1, got)
		}
	}

	// The next load's writes stop applying after the second.
	f.calls.Store(0)
	f.n = 2
	if err := ingest(101, 20_000); !errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Fatalf("cut-off load: %v", err)
	}
	waitConverged(t, nodes, FirstGroup)
	if got := rows(nodes[1].engine, 101); got == 0 || got == 20_000 {
		t.Fatalf("node 2 holds %d rows of the cut-off load", got)
	}
	nodes[0].stop()
	var leader *replicaNode
	deadline := time.Now().Add(30 * time.Second)
	for leader == nil {
		for i, n := range nodes[1:] {
			if l, _, ok, err := n.host.Leader(FirstGroup); err == nil && ok && l == raft.ReplicaID(i+2) {
				leader = n
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no new leader")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rep2 := New(leader.host, leader.engine)
	if err := rep2.AddGroup(ctx, FirstGroup); err != nil {
		t.Fatal(err)
	}
	if err := leader.engine.SetReplicator(rep2); err != nil {
		t.Fatal(err)
	}
	n, err := leader.engine.RollBackBulkLoads(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RollBackBulkLoads: %d, %v", n, err)
	}
	waitConverged(t, nodes[1:], FirstGroup)
	for _, n := range nodes[1:] {
		if got := rows(n.engine, 101); got != 0 {
			t.Fatalf("%d rows of the cut-off load after the rollback", got)
		}
		if got := rows(n.engine, 100); got != 20_000 {
			t.Fatalf("%d rows of the first load after the rollback", got)
		}
	}
	if n, err := leader.engine.RollBackBulkLoads(ctx); err != nil || n != 0 {
		t.Fatalf("RollBackBulkLoads again: %d, %v", n, err)
	}
}
