package shardsm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// shardNode is a test node: a Raft host and a shard store, which starts the
// child of every split its replicas apply, as the node layer will.
type shardNode struct {
	t     testing.TB
	dir   string
	addr  string
	fs    vfs.FS
	tune  func(*raft.HostConfig)
	host  raft.Host
	store *Store

	mu   sync.Mutex
	errs []error
}

func startShardNode(t testing.TB, dir, addr string, fs vfs.FS, tune func(*raft.HostConfig)) *shardNode {
	t.Helper()
	clustertest.QuietEngine()
	if fs == nil {
		fs = vfs.Default
	}
	store, err := OpenStore(filepath.Join(dir, "store"), &pebble.Options{FS: fs, Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	hc := clustertest.HostConfig(filepath.Join(dir, "raft"), addr)
	if tune != nil {
		tune(&hc)
	}
	h, err := raft.Start(hc)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	n := &shardNode{t: t, dir: dir, addr: addr, fs: fs, tune: tune, host: h, store: store}
	store.SetSplitHandler(n.onSplit)
	t.Cleanup(n.stop)
	return n
}

// onSplit starts the child replica from another goroutine (the handler
// runs on the parent's apply path).
func (n *shardNode) onSplit(e SplitEvent) {
	h := n.host
	go func() {
		if err := n.startReplica(h, e.Child, e.Replica, e.Members); err != nil {
			n.mu.Lock()
			n.errs = append(n.errs, fmt.Errorf("starting child %d: %w", e.Child, err))
			n.mu.Unlock()
		}
	}()
}

func (n *shardNode) startReplica(h raft.Host, g raft.GroupID, r raft.ReplicaID, members map[raft.ReplicaID]string) error {
	spec := raft.ReplicaSpec{Group: g, Replica: r}
	if !h.HasReplicaData(g, r) {
		spec.InitialMembers = members
	}
	err := h.StartReplica(spec, n.store.NewStateMachine)
	if errors.Is(err, raft.ErrGroupExists) || errors.Is(err, raft.ErrClosed) {
		return nil
	}
	return err
}

// restartReplicas restarts replica r of the groups whose state is in the
// store or that are listed in known (the store may have lost its state
// in a crash; the log store has the replica), and starts split children
// seeded but never started.
func (n *shardNode) restartReplicas(r raft.ReplicaID, known ...raft.GroupID) {
	n.t.Helper()
	groups, err := n.store.Groups()
	if err != nil {
		n.t.Fatal(err)
	}
	for _, g := range append(groups, known...) {
		members, _, err := n.store.FoundingMembers(g)
		if err != nil {
			n.t.Fatal(err)
		}
		if !n.host.HasReplicaData(g, r) && members == nil {
			continue
		}
		if err := n.startReplica(n.host, g, r, members); err != nil {
			n.t.Fatal(err)
		}
	}
}

func (n *shardNode) stop() {
	if n.host == nil {
		return
	}
	if err := n.host.Close(); err != nil {
		n.t.Error(err)
	}
	if err := n.store.Close(); err != nil {
		n.t.Error(err)
	}
	n.host, n.store = nil, nil
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, err := range n.errs {
		n.t.Error(err)
	}
	n.errs = nil
}

// startCluster starts n nodes and a shard group g of span on the first
// `members` of them (replica i+1 on node i), initialized with span.
func startCluster(t *testing.T, n, members int, g raft.GroupID, span storage.Span) []*shardNode {
	t.Helper()
	dir := t.TempDir()
	nodes := make([]*shardNode, n)
	for i := range nodes {
		nodes[i] = startShardNode(t, filepath.Join(dir, fmt.Sprint(i+1)), clustertest.FreeAddr(t), nil, nil)
	}
	bootstrap(t, nodes[:members], g, span)
	return nodes
}

func bootstrap(t *testing.T, nodes []*shardNode, g raft.GroupID, span storage.Span) {
	t.Helper()
	initial := map[raft.ReplicaID]string{}
	for i, n := range nodes {
		initial[raft.ReplicaID(i+1)] = n.addr
	}
	for i, n := range nodes {
		spec := raft.ReplicaSpec{Group: g, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
		if err := n.host.StartReplica(spec, n.store.NewStateMachine); err != nil {
			t.Fatal(err)
		}
	}
	if err := propose(testCtx(t), nodes[0].host, g, mustEncode(t, Init{Descriptor: Descriptor{Span: span, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
}

// testCtx bounds a test's Raft calls. The tests take seconds; the bound is
// generous because `make test` runs every package at once under the race
// detector on two cores, where an election after a stop can take long.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// propose replicates cmd through h and returns the command's error. A
// timeout is returned as is: the command may or may not have applied.
func propose(ctx context.Context, h raft.Host, g raft.GroupID, cmd []byte) error {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := h.Propose(actx, g, cmd)
	if err != nil {
		return err
	}
	return DecodeResult(res)
}

func mustPropose(t *testing.T, h raft.Host, g raft.GroupID, ops ...Op) {
	t.Helper()
	if err := propose(testCtx(t), h, g, mustEncode(t, Batch{Ops: ops})); err != nil {
		t.Fatalf("propose to group %d through %s: %v", g, h.RaftAddress(), err)
	}
}

// readRows reads span at `at` linearizably (ReadIndex) through h.
func readRows(ctx context.Context, h raft.Host, g raft.GroupID, span storage.Span, at hlc.Timestamp) ([]KV, error) {
	v, err := h.Read(ctx, g, Scan{Span: span, Timestamp: at})
	if err != nil {
		return nil, err
	}
	return v.([]KV), nil
}

func showRows(kvs []KV) string {
	out := ""
	for _, kv := range kvs {
		out += fmt.Sprintf(" %s=%s", kv.Key[len(rk("")):], kv.Value)
	}
	return out
}

// waitConverged waits until every node's replica of g has applied the same
// index and holds the same keys and values, with its stats counter equal to
// a recount.
func waitConverged(t *testing.T, nodes []*shardNode, g raft.GroupID) CheckResult {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for {
		var first CheckResult
		same := true
		last = ""
		for i, n := range nodes {
			v, err := n.host.StaleRead(g, Check{})
			if err != nil {
				same, last = false, fmt.Sprintf("node %d: %v", i+1, err)
				break
			}
			c := v.(CheckResult)
			if c.Stored != c.Computed {
				t.Fatalf("node %d, group %d: stats counter %+v, recount %+v", i+1, g, c.Stored, c.Computed)
			}
			if i == 0 {
				first = c
			} else if c.Applied != first.Applied || c.Fingerprint != first.Fingerprint {
				same = false
				last += fmt.Sprintf(" node %d at %d (%d keys) vs node 1 at %d (%d keys);", i+1, c.Applied, c.Keys, first.Applied, first.Keys)
			}
		}
		if same {
			return first
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas of group %d did not converge: %s", g, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
