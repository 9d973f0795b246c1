package shardrepl

import (
	"context"
	"fmt"
	"time"

	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// The clock gate (issue 17 item 6): a node whose clock is off from a
// majority of the clocks it knows by more than 80% of --max-offset
// (cluster/node's ClockMonitor, fed by the liveness pings) does not serve
// SQL. The serving watcher (checkServing) asks it on every round:
//
//   - a node that leads the first group does not claim serving while its
//     clock is off; it hands the leadership to another voter
//     (placement's HandOver), whose node judges its own clock in turn.
//     It also does not claim before it has estimates of a majority of
//     the group's voters' clocks (its own included): a node that just
//     started knows no clock but its own and would pass the majority
//     rule alone. A cluster's founder is the one exception in practice:
//     it serves alone until the others join, with no clock to compare.
//   - a serving node whose clock is found off stops serving at once
//     (stopForClock): its read lease ends, reads fail with 57P01 naming
//     the clock, SQL closes and the node steps down; it then hands the
//     leadership over as above.
//
// Why it matters here: one serving node takes every commit timestamp and
// reads its own engine, so ordering does not rest on the clocks. What
// does: a takeover (the next node's HLC is moved past every commit by its
// replicas, shardsm.Store.SetClock, whatever its clock says), the closed
// timestamps and follower_read_timestamp() (closedts.go: a follower reads
// only at or below the closed timestamp, which the serving node's clock
// sets; a follower whose clock is behind reads older data, one ahead
// waits, neither reads past what is closed), AS OF SYSTEM TIME, GC and
// TTL windows, which assume the HLC stays near real time; a serving node
// whose clock ran ahead would drag every later node's HLC ahead with it.
// The replicas' HLCs take every timestamp they apply unchecked
// (hlc.Config.MaxOffset 0): a replica must apply what its group
// committed, so the bound is enforced here, before a node serves.

// clockRelog is how often a node whose clock stays off says so again.
const clockRelog = 10 * time.Second

// ClockError reports whether this node's clock is off (a
// *node.ClockOffsetError), nil while it is within bounds.
func (c *Cluster) ClockError() error { return c.Node.Clocks().Check() }

// checkClock judges the node's clock, logging each change (and, while it
// stays off, every clockRelog) loudly, and returns the error while it is
// off.
func (c *Cluster) checkClock() error {
	err := c.ClockError()
	c.clockMu.Lock()
	defer c.clockMu.Unlock()
	switch {
	case err != nil && (!c.clockOff || time.Since(c.clockLogged) >= clockRelog):
		c.cfg.Alarmf("node %d: CLOCK OFFSET: %v; this node does not serve SQL until its clock is within --max-offset "+
			"of a majority of the nodes (fix the clock's synchronisation: NTP)", c.id, err)
		c.clockOff, c.clockLogged = true, time.Now()
	case err == nil && c.clockOff:
		c.cfg.Logf("node %d: its clock is within --max-offset of a majority of the nodes again; it may serve SQL", c.id)
		c.clockOff = false
	}
	return err
}

// knowsEnoughClocks reports whether this node has estimates of the clocks
// of a majority of the first group's voters, its own included; while it
// does not, it says so every clockRelog.
func (c *Cluster) knowsEnoughClocks(ctx context.Context) bool {
	mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	mem, err := c.Node.Host().Membership(mctx, FirstGroup)
	cancel()
	if err != nil {
		return false // not leading any more, or no quorum: the next round sees
	}
	fresh := map[uint64]bool{c.id: true}
	for _, p := range c.Node.Clocks().Offsets() {
		fresh[p.Node] = true
	}
	voters, known := 0, 0
	for r := range mem.Voters {
		voters++
		if fresh[placement.NodeOf(r)] {
			known++
		}
	}
	if 2*known > voters {
		return true
	}
	c.clockMu.Lock()
	if time.Since(c.clockWaitLogged) >= clockRelog {
		c.clockWaitLogged = time.Now()
		c.cfg.Logf("node %d: leads the shard group but does not serve SQL yet: it knows the clocks of %d of its %d voters "+
			"(its own included) and waits for its pings to measure a majority", c.id, known, voters)
	}
	c.clockMu.Unlock()
	return false
}

// handOverForClock moves the first group's leadership away from this
// node, whose clock is off, instead of claiming serving. With no other
// voter to take it, nobody serves: a clock off by more than the bound
// must be fixed first.
func (c *Cluster) handOverForClock(ctx context.Context, clockErr error) {
	hctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	to, err := c.Placement.HandOver(hctx, FirstGroup)
	cancel()
	switch {
	case err != nil:
		c.clockMu.Lock()
		defer c.clockMu.Unlock()
		if time.Since(c.clockHandOverLogged) < clockRelog {
			return
		}
		c.clockHandOverLogged = time.Now()
		c.cfg.Alarmf("node %d: leads the shard group but does not serve SQL (its clock is off), and cannot hand the leadership over: %v",
			c.id, err)
	case to != 0:
		c.cfg.Logf("node %d: handed the shard group's leadership to node %d: this node's clock is off", c.id, to)
	}
}

// stopForClock stops serving under epoch at once because the clock is
// off (as abandon does for a bulk load): reads fail from now on with
// 57P01 naming the clock, the caller closes SQL and steps down. While the
// group has no other voter it keeps serving (saying so): nobody else
// could serve, and the joining nodes become voters only through the
// serving node's manager loop (a founder whose clock is off serves until
// they vote, then stops).
func (c *Cluster) stopForClock(ctx context.Context, epoch uint64, clockErr error) {
	mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	mem, err := c.Node.Host().Membership(mctx, FirstGroup)
	cancel()
	if err != nil {
		return // the next round sees
	}
	others := 0
	for r := range mem.Voters {
		if placement.NodeOf(r) != c.id {
			others++
		}
	}
	if others == 0 {
		c.clockMu.Lock()
		defer c.clockMu.Unlock()
		if time.Since(c.clockHandOverLogged) >= clockRelog {
			c.clockHandOverLogged = time.Now()
			c.cfg.Alarmf("node %d: its clock is off, but it keeps serving SQL: no other node votes in the shard group yet "+
				"(it adds the joining nodes first)", c.id)
		}
		return
	}
	c.cfg.Alarmf("node %d: STOPS SERVING SQL (epoch %d): its clock is off: %v", c.id, epoch, clockErr)
	c.srv.mu.Lock()
	c.srv.clockStop = clockErr
	c.srv.mu.Unlock()
	c.abandon(epoch, fmt.Errorf("clock offset: %w", clockErr))
}

// readGateError is what a read gets once the read lease lapsed: 57P01,
// naming the clock when that is why the node stopped serving.
func (c *Cluster) readGateError() error {
	c.srv.mu.Lock()
	clockErr := c.srv.clockStop
	c.srv.mu.Unlock()
	if clockErr != nil {
		return ClockSQLError("this node stopped serving SQL", clockErr)
	}
	return &sqlerr.Error{Code: sqlerr.AdminShutdown, Fatal: true,
		Message: "terminating connection: this node may no longer serve SQL (its read lease lapsed)",
		Hint:    "Connect again (through any node) and retry."}
}

// ClockSQLError is the 57P01 a client of a node whose clock is off gets:
// what stopped (what), and the offsets.
func ClockSQLError(what string, clockErr error) error {
	return &sqlerr.Error{Code: sqlerr.AdminShutdown, Fatal: true,
		Message: fmt.Sprintf("terminating connection: %s: clock offset: %v", what, clockErr),
		Hint:    "Connect again through any node: one whose clock is within --max-offset serves SQL. Fix this node's clock synchronisation (NTP)."}
}
