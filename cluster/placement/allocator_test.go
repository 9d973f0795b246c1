package placement

import (
	"context"
	"fmt"
	"strings"
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

// moveLog counts the leadership moves a manager logged, by group name: an
// election may move a leadership too, so the tests count the allocator's
// own moves rather than watch where the leaders are.
type moveLog struct {
	mu    sync.Mutex
	moves map[string]int
}

func (l *moveLog) count(group string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.moves[group]
}

func runManager(t *testing.T, n *node.Node, groups []Group, noRebalance bool) (*Manager, *moveLog) {
	ml := &moveLog{moves: map[string]int{}}
	logf := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		t.Log(msg)
		for _, g := range groups {
			if strings.Contains(msg, "moved the leadership of "+g.Name+" ") {
				ml.mu.Lock()
				ml.moves[g.Name]++
				ml.mu.Unlock()
			}
		}
	}
	m := New(Config{Node: n, Groups: groups, DeadNodeTimeout: time.Minute, Interval: 100 * time.Millisecond,
		Logf: logf, NoRebalance: noRebalance})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	m.Start(ctx, &wg)
	m.Run(ctx, &wg)
	t.Cleanup(func() { cancel(); wg.Wait() })
	return m, ml
}

// TestRebalanceLeaders: node 1 leads both groups; the allocator moves one
// leadership to a voter that leads none, and then moves nothing more
// (hysteresis: 1 and 1 is balanced, and a move would only swap). A group
// whose leader serves SQL is never moved; with NoRebalance nothing is.
func TestRebalanceLeaders(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, _ := formed(t, h)
	startSecondGroup(t, nodes, 1, a, b)
	leadBoth(t, h)

	groups := []Group{{ID: node.MetaGroup, Name: "the metadata group"}, {ID: secondGroup, Name: "the second group", Serving: true}}
	off, offLog := runManager(t, nodes[0], groups, true)
	waitLive(t, off, 1, 2, 3, 4)
	time.Sleep(rebalanceSettle + time.Second)
	if n := offLog.count("the metadata group"); n != 0 {
		t.Fatalf("%d moves with NoRebalance", n)
	}

	_, ml := runManager(t, nodes[0], groups, false)
	start := time.Now()
	for ml.count("the metadata group") == 0 {
		if time.Since(start) > 15*time.Second {
			t.Fatal("the metadata group's leadership did not move")
		}
		time.Sleep(20 * time.Millisecond)
	}
	moved := leaderOf(h, node.MetaGroup)
	t.Logf("moved the metadata group's leadership to node %d after %s", moved, time.Since(start).Round(time.Millisecond))
	if moved != a && moved != b && moved != 0 {
		t.Fatalf("leadership moved to node %d, not a voter", moved)
	}
	// Balanced now: the allocator moves nothing more (it would only move
	// the metadata group back if an election gave node 1 both again, and
	// not within the cooldown).
	time.Sleep(rebalanceSettle + 2*time.Second)
	if n, s := ml.count("the metadata group"), ml.count("the second group"); n != 1 || s != 0 || offLog.count("the metadata group") != 0 {
		t.Fatalf("%d moves of the metadata group, %d of the serving group", n, s)
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
	_, ml := runManager(t, nodes[0], []Group{{ID: node.MetaGroup, Name: "the metadata group"}, {ID: secondGroup, Name: "the second group"}}, false)
	start := time.Now()
	for ml.count("the metadata group")+ml.count("the second group") == 0 {
		if time.Since(start) > 15*time.Second {
			t.Fatal("no leadership moved")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(rebalanceSettle + time.Second)
	if n := ml.count("the metadata group") + ml.count("the second group"); n != 1 {
		t.Fatalf("%d leadership moves, want 1", n)
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
	mNext, _ := runManager(t, nodes[a-1], groups, true)
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
