package shardrepl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// counterIn is partition's statistics counter key addressed by row key
// k (0x03 0x11 k): commits merge into such keys, so a Write applied twice
// would count twice.
func counterIn(k []byte) []byte {
	return mvcc.AppendBareKey(nil, append([]byte{mvcc.LocalPrefix, storage.LocalPartitionStats}, k...))
}

// commitCounted commits row k and +1 into counter through rep: one
// Write of one group.
func commitCounted(t *testing.T, n *replicaNode, rep *Replicator, k string, counter []byte) error {
	t.Helper()
	ts, err := n.engine.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	return rep.Replicate(ts, []storage.Mutation{
		{Kind: storage.MutationSet, Key: enginekey.AppendVersionKey(nil, key9(k), ts), Value: []byte{0x01, 'v'}},
		{Kind: storage.MutationMerge, Key: counter, Value: storage.AppendCounters(nil, 1)},
	})
}

// counterOn reads counter on n's engine once its replica of g applied
// everything committed (0 when absent).
func counterOn(t *testing.T, ctx context.Context, n *replicaNode, g raft.GroupID, counter []byte) int64 {
	t.Helper()
	if _, err := n.host.Read(ctx, g, shardsm.State{}); err != nil {
		t.Fatalf("%s: read of group %d: %v", n.addr, g, err)
	}
	db, _, _ := n.engine.PebbleForReplication()
	v, closer, err := db.Get(counter)
	if err != nil {
		return 0
	}
	defer closer.Close()
	c, err := storage.DecodeCounters(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return c[0]
}

// lossyHost loses the answer of the first proposal to each group in lose:
// it proposes it (apply true: the command reaches the log and applies) or
// not (it never reaches it), and reports a timeout either way, as a
// proposal forwarded to a leader that lost its leadership is reported.
type lossyHost struct {
	raft.Host
	apply bool

	mu   sync.Mutex
	lose map[raft.GroupID]bool
	lost atomic.Int64
}

func (h *lossyHost) Propose(ctx context.Context, g raft.GroupID, cmd []byte) (raft.Result, error) {
	h.mu.Lock()
	lose := h.lose[g]
	delete(h.lose, g)
	h.mu.Unlock()
	if !lose {
		return h.Host.Propose(ctx, g, cmd)
	}
	h.lost.Add(1)
	if h.apply {
		if _, err := h.Host.Propose(ctx, g, cmd); err != nil {
			return raft.Result{}, err
		}
	}
	return raft.Result{}, fmt.Errorf("%w: group %d: the answer was lost (test)", raft.ErrTimeout, g)
}

// A commit whose proposal went unanswered is proposed again within the
// proposal timeout and applies exactly once: whether the lost copy
// applied (the repeat is answered from the state machine's record of it)
// or never reached the log (the repeat applies). Before, the commit
// failed with 08007 after the timeout although it had applied, or had
// not.
func TestUnansweredCommitAppliesOnce(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(fmt.Sprintf("lost-copy-applied=%v", applied), func(t *testing.T) {
			c := startCrossCluster(t)
			c.rep.SetProposeTimeout(6 * time.Second)
			var abandoned atomic.Value
			c.rep.onAbandon = func(reason error) { abandoned.Store(reason) }
			h := &lossyHost{Host: c.rep.host, apply: applied, lose: map[raft.GroupID]bool{FirstGroup: true, midGroup: true}}
			c.rep.host = h
			for i, g := range []raft.GroupID{FirstGroup, midGroup} {
				k := []string{"b", "m"}[i]
				counter := counterIn(key9(k))
				start := time.Now()
				if err := commitCounted(t, c.nodes[0], c.rep, k+"000001", counter); err != nil {
					t.Fatalf("group %d: a commit whose first answer was lost: %v", g, err)
				}
				t.Logf("group %d: committed in %s", g, time.Since(start).Round(time.Millisecond))
				for _, n := range c.nodes {
					if got := counterOn(t, c.ctx, n, g, counter); got != 1 {
						t.Fatalf("group %d on %s: counter %d after one commit, want 1", g, n.addr, got)
					}
				}
			}
			if got := h.lost.Load(); got != 2 {
				t.Fatalf("%d answers lost, want 2", got)
			}
			var dups int64
			for _, n := range c.nodes {
				dups += n.store.Stats().DuplicateWrites
			}
			if want := map[bool]int64{true: 6, false: 0}[applied]; dups != want {
				t.Fatalf("%d repeats answered from the record over the three replicas, want %d", dups, want)
			}
			if r := abandoned.Load(); r != nil {
				t.Fatalf("the node gave up serving: %v", r)
			}
		})
	}
}

// A commit forwarded to a FirstGroup leader that is handing its
// leadership over is dropped by that leader without an answer (the
// serving node does not take FirstGroup's leadership: serving follows
// it). The commit is proposed again once the attempt runs out and
// applies exactly once; before, it failed with 08007 after the proposal
// timeout although nothing was written, and the node stopped serving.
func TestForwardedCommitLostInTransferIsRepeated(t *testing.T) {
	c := startCrossCluster(t)
	c.rep.SetProposeTimeout(6 * time.Second)
	var abandoned atomic.Value
	c.rep.onAbandon = func(reason error) { abandoned.Store(reason) }
	// Replica 2 leads FirstGroup; replica 3 is stopped, so a transfer to
	// it never completes, and the leader drops the proposals it is sent
	// until the transfer is given up (an election timeout).
	if err := c.nodes[1].host.TransferLeadership(c.ctx, FirstGroup, 2); err != nil {
		t.Fatal(err)
	}
	waitLeaderIs(t, c.ctx, c.nodes[0].host, FirstGroup, 2)
	if err := c.nodes[2].host.StopReplica(FirstGroup); err != nil {
		t.Fatal(err)
	}
	counter := counterIn(key9("b"))
	calls := &countingHost{Host: c.rep.host}
	c.rep.host = calls
	for round := 0; round < 3; round++ {
		tctx, cancel := context.WithTimeout(c.ctx, 50*time.Millisecond)
		_ = c.nodes[1].host.TransferLeadership(tctx, FirstGroup, 3)
		cancel()
		start := time.Now()
		if err := commitCounted(t, c.nodes[0], c.rep, fmt.Sprintf("b%06d", round), counter); err != nil {
			t.Fatalf("round %d: a commit forwarded during a leadership transfer: %v", round, err)
		}
		t.Logf("round %d: committed in %s", round, time.Since(start).Round(time.Millisecond))
		for _, n := range c.nodes[:2] {
			if got := counterOn(t, c.ctx, n, FirstGroup, counter); got != int64(round+1) {
				t.Fatalf("round %d on %s: counter %d, want %d", round, n.addr, got, round+1)
			}
		}
	}
	// Normally every round's first copy is dropped; a machine slow enough
	// that the transfer was given up before the commit reached the
	// leader drops none, which this test cannot tell from a pass.
	t.Logf("%d proposals for 3 commits", calls.n.Load())
	if r := abandoned.Load(); r != nil {
		t.Fatalf("the node gave up serving: %v", r)
	}
}

// countingHost counts proposals.
type countingHost struct {
	raft.Host
	n atomic.Int64
}

func (h *countingHost) Propose(ctx context.Context, g raft.GroupID, cmd []byte) (raft.Result, error) {
	h.n.Add(1)
	return h.Host.Propose(ctx, g, cmd)
}

// stopLeaderHost stops the FirstGroup replica of the node in stop just
// before the first proposal to FirstGroup: the proposal is forwarded to a
// leader that is gone, and the group elects another.
type stopLeaderHost struct {
	raft.Host
	stop raft.Host
	once sync.Once
}

func (h *stopLeaderHost) Propose(ctx context.Context, g raft.GroupID, cmd []byte) (raft.Result, error) {
	if g == FirstGroup {
		h.once.Do(func() { _ = h.stop.StopReplica(FirstGroup) })
	}
	return h.Host.Propose(ctx, g, cmd)
}

// A commit forwarded to a FirstGroup leader that stops before it arrives
// is lost with it; once the other two replicas elect a leader (the term
// changes, which ends the attempt early: leaderWatch) it is proposed
// again and applies exactly once. Before, it failed with 08007 after the
// proposal timeout.
func TestCommitLostInElectionAppliesOnce(t *testing.T) {
	c := startCrossCluster(t)
	c.rep.SetProposeTimeout(6 * time.Second)
	var abandoned atomic.Value
	c.rep.onAbandon = func(reason error) { abandoned.Store(reason) }
	if err := c.nodes[1].host.TransferLeadership(c.ctx, FirstGroup, 2); err != nil {
		t.Fatal(err)
	}
	waitLeaderIs(t, c.ctx, c.nodes[0].host, FirstGroup, 2)
	c.rep.host = &stopLeaderHost{Host: c.rep.host, stop: c.nodes[1].host}
	counter := counterIn(key9("b"))
	start := time.Now()
	if err := commitCounted(t, c.nodes[0], c.rep, "b000001", counter); err != nil {
		t.Fatalf("a commit forwarded to a leader that stopped: %v", err)
	}
	t.Logf("committed in %s", time.Since(start).Round(time.Millisecond))
	for _, n := range []*replicaNode{c.nodes[0], c.nodes[2]} {
		if got := counterOn(t, c.ctx, n, FirstGroup, counter); got != 1 {
			t.Fatalf("%s: counter %d after one commit, want 1", n.addr, got)
		}
	}
	if r := abandoned.Load(); r != nil {
		t.Fatalf("the node gave up serving: %v", r)
	}
}
