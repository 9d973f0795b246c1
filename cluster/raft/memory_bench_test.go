package raft_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// BenchmarkHostMemory measures the heap a host takes: three hosts in one
// process, each with a replica of `groups` groups, after 200 writes of 100
// bytes to every group. It reports the live heap per host after a GC (the
// figure for the log store's memtables, caches and the replicas' in-memory
// logs) and the process's memory from the Go runtime per host.
//
//	go test ./cluster/raft -run '^$' -bench HostMemory -benchtime 1x
func BenchmarkHostMemory(b *testing.B) {
	for _, groups := range []int{1, 10} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchHostMemory(b, groups)
			}
		})
	}
}

func benchHostMemory(b *testing.B, groups int) {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	dir := b.TempDir()
	nodes := make([]*clustertest.Node, 3)
	initial := map[raft.ReplicaID]string{}
	for i := range nodes {
		nodes[i] = clustertest.StartNode(b, filepath.Join(dir, fmt.Sprint(i)), clustertest.FreeAddr(b), nil)
		initial[raft.ReplicaID(i+1)] = nodes[i].Addr
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	value := string(make([]byte, 100))
	for g := 1; g <= groups; g++ {
		for i, n := range nodes {
			spec := raft.ReplicaSpec{Group: raft.GroupID(g), Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
			if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
				b.Fatal(err)
			}
		}
		for k := 0; k < 200; k++ {
			if err := clustertest.Put(ctx, nodes[k%3].Host, raft.GroupID(g), clustertest.Key(k), value); err != nil {
				b.Fatal(err)
			}
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/3/(1<<20), "heap-MiB/host")
	b.ReportMetric(float64(after.Sys-before.Sys)/3/(1<<20), "sys-MiB/host")
	for _, n := range nodes {
		n.Stop()
	}
}

// BenchmarkBulkProposals proposes 128 KiB commands from 4 writers through
// a three-host group's leader (a bulk load's pace) and reports how many
// tries the engine refused as busy per proposal (busy-refusals/op): with a
// log store whose every memtable switch counted as busy (two memtables)
// it was 133 to 229 in 64 MiB (512 proposals), 0 with four (of 2 MiB).
//
//	go test ./cluster/raft -run '^$' -bench BulkProposals -benchtime 512x
func BenchmarkBulkProposals(b *testing.B) {
	nodes := make([]*clustertest.Node, 3)
	dir := b.TempDir()
	initial := map[raft.ReplicaID]string{}
	for i := range nodes {
		nodes[i] = clustertest.StartNode(b, filepath.Join(dir, fmt.Sprintf("n%d", i+1)), clustertest.FreeAddr(b), nil)
		initial[raft.ReplicaID(i+1)] = nodes[i].Addr
	}
	const g raft.GroupID = 7
	for i, n := range nodes {
		spec := raft.ReplicaSpec{Group: g, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
		if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
			b.Fatal(err)
		}
	}
	h := nodes[clustertest.WaitLeader(b, nodes[0].Host, g)-1].Host
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	value := strings.Repeat("v", 128<<10)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.SetBytes(128 << 10)
	b.ResetTimer()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := clustertest.Put(ctx, h, g, clustertest.Key(int(i)), value); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(raft.BusyRefusals(h))/float64(b.N), "busy-refusals/op")
}
