package shardrepl

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/server"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// replicaNode is one node of the in-process cluster: a storage engine, the
// shard store over it and a Raft host.
type replicaNode struct {
	t      testing.TB
	dir    string
	addr   string
	engine *storage.Engine
	store  *shardsm.Store
	host   raft.Host

	// When the node serves SQL (serveSQL): the engine over engine, which
	// closes it, and the server.
	sql  *sql.Engine
	srv  *server.Server
	done chan error
	url  string
}

func openReplicaNode(t testing.TB, dir, addr string) *replicaNode {
	t.Helper()
	clustertest.QuietEngine()
	e, st, err := OpenEngine(filepath.Join(dir, "engine"), storage.Options{NoSync: true, Logger: storagetest.QuietLogger{},
		DiskBallastBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h, err := raft.Start(testHostConfig(filepath.Join(dir, "raft"), addr))
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return &replicaNode{t: t, dir: dir, addr: addr, engine: e, store: st, host: h}
}

// stop stops the SQL server, then the host, then the engine: the state
// machines write into the engine's Pebble until the host stops them.
func (n *replicaNode) stop() {
	if n.host == nil {
		return
	}
	if n.srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n.srv.Shutdown(sctx)
		<-n.done
	}
	if err := n.host.Close(); err != nil {
		n.t.Error(err)
	}
	if n.sql != nil {
		if err := n.sql.Close(); err != nil {
			n.t.Error(err)
		}
	} else if err := n.engine.Close(); err != nil {
		n.t.Error(err)
	}
	n.host, n.engine, n.sql, n.srv = nil, nil, nil, nil
}

// restart reopens a stopped node's engine and host on its directory and
// restarts its replica r of FirstGroup.
func (n *replicaNode) restart(r raft.ReplicaID) *replicaNode {
	n.t.Helper()
	m := openReplicaNode(n.t, n.dir, n.addr)
	if err := StartReplica(m.host, m.store, FirstGroup, r, nil); err != nil {
		n.t.Fatal(err)
	}
	return m
}

// serveSQL makes n serve SQL over the wire: a Replicator over its host
// routing to FirstGroup, set on its engine, and a sql.Engine over that.
// n must lead the group.
func (n *replicaNode) serveSQL(ctx context.Context) {
	t := n.t
	t.Helper()
	rep := New(n.host, n.engine)
	if err := rep.AddGroup(ctx, FirstGroup); err != nil {
		t.Fatal(err)
	}
	if err := n.engine.SetReplicator(rep); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng, err := sql.Open(sql.Options{Storage: n.engine, Events: log})
	if err != nil {
		t.Fatal(err)
	}
	n.sql = eng
	n.srv = server.New(server.Config{Listen: "127.0.0.1:0", Logger: log}, server.FromSQL(eng))
	if err := n.srv.Listen(); err != nil {
		t.Fatal(err)
	}
	n.done = make(chan error, 1)
	go func() { n.done <- n.srv.Serve(context.Background()) }()
	n.url = fmt.Sprintf("postgres://pivotdb@%s/pivotdb?sslmode=disable", n.srv.Addr())
}

// startGroupCluster starts three nodes with FirstGroup on them, initialized
// with WholeSpan and led by replica leader.
func startGroupCluster(ctx context.Context, t testing.TB, leader raft.ReplicaID) []*replicaNode {
	t.Helper()
	dir := t.TempDir()
	nodes := make([]*replicaNode, 3)
	members := map[raft.ReplicaID]string{}
	for i := range nodes {
		nodes[i] = openReplicaNode(t, filepath.Join(dir, fmt.Sprint(i+1)), clustertest.FreeAddr(t))
		members[raft.ReplicaID(i+1)] = nodes[i].addr
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
		}
	})
	for i, n := range nodes {
		if err := StartReplica(n.host, n.store, FirstGroup, raft.ReplicaID(i+1), members); err != nil {
			t.Fatal(err)
		}
	}
	if err := InitGroup(ctx, nodes[0].host, FirstGroup, WholeSpan); err != nil {
		t.Fatal(err)
	}
	if err := nodes[0].host.TransferLeadership(ctx, FirstGroup, leader); err != nil {
		t.Fatal(err)
	}
	return nodes
}

func testCtx(t testing.TB) context.Context {
	// Generous: `make test` runs every package at once on two cores.
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitConverged waits until the replicas of g on nodes applied the same
// index and hold the same keys and values, each with its stats counter
// equal to a recount, and returns the check.
func waitConverged(t *testing.T, nodes []*replicaNode, g raft.GroupID) shardsm.CheckResult {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var first shardsm.CheckResult
		same, last := true, ""
		for i, n := range nodes {
			v, err := n.host.StaleRead(g, shardsm.Check{})
			if err != nil {
				same, last = false, fmt.Sprintf("node %d: %v", i+1, err)
				break
			}
			c := v.(shardsm.CheckResult)
			if c.Stored != c.Computed {
				t.Fatalf("node %d: stats counter %+v, recount %+v", i+1, c.Stored, c.Computed)
			}
			if i == 0 {
				first = c
			} else if c.Applied != first.Applied || c.Fingerprint != first.Fingerprint {
				same = false
				last += fmt.Sprintf(" node %d at %d (%d keys) vs node 1 at %d (%d keys);", i+1, c.Applied, c.Keys, first.Applied, first.Keys)
			}
		}
		if same {
			return first
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas did not converge:%s", last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// workload runs writers that insert distinct accounts (and update the one
// before every fifth) through url until stopped, recording what was
// acknowledged.
type workload struct {
	t     *testing.T
	ctx   context.Context
	acked atomic.Int64
	wg    sync.WaitGroup
	stopc chan struct{}
	ids   [][]int64 // per writer, acknowledged inserts
	errs  chan error
}

func startWorkload(ctx context.Context, t *testing.T, url string, writers int, base int64) *workload {
	w := &workload{t: t, ctx: ctx, stopc: make(chan struct{}), ids: make([][]int64, writers), errs: make(chan error, writers)}
	for k := range writers {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				w.errs <- err
				return
			}
			defer c.Close(ctx)
			for i := int64(0); ; i++ {
				select {
				case <-w.stopc:
					return
				default:
				}
				id := base + int64(k)*1_000_000 + i
				if _, err := c.Exec(ctx, "INSERT INTO acct VALUES ($1, $2, 100)", id, fmt.Sprintf("owner%d", id%7)); err != nil {
					w.errs <- fmt.Errorf("insert %d: %w", id, err)
					return
				}
				w.ids[k] = append(w.ids[k], id)
				w.acked.Add(1)
				if i > 0 && i%5 == 0 {
					if _, err := c.Exec(ctx, "UPDATE acct SET balance = balance - 1 WHERE id = $1", id-1); err != nil {
						w.errs <- fmt.Errorf("update %d: %w", id-1, err)
						return
					}
				}
			}
		}()
	}
	return w
}

// wait waits until n more writes than now are acknowledged.
func (w *workload) wait(n int64) {
	w.t.Helper()
	target := w.acked.Load() + n
	deadline := time.Now().Add(60 * time.Second)
	for w.acked.Load() < target {
		select {
		case err := <-w.errs:
			w.t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("only %d writes acknowledged", w.acked.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop stops the writers; with tolerate, a writer's error (its node died
// under it) ends that writer without failing the test.
func (w *workload) stop(tolerate bool) {
	w.t.Helper()
	close(w.stopc)
	w.wg.Wait()
	select {
	case err := <-w.errs:
		if !tolerate {
			w.t.Fatal(err)
		}
	default:
	}
}

// all returns every acknowledged insert.
func (w *workload) all() []int64 {
	var out []int64
	for _, ids := range w.ids {
		out = append(out, ids...)
	}
	return out
}

// checkAccounts reads every id back through url, and checks the table
// holds the ids and extra rows of other owners, and its index the ids, plus
// at most unacked inserts whose acknowledgement a dying node never sent.
func checkAccounts(ctx context.Context, t *testing.T, url string, ids []int64, extra, unacked int64) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, id := range ids {
		var owner string
		if err := conn.QueryRow(ctx, "SELECT owner FROM acct WHERE id = $1", id).Scan(&owner); err != nil {
			t.Fatalf("acknowledged account %d: %v", id, err)
		}
	}
	var count, viaIndex int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM acct").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM acct WHERE owner IN ('owner0','owner1','owner2','owner3','owner4','owner5','owner6')").Scan(&viaIndex); err != nil {
		t.Fatal(err)
	}
	n := int64(len(ids))
	if count-extra != viaIndex || viaIndex < n || viaIndex > n+unacked {
		t.Fatalf("%d accounts acknowledged (at most %d more unacknowledged), %d in the table (%d other rows), %d through the index",
			n, unacked, count, extra, viaIndex)
	}
}

// TestSQLThroughShardGroup runs SQL on a sql.Engine whose storage commits go
// through a three-replica shard group: DDL, COPY, writes by concurrent
// clients (some while a follower is down), a follower that restarts and
// catches up; every acknowledged write is read back on the leader and
// every replica holds the same data (shardsm.Check's fingerprint).
func TestSQLThroughShardGroup(t *testing.T) {
	ctx := testCtx(t)
	nodes := startGroupCluster(ctx, t, 1)
	nodes[0].serveSQL(ctx)
	url := nodes[0].url
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE acct (id Int64, owner Utf8, balance Int64, PRIMARY KEY (id))")
	exec("CREATE INDEX acct_owner ON acct (owner)")
	exec("CREATE TABLE scratch (k Int64, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 4)")
	exec("INSERT INTO scratch SELECT x FROM generate_series(1, 100) AS x")
	exec("DROP TABLE scratch")
	// A small COPY commits its rows in one batch.
	if tag, err := conn.PgConn().CopyFrom(ctx, strings.NewReader("-1\tcopied\t5\n-2\tcopied\t6\n"),
		"COPY acct (id, owner, balance) FROM STDIN"); err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("COPY: %v, %v", tag, err)
	}
	// GC through the group (the default 4h window: nothing to collect).
	exec("VACUUM acct")

	w := startWorkload(ctx, t, url, 4, 0)
	w.wait(50)
	nodes[2].stop()
	w.wait(100) // a quorum of two keeps acknowledging
	nodes[2] = nodes[2].restart(3)
	w.wait(50)
	w.stop(false)

	checkAccounts(ctx, t, url, w.all(), 2, 0)
	c := waitConverged(t, nodes, FirstGroup)
	t.Logf("%d accounts; %d keys on each replica at index %d; the restarted follower installed %d snapshots",
		len(w.all()), c.Keys, c.Applied, nodes[2].store.Stats().SnapshotsRecovered)
}

// TestSQLFailover stops the node that serves SQL under writers; another
// replica takes the group's leadership, reopens its engine (so that its
// in-memory state comes from the replicated store) and serves SQL: every
// write the first node acknowledged is there, writes go on, and the old
// node comes back as a follower that catches up.
func TestSQLFailover(t *testing.T) {
	ctx := testCtx(t)
	nodes := startGroupCluster(ctx, t, 1)
	nodes[0].serveSQL(ctx)
	conn, err := pgx.Connect(ctx, nodes[0].url)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE acct (id Int64, owner Utf8, balance Int64, PRIMARY KEY (id))",
		"CREATE INDEX acct_owner ON acct (owner)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)

	w := startWorkload(ctx, t, nodes[0].url, 4, 0)
	w.wait(100)
	nodes[0].stop() // the serving node dies under its writers
	w.stop(true)
	first := w.all()

	// Node 2 takes over: an election among nodes 2 and 3, then the
	// leadership moves to node 2, which reopens its engine and serves.
	nodes[1].stop()
	nodes[1] = nodes[1].restart(2)
	if err := nodes[1].host.TransferLeadership(ctx, FirstGroup, 2); err != nil {
		t.Fatal(err)
	}
	// The replica moved its engine's clock past every commit it holds, so
	// node 2's commits come after node 1's.
	v, err := nodes[1].host.Read(ctx, FirstGroup, shardsm.State{})
	if err != nil {
		t.Fatal(err)
	}
	if maxTS := v.(shardsm.StateResult).MaxTimestamp; maxTS.IsEmpty() || nodes[1].engine.Clock().Last().Less(maxTS) {
		t.Fatalf("node 2's clock at %v, its replica holds commits up to %v", nodes[1].engine.Clock().Last(), maxTS)
	}
	nodes[1].serveSQL(ctx)
	var inFlight int64 = 4 // one insert per writer when its node died
	checkAccounts(ctx, t, nodes[1].url, first, 0, inFlight)

	w2 := startWorkload(ctx, t, nodes[1].url, 4, 10_000_000)
	w2.wait(50)
	nodes[0] = nodes[0].restart(1)
	w2.wait(50)
	w2.stop(false)
	checkAccounts(ctx, t, nodes[1].url, append(first, w2.all()...), 0, inFlight)
	c := waitConverged(t, nodes, FirstGroup)
	t.Logf("%d accounts before the failover, %d after; %d keys on each replica at index %d",
		len(first), len(w2.all()), c.Keys, c.Applied)
}

// BenchmarkUpsert compares single-row UPSERTs over the wire at 16 clients
// on a one-node engine (fsync per commit) with the same through a
// three-replica group in this process (the Raft log's fsync per commit,
// the three replicas sharing this machine's disk and cores):
//
//	go test ./cluster/shardrepl -run '^$' -bench Upsert -benchtime 3s
func BenchmarkUpsert(b *testing.B) {
	for _, mode := range []string{"one-node", "three-replicas"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			var url string
			var nodes []*replicaNode
			if mode == "one-node" {
				log := slog.New(slog.DiscardHandler)
				eng, err := sql.Open(sql.Options{DataDir: b.TempDir(), Events: log, Logger: storagetest.QuietLogger{}})
				if err != nil {
					b.Fatal(err)
				}
				srv := server.New(server.Config{Listen: "127.0.0.1:0", Logger: log}, server.FromSQL(eng))
				if err := srv.Listen(); err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- srv.Serve(ctx) }()
				b.Cleanup(func() { srv.Shutdown(ctx); <-done; eng.Close() })
				url = fmt.Sprintf("postgres://pivotdb@%s/pivotdb?sslmode=disable", srv.Addr())
			} else {
				url, nodes = benchCluster(b)
			}
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
				b.Fatal(err)
			}
			conn.Close(ctx)
			var next atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			hinted0 := hintedWrites(nodes)
			cpu0 := processCPU(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				c, err := pgx.Connect(ctx, url)
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close(ctx)
				for pb.Next() {
					k := next.Add(1) % 10000
					if _, err := c.Exec(ctx, "UPSERT INTO kv (k, v) VALUES ($1, 'value')", k); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			// CPU per UPSERT of the whole process (client, server and the
			// three replicas), the figure a loaded machine disturbs least.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			if nodes != nil {
				// The share of the UPSERTs' Writes (one per replica) the
				// replicas applied with the stats change they carried
				// (shardsm/statshint.go) instead of reading the versions.
				hinted := hintedWrites(nodes)
				b.ReportMetric(100*float64(hinted-hinted0)/float64(len(nodes)*b.N), "%hinted")
			}
		})
	}
}

// testHostConfig is the Raft configuration of the test nodes: the cluster
// tests' (small snapshot interval, so that a restarted follower catches up
// by snapshot).
var testHostConfig = clustertest.HostConfig

// benchCluster starts three replicas with node 1 serving SQL and returns
// its URL. The hosts have the default Raft configuration (a snapshot point
// every 10000 entries).
func benchCluster(b *testing.B) (string, []*replicaNode) {
	testHostConfig = func(dir, addr string) raft.HostConfig { return raft.HostConfig{Dir: dir, RaftAddress: addr} }
	b.Cleanup(func() { testHostConfig = clustertest.HostConfig })
	ctx := testCtx(b)
	nodes := startGroupCluster(ctx, b, 1)
	nodes[0].serveSQL(ctx)
	return nodes[0].url, nodes
}

// hintedWrites sums, over the nodes' stores, the Writes applied with their
// carried stats change.
func hintedWrites(nodes []*replicaNode) (hinted int64) {
	for _, n := range nodes {
		hinted += n.store.Stats().HintedWrites
	}
	return hinted
}

// processCPU returns the CPU time (user and system) this process used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReplicatorCutsAcrossGroups routes one engine's commits to two
// groups split at a row key: each group holds exactly its keys (with the
// local keys they address), and a range deletion across the split is cut
// at it.
func TestReplicatorCutsAcrossGroups(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	n := openReplicaNode(t, filepath.Join(dir, "1"), clustertest.FreeAddr(t))
	t.Cleanup(n.stop)
	members := map[raft.ReplicaID]string{1: n.addr}
	split := append(storage.TablePrefix(9), 'm')
	const second raft.GroupID = 3
	spans := map[raft.GroupID]storage.Span{
		FirstGroup: {Start: WholeSpan.Start, End: split},
		second:     {Start: split, End: WholeSpan.End},
	}
	for g, sp := range spans {
		if err := StartReplica(n.host, n.store, g, 1, members); err != nil {
			t.Fatal(err)
		}
		if err := InitGroup(ctx, n.host, g, sp); err != nil {
			t.Fatal(err)
		}
	}
	rep := New(n.host, n.engine)
	for g := range spans {
		if err := rep.AddGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.engine.SetReplicator(rep); err != nil {
		t.Fatal(err)
	}
	key := func(s string) []byte { return append(storage.TablePrefix(9), s...) }
	commit := func(f func(b *storage.Batch) error) {
		t.Helper()
		b := n.engine.NewBatch()
		defer b.Close()
		if err := f(b); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	commit(func(b *storage.Batch) error {
		for _, k := range []string{"a", "l", "m", "z"} {
			if err := b.Set(key(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		return b.Set([]byte{storage.SystemPrefix, 'x'}, []byte("sys"))
	})
	count := func(g raft.GroupID) int {
		rows := spans[g].Intersect(storage.TableSpan(9)) // row keys only: the scan reads versions
		v, err := n.host.StaleRead(g, shardsm.Scan{Span: rows, Timestamp: storage.MaxTimestamp})
		if err != nil {
			t.Fatal(err)
		}
		return len(v.([]shardsm.KV))
	}
	if a, b := count(FirstGroup), count(second); a != 2 || b != 2 {
		t.Fatalf("rows per group: %d and %d, want 2 and 2", a, b)
	}
	// A range deletion over [l, n) is cut at m: one part in each group.
	commit(func(b *storage.Batch) error { return b.DeleteRange(storage.Span{Start: key("l"), End: key("n")}) })
	if a, b := count(FirstGroup), count(second); a != 1 || b != 1 {
		t.Fatalf("rows per group after the range deletion: %d and %d, want 1 and 1", a, b)
	}
	for g := range spans {
		v, err := n.host.StaleRead(g, shardsm.Check{})
		if err != nil {
			t.Fatal(err)
		}
		if c := v.(shardsm.CheckResult); c.Stored != c.Computed {
			t.Fatalf("group %d: stats %+v, recount %+v", g, c.Stored, c.Computed)
		}
	}
	it, err := n.engine.NewIter(storage.TableSpan(9))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key()[len(storage.TablePrefix(9)):]))
	}
	if strings.Join(got, ",") != "a,z" {
		t.Fatalf("the engine reads %v, want a,z", got)
	}
}
