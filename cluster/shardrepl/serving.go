package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
)

// Which node serves SQL (issue 17, takeover with fencing).
//
// The serving node is the first group's Raft leader's node. Each node's
// watcher (watchServing) checks every pollServing, and at once when its
// replica applies a shardsm.Serve:
//
//   - a node that leads the group and does not serve claims it: it
//     proposes Serve{node}, whose result is the next serving epoch; the
//     proposal returns once this node applied it, so every commit before it
//     is in the local store. It then publishes Role{Serve, epoch}; the
//     caller calls Serve (the engine's in-memory state reloaded, a
//     Replicator whose Writes carry the epoch) and opens SQL over Engine.
//   - a node that serves and sees another node's claim in its replica
//     publishes Role{Serve: false}; the caller closes SQL and calls
//     StepDown, which reopens the engine under the replica.
//
// Every replica applies only the Writes of the current epoch, so a serving
// node that was stopped (SIGSTOP) or cut off while another took over
// cannot commit when it comes back: its commits fail (57P01) and nothing
// of them is written. The other nodes forward SQL connections to the
// serving node's SQL address (ServingSQLAddr; cmd/pivotdb's gateway).

// pollServing is how often the watcher looks at leadership and the
// group's serving state.
const pollServing = 100 * time.Millisecond

// The read lease. Writes of a node that lost serving are fenced; its reads
// are gated (storage.Engine.SetReadGate) by a lease it renews every
// renewLease: a ReadIndex issued at t0 while it leads the group, in one
// term from before to after, that finds its own epoch, lets it read until
// t0 + readLease. A quorum acknowledged its leadership in that term after
// t0, so any later leader was elected, and claimed serving, after t0; a
// node that claims waits readLease before it serves (Serve), so it
// acknowledges no commit before the old lease ended. (With CheckQuorum,
// cluster/raft, followers also refuse to elect another leader for an
// election timeout after hearing from theirs; Serve checks that it is
// longer than the lease.) A read waits up to leaseWait for a lapsed lease
// to be renewed (a slow round under load), then fails with 57P01.
const (
	readLease  = 150 * time.Millisecond
	renewLease = 40 * time.Millisecond
	leaseWait  = 5 * time.Second
)

// Role tells the caller whether to serve SQL, and under which epoch.
type Role struct {
	Serve bool
	Epoch uint64
}

type roleState int

const (
	roleIdle     roleState = iota // not serving
	roleServing                   // claimed: serving (or opening SQL)
	roleStopping                  // told to stop; until StepDown
)

type servingState struct {
	mu    sync.Mutex
	state roleState
	epoch uint64
	addrs map[uint64]string // SQL addresses by node id (the metadata group's)
	// forwardKey caches the metadata group's SQL forwarding key
	// (proxykey.go).
	forwardKey []byte

	roles chan Role     // capacity 1: the newest role
	kick  chan struct{} // capacity 1: a Serve applied here
	// stopLease ends the read lease's renewal (StepDown, Close).
	stopLease context.CancelFunc
	// rep is the Replicator while the node serves (Serve; nil once it
	// stops): a split child is added to it (groups.go).
	rep *Replicator
	// clockStop is why the node stopped serving when its clock was off
	// (clockgate.go): its reads' error names it. Cleared by Serve.
	clockStop error
}

func (c *Cluster) initServing() {
	c.srv.roles = make(chan Role, 1)
	c.srv.kick = make(chan struct{}, 1)
	c.srv.addrs = map[uint64]string{}
	c.watchStore()
}

// watchStore makes the store's replicas wake the watcher on a Serve.
func (c *Cluster) watchStore() {
	c.watchSplits(c.Store)
	switch {
	case c.cfg.SnapshotRate > 0:
		c.Store.SetSnapshotRate(c.cfg.SnapshotRate)
	case c.cfg.SnapshotRate < 0:
		c.Store.SetSnapshotRate(0)
	}
	c.Store.SetSnapshotRateElastic(c.cfg.SnapshotRateElastic)
	c.Store.SetSnapshotLogger(func(format string, args ...any) {
		c.cfg.Logf("node %d: "+format, append([]any{c.id}, args...)...)
	})
	c.Store.SetServingHandler(func(g raft.GroupID, _ shardsm.Serving) {
		if g != FirstGroup {
			return
		}
		select {
		case c.srv.kick <- struct{}{}:
		default:
		}
	})
}

// Roles delivers the node's role changes; only the newest undelivered one
// is kept.
func (c *Cluster) Roles() <-chan Role { return c.srv.roles }

func (c *Cluster) publish(r Role) {
	select {
	case <-c.srv.roles:
	default:
	}
	c.srv.roles <- r
}

func (c *Cluster) watchServing(ctx context.Context) {
	defer c.wg.Done()
	for ctx.Err() == nil {
		if err := c.checkServing(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logf("node %d: serving: %v", c.id, err)
		}
		select {
		case <-ctx.Done():
		case <-c.srv.kick:
		case <-time.After(pollServing):
		}
	}
}

func (c *Cluster) checkServing(ctx context.Context) error {
	h := c.Node.Host()
	clockErr := c.checkClock() // clockgate.go
	c.srv.mu.Lock()
	state, epoch := c.srv.state, c.srv.epoch
	c.srv.mu.Unlock()
	if state == roleStopping {
		return nil
	}
	v, err := h.StaleRead(FirstGroup, shardsm.State{})
	if err != nil {
		return nil // the replica is starting or stopping (StepDown)
	}
	sv := v.(shardsm.StateResult).Serving
	if state == roleServing {
		if sv.Epoch != epoch {
			c.cfg.Logf("node %d: node %d took over serving SQL (epoch %d); this node stops serving", c.id, sv.Node, sv.Epoch)
			c.srv.mu.Lock()
			c.srv.state = roleStopping
			c.srv.mu.Unlock()
			c.publish(Role{Serve: false})
			return nil
		}
		if clockErr != nil {
			c.stopForClock(ctx, epoch, clockErr)
		}
		return nil
	}
	leader, _, ok, err := h.Leader(FirstGroup)
	if err != nil || !ok || leader != c.replicaID() {
		return nil
	}
	if clockErr != nil {
		c.handOverForClock(ctx, clockErr)
		return nil
	}
	if !c.knowsEnoughClocks(ctx) {
		return nil
	}
	if !c.Placement.Eligible(c.id) {
		// Decommissioning (it handed serving over, and an election made
		// it leader again): hand the leadership on rather than serve.
		// When no other voter can take it, serving beats nobody serving.
		hctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		to, err := c.Placement.HandOver(hctx, FirstGroup)
		cancel()
		if err == nil && to != 0 {
			return nil
		}
		c.cfg.Logf("node %d: decommissioning, but serves SQL: %v", c.id, err)
	}
	cmd, err := shardsm.EncodeServe(shardsm.Serve{Node: c.id})
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := h.Propose(pctx, FirstGroup, cmd)
	if err != nil {
		return fmt.Errorf("claiming: %w", err)
	}
	epoch, err = shardsm.ServeEpoch(res)
	if err != nil {
		return fmt.Errorf("claiming: %w", err)
	}
	c.cfg.Logf("node %d: leads the shard group; serves SQL under epoch %d", c.id, epoch)
	c.srv.mu.Lock()
	c.srv.state, c.srv.epoch = roleServing, epoch
	c.srv.mu.Unlock()
	c.publish(Role{Serve: true, Epoch: epoch})
	return nil
}

// ErrSuperseded: Serve found that another node took serving under a later
// epoch before this one served (a group refused its epoch while it
// settled the commits across groups). Nothing was served; the watcher
// publishes Role{Serve: false} next, and the caller steps down as usual.
var ErrSuperseded = errors.New("shardrepl: another node took over serving SQL before this node served")

// Serve prepares Engine for SQL under epoch (from Roles): it reloads the
// engine's in-memory state from the store its replica wrote, and sets a
// Replicator whose commits carry the epoch (its AddGroup moves the clock
// past every commit the group holds). Open sql.Engine over Engine next.
func (c *Cluster) Serve(ctx context.Context, epoch uint64) (*Replicator, error) {
	// The lease is sound only under the minimum election timeout.
	rc := c.cfg.Node.Raft
	rtt, ticks := rc.RTT, rc.ElectionTicks
	if rtt == 0 {
		rtt = 10 * time.Millisecond
	}
	if ticks == 0 {
		ticks = 20
	}
	if time.Duration(ticks)*rtt < readLease+readLease/3 {
		return nil, fmt.Errorf("shardrepl: an election timeout of %s is too short for the %s read lease", time.Duration(ticks)*rtt, readLease)
	}
	if err := c.ensureForwardKey(ctx); err != nil {
		return nil, err
	}
	c.srv.mu.Lock()
	c.srv.clockStop = nil
	c.srv.mu.Unlock()
	// Quiet children (closedside.go) elect a leader only once woken: all
	// at once here, rather than one by one as ShardGroups reads them.
	c.wakeChildren(ctx)
	// Whoever served before may read until its lease ends.
	sleep(ctx, readLease)
	// Commits across groups it left staged are settled before the
	// engine's state is read (crossgroup.go), in every shard group.
	groups, err := c.ShardGroups(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.recoverCommits(ctx, groups, epoch); err != nil {
		var fe *shardsm.FencedError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%w: %w", ErrSuperseded, err)
		}
		return nil, err
	}
	if err := c.Engine.ReloadState(); err != nil {
		return nil, err
	}
	base := time.Now()
	var until atomic.Int64 // since base
	lctx, stop := context.WithCancel(context.Background())
	c.srv.mu.Lock()
	c.srv.stopLease = stop
	c.srv.mu.Unlock()
	c.renewLease(lctx, epoch, base, &until)
	// The serving node manages the group's membership (adds and promotes
	// joining nodes) and placement (replaces the replicas of dead and
	// decommissioning nodes) while it serves.
	c.wg.Add(1)
	go c.manage(lctx)
	c.Placement.Run(lctx, &c.wg)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for lctx.Err() == nil {
			sleep(lctx, renewLease)
			c.renewLease(lctx, epoch, base, &until)
		}
	}()
	c.Engine.SetReadGate(func() error {
		deadline := time.Now().Add(leaseWait)
		for {
			if time.Since(base) < time.Duration(until.Load()) {
				return nil
			}
			if lctx.Err() != nil || time.Now().After(deadline) {
				return c.readGateError() // clockgate.go
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	// The closer tells idle groups from written ones by what rep
	// proposes (closedside.go).
	tracker := newProposalTracker(c.Node.Host(), c.Engine.Clock())
	rep := New(tracker, c.Engine)
	rep.SetEpoch(epoch)
	rep.onAbandon = func(reason error) { c.abandon(epoch, reason) }
	for _, g := range groups {
		if err := rep.AddGroup(ctx, g); err != nil {
			return nil, err
		}
	}
	if err := c.Engine.SetReplicator(rep); err != nil {
		return nil, err
	}
	c.srv.mu.Lock()
	c.srv.rep = rep
	c.srv.mu.Unlock()
	// A bulk load the node that served before did not finish: this
	// epoch fences its writes, so what it left is all there will be.
	n, err := c.Engine.RollBackBulkLoads(ctx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		c.cfg.Logf("node %d: rolled back %d unfinished bulk load(s) of the node that served before", c.id, n)
	}
	c.startCloser(lctx, epoch, rep, tracker, func() bool { return time.Since(base) < time.Duration(until.Load()) }) // closedts.go
	c.wg.Add(1)
	go c.reconcileSplits(lctx, rep) // splitqueue.go
	return rep, nil
}

// abandon stops serving under epoch at once: the engine may hold part of
// a bulk load it could not roll back (storage.BulkAbandoner). Reads fail
// from now on (the read lease ends), the caller closes SQL and steps
// down, and whichever node serves next (this one again, under a new
// epoch, if it still leads) rolls the load back before it serves.
func (c *Cluster) abandon(epoch uint64, reason error) {
	c.cfg.Logf("node %d: stops serving SQL (epoch %d): %v", c.id, epoch, reason)
	c.stopServingLease()
	c.srv.mu.Lock()
	stop := c.srv.state == roleServing && c.srv.epoch == epoch
	if stop {
		c.srv.state = roleStopping
	}
	c.srv.mu.Unlock()
	if stop {
		c.publish(Role{Serve: false})
	}
}

// renewLease renews the read lease (see readLease) once, if this node
// leads the group in one term across a ReadIndex that finds its epoch.
func (c *Cluster) renewLease(ctx context.Context, epoch uint64, base time.Time, until *atomic.Int64) {
	h := c.Node.Host()
	me := c.replicaID()
	l1, term1, ok, err := h.Leader(FirstGroup)
	if err != nil || !ok || l1 != me {
		return
	}
	t0 := time.Since(base)
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	v, err := h.Read(rctx, FirstGroup, shardsm.State{})
	cancel()
	if err != nil || v.(shardsm.StateResult).Serving.Epoch != epoch {
		return
	}
	l2, term2, ok, err := h.Leader(FirstGroup)
	if err != nil || !ok || l2 != me || term2 != term1 {
		return
	}
	if d := int64(t0 + readLease); d > until.Load() {
		until.Store(d)
	}
}

// StepDown ends serving after Role{Serve: false}: it stops the replica,
// calls closeEngine (which closes Engine, directly or through the
// sql.Engine over it), reopens the engine and restarts the replica, which
// catches up from the log. closeEngine nil: the engine never served.
func (c *Cluster) StepDown(closeEngine func() error) error {
	c.stopServingLease()
	// Placement's moves were jobs of the engine that closes now; a
	// hand-over this node makes from now on (HandOver) records none.
	c.Placement.AttachJobs(nil)
	h := c.Node.Host()
	c.regenMu.Lock() // not while a rejoin (generation.go) swaps the replica
	defer c.regenMu.Unlock()
	if err := c.stopChildren(); err != nil {
		return err
	}
	if err := h.StopReplica(FirstGroup); err != nil {
		return err
	}
	// The replicas' apply and snapshot workers may still hold the store
	// (dragonboat stops a replica before they let go of it).
	if n := c.Store.WaitReplicasClosed(10 * time.Second); n > 0 {
		c.cfg.Logf("node %d: %d stopped shard replicas still hold the engine after 10s; closing it anyway", c.id, n)
	}
	if closeEngine == nil {
		closeEngine = c.Engine.Close
	}
	if err := closeEngine(); err != nil {
		return err
	}
	e, st, err := OpenEngine(c.cfg.EngineDir, c.cfg.Storage)
	if err != nil {
		return err
	}
	c.Engine, c.Store = e, st
	c.watchStore()
	if err := h.StartReplica(raft.ReplicaSpec{Group: FirstGroup, Replica: c.replicaID(), NonVoter: c.nonVoter}, st.NewStateMachine); err != nil {
		return err
	}
	if err := c.startChildren(maps.Clone(c.joined)); err != nil {
		return err
	}
	c.srv.mu.Lock()
	c.srv.state = roleIdle
	c.srv.mu.Unlock()
	return nil
}

func (c *Cluster) stopServingLease() {
	c.srv.mu.Lock()
	stop := c.srv.stopLease
	c.srv.stopLease, c.srv.rep = nil, nil
	c.srv.mu.Unlock()
	c.SetSplitKeys(nil)
	if stop != nil {
		stop()
	}
}

// ServingSQLAddr returns the SQL address of the node that serves, as this
// node's replica knows it; ok is false while nobody does or this node
// itself is named (it is about to serve or to stop).
func (c *Cluster) ServingSQLAddr(ctx context.Context) (addr string, node uint64, ok bool) {
	addr, node, _, ok = c.ServingSQL(ctx)
	return addr, node, ok
}

// ServingSQL is ServingSQLAddr with the serving epoch the answer is of: a
// connection forwarded to that node is served under that epoch, and ends
// once a later epoch belongs to another node (ServingNow; cmd/pivotdb's
// gateway).
func (c *Cluster) ServingSQL(ctx context.Context) (addr string, node, epoch uint64, ok bool) {
	node, epoch, ok = c.ServingNow()
	if !ok || node == 0 || node == c.id {
		return "", node, epoch, false
	}
	addr, ok = c.servingAddr(ctx, node)
	return addr, node, epoch, ok
}

// ServingNow returns the serving node and epoch as this node's replica of
// the first group last applied them (a local read: it may lag behind the
// group, never run ahead of it). ok is false while the replica cannot be
// read (not started, stopping).
func (c *Cluster) ServingNow() (node, epoch uint64, ok bool) {
	v, err := c.Node.Host().StaleRead(FirstGroup, shardsm.State{})
	if err != nil {
		return 0, 0, false
	}
	s := v.(shardsm.StateResult).Serving
	return s.Node, s.Epoch, true
}

// servingAddr returns node's SQL address, from the cache or the metadata
// group.
func (c *Cluster) servingAddr(ctx context.Context, node uint64) (addr string, ok bool) {
	c.srv.mu.Lock()
	addr, ok = c.srv.addrs[node]
	c.srv.mu.Unlock()
	if ok {
		return addr, true
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var err error
	addr, ok, err = c.metaGet(rctx, idKey(keySQLAddr, node))
	if err != nil || !ok {
		return "", false
	}
	c.srv.mu.Lock()
	c.srv.addrs[node] = addr
	c.srv.mu.Unlock()
	return addr, true
}

// ForgetSQLAddr drops the cached SQL address of node (a connection to it
// failed: it may have restarted elsewhere).
func (c *Cluster) ForgetSQLAddr(node uint64) {
	c.srv.mu.Lock()
	delete(c.srv.addrs, node)
	c.srv.mu.Unlock()
}
