package shardsm

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

const shardGroup raft.GroupID = 11

// Three replicas: committed writes through any host, an intent that every
// replica's read at or above it stops at, its resolution, a key outside
// the shard answered stale, GC — and reads at a timestamp through each
// replica after ReadIndex see every acknowledged write.
func TestClusterWritesIntentsAndReads(t *testing.T) {
	nodes := startCluster(t, 3, 3, shardGroup, tableSpan)
	ctx := testCtx(t)
	for i := 0; i < 12; i++ {
		mustPropose(t, nodes[i%3].host, shardGroup, putOp(clustertest.Key(i), fmt.Sprint(i), int64(10+i)))
		for j, n := range nodes {
			v, err := n.host.Read(ctx, shardGroup, Get{Key: rk(clustertest.Key(i)), Timestamp: ts(int64(10 + i))})
			if err != nil {
				t.Fatal(err)
			}
			if r := v.(GetResult); !r.Found || string(r.Value) != fmt.Sprint(i) {
				t.Fatalf("node %d reads %s as %+v right after its write", j+1, clustertest.Key(i), r)
			}
		}
	}
	txn := &mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: rk(clustertest.Key(3)), WriteTimestamp: ts(100)}
	mustPropose(t, nodes[1].host, shardGroup,
		Op{Kind: OpIntent, Key: rk(clustertest.Key(3)), Value: []byte("new"), Timestamp: ts(99), Txn: txn, Strength: mvcc.Update},
		Op{Kind: OpIntent, Key: rk(clustertest.Key(4)), IsDelete: true, Timestamp: ts(99), Txn: txn, Strength: mvcc.Update})
	for j, n := range nodes {
		_, err := readRows(ctx, n.host, shardGroup, tableSpan, ts(100))
		var lc *mvcc.LockConflictError
		if !errors.As(err, &lc) || lc.Txn.ID != txn.ID || string(lc.Txn.Anchor) != string(txn.Anchor) {
			t.Fatalf("node %d: read at the intents: %v", j+1, err)
		}
		if kvs, err := readRows(ctx, n.host, shardGroup, tableSpan, ts(99)); err != nil || len(kvs) != 12 {
			t.Fatalf("node %d: read below the intents: %d rows, %v", j+1, len(kvs), err)
		}
	}
	// A one-phase write meeting the intent is refused with its holder.
	err := propose(ctx, nodes[2].host, shardGroup, mustEncode(t, Batch{Ops: []Op{putOp(clustertest.Key(3), "x", 101)}}))
	var lc *mvcc.LockConflictError
	if !errors.As(err, &lc) || lc.Txn.ID != txn.ID {
		t.Fatalf("write on an intent: %v", err)
	}
	// Outside the shard: stale, with the shard's span.
	err = propose(ctx, nodes[2].host, shardGroup, mustEncode(t, Batch{Ops: []Op{{Kind: OpPut, Key: []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 9}, Timestamp: ts(5)}}}))
	var se *StaleError
	if !errors.As(err, &se) || string(se.Descriptor.Span.End) != string(tableSpan.End) {
		t.Fatalf("write outside the shard: %v", err)
	}
	mustPropose(t, nodes[2].host, shardGroup, Op{Kind: OpResolve, Key: tableSpan.Start, EndKey: tableSpan.End,
		Resolution: mvcc.Resolution{ID: txn.ID, Status: mvcc.Committed, CommitTimestamp: ts(105)}})
	for j, n := range nodes {
		kvs, err := readRows(ctx, n.host, shardGroup, tableSpan, ts(105))
		if err != nil || len(kvs) != 11 || string(kvs[3].Value) != "new" {
			t.Fatalf("node %d after the commit: %s, %v", j+1, showRows(kvs), err)
		}
	}
	mustPropose(t, nodes[0].host, shardGroup, Op{Kind: OpGC, Timestamp: ts(104)})
	for j, n := range nodes {
		_, err := readRows(ctx, n.host, shardGroup, tableSpan, ts(50))
		var below *mvcc.BelowGCThresholdError
		if !errors.As(err, &below) {
			t.Fatalf("node %d: read below the GC threshold: %v", j+1, err)
		}
	}
	c := waitConverged(t, nodes, shardGroup)
	// Old: the versions a read at the threshold sees under newer ones
	// (key 3 at 13, key 4 at 14) and key 4's tombstone, above it.
	if c.Stored.LiveCount != 11 || c.Stored.OldCount != 3 || c.Stored.IntentCount != 0 {
		t.Fatalf("stats after commit and GC: %+v", c.Stored)
	}
}

// A host crashes: its store loses what it applied since its last sync
// (Apply does not fsync), but opens at an applied index whose data matches
// it — the stats counter equals a recount of the rows there — and replays
// the log above it to the others' state.
func TestClusterCrashReplay(t *testing.T) {
	dir := t.TempDir()
	fs := vfs.NewCrashableMem()
	noSnapshots := func(c *raft.HostConfig) { c.SnapshotEntries = 100000 }
	nodes := make([]*shardNode, 3)
	for i := range nodes {
		var nfs vfs.FS
		var tune func(*raft.HostConfig)
		if i == 0 {
			nfs, tune = fs, noSnapshots
		}
		nodes[i] = startShardNode(t, filepath.Join(dir, fmt.Sprint(i+1)), clustertest.FreeAddr(t), nfs, tune)
	}
	bootstrap(t, nodes, shardGroup, tableSpan)
	const n = 80
	var synced uint64
	for i := 0; i < n; i++ {
		mustPropose(t, nodes[0].host, shardGroup, putOp(clustertest.Key(i), fmt.Sprint(i), int64(10+i)))
		if i == n/2 {
			// What the engine's Sync does at a snapshot point: the crash
			// keeps everything applied up to here.
			if err := nodes[0].store.DB().LogData(nil, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			var err error
			if synced, err = nodes[0].store.AppliedIndex(shardGroup); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, err := nodes[0].store.AppliedIndex(shardGroup)
	if err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	addr := nodes[0].addr
	nodes[0].stop()
	nodes[0] = startShardNode(t, filepath.Join(dir, "1"), addr, crashed, noSnapshots)
	m := nodes[0].store.NewStateMachine(shardGroup, 1)
	opened, err := m.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	if opened >= before {
		t.Fatalf("the crash lost nothing (applied %d before, %d after): the test does not exercise replay", before, opened)
	}
	c := checkReplica(t, m) // the counter matches the rows at the opened index
	// The rows are a prefix of the puts, as many as the counter says.
	got, err := rows(t, m, tableSpan, 1000)
	if err != nil || int64(len(got)) != c.Stored.LiveCount {
		t.Fatalf("after the crash: %d rows, counter %d, %v", len(got), c.Stored.LiveCount, err)
	}
	for i, r := range got {
		if want := fmt.Sprintf("%s=%d", clustertest.Key(i), i); r != want {
			t.Fatalf("after the crash, row %d is %s, want %s", i, r, want)
		}
	}
	if c.Applied != opened || opened < synced || c.Stored.LiveCount >= n || c.Stored.LiveCount < int64(n/2) {
		t.Fatalf("after the crash: applied %d, %d live rows", c.Applied, c.Stored.LiveCount)
	}
	t.Logf("applied index %d before the crash, %d after it (%d rows)", before, opened, c.Stored.LiveCount)
	nodes[0].restartReplicas(1, shardGroup)
	kvs, err := readRows(testCtx(t), nodes[0].host, shardGroup, tableSpan, hlc.Timestamp{WallTime: 1000})
	if err != nil || len(kvs) != n {
		t.Fatalf("after replay: %d rows, %v", len(kvs), err)
	}
	waitConverged(t, nodes, shardGroup)
}

// A fourth host joins as a non-voter after the log was compacted: it
// catches up from a streamed snapshot of the shard, is promoted, and takes
// part from then on.
func TestClusterSnapshotToNonVoterThenPromote(t *testing.T) {
	nodes := startCluster(t, 4, 3, shardGroup, tableSpan)
	ctx := testCtx(t)
	const n = 120 // past two snapshot points of 50 entries
	txn := &mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: rk("zz"), WriteTimestamp: ts(500)}
	for i := 0; i < n; i++ {
		mustPropose(t, nodes[i%3].host, shardGroup, putOp(clustertest.Key(i), fmt.Sprint(i), int64(10+i)))
	}
	mustPropose(t, nodes[0].host, shardGroup,
		Op{Kind: OpIntent, Key: rk("zz"), Value: []byte("i"), Timestamp: ts(400), Txn: txn, Strength: mvcc.Update},
		Op{Kind: OpLock, Key: rk(clustertest.Key(0)), Timestamp: ts(400), Txn: txn, Strength: mvcc.Share})
	// The log keeper compacts the voters' logs past 60 entries, but on its
	// own schedule (every 200 ms, later under load): compact them here, so
	// that the non-voter cannot catch up from the log whatever the timing.
	for _, nd := range nodes[:3] {
		if _, err := nd.host.CompactLog(ctx, shardGroup); err != nil {
			t.Fatal(err)
		}
	}
	h4 := nodes[3].host
	if err := nodes[0].host.AddNonVoter(ctx, shardGroup, 4, nodes[3].addr); err != nil {
		t.Fatal(err)
	}
	if err := h4.StartReplica(raft.ReplicaSpec{Group: shardGroup, Replica: 4, Join: true, NonVoter: true}, nodes[3].store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	kvs, err := readRows(ctx, h4, shardGroup, tableSpan, ts(300))
	if err != nil || len(kvs) != n {
		t.Fatalf("non-voter reads %d rows, %v", len(kvs), err)
	}
	// The snapshot is counted just after it is installed (see waitRecovered).
	for deadline := time.Now().Add(5 * time.Second); nodes[3].store.Stats().SnapshotsRecovered == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the non-voter caught up without a snapshot: the log was not compacted")
		}
	}
	if err := nodes[0].host.Promote(ctx, shardGroup, 4); err != nil {
		t.Fatal(err)
	}
	mustPropose(t, h4, shardGroup, Op{Kind: OpResolve, Key: tableSpan.Start, EndKey: tableSpan.End,
		Resolution: mvcc.Resolution{ID: txn.ID, Status: mvcc.Aborted}})
	mustPropose(t, h4, shardGroup, putOp("zz", "after", 600))
	c := waitConverged(t, nodes, shardGroup)
	if c.Stored.LiveCount != n+1 || c.Stored.LockCount != 0 || c.Stored.IntentCount != 0 {
		t.Fatalf("stats after promotion: %+v", c.Stored)
	}
	m, err := nodes[1].host.Membership(ctx, shardGroup)
	if err != nil || len(m.Voters) != 4 {
		t.Fatalf("membership %+v, %v", m, err)
	}
}
