package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// startCloser runs the closer under epoch until ctx ends (the serving
// lease's context: StepDown and abandon cancel it).
func (c *Cluster) startCloser(ctx context.Context, epoch uint64, rep *Replicator) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.runCloser(ctx, epoch, rep)
	}()
}

func (c *Cluster) runCloser(ctx context.Context, epoch uint64, rep *Replicator) {
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
		fenced, err := closeGroups(ctx, c.Node.Host(), rep, shardsm.Close{Epoch: epoch, Timestamp: ts})
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

// closeGroups proposes cl to every group of rep's map; fenced reports a
// group that another serving epoch owns.
func closeGroups(ctx context.Context, h raft.Host, rep *Replicator, cl shardsm.Close) (fenced bool, err error) {
	cmd, err := shardsm.EncodeClose(cl)
	if err != nil {
		return false, err
	}
	for g := range rep.Groups() {
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
		ts := v.(shardsm.StateResult).Closed
		if ts.IsEmpty() {
			return hlc.Timestamp{}, false
		}
		if i == 0 || ts.Less(lowest) {
			lowest = ts
		}
	}
	return lowest, true
}
