package raft_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// Leadership moves to each replica in turn, and writes go on after each move.
func TestTransferLeadership(t *testing.T) {
	nodes := startGroup(t, 3, 3)
	ctx := testCtx(t)
	clustertest.WaitLeader(t, nodes[0].Host, group)
	for i, target := range []raft.ReplicaID{2, 3, 1} {
		if err := nodes[0].Host.TransferLeadership(ctx, group, target); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			waitFor(t, func() bool {
				l, _, ok, err := n.Host.Leader(group)
				return err == nil && ok && l == target
			})
		}
		mustPut(t, ctx, nodes[i].Host, clustertest.Key(i), "v")
		mustGet(t, ctx, nodes[int(target)-1].Host, clustertest.Key(i), "v")
	}
	// Each host lists its replica and the leader it knows.
	for i, n := range nodes {
		waitFor(t, func() bool {
			rs := n.Host.LocalReplicas()
			return len(rs) == 1 && rs[0].Group == group && rs[0].Replica == raft.ReplicaID(i+1) &&
				rs[0].Leader == 1 && !rs[0].NonVoter
		})
	}
}

// The replica set changes under writes: a replica added as a non-voter after
// the log was compacted catches up from a streamed snapshot, is promoted,
// and then the replica it replaces is removed and its data dropped.
//
//	replicas:  {1,2}  -> +3 non-voter -> 3 voter -> -2  = {1,3}
//	hosts:      n1 n2          n3
func TestAddPromoteRemoveWithSnapshot(t *testing.T) {
	nodes := startGroup(t, 3, 2)
	ctx := testCtx(t)
	h1, h2, h3 := nodes[0].Host, nodes[1].Host, nodes[2].Host
	const n = 200 // four snapshot points of 50 entries: the log is compacted
	for i := 0; i < n; i++ {
		mustPut(t, ctx, nodes[i%2].Host, clustertest.Key(i), fmt.Sprint(i))
	}

	if err := h1.AddNonVoter(ctx, group, 3, nodes[2].Addr); err != nil {
		t.Fatal(err)
	}
	// Repeating a change that is in place is not an error (a retry after a
	// timeout).
	if err := h2.AddNonVoter(ctx, group, 3, nodes[2].Addr); err != nil {
		t.Fatalf("repeated AddNonVoter: %v", err)
	}
	spec := raft.ReplicaSpec{Group: group, Replica: 3, Join: true, NonVoter: true}
	if err := h3.StartReplica(spec, nodes[2].Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	// A linearizable read on the non-voter waits for it to catch up.
	mustGet(t, ctx, h3, clustertest.Key(n-1), fmt.Sprint(n-1))
	mustGet(t, ctx, h3, clustertest.Key(0), "0")
	if got := nodes[2].Store.Stats().SnapshotsRecovered; got == 0 {
		t.Fatal("the new replica caught up without a snapshot: the log was not compacted")
	}
	if got := nodes[0].Store.Stats().SnapshotsSaved + nodes[1].Store.Stats().SnapshotsSaved; got == 0 {
		t.Fatal("no host streamed a snapshot")
	}
	m, err := h1.Membership(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.NonVoters[3]; !ok || len(m.Voters) != 2 {
		t.Fatalf("membership after AddNonVoter: %+v", m)
	}

	if err := h2.Promote(ctx, group, 3); err != nil {
		t.Fatal(err)
	}
	m, err = h3.Membership(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if m.Voters[3] != nodes[2].Addr || len(m.NonVoters) != 0 {
		t.Fatalf("membership after Promote: %+v", m)
	}

	// Remove replica 2 while it may be the leader: leadership moves first.
	if err := h1.TransferLeadership(ctx, group, 1); err != nil {
		t.Fatal(err)
	}
	if err := h1.RemoveReplica(ctx, group, 2); err != nil {
		t.Fatal(err)
	}
	if err := h1.RemoveReplica(ctx, group, 2); err != nil {
		t.Fatalf("repeated RemoveReplica: %v", err)
	}
	// dragonboat may already have stopped the removed replica by itself.
	if err := h2.StopReplica(group); err != nil && !errors.Is(err, raft.ErrGroupNotFound) {
		t.Fatal(err)
	}
	if err := h2.RemoveReplicaData(ctx, group, 2); err != nil {
		t.Fatal(err)
	}
	if err := nodes[1].Store.DropGroup(group); err != nil {
		t.Fatal(err)
	}
	if idx, err := nodes[1].Store.AppliedIndex(group); err != nil || idx != 0 {
		t.Fatalf("dropped group's applied index %d, %v", idx, err)
	}
	if h2.HasReplicaData(group, 2) {
		t.Fatal("the removed replica's log data is still there")
	}
	if _, _, err := clustertest.Get(ctx, h2, group, clustertest.Key(0)); !errors.Is(err, raft.ErrGroupNotFound) {
		t.Fatalf("read on the host of a removed replica: %v", err)
	}
	// A removed id never comes back.
	if err := h1.AddVoter(ctx, group, 2, nodes[1].Addr); !errors.Is(err, raft.ErrRejected) {
		t.Fatalf("re-adding removed replica 2: %v", err)
	}
	// The group {1,3} keeps its data and takes writes.
	mustPut(t, ctx, h3, "after", "remove")
	mustGet(t, ctx, h1, "after", "remove")
	mustGet(t, ctx, h3, clustertest.Key(n/2), fmt.Sprint(n/2))
	v, err := h3.Read(ctx, group, kvsm.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(v.([]kvsm.KV)); got != n+1 {
		t.Fatalf("replica 3 holds %d keys, want %d", got, n+1)
	}
}
