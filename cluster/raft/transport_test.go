package raft_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// PivotDB's transport (transport.go) speaks dragonboat's wire format: a
// group whose hosts run either transport replicates, and a snapshot
// streams from a leader of one kind to a new replica of the other (both
// ways), so nodes of the old and new binary work together during a
// rolling upgrade.
func TestTransportTalksToDragonboats(t *testing.T) {
	for _, leaderDragonboats := range []bool{false, true} {
		t.Run(fmt.Sprintf("leaderDragonboats=%v", leaderDragonboats), func(t *testing.T) {
			dir := t.TempDir()
			// Host 1 (the leader) runs one transport, hosts 2 and 3 the
			// other.
			kinds := []bool{leaderDragonboats, !leaderDragonboats, !leaderDragonboats}
			nodes := make([]*clustertest.Node, 3)
			for i, dragonboats := range kinds {
				raft.UseDragonboatTransport(dragonboats)
				nodes[i] = clustertest.StartNode(t, filepath.Join(dir, fmt.Sprintf("n%d", i+1)), clustertest.FreeAddr(t), nil)
			}
			raft.UseDragonboatTransport(false)
			initial := map[raft.ReplicaID]string{1: nodes[0].Addr, 2: nodes[1].Addr}
			for i := range 2 {
				spec := raft.ReplicaSpec{Group: group, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
				if err := nodes[i].Host.StartReplica(spec, nodes[i].Store.NewStateMachine); err != nil {
					t.Fatal(err)
				}
			}
			ctx := testCtx(t)
			clustertest.WaitLeader(t, nodes[0].Host, group)
			if err := nodes[0].Host.TransferLeadership(ctx, group, 1); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool {
				l, _, ok, err := nodes[1].Host.Leader(group)
				return err == nil && ok && l == 1
			})
			const n = 200 // four snapshot points of 50 entries: the log is compacted
			for i := range n {
				mustPut(t, ctx, nodes[i%2].Host, clustertest.Key(i), fmt.Sprint(i))
			}
			mustGet(t, ctx, nodes[1].Host, clustertest.Key(n-1), fmt.Sprint(n-1))
			if _, err := nodes[0].Host.CompactLog(ctx, group); err != nil {
				t.Fatal(err)
			}
			// Replica 3 joins: the leader streams it a snapshot.
			if err := nodes[0].Host.AddNonVoter(ctx, group, 3, nodes[2].Addr); err != nil {
				t.Fatal(err)
			}
			spec := raft.ReplicaSpec{Group: group, Replica: 3, Join: true, NonVoter: true}
			if err := nodes[2].Host.StartReplica(spec, nodes[2].Store.NewStateMachine); err != nil {
				t.Fatal(err)
			}
			mustGet(t, ctx, nodes[2].Host, clustertest.Key(n-1), fmt.Sprint(n-1))
			mustGet(t, ctx, nodes[2].Host, clustertest.Key(0), "0")
			if got := nodes[2].Store.Stats().SnapshotsRecovered; got == 0 {
				t.Fatal("the new replica caught up without a snapshot: the log was not compacted")
			}
			mustPut(t, ctx, nodes[2].Host, "after", "snapshot")
			mustGet(t, ctx, nodes[1].Host, "after", "snapshot")
		})
	}
}

// BenchmarkProposeTransport proposes from 16 goroutines at once (the
// bench's 16 clients) to a group of three hosts in this process, with
// dragonboat's transport and with PivotDB's (transport.go). cpu-ns/op is
// the process's CPU time (user and system) per proposal, three hosts'
// worth, the figure a loaded machine disturbs least.
//
//	go test ./cluster/raft -run '^$' -bench ProposeTransport -benchtime 3000x
func BenchmarkProposeTransport(b *testing.B) {
	for _, dragonboats := range []bool{true, false} {
		name := "pivotdb"
		if dragonboats {
			name = "dragonboat"
		}
		b.Run("transport="+name, func(b *testing.B) {
			raft.UseDragonboatTransport(dragonboats)
			// The production snapshot interval, not the tests' 50
			// entries: a snapshot every 50 proposals would be most of
			// what is measured.
			nodes := startGroupWith(b, 3, func(hc *raft.HostConfig) { hc.SnapshotEntries, hc.CompactionOverhead = 10000, 5000 })
			raft.UseDragonboatTransport(false)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			leader := clustertest.WaitLeader(b, nodes[0].Host, group)
			h := nodes[leader-1].Host
			if err := clustertest.Put(ctx, h, group, "warm", "up"); err != nil {
				b.Fatal(err)
			}
			const proposers = 16
			var next atomic.Int64
			var failed atomic.Value
			cpu0 := processCPU(b)
			b.ResetTimer()
			var wg sync.WaitGroup
			for range proposers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						if err := clustertest.Put(ctx, h, group, clustertest.Key(int(i)), "v"); err != nil {
							failed.Store(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if err, ok := failed.Load().(error); ok {
				b.Fatal(err)
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the CPU time (user and system) this process used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
