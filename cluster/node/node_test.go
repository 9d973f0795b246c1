package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// testNode is the configuration of one node of a test cluster; its
// addresses and directory stay the same across restarts.
type testNode struct {
	cfg Config
	n   *Node
}

func newTestNodes(t *testing.T, count int) []*testNode {
	t.Helper()
	clustertest.QuietEngine()
	dir := t.TempDir()
	nodes := make([]*testNode, count)
	var join []string
	for i := range nodes {
		nodes[i] = &testNode{cfg: Config{
			DataDir:      filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			Addr:         clustertest.FreeAddr(t),
			RaftAddr:     clustertest.FreeAddr(t),
			PollInterval: 50 * time.Millisecond,
			Logf:         t.Logf,
			Store:        &pebble.Options{Logger: storagetest.QuietLogger{}},
		}}
		join = append(join, nodes[i].cfg.Addr)
	}
	for _, n := range nodes {
		n.cfg.Join = join
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop(t)
		}
	})
	return nodes
}

func (tn *testNode) start(ctx context.Context, t *testing.T) error {
	n, err := Start(ctx, tn.cfg)
	if err != nil {
		return err
	}
	tn.n = n
	return nil
}

func (tn *testNode) stop(t *testing.T) {
	if tn.n != nil {
		if err := tn.n.Close(); err != nil {
			t.Error(err)
		}
		tn.n = nil
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startAll starts the nodes concurrently, the last one first.
func startAll(t *testing.T, ctx context.Context, nodes []*testNode) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = nodes[i].start(ctx, t)
		}(i)
		time.Sleep(30 * time.Millisecond)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
	}
}

// waitMeta waits until the metadata group, read through n, has exactly the
// given voters and non-voters (node ids).
func waitMeta(t *testing.T, ctx context.Context, n *Node, voters, nonVoters []uint64) {
	t.Helper()
	var m raft.Membership
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		m, err = n.Host().Membership(ctx, MetaGroup)
		if err != nil {
			continue
		}
		if sameIDs(m.Voters, voters) && sameIDs(m.NonVoters, nonVoters) {
			return
		}
	}
	t.Fatalf("metadata group: voters %v, non-voters %v; want %v, %v", keys(m.Voters), keys(m.NonVoters), voters, nonVoters)
}

// waitMembers waits until the metadata group, read through n, has exactly
// the given members (voters and non-voters), and returns its membership.
func waitMembers(t *testing.T, ctx context.Context, n *Node, ids []uint64) raft.Membership {
	t.Helper()
	var m raft.Membership
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		m, err = n.Host().Membership(ctx, MetaGroup)
		if err != nil {
			continue
		}
		all := map[raft.ReplicaID]string{}
		for r, a := range m.Voters {
			all[r] = a
		}
		for r, a := range m.NonVoters {
			all[r] = a
		}
		if sameIDs(all, ids) {
			return m
		}
	}
	t.Fatalf("metadata group: voters %v, non-voters %v; want members %v", keys(m.Voters), keys(m.NonVoters), ids)
	return m
}

func sameIDs(m map[raft.ReplicaID]string, ids []uint64) bool {
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

func keys(m map[raft.ReplicaID]string) []raft.ReplicaID {
	var out []raft.ReplicaID
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Three founders started in reverse order with the same join list form one
// cluster: the lowest address founds it as node 1, the others join, and the
// metadata group ends with three voters. Restarted, every node keeps its
// identity; a node restarted alone does not found anything.
func TestFoundersFormOneClusterInAnyOrder(t *testing.T) {
	nodes := newTestNodes(t, 3)
	ctx := testCtx(t)
	startAll(t, ctx, nodes)

	lowest := 0
	for i, n := range nodes {
		if n.cfg.Addr < nodes[lowest].cfg.Addr {
			lowest = i
		}
	}
	cid := nodes[0].n.Identity().ClusterID
	ids := map[uint64]bool{}
	for i, n := range nodes {
		id := n.n.Identity()
		if id.ClusterID != cid {
			t.Fatalf("node %d is in cluster %s, node 1 in %s", i+1, id.ClusterID, cid)
		}
		if (i == lowest) != (id.NodeID == 1) {
			t.Fatalf("node at %s has id %d; the lowest address is %s", n.cfg.Addr, id.NodeID, nodes[lowest].cfg.Addr)
		}
		ids[id.NodeID] = true
	}
	if len(ids) != 3 {
		t.Fatalf("node ids %v", ids)
	}
	waitMeta(t, ctx, nodes[1].n, []uint64{1, 2, 3}, nil)
	recs, err := nodes[2].n.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("registry: %+v", recs)
	}

	before := map[int]Identity{}
	for i, n := range nodes {
		before[i] = n.n.Identity()
		n.stop(t)
	}
	// One node alone: it restarts as the member it was, without a quorum.
	if err := nodes[lowest].start(ctx, t); err != nil {
		t.Fatal(err)
	}
	if got := nodes[lowest].n.Identity(); got != before[lowest] {
		t.Fatalf("identity after restart %+v, before %+v", got, before[lowest])
	}
	nodes[lowest].stop(t)
	startAll(t, ctx, nodes)
	for i, n := range nodes {
		if got := n.n.Identity(); got != before[i] {
			t.Fatalf("node %d: identity after restart %+v, before %+v", i+1, got, before[i])
		}
	}
	waitMeta(t, ctx, nodes[0].n, []uint64{1, 2, 3}, nil)
}

// A node started later joins through any member and, with three voters in
// place, stays a non-voter. A node whose data directory is wiped comes back
// under a new id; its old id leaves the metadata group and the new one is
// promoted in its place.
func TestLaterNodeAndWipedNode(t *testing.T) {
	nodes := newTestNodes(t, 4)
	ctx := testCtx(t)
	founders, later := nodes[:3], nodes[3]
	for _, n := range founders {
		n.cfg.Join = []string{founders[0].cfg.Addr, founders[1].cfg.Addr, founders[2].cfg.Addr}
	}
	// The later node starts first: it waits for the founders.
	later.cfg.Join = []string{founders[1].cfg.Addr}
	laterErr := make(chan error, 1)
	laterDone := make(chan struct{})
	laterCtx, cancelLater := context.WithCancel(ctx)
	go func() {
		defer close(laterDone)
		laterErr <- later.start(laterCtx, t)
	}()
	// A failing startAll ends the test while later.start may still run,
	// and the nodes' cleanup reads what it writes: stop it and wait first
	// (cleanups run last registered first).
	t.Cleanup(func() {
		cancelLater()
		<-laterDone
	})
	time.Sleep(200 * time.Millisecond)
	startAll(t, ctx, founders)
	if err := <-laterErr; err != nil {
		t.Fatal(err)
	}
	// Four nodes, ids 1..4 in the order they joined. Promotions are granted
	// while the group has fewer than three voters: three voters, one
	// non-voter, whichever joiner asked last.
	byID := map[uint64]*testNode{}
	for _, n := range nodes {
		byID[n.n.Identity().NodeID] = n
	}
	if len(byID) != 4 || byID[1] == nil || byID[4] == nil {
		t.Fatalf("node ids %v", byID)
	}
	m := waitMembers(t, ctx, byID[1].n, []uint64{1, 2, 3, 4})
	if len(m.Voters) != 3 {
		t.Fatalf("%d voters: %+v", len(m.Voters), m)
	}

	// Wipe a voter other than node 1.
	var old uint64
	for r := range m.Voters {
		if r != 1 {
			old = uint64(r)
		}
	}
	wiped := byID[old]
	wiped.stop(t)
	if err := os.RemoveAll(wiped.cfg.DataDir); err != nil {
		t.Fatal(err)
	}
	if err := wiped.start(ctx, t); err != nil {
		t.Fatal(err)
	}
	id := wiped.n.Identity()
	if id.NodeID != 5 {
		t.Fatalf("wiped node %d came back as %+v; want node 5", old, id)
	}
	var want []uint64
	for n := uint64(1); n <= 5; n++ {
		if n != old {
			want = append(want, n)
		}
	}
	m = waitMembers(t, ctx, byID[1].n, want)
	if !m.Removed[raft.ReplicaID(old)] {
		t.Fatalf("old id %d not removed: %+v", old, m)
	}
	if len(m.Voters) != 3 || m.Voters[5] == "" {
		t.Fatalf("after the wiped node rejoined: %+v; want three voters, node 5 among them", m)
	}
	byID[5] = wiped
	recs, err := byID[4].n.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, r := range recs {
		got = append(got, r.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("registry ids %v, want %v", got, want)
	}
}

// Bad input: a join list that names a node twice, a node of another cluster,
// or nodes of two clusters is refused with a message that says so; a
// directory whose Raft log is gone is not started under its old id.
func TestJoinListErrors(t *testing.T) {
	ctx := testCtx(t)
	a := newTestNodes(t, 1)[0]
	b := newTestNodes(t, 1)[0]
	if err := a.start(ctx, t); err != nil {
		t.Fatal(err)
	}
	if err := b.start(ctx, t); err != nil {
		t.Fatal(err)
	}
	aID, bID := a.n.Identity().ClusterID, b.n.Identity().ClusterID
	if aID == bID {
		t.Fatal("two one-node clusters share an id")
	}

	dup := Config{DataDir: t.TempDir(), Addr: clustertest.FreeAddr(t), RaftAddr: clustertest.FreeAddr(t),
		Join: []string{a.cfg.Addr, a.cfg.Addr}}
	if _, err := Start(ctx, dup); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate join address: %v", err)
	}

	// b restarted with a join list naming a.
	b.stop(t)
	b.cfg.Join = []string{b.cfg.Addr, a.cfg.Addr}
	err := b.start(ctx, t)
	if err == nil || !strings.Contains(err.Error(), aID) || !strings.Contains(err.Error(), bID) {
		t.Fatalf("restart with a join list naming another cluster: %v", err)
	}
	b.cfg.Join = nil
	if err := b.start(ctx, t); err != nil {
		t.Fatal(err)
	}

	// An empty node whose list names both clusters.
	both := Config{DataDir: t.TempDir(), Addr: clustertest.FreeAddr(t), RaftAddr: clustertest.FreeAddr(t),
		Join: []string{a.cfg.Addr, b.cfg.Addr}, PollInterval: 50 * time.Millisecond}
	if _, err := Start(ctx, both); err == nil || !strings.Contains(err.Error(), "different clusters") {
		t.Fatalf("join list of two clusters: %v", err)
	}

	// A directory with an identity but no Raft log.
	b.stop(t)
	if err := os.RemoveAll(filepath.Join(b.cfg.DataDir, "raft")); err != nil {
		t.Fatal(err)
	}
	if err := b.start(ctx, t); err == nil || !strings.Contains(err.Error(), "Raft log is gone") {
		t.Fatalf("start without the Raft log: %v", err)
	}
	// The Raft address of a directory may not change.
	b.cfg.RaftAddr = clustertest.FreeAddr(t)
	if err := b.start(ctx, t); err == nil || !strings.Contains(err.Error(), "may not change") {
		t.Fatalf("start with another Raft address: %v", err)
	}
}

// Only the lowest address of the join list founds a cluster, and only with a
// quorum of the list reachable and empty: alone it waits (and says so), and
// so does any other founder without it.
func TestFoundingNeedsTheLowestAndAQuorum(t *testing.T) {
	nodes := newTestNodes(t, 3)
	lowest, other := nodes[0], nodes[1]
	for _, n := range nodes[1:] {
		if n.cfg.Addr < lowest.cfg.Addr {
			lowest, other = n, lowest
		}
	}
	var mu sync.Mutex
	var said []string
	logf := func(format string, args ...any) {
		mu.Lock()
		said = append(said, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	lowest.cfg.Logf, other.cfg.Logf = logf, logf

	short, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if err := lowest.start(short, t); err == nil || !strings.Contains(err.Error(), "quorum") {
		t.Fatalf("the lowest founder alone: %v", err)
	}
	short, cancel = context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if err := other.start(short, t); err == nil || !strings.Contains(err.Error(), "to found the cluster") {
		t.Fatalf("another founder alone: %v", err)
	}
	mu.Lock()
	if len(said) == 0 {
		t.Error("a waiting founder said nothing")
	}
	mu.Unlock()
	// Neither left an identity behind: both are still empty.
	for _, n := range []*testNode{lowest, other} {
		if id, err := loadIdentity(n.cfg.DataDir); err != nil || id != nil {
			t.Fatalf("a founder that gave up kept an identity: %+v, %v", id, err)
		}
	}
	// The lowest and one more are a quorum of three.
	ctx := testCtx(t)
	startAll(t, ctx, []*testNode{lowest, other})
	if lowest.n.Identity().NodeID != 1 || other.n.Identity().NodeID != 2 {
		t.Fatalf("ids %d and %d", lowest.n.Identity().NodeID, other.n.Identity().NodeID)
	}
	waitMeta(t, ctx, lowest.n, []uint64{1, 2}, nil)
}
