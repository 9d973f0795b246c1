package raft_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// A group of NoSync hosts (serve --unsafe-no-sync --join) replicates and
// reads back like any other; a host restarted on its directory still has
// the log it wrote (to the operating system, not to the disk).
func TestNoSyncHosts(t *testing.T) {
	nodes := startGroupWith(t, 3, func(hc *raft.HostConfig) { hc.NoSync = true })
	ctx := testCtx(t)
	for i := 0; i < 20; i++ {
		mustPut(t, ctx, nodes[i%3].Host, clustertest.Key(i), fmt.Sprint(i))
	}
	for _, n := range nodes {
		mustGet(t, ctx, n.Host, clustertest.Key(19), "19")
	}
}

// BenchmarkProposeNoSync proposes one write at a time to a group of three
// hosts in this process, with the Raft log fsynced and without
// (HostConfig.NoSync): the round a commit waits for.
//
//	go test ./cluster/raft -run '^$' -bench ProposeNoSync
func BenchmarkProposeNoSync(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("noSync=%v", noSync), func(b *testing.B) {
			nodes := startGroupWith(b, 3, func(hc *raft.HostConfig) { hc.NoSync = noSync })
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := clustertest.Put(ctx, nodes[0].Host, group, "warm", "up"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := clustertest.Put(ctx, nodes[0].Host, group, clustertest.Key(i), "v"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// startGroupWith starts n hosts tuned by tune and bootstraps group on all.
func startGroupWith(t testing.TB, n int, tune func(*raft.HostConfig)) []*clustertest.Node {
	t.Helper()
	dir := t.TempDir()
	nodes := make([]*clustertest.Node, n)
	initial := map[raft.ReplicaID]string{}
	for i := range nodes {
		nodes[i] = clustertest.StartNodeWith(t, filepath.Join(dir, fmt.Sprintf("n%d", i+1)), clustertest.FreeAddr(t), nil, tune)
		initial[raft.ReplicaID(i+1)] = nodes[i].Addr
	}
	for i, nd := range nodes {
		spec := raft.ReplicaSpec{Group: group, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
		if err := nd.Host.StartReplica(spec, nd.Store.NewStateMachine); err != nil {
			t.Fatal(err)
		}
	}
	return nodes
}
