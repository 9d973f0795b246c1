package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Closed timestamps (issue 18 item 6; CockroachDB's mechanism, design §12).
//
// While a node serves, its closer (runCloser) proposes, every
// closeInterval, a shardsm.Close to each group of its shard map: a
// timestamp T that trails the clock by the closed target
// (ClusterConfig.ClosedTarget, `serve --closed-timestamp-target`) and
// stays below every commit still in flight (storage.Engine.
// ClosableTimestamp, taken under the commit tracker's mutex, so no commit
// can take a timestamp at or below T after it). Commits that ended before
// it are in the log ahead of the Close; so a replica that applied the
// Close holds every commit at or below T. Each replica keeps T in its
// group state and moves its clock past it (shardsm/closedts.go), so the
// next serving node commits above it; a Write at or below it is refused
// alike on every replica (a timed-out commit reaching the log late).
//
// Closes carry the serving epoch: one from a node that served before a
// takeover is refused, and its closer stops.
//
// The Close is a command of its own, also while writes flow (5 small
// entries a second), rather than a field of every Write: a Write's
// encoding stays as it is, and a follower's staleness is bounded by the
// target plus closeInterval either way.
//
// The side channel (closedside.go; CockroachDB's side transport). A group
// that nothing was proposed to since the closer's previous round gets no
// Close: once per round the serving node sends every node (itself
// included) one message over the node RPC (cluster/node's
// ClosedTimestamps) listing, for each such idle group, (group, T, N), N
// being its own replica's applied index read after T was picked. An idle
// group thus costs no Raft entry, and dragonboat may quiesce it. The
// invariant, for every group g and side-channel entry (T, N) of epoch E:
//
//	every commit of g at or below T that will ever apply is at or below
//	index N of g's log, or is refused by every replica (closedFence).
//
// Why it holds: ClosableTimestamp returns T only once every commit at or
// below it has ended and makes every later commit take a timestamp above
// it; a commit that succeeded applied on the serving node before its
// Replicate returned, so at or below N. A proposal that ended without the
// state machine's answer (proposalTracker: a timeout, a host closing) may
// still reach the log later, past N: its group stays on the Raft path
// until this replica applied a Raft Close at or above the clock reading
// taken when it ended (Cluster.settled), so every replica refuses it
// should it come. A replica takes (T, N) only once it applied index N
// under epoch E (sideClosed.closed; entries of another epoch are dropped),
// never lowers its closed timestamp, counts it only while it applied at
// least N (a dropped and rejoined replica starts behind), and moves its
// clock past it. ClosedTimestamp is then the higher of the Raft-applied
// and the side-channel closed timestamp of each group.
//
// Takeover: a Raft Close orders itself before the next serving node's
// commits in the log (which apply after its ServeAt, above the clock the
// Close moved), but a side-channel entry does not, and a replica behind
// the takeover may take the old node's entry. The old node sends only
// while its read lease holds, checked after T was picked, and no other
// node serves before that lease ends (serving.go), so T is at most the
// old node's clock at that time minus the target, and the next node
// commits later by its own clock. That is above T when the clocks are
// within the target's half of each other: the side channel is used only
// with a closed target of at least twice --max-offset (sideChannelOK; 3 s
// against 500 ms by default), which the clock gate (clockgate.go)
// enforces as it enforces the offset for every other purpose. With a
// shorter target every group gets a Raft Close as before.

// DefaultClosedTarget is how far the closed timestamp trails the serving
// node's clock: CockroachDB's kv.closed_timestamp.target_duration.
const DefaultClosedTarget = 3 * time.Second

// closeInterval is how often the serving node publishes a closed
// timestamp.
const closeInterval = 200 * time.Millisecond

// closedTarget returns the configured target.
func (c *Cluster) closedTarget() time.Duration {
	if c.cfg.ClosedTarget > 0 {
		return c.cfg.ClosedTarget
	}
	return DefaultClosedTarget
}

// ClosedTarget is how far this node's closed timestamps trail its clock
// when it serves: follower_read_timestamp() reads a margin further back.
func (c *Cluster) ClosedTarget() time.Duration { return c.closedTarget() }

// sideChannelOK reports whether the node may close idle groups over the
// side channel: only when the closed target is at least twice the
// cluster's clock-offset bound (see "takeover" above). Below it (or with
// no bound, --max-offset negative) every group gets a Raft Close.
func (c *Cluster) sideChannelOK() bool {
	mo := c.Node.Clocks().MaxOffset()
	return mo > 0 && c.closedTarget() >= 2*mo
}

// startCloser runs the closer under epoch until ctx ends (the serving
// lease's context: StepDown and abandon cancel it). tracker is the host
// rep proposes through; leaseValid reports whether the serving node's
// read lease holds now (serving.go).
func (c *Cluster) startCloser(ctx context.Context, epoch uint64, rep *Replicator, tracker *proposalTracker, leaseValid func() bool) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.runCloser(ctx, epoch, rep, tracker, leaseValid)
	}()
}

func (c *Cluster) runCloser(ctx context.Context, epoch uint64, rep *Replicator, tracker *proposalTracker, leaseValid func() bool) {
	useSide := c.sideChannelOK()
	sender := &sideSender{c: c}
	defer sender.close()
	// started: each group's proposal count as the previous round saw it.
	started := map[raft.GroupID]uint64{}
	var last hlc.Timestamp
	var failingSince time.Time
	for ctx.Err() == nil {
		sleep(ctx, closeInterval)
		if ctx.Err() != nil {
			return
		}
		ts, err := c.Engine.ClosableTimestamp(c.closedTarget())
		if err != nil {
			c.cfg.Logf("node %d: closed timestamp: %v", c.id, err)
			continue
		}
		if !last.Less(ts) {
			continue // a commit in flight holds it back
		}
		// Every commit at or below ts has ended (ClosableTimestamp): the
		// ones that succeeded applied here, so the indexes read from now
		// on cover them.
		var written []raft.GroupID
		var idle []node.ClosedGroup
		for g := range rep.Groups() {
			st := tracker.state(g)
			prev, seen := started[g]
			started[g] = st.started
			if !useSide || !seen || st.started != prev || st.inFlight > 0 || !c.settled(g, st.unsettled) {
				written = append(written, g)
				continue
			}
			applied, err := c.Store.AppliedIndex(g)
			if err != nil {
				written = append(written, g)
				continue
			}
			idle = append(idle, node.ClosedGroup{Group: uint64(g), Wall: ts.WallTime, Logical: ts.Logical, Index: applied})
		}
		if len(idle) > 0 {
			if leaseValid() {
				sender.send(ctx, &node.ClosedTimestampsRequest{ClusterID: c.Node.Identity().ClusterID, From: c.id, Epoch: epoch, Groups: idle})
			} else {
				// No other node serves before the lease ends, which
				// bounds ts by the clocks; without it, the log.
				for _, e := range idle {
					written = append(written, raft.GroupID(e.Group))
				}
			}
		}
		fenced, err := closeGroups(ctx, c.Node.Host(), written, shardsm.Close{Epoch: epoch, Timestamp: ts})
		if fenced {
			return // another node serves: its closer publishes
		}
		if err != nil {
			// Logged once per outage (a busy or leaderless group fails
			// every 200 ms): follower reads stall meanwhile.
			if ctx.Err() == nil && failingSince.IsZero() {
				c.cfg.Logf("node %d: cannot publish closed timestamps (follower reads stall until it can): %v", c.id, err)
				failingSince = time.Now()
			}
			continue
		}
		if !failingSince.IsZero() {
			c.cfg.Logf("node %d: publishes closed timestamps again after %s", c.id, time.Since(failingSince).Round(time.Millisecond))
			failingSince = time.Time{}
		}
		last = ts
	}
}

// settled reports whether no proposal of g that ended without an answer
// (unsettled: its commit timestamp at or below it) can still apply in a
// way a side-channel close would miss: this replica applied a Raft Close
// at or above it, so every replica refuses it if it comes (closedFence).
func (c *Cluster) settled(g raft.GroupID, unsettled hlc.Timestamp) bool {
	if unsettled.IsEmpty() {
		return true
	}
	closed, err := c.Store.ClosedTimestamp(g)
	return err == nil && unsettled.LessEq(closed)
}

// closeGroups proposes cl to every group of groups; fenced reports a
// group that another serving epoch owns.
func closeGroups(ctx context.Context, h raft.Host, groups []raft.GroupID, cl shardsm.Close) (fenced bool, err error) {
	if len(groups) == 0 {
		return false, nil
	}
	cmd, err := shardsm.EncodeClose(cl)
	if err != nil {
		return false, err
	}
	for _, g := range groups {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		res, perr := h.Propose(pctx, g, cmd)
		cancel()
		if perr != nil {
			err = errors.Join(err, fmt.Errorf("group %d: %w", g, perr))
			continue
		}
		derr := shardsm.DecodeResult(res)
		var fe *shardsm.FencedError
		if errors.As(derr, &fe) {
			return true, derr
		}
		if derr != nil {
			err = errors.Join(err, fmt.Errorf("group %d: %w", g, derr))
		}
	}
	return false, err
}

// closedCommitError maps a Write refused below the closed timestamp to
// SQL: nothing was written, and the transaction may be retried.
func closedCommitError(err error) (error, bool) {
	var ce *shardsm.ClosedError
	if !errors.As(err, &ce) {
		return nil, false
	}
	return &sqlerr.Error{Code: sqlerr.SerializationFailure,
		Message: "could not serialize access: the commit's timestamp fell at or below the closed timestamp",
		Detail:  err.Error(), Hint: "Retry the transaction."}, true
}

// ClosedTimestamp returns the lowest closed timestamp of this node's
// replicas of the shard groups as they last applied them (local reads):
// every commit at or below it is in the local engine. Each group closes
// on its own, and a commit across groups applies at a different index in
// each, so only the minimum over every group this node ever ran is safe. ok
// is false while a replica cannot be read (starting, stopping) or one
// closed nothing yet.
func (c *Cluster) ClosedTimestamp() (hlc.Timestamp, bool) {
	gs := append([]raft.GroupID{FirstGroup}, c.knownChildren()...)
	var lowest hlc.Timestamp
	for i, g := range gs {
		v, err := c.Node.Host().StaleRead(g, shardsm.State{})
		if err != nil {
			return hlc.Timestamp{}, false
		}
		st := v.(shardsm.StateResult)
		ts := st.Closed.Forward(c.side.closed(g, st.Applied, st.Serving.Epoch))
		if ts.IsEmpty() {
			return hlc.Timestamp{}, false
		}
		if i == 0 || ts.Less(lowest) {
			lowest = ts
		}
	}
	return lowest, true
}
