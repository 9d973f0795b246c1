package placement

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// secondGroup is a kvsm group of its own on the metadata group's voters
// (1, a, b), for the allocator to have two leaderships to spread.
const secondGroup raft.GroupID = 7

func startSecondGroup(t *testing.T, nodes []*node.Node, ids ...uint64) {
	t.Helper()
	members := map[raft.ReplicaID]string{}
	for _, id := range ids {
		members[raft.ReplicaID(id)] = nodes[id-1].Identity().RaftAddr
	}
	for _, id := range ids {
		n := nodes[id-1]
		spec := raft.ReplicaSpec{Group: secondGroup, Replica: raft.ReplicaID(id), InitialMembers: members}
		if err := n.Host().StartReplica(spec, n.Store().NewStateMachine); err != nil {
			t.Fatal(err)
		}
	}
}

// leadBoth makes node 1 lead both groups.
func leadBoth(t *testing.T, h raft.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, g := range []raft.GroupID{node.MetaGroup, secondGroup} {
		for {
			err := h.TransferLeadership(ctx, g, 1)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("group %d: %v", g, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func leaderOf(h raft.Host, g raft.GroupID) uint64 {
	l, _, ok, err := h.Leader(g)
	if err != nil || !ok {
		return 0
	}
	return uint64(l)
}

func runManager(t *testing.T, n *node.Node, groups []Group, noRebalance bool) *Manager {
	m := New(Config{Node: n, Groups: groups, DeadNodeTimeout: time.Minute, Interval: 100 * time.Millisecond,
		Logf: t.Logf, NoRebalance: noRebalance})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	m.Start(ctx, &wg)
	m.Run(ctx, &wg)
	t.Cleanup(func() { cancel(); wg.Wait() })
	return m
}

// TestRebalanceLeaders: node 1 leads both groups; the allocator moves one
// leadership to a voter that leads none, and then nothing moves again
// (hysteresis: 1 and 1 is balanced, and a move would only swap). A group
// whose leader serves SQL keeps its leader; with NoRebalance nothing moves.
func TestRebalanceLeaders(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, _ := formed(t, h)
	startSecondGroup(t, nodes, 1, a, b)
	leadBoth(t, h)

	groups := []Group{{ID: node.MetaGroup, Name: "the metadata group"}, {ID: secondGroup, Name: "the second group", Serving: true}}
	off := runManager(t, nodes[0], groups, true)
	waitLive(t, off, 1, 2, 3, 4)
	time.Sleep(rebalanceSettle + time.Second)
	if leaderOf(h, node.MetaGroup) != 1 || leaderOf(h, secondGroup) != 1 {
		t.Fatalf("moved with NoRebalance: leaders %d, %d", leaderOf(h, node.MetaGroup), leaderOf(h, secondGroup))
	}

	m := runManager(t, nodes[0], groups, false)
	start := time.Now()
	for l := leaderOf(h, node.MetaGroup); l == 1 || l == 0; l = leaderOf(h, node.MetaGroup) {
		if time.Since(start) > 15*time.Second {
			t.Fatal("the metadata group's leadership did not move")
		}
		time.Sleep(20 * time.Millisecond)
	}
	moved := leaderOf(h, node.MetaGroup)
	t.Logf("moved the metadata group's leadership to node %d after %s", moved, time.Since(start).Round(time.Millisecond))
	if moved != a && moved != b {
		t.Fatalf("leadership moved to node %d, not a voter", moved)
	}
	if leaderOf(h, secondGroup) != 1 {
		t.Fatal("the serving group's leadership moved")
	}
	// Balanced now: nothing moves for a while.
	deadline := time.Now().Add(rebalanceSettle + 2*time.Second)
	for time.Now().Before(deadline) {
		if l := leaderOf(h, node.MetaGroup); l != moved && l != 0 {
			t.Fatalf("the leadership moved again, to node %d", l)
		}
		if l := leaderOf(h, secondGroup); l != 1 && l != 0 {
			t.Fatalf("the serving group's leadership moved to node %d", l)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ns, err := m.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.Leaders > 1 {
			t.Fatalf("node %d leads %d groups: %+v", n.ID, n.Leaders, ns)
		}
	}
}

// TestRebalanceEitherGroup: without a serving group, one of the two
// leaderships node 1 holds moves, and only one.
func TestRebalanceEitherGroup(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, _ := formed(t, h)
	startSecondGroup(t, nodes, 1, a, b)
	leadBoth(t, h)
	runManager(t, nodes[0], []Group{{ID: node.MetaGroup, Name: "the metadata group"}, {ID: secondGroup, Name: "the second group"}}, false)
	start := time.Now()
	for leaderOf(h, node.MetaGroup) <= 1 && leaderOf(h, secondGroup) <= 1 {
		if time.Since(start) > 15*time.Second {
			t.Fatal("no leadership moved")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(rebalanceSettle + time.Second)
	l1, l2 := leaderOf(h, node.MetaGroup), leaderOf(h, secondGroup)
	if (l1 == 1) == (l2 == 1) || l1 == l2 {
		t.Fatalf("leaders %d and %d: want node 1 and another node", l1, l2)
	}
}

// TestDecommissionSelf: the managing node decommissions itself: it hands
// its leadership over, and the manager of the node that took it (which
// runs Run there, as the next serving node would) drains it.
func TestDecommissionSelf(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, spare := formed(t, h)
	if err := h.TransferLeadership(context.Background(), node.MetaGroup, 1); err != nil {
		t.Fatal(err)
	}
	groups := []Group{{ID: node.MetaGroup, Name: "the metadata group", Serving: true}}
	m1, _ := newManagerOf(t, nodes[0], time.Minute, groups)
	waitLive(t, m1, 1, 2, 3, 4)
	// The next manager runs its loop beside, as the node that takes over
	// serving does.
	mNext := runManager(t, nodes[a-1], groups, true)
	waitLive(t, mNext, 1, 2, 3, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := m1.Decommission(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if l := leaderOf(h, node.MetaGroup); l == 1 {
		t.Fatal("node 1 still leads after handing over")
	}
	waitMembership(t, nodes[a-1].Host(), []uint64{a, b, spare}, nil)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ns, err := mNext.Nodes(ctx)
		if err == nil && ns[0].ID == 1 && ns[0].Membership == stateDecommissoned {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 1 is not marked decommissioned: %+v, %v", ns, err)
		}
	}
}

// TestRecommission: a decommission waiting for a target stops when the
// node is recommissioned, which leaves it active with its replicas; a
// decommissioned node and unknown nodes are refused.
func TestRecommission(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, spare := formed(t, h)
	var gate sync.Mutex
	caughtUp := false
	groups := []Group{{ID: node.MetaGroup, Name: "the metadata group", CaughtUp: func(context.Context, uint64) (bool, error) {
		gate.Lock()
		defer gate.Unlock()
		return caughtUp, nil
	}}}
	m, _ := newManagerOf(t, nodes[0], time.Minute, groups)
	waitLive(t, m, 1, 2, 3, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	wantCode(t, m.Recommission(ctx, 9), sqlerr.UndefinedObject)
	if err := m.Recommission(ctx, b); err != nil { // active: nothing to do
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Decommission(ctx, b, nil) }()
	for m.Eligible(b) {
		time.Sleep(10 * time.Millisecond) // until it is decommissioning
	}
	time.Sleep(3 * m.cfg.Interval) // waiting for a target
	if err := m.Recommission(ctx, b); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantCode(t, err, sqlerr.QueryCanceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the decommission did not stop")
	}
	if !m.Eligible(b) {
		t.Fatal("a recommissioned node is not eligible")
	}
	waitMembership(t, h, []uint64{1, a, b}, []uint64{spare})

	// Decommissioned: it gave its replica up for good.
	gate.Lock()
	caughtUp = true
	gate.Unlock()
	if err := m.Decommission(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	wantCode(t, m.Recommission(ctx, b), sqlerr.ObjectNotInPrerequisiteState)
	waitMembership(t, h, []uint64{1, a, spare}, nil)
}
