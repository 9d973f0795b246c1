package placement

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// watchGenerations runs, for each node, what cluster/shardrepl runs for
// the shard group: when the metadata group records a later generation of
// the node's replica of g, the node rejoins under it (Rejoin).
func watchGenerations(t *testing.T, nodes []*node.Node, g raft.GroupID, rejoined *atomic.Int64) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func(n *node.Node) {
			defer wg.Done()
			self := n.Identity().NodeID
			running := raft.ReplicaID(self)
			for ctx.Err() == nil {
				rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
				cur, err := CurrentReplica(rctx, n.Host(), g, self)
				rcancel()
				if err == nil && GenOf(cur) > GenOf(running) {
					err := Rejoin(ctx, n.Host(), g, running, cur, func() error { return n.Store().DropGroup(g) }, n.Store().NewStateMachine)
					if err != nil {
						t.Errorf("node %d: %v", self, err)
						return
					}
					t.Logf("node %d rejoined group %d as replica %#x", self, g, cur)
					running = cur
					rejoined.Add(1)
				}
				sleep(ctx, 100*time.Millisecond)
			}
		}(n)
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestMoveVoter: four nodes; the metadata group and a movable second group
// vote on nodes 1, a and b, node 4 holds a caught-up non-voter of the
// second group. The allocator moves a voter of the second group to the
// spare node (voters per node 2,2,2,0 → 2,2,1,1, and no more), the node
// that gave it up rejoins as a non-voter of the next generation and
// catches up, and every write acknowledged meanwhile is on every replica.
func TestMoveVoter(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, spare := formed(t, h)
	startSecondGroup(t, nodes, 1, a, b)
	leadBoth(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addSpare(t, ctx, h, nodes[spare-1])
	var rejoined atomic.Int64
	watchGenerations(t, nodes, secondGroup, &rejoined)

	// A writer through node 1 for the whole move.
	var acked atomic.Int64
	stop := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				writerDone <- nil
				return
			default:
			}
			if err := clustertest.Put(ctx, h, secondGroup, clustertest.Key(i), fmt.Sprint(i)); err != nil {
				writerDone <- err
				return
			}
			acked.Store(int64(i + 1))
		}
	}()

	groups := []Group{{ID: node.MetaGroup, Name: "the metadata group"}, {ID: secondGroup, Name: "the second group", Generations: true}}
	m, _ := runManager(t, nodes[0], groups, false)
	waitLive(t, m, 1, 2, 3, 4)
	votersPerNode := func() map[uint64]int {
		out := map[uint64]int{}
		for _, g := range groups {
			mem, err := h.Membership(ctx, g.ID)
			if err != nil {
				t.Fatal(err)
			}
			for v := range mem.Voters {
				out[NodeOf(v)]++
			}
		}
		return out
	}
	t.Logf("voters per node before: %v", votersPerNode())
	start := time.Now()
	for rejoined.Load() == 0 {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no voter moved; voters per node %v", votersPerNode())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("a voter moved and its node rejoined after %s", time.Since(start).Round(time.Millisecond))
	time.Sleep(rebalanceSettle + time.Second)
	close(stop)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	after := votersPerNode()
	t.Logf("voters per node after: %v; %d writes acknowledged", after, acked.Load())
	if after[spare] != 1 || rejoined.Load() != 1 {
		t.Fatalf("voters per node %v, %d rejoins: want one voter on node %d and one rejoin", after, rejoined.Load(), spare)
	}
	mem, err := h.Membership(ctx, secondGroup)
	if err != nil {
		t.Fatal(err)
	}
	if len(mem.Voters) != 3 || len(mem.NonVoters) != 1 {
		t.Fatalf("second group: %+v", mem)
	}
	var moved raft.ReplicaID
	for nv := range mem.NonVoters {
		moved = nv
	}
	if GenOf(moved) != 1 || (NodeOf(moved) != a && NodeOf(moved) != b) {
		t.Fatalf("non-voter %#x: want generation 1 of node %d or %d", moved, a, b)
	}
	// Every acknowledged write is on every replica, the rejoined one too
	// (a linearizable read there waits until it caught up).
	n := int(acked.Load())
	for _, nd := range nodes {
		for _, i := range []int{0, n / 2, n - 1} {
			v, ok, err := clustertest.Get(ctx, nd.Host(), secondGroup, clustertest.Key(i))
			if err != nil || !ok || v != fmt.Sprint(i) {
				t.Fatalf("node %d: key %d = %q %v %v", nd.Identity().NodeID, i, v, ok, err)
			}
		}
	}
	ns, err := m.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range ns {
		t.Logf("sys.nodes: node %d replicas %d voters %d leaders %d", st.ID, st.Replicas, st.Voters, st.Leaders)
		if st.Replicas != 2 {
			t.Fatalf("node %d holds %d replicas, want 2", st.ID, st.Replicas)
		}
	}
}

// addSpare adds node sp's non-voter of secondGroup and starts it.
func addSpare(t *testing.T, ctx context.Context, h raft.Host, sp *node.Node) {
	t.Helper()
	id := sp.Identity().NodeID
	if err := h.AddNonVoter(ctx, secondGroup, raft.ReplicaID(id), sp.Identity().RaftAddr); err != nil {
		t.Fatal(err)
	}
	if err := sp.Host().StartReplica(raft.ReplicaSpec{Group: secondGroup, Replica: raft.ReplicaID(id), Join: true, NonVoter: true}, sp.Store().NewStateMachine); err != nil {
		t.Fatal(err)
	}
}

// TestRecommissionRejoins: a decommission drains the movable group first;
// recommissioned after it gave up that voter (while the drain waits for a
// target in the metadata group), the node comes back as a non-voter of the
// next generation and catches up, where a group without generations would
// refuse (TestRecommission).
func TestRecommissionRejoins(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, spare := formed(t, h)
	startSecondGroup(t, nodes, 1, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addSpare(t, ctx, h, nodes[spare-1])
	var rejoined atomic.Int64
	watchGenerations(t, nodes, secondGroup, &rejoined)
	never := func(context.Context, uint64) (bool, error) { return false, nil }
	groups := []Group{{ID: node.MetaGroup, Name: "the metadata group", CaughtUp: never},
		{ID: secondGroup, Name: "the second group", Generations: true}}
	m, _ := newManagerOf(t, nodes[0], time.Minute, groups)
	waitLive(t, m, 1, 2, 3, 4)
	done := make(chan error, 1)
	go func() { done <- m.Decommission(ctx, b, nil) }()
	for {
		mem, err := h.Membership(ctx, secondGroup)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := replicaOn(mem, b); !ok {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("node b's voter of the second group did not move")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := m.Recommission(ctx, b); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantCode(t, err, sqlerr.QueryCanceled)
	case <-ctx.Done():
		t.Fatal("the decommission did not stop")
	}
	mem, err := h.Membership(ctx, secondGroup)
	if err != nil {
		t.Fatal(err)
	}
	if r, voter, ok := replicaOn(mem, b); !ok || voter || GenOf(r) != 1 {
		t.Fatalf("node %d in the second group: %#x voter=%v ok=%v; want a non-voter of generation 1", b, r, voter, ok)
	}
	if err := clustertest.Put(ctx, h, secondGroup, "after", "recommission"); err != nil {
		t.Fatal(err)
	}
	for rejoined.Load() == 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if v, ok, err := clustertest.Get(ctx, nodes[b-1].Host(), secondGroup, "after"); err != nil || !ok || v != "recommission" {
		t.Fatalf("the rejoined replica on node %d: %q %v %v", b, v, ok, err)
	}
	if !m.Eligible(b) {
		t.Fatal("the recommissioned node is not eligible")
	}
}
