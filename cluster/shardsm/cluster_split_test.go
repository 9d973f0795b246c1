package shardsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

const childGroup raft.GroupID = 12

// router sends a put to the group its map names for the key and, when the
// group answers stale, to the child the split made: a gateway's map
// refresh in miniature.
type router struct {
	mu       sync.Mutex
	splitKey []byte // nil before the split is known
}

func (r *router) group(k []byte) raft.GroupID {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.splitKey != nil && bytes.Compare(k, r.splitKey) >= 0 {
		return childGroup
	}
	return shardGroup
}

func (r *router) learn(d Descriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.splitKey = d.Span.End
}

func (r *router) put(ctx context.Context, h raft.Host, k []byte, v string, at hlc.Timestamp) error {
	// A put retries while the split settles: a stale answer teaches the
	// router the split, and a host may start its child replica a while
	// after it applied the split (seconds on a loaded machine).
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		g := r.group(k)
		cmd, err := EncodeBatch(Batch{Ops: []Op{{Kind: OpPut, Key: k, Value: []byte(v), Timestamp: at}}})
		if err != nil {
			return err
		}
		err = propose(ctx, h, g, cmd)
		var se *StaleError
		if errors.As(err, &se) && g == shardGroup && se.Initialized {
			r.learn(se.Descriptor)
			continue
		}
		if errors.Is(err, raft.ErrTimeout) && ctx.Err() == nil {
			// Unknown outcome: the same command again is safe (a repeat
			// that finds its own version is answered applied).
			continue
		}
		if errors.Is(err, raft.ErrGroupNotFound) && g == childGroup {
			// This host has not started its child replica yet.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		return err
	}
	return errors.New("no group took the put")
}

type ack struct {
	key []byte
	val string
}

// The shard splits while four writers put rows through all three hosts:
// every put acknowledged before, during or after the split is read back
// from every replica of the group that owns it, both groups' replicas end
// identical, and their stats add up to a recount.
func TestClusterSplitUnderWrites(t *testing.T) {
	nodes := startCluster(t, 3, 3, shardGroup, tableSpan)
	ctx := testCtx(t)
	var clock atomic.Int64
	clock.Store(10)
	r := &router{}
	var mu sync.Mutex
	var acked []ack
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := rk(fmt.Sprintf("%c-w%d-%04d", 'a'+rng.IntN(26), w, i))
				v := fmt.Sprint(i)
				if err := r.put(ctx, nodes[rng.IntN(3)].host, k, v, hlc.Timestamp{WallTime: clock.Add(1)}); err != nil {
					if ctx.Err() == nil && !errors.Is(err, raft.ErrTimeout) {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					continue // unknown outcome: not acknowledged
				}
				mu.Lock()
				acked = append(acked, ack{k, v})
				mu.Unlock()
			}
		}()
	}
	waitAcks := func(n int) {
		for {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got >= n || t.Failed() {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitAcks(60)
	m, err := nodes[0].host.Membership(ctx, shardGroup)
	if err != nil {
		t.Fatal(err)
	}
	if err := propose(ctx, nodes[1].host, shardGroup, mustEncode(t, Split{Key: rk("m"), Child: childGroup, Members: m.Voters})); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	waitAcks(n + 60)
	close(stop)
	wg.Wait()

	read := time.Now()
	final := hlc.Timestamp{WallTime: clock.Load()}
	spans := map[raft.GroupID]storage.Span{
		shardGroup: {Start: tableSpan.Start, End: rk("m")},
		childGroup: {Start: rk("m"), End: tableSpan.End},
	}
	for i, nd := range nodes {
		got := map[string]string{}
		for g, sp := range spans {
			kvs, err := readRows(ctx, nd.host, g, sp, final)
			if err != nil {
				t.Fatalf("node %d, group %d: %v", i+1, g, err)
			}
			for _, kv := range kvs {
				got[string(kv.Key)] = string(kv.Value)
			}
		}
		for _, a := range acked {
			if got[string(a.key)] != a.val {
				t.Fatalf("node %d lost acknowledged %q=%s (has %q)", i+1, a.key, a.val, got[string(a.key)])
			}
		}
		if len(got) != len(acked) {
			// An unacknowledged put may have applied; there must be no
			// other difference.
			t.Logf("node %d holds %d rows for %d acknowledged puts", i+1, len(got), len(acked))
		}
	}
	t.Logf("%d acknowledged puts, read back in %v", len(acked), time.Since(read))
	p := waitConverged(t, nodes, shardGroup)
	c := waitConverged(t, nodes, childGroup)
	if p.Stored.LiveCount+c.Stored.LiveCount < int64(len(acked)) {
		t.Fatalf("parent %d + child %d live rows < %d acknowledged", p.Stored.LiveCount, c.Stored.LiveCount, len(acked))
	}
	if c.Stored.LiveCount == 0 || p.Stored.LiveCount == 0 {
		t.Fatalf("one side of the split is empty: parent %+v child %+v", p.Stored, c.Stored)
	}
}

// A replica that missed the split — down while it was applied and then
// caught up from a snapshot of the parent taken after it, so it never
// applied the split itself — gets the child from a snapshot too: the
// child's log was compacted (raft.Host.CompactLog) before the late replica
// started it, so the child's leader cannot send it the log from the start,
// which assumes rows it does not have.
func TestClusterSplitMissedGetsChildBySnapshot(t *testing.T) {
	nodes := startCluster(t, 3, 3, shardGroup, tableSpan)
	ctx := testCtx(t)
	for i := 0; i < 20; i++ {
		mustPropose(t, nodes[i%3].host, shardGroup, putOp(fmt.Sprintf("%c%02d", 'a'+i%26, i), fmt.Sprint(i), int64(10+i)))
	}
	waitConverged(t, nodes, shardGroup)
	late := nodes[2]
	dir, addr := late.dir, late.addr
	late.stop()
	// The stopped replica may have led the group: wait for a leader among
	// the other two before proposing the split (a proposal times out
	// meanwhile, and a timed-out split may or may not have applied).
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := readRows(rctx, nodes[0].host, shardGroup, tableSpan, hlc.Timestamp{WallTime: 1})
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no leader after the stop: %v", err)
		}
	}

	m, err := nodes[0].host.Membership(ctx, shardGroup)
	if err != nil {
		t.Fatal(err)
	}
	if err := propose(ctx, nodes[0].host, shardGroup, mustEncode(t, Split{Key: rk("m"), Child: childGroup, Members: m.Voters})); err != nil {
		t.Fatal(err)
	}
	var clock int64 = 100
	for i := 0; i < 30; i++ {
		clock++
		g, k := shardGroup, fmt.Sprintf("b-late-%02d", i)
		if i%2 == 1 {
			g, k = childGroup, fmt.Sprintf("x-late-%02d", i)
		}
		h := nodes[i%2].host
		for {
			err := propose(ctx, h, g, mustEncode(t, Batch{Ops: []Op{putOp(k, "v", clock)}}))
			if errors.Is(err, raft.ErrGroupNotFound) {
				time.Sleep(10 * time.Millisecond) // the child is starting here
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	// Both groups drop their logs: the late replica must take snapshots.
	for _, g := range []raft.GroupID{shardGroup, childGroup} {
		for _, nd := range nodes[:2] {
			if _, err := nd.host.CompactLog(ctx, g); err != nil {
				t.Fatalf("compacting group %d: %v", g, err)
			}
		}
	}

	nodes[2] = startShardNode(t, dir, addr, nil, nil)
	late = nodes[2]
	late.restartReplicas(3, shardGroup)
	waitConverged(t, nodes, shardGroup)
	if _, ok, _ := late.store.Descriptor(childGroup); ok {
		t.Fatal("the late replica applied the split itself: the test does not exercise the child's snapshot")
	}
	// RecoverFromSnapshot counts the snapshot after it installed it, so
	// the replica may look converged a moment before the count moves.
	waitRecovered(t, late, 1)
	// The node learns of the child (from the shard map, later) and starts
	// its replica as a founding member.
	if err := late.startReplica(late.host, childGroup, 3, m.Voters); err != nil {
		t.Fatal(err)
	}
	c := waitConverged(t, nodes, childGroup)
	waitRecovered(t, late, 2)
	kvs, err := readRows(ctx, late.host, childGroup, storage.Span{Start: rk("m"), End: tableSpan.End}, hlc.Timestamp{WallTime: clock})
	if err != nil || int64(len(kvs)) != c.Stored.LiveCount || len(kvs) < 15 {
		t.Fatalf("child on the late replica: %d rows (counter %d), %v", len(kvs), c.Stored.LiveCount, err)
	}
	mustPropose(t, late.host, childGroup, putOp("z-after", "v", clock+1))
	waitConverged(t, nodes, childGroup)
}

// waitRecovered waits up to 5 s for n to have recovered want snapshots in
// all, and fails if it recovered another number.
func waitRecovered(t *testing.T, n *shardNode, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := n.store.Stats().SnapshotsRecovered
		if got == want {
			return
		}
		if got > want || time.Now().After(deadline) {
			t.Fatalf("the late replica recovered %d snapshots, want %d (the parent's, then the child's)", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A child that applied no command since the split (its founder's rows came
// from the parent) and a replica added to it afterwards: the founder's
// state machine opened at applied index 0 and applied nothing, so
// dragonboat would stamp the snapshot it streams with on-disk index 0, and
// the new replica, at 0 as well, would take it as state it already holds,
// skip RecoverFromSnapshot and hold no shard (cluster/shardrepl's
// TestOneNodeCluster with groups on). A Mark applied first moves the
// founder's index past 0: the new replica recovers the rows. Without the
// Mark this test fails (the new replica never holds the shard).
func TestClusterSplitChildMarkedReachesNewReplica(t *testing.T) {
	nodes := startCluster(t, 2, 1, shardGroup, tableSpan)
	ctx := testCtx(t)
	for i := 0; i < 10; i++ {
		mustPropose(t, nodes[0].host, shardGroup, putOp(fmt.Sprintf("%c%02d", 'a'+i*2, i), fmt.Sprint(i), int64(10+i)))
	}
	m, err := nodes[0].host.Membership(ctx, shardGroup)
	if err != nil {
		t.Fatal(err)
	}
	if err := propose(ctx, nodes[0].host, shardGroup, mustEncode(t, Split{Key: rk("m"), Child: childGroup, Members: m.Voters})); err != nil {
		t.Fatal(err)
	}
	h := nodes[0].host
	for {
		v, err := h.Read(ctx, childGroup, State{})
		if err == nil {
			if st := v.(StateResult); !st.Initialized || st.Applied != 0 {
				t.Fatalf("the child after the split: initialized %v, applied %d; want initialized at 0", st.Initialized, st.Applied)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the child never ran: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := propose(ctx, h, childGroup, EncodeMark()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CompactLog(ctx, childGroup); err != nil {
		t.Fatal(err)
	}
	if err := h.AddNonVoter(ctx, childGroup, 2, nodes[1].addr); err != nil {
		t.Fatal(err)
	}
	spec := raft.ReplicaSpec{Group: childGroup, Replica: 2, NonVoter: true, Join: true}
	if err := nodes[1].host.StartReplica(spec, nodes[1].store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // one small snapshot
	for {
		v, err := nodes[1].host.StaleRead(childGroup, State{})
		if err == nil && v.(StateResult).Initialized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new replica never held the child's shard: %+v, %v (snapshots recovered: %d)", v, err, nodes[1].store.Stats().SnapshotsRecovered)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := waitConverged(t, nodes, childGroup)
	if c.Stored.LiveCount != 4 { // m, o, q, s
		t.Fatalf("the child holds %d rows, want 4", c.Stored.LiveCount)
	}
}
