package raft_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// restartReplica restarts the replica of group that node had before.
func restartReplica(t *testing.T, n *clustertest.Node, r raft.ReplicaID) {
	t.Helper()
	if !n.Host.HasReplicaData(group, r) {
		t.Fatalf("host %s has no data of replica %d", n.Addr, r)
	}
	if err := n.Host.StartReplica(raft.ReplicaSpec{Group: group, Replica: r}, n.Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
}

// A host that crashes loses the state machine's writes since its last sync
// (Apply does not fsync) but not the Raft log's: on restart the store opens
// at an older applied index, whose data matches it, and the log is replayed
// above it. The store runs on a crashable in-memory file system; the crash
// is a clone of it that holds only what was synced.
func TestCrashLosesUnsyncedAppliesAndReplays(t *testing.T) {
	dir := t.TempDir()
	fs := vfs.NewCrashableMem()
	addrs := []string{clustertest.FreeAddr(t), clustertest.FreeAddr(t), clustertest.FreeAddr(t)}
	// Host 0 never reaches a snapshot point, where the engine would sync
	// the state machine: everything it applies is unsynced.
	noSnapshots := func(c *raft.HostConfig) { c.SnapshotEntries = 100000 }
	nodes := make([]*clustertest.Node, 3)
	initial := map[raft.ReplicaID]string{}
	for i := range nodes {
		var nfs vfs.FS
		var tune func(*raft.HostConfig)
		if i == 0 {
			nfs, tune = fs, noSnapshots
		}
		nodes[i] = clustertest.StartNodeWith(t, filepath.Join(dir, fmt.Sprint(i)), addrs[i], nfs, tune)
		initial[raft.ReplicaID(i+1)] = addrs[i]
	}
	for i, n := range nodes {
		spec := raft.ReplicaSpec{Group: group, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
		if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testCtx(t)
	const n = 120
	for i := 0; i < n; i++ {
		mustPut(t, ctx, nodes[0].Host, clustertest.Key(i), fmt.Sprint(i))
	}
	before, err := nodes[0].Store.AppliedIndex(group)
	if err != nil {
		t.Fatal(err)
	}

	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	nodes[0].Stop()
	nodes[0] = clustertest.StartNodeWith(t, filepath.Join(dir, "0"), addrs[0], crashed, noSnapshots)
	opened, err := nodes[0].Store.AppliedIndex(group)
	if err != nil {
		t.Fatal(err)
	}
	if opened >= before {
		t.Fatalf("the crash lost nothing (applied %d before, %d after): the test does not exercise replay", before, opened)
	}
	t.Logf("applied index %d before the crash, %d after it", before, opened)
	restartReplica(t, nodes[0], 1)
	for i := 0; i < n; i++ {
		mustGet(t, ctx, nodes[0].Host, clustertest.Key(i), fmt.Sprint(i))
	}
	after, err := nodes[0].Store.AppliedIndex(group)
	if err != nil {
		t.Fatal(err)
	}
	if after < before {
		t.Fatalf("applied index %d after replay, %d before the crash", after, before)
	}
}

// With one host of three stopped, the other two keep a quorum and take
// writes; the stopped host restarts (its applied index survives) and catches
// up.
func TestStopOneOfThreeAndRestart(t *testing.T) {
	nodes := startGroup(t, 3, 3)
	ctx := testCtx(t)
	for i := 0; i < 20; i++ {
		mustPut(t, ctx, nodes[i%3].Host, clustertest.Key(i), "a")
	}
	mustGet(t, ctx, nodes[2].Host, clustertest.Key(19), "a")
	applied, err := nodes[2].Store.AppliedIndex(group)
	if err != nil {
		t.Fatal(err)
	}
	dir, addr := nodes[2].Dir, nodes[2].Addr
	nodes[2].Stop()

	for i := 0; i < 150; i++ {
		mustPut(t, ctx, nodes[i%2].Host, clustertest.Key(i), "b")
	}

	nodes[2] = clustertest.StartNode(t, dir, addr, nil)
	if got, err := nodes[2].Store.AppliedIndex(group); err != nil || got < applied {
		t.Fatalf("applied index after a clean stop: %d (%v), was %d", got, err, applied)
	}
	restartReplica(t, nodes[2], 3)
	for i := 0; i < 150; i++ {
		mustGet(t, ctx, nodes[2].Host, clustertest.Key(i), "b")
	}
	mustPut(t, ctx, nodes[2].Host, "back", "yes")
	mustGet(t, ctx, nodes[0].Host, "back", "yes")
}
