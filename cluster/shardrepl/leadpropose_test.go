package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// commitRow commits key9(k) = v through n's engine (one group's Write).
func commitRow(n *replicaNode, k, v string) error {
	b := n.engine.NewBatch()
	defer b.Close()
	if err := b.Set(key9(k), []byte(v)); err != nil {
		return err
	}
	return b.Commit()
}

// waitLeaderIs waits until h sees replica r lead g.
func waitLeaderIs(t *testing.T, ctx context.Context, h raft.Host, g raft.GroupID, r raft.ReplicaID) {
	t.Helper()
	for {
		if l, _, ok, err := h.Leader(g); err == nil && ok && l == r {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never saw replica %d lead group %d", h.RaftAddress(), r, g)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A commit to a child that another node's replica leads is not forwarded
// to that leader while it hands its leadership over: the leader would drop
// it without an answer, and the commit would fail after the proposal
// timeout with 08007 although nothing was written, and the node would stop
// serving (TestClusterCopy with --shard-group-per-shard failed so: the
// serving node's own leadGroups moved the new child's leadership while its
// COPY wrote there). The serving node takes the leadership first.
func TestCommitTakesTheChildsLeadership(t *testing.T) {
	c := startCrossCluster(t)
	c.rep.SetProposeTimeout(4 * time.Second)
	var abandoned atomic.Value
	c.rep.onAbandon = func(reason error) { abandoned.Store(reason) }
	// Replica 2 leads the child; replica 3 is stopped, so a transfer to it
	// never completes, and the leader drops what it is sent until the
	// transfer is given up (an election timeout).
	if err := c.nodes[1].host.TransferLeadership(c.ctx, midGroup, 2); err != nil {
		t.Fatal(err)
	}
	waitLeaderIs(t, c.ctx, c.nodes[0].host, midGroup, 2)
	if err := c.nodes[2].host.StopReplica(midGroup); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		// Ask the leader (through node 2, wherever it is now) to hand over
		// to the stopped replica, and stop waiting for it at once.
		tctx, cancel := context.WithTimeout(c.ctx, 50*time.Millisecond)
		_ = c.nodes[1].host.TransferLeadership(tctx, midGroup, 3)
		cancel()
		start := time.Now()
		if err := commitRow(c.nodes[0], fmt.Sprintf("m%06d", round), "1"); err != nil {
			t.Fatalf("round %d: a commit into the child during a leadership transfer: %v", round, err)
		}
		t.Logf("round %d: committed in %s", round, time.Since(start).Round(time.Millisecond))
		if l, _, ok, _ := c.nodes[0].host.Leader(midGroup); !ok || l != 1 {
			t.Fatalf("round %d: the serving node's replica does not lead the child (leader %d, known %v)", round, l, ok)
		}
	}
	if r := abandoned.Load(); r != nil {
		t.Fatalf("the node gave up serving: %v", r)
	}
}

// A commit to a group that has no leader is never proposed: it fails
// definitely (40001, retryable), not with an unknown outcome (08007), and
// the node goes on serving. Before, every try dropped until the proposal
// timeout was reported as a timeout, "outcome unknown".
func TestCommitWithoutLeaderFailsDefinitely(t *testing.T) {
	c := startCrossCluster(t)
	c.rep.SetProposeTimeout(2 * time.Second)
	var abandoned atomic.Value
	c.rep.onAbandon = func(reason error) { abandoned.Store(reason) }
	// FirstGroup (proposals forwarded to whoever leads it: the serving
	// node does not take its leadership) and a child (which it would)
	// lose two of three replicas; node 1's replica then steps down (check
	// quorum) and knows no leader.
	for _, g := range []raft.GroupID{FirstGroup, midGroup} {
		for _, n := range c.nodes[1:] {
			if err := n.host.StopReplica(g); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, g := range []raft.GroupID{FirstGroup, midGroup} {
		for {
			if _, _, ok, err := c.nodes[0].host.Leader(g); err == nil && !ok {
				break
			}
			if c.ctx.Err() != nil {
				t.Fatalf("node 1 still sees a leader of group %d", g)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, k := range []string{"b000001", "m000001"} {
		err := commitRow(c.nodes[0], k, "1")
		var se *sqlerr.Error
		if errors.Is(err, storage.ErrOutcomeUnknown) || !errors.As(err, &se) || se.Code != sqlerr.SerializationFailure {
			t.Fatalf("a commit of %s to a group without a leader: %v, want 40001", k, err)
		}
		t.Logf("%s: %v", k, err)
	}
	if r := abandoned.Load(); r != nil {
		t.Fatalf("the node gave up serving: %v", r)
	}
}

// leaderHost is a raft.Host whose groups all have leader as their leader,
// and which runs replica self of each (awaitLead's view of a host).
type leaderHost struct {
	raft.Host
	leader, self raft.ReplicaID
}

func (h leaderHost) Leader(raft.GroupID) (raft.ReplicaID, uint64, bool, error) {
	return h.leader, 1, true, nil
}

func (h leaderHost) LocalReplicas() []raft.ReplicaInfo {
	return []raft.ReplicaInfo{{Group: midGroup, Replica: h.self, Leader: h.leader}}
}

// BenchmarkAwaitLead is what awaitLead adds to a commit to a child this
// node leads (the common case): a leader lookup and a cache load.
//
//	go test ./cluster/shardrepl -run '^$' -bench AwaitLead -benchmem
func BenchmarkAwaitLead(b *testing.B) {
	r := &Replicator{host: leaderHost{leader: 1, self: 1}, timeout: DefaultProposeTimeout}
	if err := r.awaitLead(midGroup, r.leadWait()); err != nil { // fills the cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := r.awaitLead(midGroup, r.leadWait()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
