package raft_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

const group raft.GroupID = 7

// startGroup starts n hosts and bootstraps group on the first `members` of
// them, replica i+1 on host i.
func startGroup(t *testing.T, n, members int) []*clustertest.Node {
	t.Helper()
	dir := t.TempDir()
	nodes := make([]*clustertest.Node, n)
	for i := range nodes {
		nodes[i] = clustertest.StartNode(t, filepath.Join(dir, fmt.Sprintf("n%d", i+1)), clustertest.FreeAddr(t), nil)
	}
	initial := map[raft.ReplicaID]string{}
	for i := 0; i < members; i++ {
		initial[raft.ReplicaID(i+1)] = nodes[i].Addr
	}
	for i := 0; i < members; i++ {
		spec := raft.ReplicaSpec{Group: group, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
		if err := nodes[i].Host.StartReplica(spec, nodes[i].Store.NewStateMachine); err != nil {
			t.Fatal(err)
		}
	}
	return nodes
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustPut(t *testing.T, ctx context.Context, h raft.Host, k, v string) {
	t.Helper()
	if err := clustertest.Put(ctx, h, group, k, v); err != nil {
		t.Fatalf("put %s at %s: %v", k, h.RaftAddress(), err)
	}
}

func mustGet(t *testing.T, ctx context.Context, h raft.Host, k, want string) {
	t.Helper()
	got, ok, err := clustertest.Get(ctx, h, group, k)
	if err != nil {
		t.Fatalf("get %s at %s: %v", k, h.RaftAddress(), err)
	}
	if !ok || got != want {
		t.Fatalf("get %s at %s = %q (found %v), want %q", k, h.RaftAddress(), got, ok, want)
	}
}

// A write proposed through any host is read back linearizably through every
// host, followers included, right after Propose returns.
func TestProposeAndReadFromEveryHost(t *testing.T) {
	nodes := startGroup(t, 3, 3)
	ctx := testCtx(t)
	for i := 0; i < 30; i++ {
		w := nodes[i%3].Host
		mustPut(t, ctx, w, clustertest.Key(i), fmt.Sprint(i))
		for _, n := range nodes {
			mustGet(t, ctx, n.Host, clustertest.Key(i), fmt.Sprint(i))
		}
	}
	// Counters: OpAdd returns the new value, in op order.
	cmd, err := kvsm.Command{Ops: []kvsm.Op{
		{Kind: kvsm.OpAdd, Key: []byte("c"), Delta: 5},
		{Kind: kvsm.OpAdd, Key: []byte("c"), Delta: -2},
	}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	res, err := nodes[1].Host.Propose(ctx, group, cmd)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := kvsm.DecodeResult(res.Value, res.Data)
	if err != nil || len(vals) != 2 || vals[0] != 5 || vals[1] != 3 {
		t.Fatalf("add results %v, %v; want [5 3]", vals, err)
	}
	// A malformed command reaches no state and says why.
	res, err = nodes[2].Host.Propose(ctx, group, []byte{0xEE, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kvsm.DecodeResult(res.Value, res.Data); !errors.Is(err, kvsm.ErrMalformed) {
		t.Fatalf("malformed command: %v", err)
	}
	// Scans are in key order and stop at the limit.
	v, err := nodes[2].Host.Read(ctx, group, kvsm.Scan{Start: []byte("k00010"), End: []byte("k00020"), Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	kvs := v.([]kvsm.KV)
	if len(kvs) != 4 || string(kvs[0].Key) != "k00010" || string(kvs[3].Key) != "k00013" {
		t.Fatalf("scan: %q", kvs)
	}
	// A stale read eventually sees the write too.
	waitFor(t, func() bool {
		v, err := nodes[2].Host.StaleRead(group, kvsm.Get{Key: []byte(clustertest.Key(29))})
		return err == nil && v.(kvsm.GetResult).Found
	})
	// An unknown group is an error of its own.
	if _, err := nodes[0].Host.Read(ctx, 999, kvsm.Get{Key: []byte("x")}); !errors.Is(err, raft.ErrGroupNotFound) {
		t.Fatalf("read of an unknown group: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A proposal to a group with no leader is dropped at every try until ctx
// ends: nothing reached the log, and the error says so (ErrNotProposed)
// besides being a timeout. A proposal that reached the log and went
// unanswered stays a plain timeout: it may still apply.
func TestProposeNeverReplicatedIsNotProposed(t *testing.T) {
	// One host of a three-replica group: it never elects a leader.
	dir := t.TempDir()
	n := clustertest.StartNode(t, filepath.Join(dir, "n1"), clustertest.FreeAddr(t), nil)
	spec := raft.ReplicaSpec{Group: group, Replica: 1, InitialMembers: map[raft.ReplicaID]string{
		1: n.Addr, 2: clustertest.FreeAddr(t), 3: clustertest.FreeAddr(t)}}
	if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	cmd, err := kvsm.Command{Ops: []kvsm.Op{{Kind: kvsm.OpPut, Key: []byte("k"), Value: []byte("v")}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = n.Host.Propose(ctx, group, cmd)
	if !errors.Is(err, raft.ErrNotProposed) || !errors.Is(err, raft.ErrTimeout) {
		t.Fatalf("a proposal to a group without a leader: %v, want ErrNotProposed and ErrTimeout", err)
	}
}
