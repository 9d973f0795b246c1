package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// The cross-group tests' table 9 is cut into three groups: FirstGroup
// below "h", group 3 [h, q), group 4 from "q" on. A transfer writes one
// row in each (b…, m…, x…): -2, +1, +1.
const (
	midGroup  raft.GroupID = 3
	highGroup raft.GroupID = 4
)

var crossGroups = []raft.GroupID{FirstGroup, midGroup, highGroup}

func key9(s string) []byte { return append(storage.TablePrefix(9), s...) }

// crossCluster is three nodes with the three groups, node 1 serving under
// epoch 1 through rep.
type crossCluster struct {
	t     testing.TB
	ctx   context.Context
	nodes []*replicaNode
	rep   *Replicator
}

func startCrossCluster(t testing.TB) *crossCluster {
	t.Helper()
	ctx := testCtx(t)
	nodes := startGroupCluster(ctx, t, 1)
	members := map[raft.ReplicaID]string{}
	for i, n := range nodes {
		members[raft.ReplicaID(i+1)] = n.addr
		watchSplits(t, n)
	}
	c := &crossCluster{t: t, ctx: ctx, nodes: nodes}
	if ep := c.serve(nodes[0], 1); ep != 1 {
		t.Fatalf("first epoch %d", ep)
	}
	c.split(FirstGroup, key9("h"), midGroup, members)
	c.split(midGroup, key9("q"), highGroup, members)
	c.rep = c.replicator(nodes[0], 1)
	return c
}

// watchSplits makes n start the child of every split its replicas apply.
func watchSplits(t testing.TB, n *replicaNode) {
	h, st := n.host, n.store
	st.SetSplitHandler(func(e shardsm.SplitEvent) {
		go func() {
			if err := StartReplica(h, st, e.Child, e.Replica, e.Members); err != nil && !errors.Is(err, raft.ErrClosed) {
				t.Errorf("starting group %d: %v", e.Child, err)
			}
		}()
	})
}

// serve proposes Serve{node} through n until it applies; the new epoch.
func (c *crossCluster) serve(n *replicaNode, node uint64) uint64 {
	c.t.Helper()
	cmd, err := shardsm.EncodeServe(shardsm.Serve{Node: node})
	if err != nil {
		c.t.Fatal(err)
	}
	for {
		pctx, cancel := context.WithTimeout(c.ctx, time.Second)
		res, err := n.host.Propose(pctx, FirstGroup, cmd)
		cancel()
		if err == nil {
			ep, err := shardsm.ServeEpoch(res)
			if err != nil {
				c.t.Fatal(err)
			}
			return ep
		}
		if c.ctx.Err() != nil {
			c.t.Fatalf("serve: %v", err)
		}
	}
}

func (c *crossCluster) split(parent raft.GroupID, at []byte, child raft.GroupID, members map[raft.ReplicaID]string) {
	c.t.Helper()
	cmd, err := shardsm.EncodeSplit(shardsm.Split{Key: at, Child: child, Members: members})
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := c.nodes[0].host.Propose(c.ctx, parent, cmd)
	if err == nil {
		err = shardsm.DecodeResult(res)
	}
	if err != nil {
		c.t.Fatalf("splitting group %d: %v", parent, err)
	}
	for _, n := range c.nodes {
		for {
			v, err := n.host.StaleRead(child, shardsm.State{})
			if err == nil && v.(shardsm.StateResult).Initialized {
				break
			}
			if c.ctx.Err() != nil {
				c.t.Fatalf("group %d did not start: %v", child, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// replicator sets a Replicator of epoch over the three groups on n.
func (c *crossCluster) replicator(n *replicaNode, epoch uint64) *Replicator {
	c.t.Helper()
	rep := New(n.host, n.engine)
	rep.SetEpoch(epoch)
	for _, g := range crossGroups {
		if err := rep.AddGroup(c.ctx, g); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := n.engine.SetReplicator(rep); err != nil {
		c.t.Fatal(err)
	}
	return rep
}

// transfer commits transfer i through n's engine: -2 below h, +1 in
// [h, q), +1 from q, in an order that makes group order[0] coordinate.
func transfer(n *replicaNode, i int, rng *rand.Rand) error {
	rows := [][2]string{{fmt.Sprintf("b%06d", i), "-2"}, {fmt.Sprintf("m%06d", i), "1"}, {fmt.Sprintf("x%06d", i), "1"}}
	if rng != nil {
		rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
	}
	b := n.engine.NewBatch()
	defer b.Close()
	for _, r := range rows {
		if err := b.Set(key9(r[0]), []byte(r[1])); err != nil {
			return err
		}
	}
	return b.Commit()
}

// tally reads every group's rows on n's replicas and returns, by transfer
// number, how many of its three rows are there and their sum; and the
// single-group rows (c…).
func tally(t *testing.T, n *replicaNode) (parts map[int]int, sums map[int]int, singles map[int]bool) {
	t.Helper()
	parts, sums, singles = map[int]int{}, map[int]int{}, map[int]bool{}
	for _, g := range crossGroups {
		v, err := n.host.StaleRead(g, shardsm.State{})
		if err != nil {
			t.Fatal(err)
		}
		span := v.(shardsm.StateResult).Descriptor.Span.Intersect(storage.TableSpan(9))
		if span.Empty() {
			continue
		}
		v, err = n.host.StaleRead(g, shardsm.Scan{Span: span, Timestamp: storage.MaxTimestamp})
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range v.([]shardsm.KV) {
			k := string(kv.Key[len(storage.TablePrefix(9)):])
			i, err := strconv.Atoi(k[1:])
			if err != nil {
				t.Fatalf("row %q", k)
			}
			if k[0] == 'c' {
				singles[i] = true
				continue
			}
			val, err := strconv.Atoi(string(kv.Value))
			if err != nil {
				t.Fatalf("row %q = %q", k, kv.Value)
			}
			parts[i]++
			sums[i] += val
		}
	}
	return parts, sums, singles
}

// checkWhole fails unless every transfer on n's replicas is whole (all
// three rows, summing to 0) or absent, every acknowledged one and every
// acknowledged single-group row is there, and no group holds a staged
// part (nor a decision record, when settled: right after a recovery). It
// returns the transfers present.
func checkWhole(t *testing.T, n *replicaNode, settled bool, acked, ackedSingles []int) map[int]int {
	t.Helper()
	parts, sums, singles := tally(t, n)
	for i, p := range parts {
		if p != 3 || sums[i] != 0 {
			t.Errorf("transfer %d is half visible: %d of 3 rows, sum %d", i, p, sums[i])
		}
	}
	for _, i := range acked {
		if parts[i] != 3 {
			t.Errorf("acknowledged transfer %d: %d of 3 rows", i, parts[i])
		}
	}
	for _, i := range ackedSingles {
		if !singles[i] {
			t.Errorf("acknowledged single-group row %d is missing", i)
		}
	}
	for _, g := range crossGroups {
		for _, q := range []any{shardsm.Staged{}, shardsm.Decisions{}} {
			if _, ok := q.(shardsm.Decisions); ok && !settled {
				continue
			}
			v, err := n.host.StaleRead(g, q)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprint(v); s != "[]" {
				t.Errorf("group %d still holds %T: %s", g, q, s)
			}
		}
	}
	return parts
}

var errDead = errors.New("test: the serving node died here")

// tripwire is a failpoint hook: the at-th call at point kills the node
// (that call and every later one fail).
type tripwire struct {
	point string
	at    int64
	dead  atomic.Bool
	mu    sync.Mutex
	calls map[string]int64
}

func (w *tripwire) hook(point string) error {
	if w.dead.Load() {
		return errDead
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.calls == nil {
		w.calls = map[string]int64{}
	}
	w.calls[point]++
	if point == w.point && w.calls[point] == w.at {
		w.dead.Store(true)
		return errDead
	}
	return nil
}

// takeOver kills node 1 and makes node 2 serve under the next epoch: it
// recovers the commits node 1 left, and returns what it applied and
// discarded.
func (c *crossCluster) takeOver() (applied, discarded int) {
	c.t.Helper()
	c.nodes[0].stop()
	epoch := c.serve(c.nodes[1], 2)
	applied, discarded, err := RecoverCommits(c.ctx, c.nodes[1].host, crossGroups, 2, epoch)
	if err != nil {
		c.t.Fatal(err)
	}
	c.rep = c.replicator(c.nodes[1], epoch)
	return applied, discarded
}

// converged waits until the replicas of every group on nodes agree.
func (c *crossCluster) converged(nodes []*replicaNode) {
	c.t.Helper()
	for _, g := range crossGroups {
		waitConverged(c.t.(*testing.T), nodes, g)
	}
}

// The serving node dies at each step of a commit over three groups, one
// commit at a time; node 2 takes over and recovers: a commit that died
// before its decision is gone, one that died after it is whole, every
// acknowledged one is there, and the live replicas agree. The new node
// then commits across groups itself.
func TestCrossGroupCommitDiesAtEachStep(t *testing.T) {
	for _, tc := range []struct {
		name      string
		point     string
		at        int64 // the call of point that dies: each commit stages 2 parts and applies 2
		committed bool  // the commit that died is whole after recovery
		applied   int   // parts recovery applies
		discarded int   // and discards
	}{
		{"after one stage", "stage", 2*5 + 2, false, 0, 1},
		{"after staging", "decide", 6, false, 0, 2},
		{"after the decision", "apply", 2*5 + 1, true, 2, 0},
		{"after one apply", "apply", 2*5 + 2, true, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCrossCluster(t)
			w := &tripwire{point: tc.point, at: tc.at}
			c.rep.cross.hook = w.hook
			var acked []int
			for i := 0; ; i++ {
				err := transfer(c.nodes[0], i, nil)
				if err == nil {
					acked = append(acked, i)
					continue
				}
				if !errors.Is(err, errDead) {
					t.Fatalf("transfer %d: %v", i, err)
				}
				if i != 5 {
					t.Fatalf("transfer %d died, want 5", i)
				}
				break
			}
			applied, discarded := c.takeOver()
			if applied != tc.applied || discarded != tc.discarded {
				t.Errorf("recovery applied %d and discarded %d parts, want %d and %d", applied, discarded, tc.applied, tc.discarded)
			}
			live := c.nodes[1:]
			c.converged(live)
			for _, n := range live {
				parts := checkWhole(t, n, true, acked, nil)
				if got := parts[5] == 3; got != tc.committed {
					t.Errorf("the commit that died is there: %v, want %v", got, tc.committed)
				}
			}
			// Node 2 commits across groups; its decision records go with
			// its next decisions.
			for i := 100; i < 103; i++ {
				if err := transfer(c.nodes[1], i, nil); err != nil {
					t.Fatal(err)
				}
				acked = append(acked, i)
			}
			c.converged(live)
			parts, _, _ := tally(t, c.nodes[2])
			for _, i := range acked {
				if parts[i] != 3 {
					t.Fatalf("acknowledged transfer %d: %d rows", i, parts[i])
				}
			}
		})
	}
}

// Four writers commit transfers over three groups (each ordered at random,
// so each group coordinates some) and single-group rows, until the
// serving node dies at a random step of a random commit with others in
// flight. After node 2 recovers, every transfer on every live replica is
// whole or absent, every acknowledged one is there; node 1 restarts and
// all three nodes' replicas agree.
func TestCrossGroupCommitDiesUnderLoad(t *testing.T) {
	seed := time.Now().UnixNano()
	if v := os.Getenv("PIVOTDB_CROSSGROUP_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	t.Logf("seed %d (repeat with PIVOTDB_CROSSGROUP_SEED=%[1]d)", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	c := startCrossCluster(t)
	points := []string{"stage", "decide", "apply"}
	w := &tripwire{point: points[rng.IntN(len(points))], at: 10 + rng.Int64N(30)}
	t.Logf("dies at %s call %d", w.point, w.at)
	c.rep.cross.hook = w.hook
	var mu sync.Mutex
	var acked, ackedSingles []int
	var wg sync.WaitGroup
	for wr := 0; wr < 4; wr++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(wr)))
			for j := 0; ; j++ {
				i := wr*10000 + j
				if j%3 == 2 {
					b := c.nodes[0].engine.NewBatch()
					err := b.Set(key9(fmt.Sprintf("c%06d", i)), []byte("s"))
					if err == nil {
						err = b.Commit()
					}
					b.Close()
					if err != nil {
						return
					}
					mu.Lock()
					ackedSingles = append(ackedSingles, i)
					mu.Unlock()
					if w.dead.Load() {
						return
					}
					continue
				}
				if err := transfer(c.nodes[0], i, rng); err != nil {
					if !errors.Is(err, errDead) {
						t.Errorf("transfer %d: %v", i, err)
					}
					return
				}
				mu.Lock()
				acked = append(acked, i)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if !w.dead.Load() {
		t.Fatal("the writers stopped before the node died")
	}
	applied, discarded := c.takeOver()
	t.Logf("%d transfers acknowledged; recovery applied %d parts and discarded %d", len(acked), applied, discarded)
	c.converged(c.nodes[1:])
	for _, n := range c.nodes[1:] {
		checkWhole(t, n, true, acked, ackedSingles)
	}
	// Node 1 comes back and catches up on all three groups.
	c.nodes[0] = c.nodes[0].restart(1)
	for _, g := range crossGroups[1:] {
		if err := StartReplica(c.nodes[0].host, c.nodes[0].store, g, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := transfer(c.nodes[1], 99999, nil); err != nil {
		t.Fatal(err)
	}
	c.converged(c.nodes)
	checkWhole(t, c.nodes[0], false, append(acked, 99999), ackedSingles)
}

// A stage that fails leaves nothing: a stale one is discarded and the
// commit retried with the refreshed map (it then commits once); a fenced
// one fails the commit with 57P01, and the parts staged before it are
// discarded.
func TestCrossGroupStageFails(t *testing.T) {
	c := startCrossCluster(t)
	n := c.nodes[0]
	// Group 4 splits behind the replicator's back: its stage of a commit
	// is stale, the part staged in group 3 is discarded, and the retry
	// commits.
	members := map[raft.ReplicaID]string{}
	for i, n := range c.nodes {
		members[raft.ReplicaID(i+1)] = n.addr
	}
	before := c.rep.Groups()[highGroup]
	c.split(highGroup, key9("y"), 5, members)
	if err := transfer(n, 1, nil); err != nil {
		t.Fatal(err)
	}
	if d := c.rep.Groups()[highGroup]; d.Generation != before.Generation+1 {
		t.Fatalf("the map has group 4 at %s, was %s: want the next generation", d, before)
	}
	c.converged(c.nodes)
	checkWhole(t, n, false, []int{1}, nil)

	// Stages that time out: the commit failed, definitely (not 08007), as
	// nothing is applied before a decision and none was made; a stage
	// that applies late stays staged, never applied.
	c.rep.SetProposeTimeout(time.Microsecond)
	err := transfer(n, 3, nil)
	c.rep.SetProposeTimeout(DefaultProposeTimeout)
	if err == nil || errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Fatalf("a commit whose stages timed out: %v, want a definite failure", err)
	}
	if err := transfer(n, 4, nil); err != nil {
		t.Fatal(err)
	}
	c.converged(c.nodes)
	if parts, _, _ := tally(t, n); parts[3] != 0 || parts[4] != 3 {
		t.Fatalf("rows of the timed-out commit: %d, of the next: %d", parts[3], parts[4])
	}
	// What it left staged, if anything, would wait for the next serving
	// node; discarded here so that the checks below see none.
	for _, g := range crossGroups {
		v, err := n.host.Read(c.ctx, g, shardsm.Staged{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range v.([]shardsm.StagedPart) {
			if p.ID != shardsm.NewCommitID(1, 3) && p.ID != shardsm.NewCommitID(1, 4) {
				t.Fatalf("group %d holds a part of commit %s", g, p.ID)
			}
			cmd, err := shardsm.EncodeResolve(shardsm.Resolve{ID: p.ID})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := n.host.Propose(c.ctx, g, cmd); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Group 4 is taken over by "node 9": the stage there is fenced.
	cmd, err := shardsm.EncodeServeAt(shardsm.ServeAt{Node: 9, Epoch: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := n.host.Propose(c.ctx, highGroup, cmd); err != nil || shardsm.DecodeResult(res) != nil {
		t.Fatalf("serve-at: %v", err)
	}
	err = transfer(n, 2, nil)
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.AdminShutdown {
		t.Fatalf("a commit with a fenced stage: %v, want 57P01", err)
	}
	c.converged(c.nodes)
	parts := checkWhole(t, n, false, []int{1}, nil)
	if parts[2] != 0 {
		t.Fatalf("the fenced commit left %d rows", parts[2])
	}
}

// A decision whose proposal goes unanswered may still apply: the commit
// fails with 08007 and the node stops serving; the next serving node
// settles it, whole or not at all.
func TestCrossGroupDecisionUnknown(t *testing.T) {
	c := startCrossCluster(t)
	var abandoned atomic.Value
	c.rep.onAbandon = func(reason error) { abandoned.Store(reason) }
	decides := 0
	c.rep.cross.hook = func(point string) error {
		if point == "decide" {
			if decides++; decides == 3 {
				c.rep.SetProposeTimeout(time.Microsecond)
			}
		}
		return nil
	}
	for i := 0; i < 2; i++ {
		if err := transfer(c.nodes[0], i, nil); err != nil {
			t.Fatal(err)
		}
	}
	err := transfer(c.nodes[0], 2, nil)
	if !errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Fatalf("a commit whose decision went unanswered: %v, want an unknown outcome", err)
	}
	if abandoned.Load() == nil {
		t.Fatal("the node did not stop serving")
	}
	applied, discarded := c.takeOver()
	t.Logf("recovery applied %d parts and discarded %d", applied, discarded)
	c.converged(c.nodes[1:])
	for _, n := range c.nodes[1:] {
		checkWhole(t, n, true, []int{0, 1}, nil)
	}
}

// BenchmarkCrossGroupCommit compares commits of three rows in one group
// (one Raft round) with the same spread over three groups (stage, decide,
// apply), at 16 concurrent committers, three replicas in this process:
//
//	go test ./cluster/shardrepl -run '^$' -bench CrossGroupCommit -benchtime 2000x
func BenchmarkCrossGroupCommit(b *testing.B) {
	// The production snapshot interval: the tests' 50 entries make each
	// commit over three groups (five entries) snapshot five times as
	// often as a commit over one, which then dominates.
	defer func(f func(dir, addr string) raft.HostConfig) { testHostConfig = f }(testHostConfig)
	testHostConfig = func(dir, addr string) raft.HostConfig {
		c := clustertest.HostConfig(dir, addr)
		c.SnapshotEntries, c.CompactionOverhead = 0, 0 // the defaults
		return c
	}
	c := startCrossCluster(b)
	n := c.nodes[0]
	for _, mode := range []string{"one group", "three groups"} {
		b.Run(mode, func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					pre := [3]string{"b", "c", "d"} // all below h: FirstGroup
					if mode == "three groups" {
						pre = [3]string{"b", "m", "x"}
					}
					bt := n.engine.NewBatch()
					var err error
					for _, p := range pre {
						if err = bt.Set(key9(fmt.Sprintf("%s%s%09d", p, mode[:3], i)), []byte("1")); err != nil {
							break
						}
					}
					if err == nil {
						err = bt.Commit()
					}
					bt.Close()
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// The serving node does not die but goes on committing while node 2
// takes over and recovers (a node that was stopped, or cut off, and
// continues): its stages and decisions after the takeover are refused,
// a decision that came first stands and is completed by both, and in the
// end every transfer is whole or absent, every acknowledged one there,
// and nothing staged or recorded is left.
func TestCrossGroupOldNodeGoesOn(t *testing.T) {
	c := startCrossCluster(t)
	// Random pauses between the steps widen the windows a takeover can
	// fall into.
	c.rep.cross.hook = func(string) error {
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		return nil
	}
	var mu sync.Mutex
	var acked []int
	var committed atomic.Int64
	var wg sync.WaitGroup
	for wr := 0; wr < 4; wr++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(wr), 11))
			for j := 0; ; j++ {
				i := wr*10000 + j
				err := transfer(c.nodes[0], i, rng)
				if err != nil {
					var se *sqlerr.Error
					if !errors.As(err, &se) || se.Code != sqlerr.AdminShutdown {
						if !errors.Is(err, storage.ErrOutcomeUnknown) {
							t.Errorf("transfer %d: %v", i, err)
						}
					}
					return
				}
				mu.Lock()
				acked = append(acked, i)
				mu.Unlock()
				committed.Add(1)
			}
		}()
	}
	for committed.Load() < 20 {
		time.Sleep(5 * time.Millisecond)
	}
	epoch := c.serve(c.nodes[1], 2)
	applied, discarded, err := RecoverCommits(c.ctx, c.nodes[1].host, crossGroups, 2, epoch)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	t.Logf("%d transfers acknowledged; recovery applied %d parts and discarded %d", len(acked), applied, discarded)
	c.converged(c.nodes)
	for _, n := range c.nodes {
		checkWhole(t, n, true, acked, nil)
	}
}
