package placement

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// The tests run four nodes in process: the metadata group gets three
// voters and one non-voter (cluster/node), and a Manager on node 1 places
// that group's replicas. The shard group over the storage engine is
// covered over the wire (tests/cluster_placement_test.go).

func startNodes(t *testing.T, count int) []*node.Node {
	t.Helper()
	clustertest.QuietEngine()
	dir := t.TempDir()
	cfgs := make([]node.Config, count)
	var join []string
	for i := range cfgs {
		cfgs[i] = node.Config{
			DataDir:      filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			Addr:         clustertest.FreeAddr(t),
			RaftAddr:     clustertest.FreeAddr(t),
			PollInterval: 50 * time.Millisecond,
			Store:        &pebble.Options{Logger: storagetest.QuietLogger{}},
		}
		join = append(join, cfgs[i].Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	nodes := make([]*node.Node, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i := range cfgs {
		cfgs[i].Join = join
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			nodes[i], errs[i] = node.Start(ctx, cfgs[i])
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, n := range nodes {
				if n != nil {
					n.Close()
				}
			}
			t.Fatalf("node %d: %v", i+1, err)
		}
	}
	// By id: node 1 (the founder) first. A test that closes a node sets
	// its entry to nil.
	byID := make([]*node.Node, count)
	for _, n := range nodes {
		byID[n.Identity().NodeID-1] = n
	}
	t.Cleanup(func() {
		for _, n := range byID {
			if n != nil {
				n.Close()
			}
		}
	})
	return byID
}

// waitMembership waits until the metadata group has the voters and
// non-voters given (node ids, which are its replica ids).
func waitMembership(t *testing.T, h raft.Host, voters, nonVoters []uint64) {
	t.Helper()
	var m raft.Membership
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if m, err = h.Membership(context.Background(), node.MetaGroup); err != nil {
			continue
		}
		if same(m.Voters, voters) && same(m.NonVoters, nonVoters) {
			return
		}
	}
	t.Fatalf("metadata group: voters %v, non-voters %v; want %v, %v", m.Voters, m.NonVoters, voters, nonVoters)
}

// formed waits until the metadata group has three voters and a non-voter
// (which nodes vote depends on the order they asked), and returns the
// voters other than node 1 and the non-voter.
func formed(t *testing.T, h raft.Host) (a, b, spare uint64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m, err := h.Membership(context.Background(), node.MetaGroup)
		if err != nil || len(m.Voters) != 3 || len(m.NonVoters) != 1 {
			continue
		}
		var others []uint64
		for v := range m.Voters {
			if v != 1 {
				others = append(others, uint64(v))
			}
		}
		for nv := range m.NonVoters {
			spare = uint64(nv)
		}
		if len(others) == 2 {
			return min(others[0], others[1]), max(others[0], others[1]), spare
		}
	}
	t.Fatal("the metadata group did not get three voters and a non-voter")
	return 0, 0, 0
}

func same(m map[raft.ReplicaID]string, ids []uint64) bool {
	if len(m) != len(ids) {
		return false
	}
	for _, id := range ids {
		if _, ok := m[raft.ReplicaID(id)]; !ok {
			return false
		}
	}
	return true
}

func newManager(t *testing.T, n *node.Node, dead time.Duration) (*Manager, context.CancelFunc) {
	return newManagerOf(t, n, dead, []Group{{ID: node.MetaGroup, Name: "the metadata group"}})
}

// newManagerOf is newManager over groups.
func newManagerOf(t *testing.T, n *node.Node, dead time.Duration, groups []Group) (*Manager, context.CancelFunc) {
	m := New(Config{Node: n, Groups: groups, DeadNodeTimeout: dead, Interval: 100 * time.Millisecond, Logf: t.Logf})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	m.Start(ctx, &wg)
	t.Cleanup(func() { cancel(); wg.Wait() })
	return m, cancel
}

func waitLive(t *testing.T, m *Manager, ids ...uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		all := true
		for _, id := range ids {
			all = all && m.Live(id)
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes %v are not all live", ids)
		}
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("got %v, want SQLSTATE %s", err, code)
	}
}

// TestDecommissionLeader decommissions the group's leader: leadership moves
// away first, the non-voter on node 4 is promoted, node 3's replica is
// removed, and the node is marked decommissioned; refusals come first.
func TestDecommissionLeader(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	other, victim, spare := formed(t, h)
	m, _ := newManager(t, nodes[0], time.Minute)
	waitLive(t, m, 1, 2, 3, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	wantCode(t, m.Decommission(ctx, 9, nil), sqlerr.UndefinedObject)

	if err := nodes[victim-1].Host().TransferLeadership(ctx, node.MetaGroup, raft.ReplicaID(victim)); err != nil {
		t.Fatal(err)
	}
	var progress [][2]int64
	if err := m.Decommission(ctx, victim, func(done, total int64) { progress = append(progress, [2]int64{done, total}) }); err != nil {
		t.Fatal(err)
	}
	waitMembership(t, h, []uint64{1, other, spare}, nil)
	if l, _, ok, err := h.Leader(node.MetaGroup); err != nil || !ok || uint64(l) == victim {
		t.Fatalf("leader %d (%v, %v) after the decommission", l, ok, err)
	}
	if len(progress) != 2 || progress[0] != [2]int64{0, 1} || progress[1] != [2]int64{1, 1} {
		t.Fatalf("progress %v", progress)
	}
	ns, err := m.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		want := NodeStatus{ID: n.ID, Addr: n.Addr, Live: true, Membership: stateActive, Replicas: 1, Voters: 1, Leaders: n.Leaders}
		if n.ID == victim {
			want.Membership, want.Replicas, want.Voters = stateDecommissoned, 0, 0
		}
		if n != want {
			t.Errorf("sys.nodes row %+v, want %+v", n, want)
		}
	}
	if m.Eligible(victim) {
		t.Fatal("a decommissioned node is eligible for replicas")
	}
	// Again: done already.
	if err := m.Decommission(ctx, victim, nil); err != nil {
		t.Fatal(err)
	}
	// Three nodes left, three voters: no room for another decommission.
	wantCode(t, m.Decommission(ctx, other, nil), sqlerr.ObjectNotInPrerequisiteState)
	waitMembership(t, h, []uint64{1, other, spare}, nil)
}

// TestHealDeadNode stops a voter: once it has not answered for the dead
// node timeout, the spare non-voter is promoted and the dead replica
// removed. Without a spare, a dead voter stays (removing it would only
// shrink the group).
func TestHealDeadNode(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, spare := formed(t, h)
	m, _ := newManager(t, nodes[0], time.Second)
	waitLive(t, m, 1, 2, 3, 4)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	m.Run(ctx, &wg)
	defer func() { cancel(); wg.Wait() }()

	stopped := time.Now()
	nodes[a-1].Close()
	nodes[a-1] = nil
	waitMembership(t, h, []uint64{1, b, spare}, nil)
	if d := time.Since(stopped); d < time.Second {
		t.Fatalf("healed %s after the stop, before the timeout", d)
	}
	if m.Live(a) || !m.Dead(a) || m.Eligible(a) {
		t.Fatalf("node %d: live %v, dead %v, eligible %v", a, m.Live(a), m.Dead(a), m.Eligible(a))
	}
	// No spare now: the next death leaves its replica in place.
	nodes[b-1].Close()
	nodes[b-1] = nil
	time.Sleep(2 * time.Second)
	mem, err := h.Membership(context.Background(), node.MetaGroup)
	if err != nil {
		t.Fatal(err)
	}
	if !same(mem.Voters, []uint64{1, b, spare}) {
		t.Fatalf("voters %v after a second death without a spare", mem.Voters)
	}
}

// TestDecommissionDeadNode decommissions a node that is down (before the
// dead timeout): its voter is replaced without asking it anything.
func TestDecommissionDeadNode(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	a, b, spare := formed(t, h)
	m, _ := newManager(t, nodes[0], time.Minute)
	waitLive(t, m, 1, 2, 3, 4)
	nodes[b-1].Close()
	nodes[b-1] = nil
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	if err := m.Decommission(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	waitMembership(t, h, []uint64{1, a, spare}, nil)
	if m.Dead(b) {
		t.Fatal("node called dead before the timeout")
	}
}
