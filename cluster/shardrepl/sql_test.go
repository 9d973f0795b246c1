package shardrepl

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
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
	t      *testing.T
	dir    string
	addr   string
	engine *storage.Engine
	store  *shardsm.Store
	host   raft.Host
}

func openReplicaNode(t *testing.T, dir, addr string) *replicaNode {
	t.Helper()
	clustertest.QuietEngine()
	e, st, err := OpenEngine(filepath.Join(dir, "engine"), storage.Options{NoSync: true, Logger: storagetest.QuietLogger{},
		DiskBallastBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h, err := raft.Start(clustertest.HostConfig(filepath.Join(dir, "raft"), addr))
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return &replicaNode{t: t, dir: dir, addr: addr, engine: e, store: st, host: h}
}

// stop closes the host before the engine: the state machines write into
// the engine's Pebble until the host stops them.
func (n *replicaNode) stop() {
	if n.host == nil {
		return
	}
	if err := n.host.Close(); err != nil {
		n.t.Error(err)
	}
	if n.engine != nil {
		if err := n.engine.Close(); err != nil {
			n.t.Error(err)
		}
	}
	n.host, n.engine = nil, nil
}

func testCtx(t *testing.T) context.Context {
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

// TestSQLThroughShardGroup runs SQL on a sql.Engine whose storage commits go
// through a three-replica shard group: DDL, writes by concurrent clients
// (some while a follower is down), a follower that restarts and catches up;
// every acknowledged write is read back on the leader and every replica
// holds the same data (shardsm.Check's fingerprint).
func TestSQLThroughShardGroup(t *testing.T) {
	dir := t.TempDir()
	nodes := make([]*replicaNode, 3)
	members := map[raft.ReplicaID]string{}
	for i := range nodes {
		nodes[i] = openReplicaNode(t, filepath.Join(dir, fmt.Sprint(i+1)), clustertest.FreeAddr(t))
		members[raft.ReplicaID(i+1)] = nodes[i].addr
	}
	for i, n := range nodes {
		if err := StartReplica(n.host, n.store, FirstGroup, raft.ReplicaID(i+1), members); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testCtx(t)
	if err := InitGroup(ctx, nodes[0].host, FirstGroup, WholeSpan); err != nil {
		t.Fatal(err)
	}
	if err := nodes[0].host.TransferLeadership(ctx, FirstGroup, 1); err != nil {
		t.Fatal(err)
	}

	// Node 1 serves SQL.
	leader := nodes[0]
	rep := New(leader.host, mustDB(leader.engine))
	if err := rep.AddGroup(ctx, FirstGroup); err != nil {
		t.Fatal(err)
	}
	if err := leader.engine.SetReplicator(rep); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng, err := sql.Open(sql.Options{Storage: leader.engine, Events: log})
	if err != nil {
		t.Fatal(err)
	}
	leader.engine = nil // eng closes it
	srv := server.New(server.Config{Listen: "127.0.0.1:0", Logger: log}, server.FromSQL(eng))
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
		for _, n := range nodes {
			n.stop() // hosts first: their state machines write into the engines
		}
		if err := eng.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	url := fmt.Sprintf("postgres://pivotdb@%s/pivotdb?sslmode=disable", srv.Addr())
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
	// COPY writes through the transaction (no sstable ingestion).
	if tag, err := conn.PgConn().CopyFrom(ctx, strings.NewReader("-1\tcopied\t5\n-2\tcopied\t6\n"),
		"COPY acct (id, owner, balance) FROM STDIN"); err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("COPY: %v, %v", tag, err)
	}
	// GC is off on a replicated engine (a pass would delete versions on
	// one replica only): VACUUM keeps every version and compacts.
	exec("VACUUM acct")

	// Writers insert distinct accounts and move money between the first
	// ones; a follower is stopped in the middle and restarted.
	const writers = 4
	var acked atomic.Int64
	var writing sync.WaitGroup
	stopWriters := make(chan struct{})
	ackedIDs := make([][]int64, writers)
	errs := make(chan error, writers)
	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(ctx)
			for i := int64(0); ; i++ {
				select {
				case <-stopWriters:
					return
				default:
				}
				id := int64(w)*1_000_000 + i
				if _, err := c.Exec(ctx, "INSERT INTO acct VALUES ($1, $2, 100)", id, fmt.Sprintf("owner%d", id%7)); err != nil {
					errs <- fmt.Errorf("insert %d: %w", id, err)
					return
				}
				ackedIDs[w] = append(ackedIDs[w], id)
				acked.Add(1)
				if i > 0 && i%5 == 0 {
					if _, err := c.Exec(ctx, "UPDATE acct SET balance = balance - 1 WHERE id = $1", id-1); err != nil {
						errs <- fmt.Errorf("update %d: %w", id-1, err)
						return
					}
				}
			}
		}()
	}
	waitAcked := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for acked.Load() < n {
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("only %d writes acknowledged", acked.Load())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitAcked(100)
	nodes[2].stop()
	downAt := acked.Load()
	waitAcked(downAt + 200) // a quorum of two keeps acknowledging
	n3 := openReplicaNode(t, nodes[2].dir, nodes[2].addr)
	nodes[2] = n3
	if err := StartReplica(n3.host, n3.store, FirstGroup, 3, nil); err != nil {
		t.Fatal(err)
	}
	waitAcked(acked.Load() + 100)
	close(stopWriters)
	writing.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	// Every acknowledged insert is there, with its index entry.
	var total int64
	for w := range writers {
		total += int64(len(ackedIDs[w]))
		for _, id := range ackedIDs[w] {
			var owner string
			if err := conn.QueryRow(ctx, "SELECT owner FROM acct WHERE id = $1", id).Scan(&owner); err != nil {
				t.Fatalf("acknowledged account %d: %v", id, err)
			}
		}
	}
	var count, viaIndex int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM acct").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM acct WHERE owner IN ('owner0','owner1','owner2','owner3','owner4','owner5','owner6')").Scan(&viaIndex); err != nil {
		t.Fatal(err)
	}
	if count != total+2 || viaIndex != total {
		t.Fatalf("%d accounts acknowledged, %d in the table, %d through the index", total, count, viaIndex)
	}
	c := waitConverged(t, nodes, FirstGroup)
	t.Logf("%d accounts; %d keys on each replica at index %d; the restarted follower installed %d snapshots",
		total, c.Keys, c.Applied, nodes[2].store.Stats().SnapshotsRecovered)
}

func mustDB(e *storage.Engine) *pebble.DB {
	db, _, _ := e.PebbleForReplication()
	return db
}
