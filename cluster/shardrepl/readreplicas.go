package shardrepl

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// Read replicas (READ_REPLICAS_SETTINGS, issue 18 item 6). The serving
// node's placement (cluster/placement's readreplicas.go) chooses each
// group's read replicas among its non-voters; this file tells it what
// each group of the serving node's map asks for: the most that the tables
// (and indexes) whose spans overlap the group's span ask, per zone and in
// total. With one shard group (the default) that is the most any table
// asks; with a group per shard (--shard-group-per-shard) each group gets
// its own table's. cmd/pivotdb gives the spans (sql.Engine.
// ReadReplicaSpans) once SQL is open.

// ReadReplicaSpan is a span of row keys and the read replicas its table
// asks for.
type ReadReplicaSpan struct {
	Start, End []byte
	Want       placement.ReadReplicaWant
}

// SetReadReplicaSpans gives the serving node the spans that ask for read
// replicas; nil while it does not serve SQL (placement then leaves the
// read replicas as they are).
func (c *Cluster) SetReadReplicaSpans(f func() []ReadReplicaSpan) {
	if f == nil {
		c.readReplicaSpans.Store(nil)
		return
	}
	c.readReplicaSpans.Store(&f)
}

var errNoReadReplicaSpans = errors.New("SQL is not open on this node yet: the tables' READ_REPLICAS_SETTINGS are not known")

// readReplicaGroups is placement's Config.ReadReplicaGroups: every group
// of the serving node's map with what its tables ask for. A node whose
// SQL is not open answers an error (not an empty list, which would remove
// every read replica).
func (c *Cluster) readReplicaGroups(context.Context) ([]placement.ReadReplicaGroup, error) {
	f := c.readReplicaSpans.Load()
	if f == nil {
		return nil, errNoReadReplicaSpans
	}
	c.srv.mu.Lock()
	rep := c.srv.rep
	c.srv.mu.Unlock()
	if rep == nil {
		return nil, errNoReadReplicaSpans
	}
	rep.mu.RLock()
	routes := slices.Clone(rep.routes)
	rep.mu.RUnlock()
	spans := (*f)()
	wants := map[raft.GroupID]placement.ReadReplicaWant{}
	var order []raft.GroupID
	for _, rt := range routes {
		if _, ok := wants[rt.group]; !ok {
			order = append(order, rt.group)
			wants[rt.group] = placement.ReadReplicaWant{}
		}
		for _, sp := range spans {
			if bytes.Compare(sp.Start, rt.desc.Span.End) < 0 && bytes.Compare(rt.desc.Span.Start, sp.End) < 0 {
				wants[rt.group] = wants[rt.group].Max(sp.Want)
			}
		}
	}
	slices.Sort(order)
	out := make([]placement.ReadReplicaGroup, 0, len(order))
	for _, g := range order {
		name := "the shard group"
		if g != FirstGroup {
			name = fmt.Sprintf("shard group %d", g)
		}
		out = append(out, placement.ReadReplicaGroup{ID: g, Name: name, Want: wants[g]})
	}
	return out, nil
}

// SQLAddrOf returns node id's SQL address (cached, else from the metadata
// group): where a stale read goes to reach that node's read replica.
func (c *Cluster) SQLAddrOf(ctx context.Context, id uint64) (string, bool) {
	return c.servingAddr(ctx, id)
}

// StaleReadRoute is where a stale read-only connection to this node is
// served (StaleReadTargets).
type StaleReadRoute struct {
	// Local: this node serves it from its own replicas.
	Local bool
	// Targets lists, when Local is false, the live nodes holding a read
	// replica of every group that has them, nearest first.
	Targets []uint64
	// Why says, for the debug log, how the route was chosen.
	Why string
}

// StaleReadTargets tells where this node's stale read-only connections
// are served (cmd/pivotdb/follower.go). Local is true when this node
// serves them from its own replicas: no table asks for read replicas, or
// this node holds a read replica or a voter of every group that has read
// replicas. Otherwise Targets lists the live nodes holding a read replica
// of every such group, nearest first: this node's zone (the first tier of
// --locality), then the others, each by id. Both empty: no node holds
// them all (a choice in progress), and this node serves them, its
// replicas being complete up to their closed timestamps all the same.
//
// It reads only this node's replicas (the metadata group's records, its
// own replicas' roles) and its own pings, so it answers while a leader is
// stopped, and it may lag the serving node's placement by a refresh.
func (c *Cluster) StaleReadTargets() StaleReadRoute {
	records, err := c.Placement.ReadReplicas(context.Background(), true)
	if err != nil {
		return StaleReadRoute{Local: true, Why: "the read-replica records cannot be read here: " + err.Error()}
	}
	if len(records) == 0 {
		return StaleReadRoute{Local: true, Why: "no group has read replicas"}
	}
	votes := map[raft.GroupID]bool{}
	for _, r := range c.Node.Host().LocalReplicas() {
		if !r.NonVoter {
			votes[r.Group] = true
		}
	}
	holdsAll := true
	count := map[uint64]int{}
	for g, ids := range records {
		if !votes[g] && !slices.Contains(ids, c.id) {
			holdsAll = false
		}
		for _, id := range ids {
			count[id]++
		}
	}
	if holdsAll {
		return StaleReadRoute{Local: true, Why: fmt.Sprintf(
			"this node votes in or holds a read replica of every group that has read replicas (read replicas: %v; this node votes in: %v)", records, votes)}
	}
	zones := c.Placement.Zones()
	mine := zones[c.id]
	var targets, notLive []uint64
	for id, n := range count {
		if n != len(records) || id == c.id {
			continue
		}
		if c.Placement.Live(id) {
			targets = append(targets, id)
		} else {
			notLive = append(notLive, id)
		}
	}
	slices.SortFunc(targets, func(a, b uint64) int {
		if za, zb := zones[a] == mine, zones[b] == mine; za != zb {
			if za {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	why := fmt.Sprintf("read replicas of %d groups: %v; holding them all and live: %v; not heard from recently: %v",
		len(records), records, targets, notLive)
	return StaleReadRoute{Targets: targets, Why: why}
}
