package shardrepl

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// The closed-timestamp side channel (closedts.go has the whole picture).
//
// proposalTracker (the serving node) counts the proposals its Replicator
// makes to each group, so that the closer tells an idle group (none since
// its last round, none in flight) from a written one, and remembers the
// groups where a proposal ended without the state machine's answer
// (unsettled: it may still reach the log).
//
// sideClosed (every node) keeps the closed timestamps the side channel
// brought, per group, until the local replica applied the index each one
// names; ClosedTimestamp then counts them beside the Raft-applied ones.

// proposalTracker wraps the serving node's raft.Host for its Replicator.
type proposalTracker struct {
	raft.Host
	clock *hlc.Clock // the engine's

	mu     sync.Mutex
	groups map[raft.GroupID]*trackedGroup
}

type trackedGroup struct {
	started  uint64 // proposals begun, ever
	inFlight int
	// unsettled is at or above the commit timestamp of every proposal of
	// the group that ended without the state machine's answer (a
	// timeout, the host closing): zero when there was none.
	unsettled hlc.Timestamp
}

func newProposalTracker(h raft.Host, clock *hlc.Clock) *proposalTracker {
	return &proposalTracker{Host: h, clock: clock, groups: map[raft.GroupID]*trackedGroup{}}
}

func (t *proposalTracker) group(g raft.GroupID) *trackedGroup {
	tg := t.groups[g]
	if tg == nil {
		tg = &trackedGroup{}
		t.groups[g] = tg
	}
	return tg
}

// Propose counts the proposal around the host's.
func (t *proposalTracker) Propose(ctx context.Context, g raft.GroupID, cmd []byte) (raft.Result, error) {
	t.mu.Lock()
	tg := t.group(g)
	tg.started++
	tg.inFlight++
	t.mu.Unlock()
	res, err := t.Host.Propose(ctx, g, cmd)
	var now hlc.Timestamp
	if err != nil {
		// The command's timestamp, if it has one, was taken before it
		// was proposed: the clock is past it now. A clock that fails
		// gives the largest timestamp, which keeps the group on the
		// Raft path (closedts.go) for good: safe, if slow.
		now = hlc.MaxTimestamp
		if ts, cerr := t.clock.Now(); cerr == nil {
			now = ts
		}
	}
	t.mu.Lock()
	tg.inFlight--
	if err != nil {
		tg.unsettled = tg.unsettled.Forward(now)
	}
	t.mu.Unlock()
	return res, err
}

// trackedState is what the closer reads of one group in a round.
type trackedState struct {
	started   uint64
	inFlight  int
	unsettled hlc.Timestamp
}

func (t *proposalTracker) state(g raft.GroupID) trackedState {
	t.mu.Lock()
	defer t.mu.Unlock()
	tg := t.groups[g]
	if tg == nil {
		return trackedState{}
	}
	return trackedState{started: tg.started, inFlight: tg.inFlight, unsettled: tg.unsettled}
}

// sideEntry is one closed timestamp the side channel brought: valid once
// the replica applied index under epoch.
type sideEntry struct {
	ts    hlc.Timestamp
	index uint64
	epoch uint64
}

// maxPendingSide bounds the entries a group keeps waiting for its log: a
// replica far behind drops the oldest (a later one closes more anyway).
const maxPendingSide = 4

type sideGroup struct {
	// taken is the newest closed timestamp taken, takenIndex the index
	// it was valid at: it counts only while the replica applied at least
	// that far (a replica that was dropped and rejoined starts behind).
	taken      hlc.Timestamp
	takenIndex uint64
	pending    []sideEntry // ascending index
}

// sideClosed holds a node's side-channel closed timestamps.
type sideClosed struct {
	mu     sync.Mutex
	groups map[raft.GroupID]*sideGroup
	// observe moves the node's clock past a closed timestamp taken (the
	// engine's clock: a node that serves later commits above it).
	observe func(hlc.Timestamp) error
}

func newSideClosed(observe func(hlc.Timestamp) error) *sideClosed {
	return &sideClosed{groups: map[raft.GroupID]*sideGroup{}, observe: observe}
}

// add queues e for g.
func (s *sideClosed) add(g raft.GroupID, e sideEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sg := s.groups[g]
	if sg == nil {
		sg = &sideGroup{}
		s.groups[g] = sg
	}
	if e.ts.LessEq(sg.taken) && e.index >= sg.takenIndex {
		return // closes nothing new
	}
	if n := len(sg.pending); n > 0 && e.index < sg.pending[n-1].index {
		return // older than one queued: a reordered message
	}
	sg.pending = append(sg.pending, e)
	if len(sg.pending) > maxPendingSide {
		sg.pending = append(sg.pending[:0], sg.pending[len(sg.pending)-maxPendingSide:]...)
	}
}

// closed returns g's side-channel closed timestamp for a replica that
// applied index under serving epoch epoch (zero: none), first taking the
// queued entries that the replica applied the index of. An entry of
// another epoch than the replica's is dropped: the serving node that sent
// it no longer serves, or the replica went past a takeover.
func (s *sideClosed) closed(g raft.GroupID, applied, epoch uint64) hlc.Timestamp {
	s.mu.Lock()
	sg := s.groups[g]
	if sg == nil {
		s.mu.Unlock()
		return hlc.Timestamp{}
	}
	var observe hlc.Timestamp
	keep := sg.pending[:0]
	for _, e := range sg.pending {
		switch {
		case e.index > applied:
			keep = append(keep, e) // waits for the log
		case e.epoch != epoch:
			// dropped
		case sg.taken.Less(e.ts):
			sg.taken, sg.takenIndex = e.ts, e.index
			observe = e.ts
		}
	}
	sg.pending = keep
	out := sg.taken
	if applied < sg.takenIndex {
		out = hlc.Timestamp{}
	}
	s.mu.Unlock()
	if !observe.IsEmpty() && s.observe != nil {
		_ = s.observe(observe) // a clock that refuses it fails commits itself
	}
	return out
}

// take queues a side-channel message's entries.
func (s *sideClosed) take(req *node.ClosedTimestampsRequest) {
	for _, e := range req.Groups {
		s.add(raft.GroupID(e.Group), sideEntry{ts: hlc.Timestamp{WallTime: e.Wall, Logical: e.Logical}, index: e.Index, epoch: req.Epoch})
	}
}

// sideSender sends the serving node's side-channel messages to every
// node of the registry, itself included (directly).
type sideSender struct {
	c *Cluster

	peers     map[uint64]*node.Peer
	busy      map[uint64]*atomic.Bool // a send still running: skip the peer
	refreshed time.Time
}

// sideRefresh is how often the sender rereads the registry.
const sideRefresh = 5 * time.Second

func (s *sideSender) close() {
	for _, p := range s.peers {
		_ = p.Close()
	}
	s.peers = nil
}

// refresh rereads the registry every sideRefresh.
func (s *sideSender) refresh(ctx context.Context) {
	if s.peers != nil && time.Since(s.refreshed) < sideRefresh {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	nodes, err := s.c.Node.Nodes(rctx)
	cancel()
	if err != nil {
		return // the old list meanwhile
	}
	s.refreshed = time.Now()
	if s.peers == nil {
		s.peers, s.busy = map[uint64]*node.Peer{}, map[uint64]*atomic.Bool{}
	}
	seen := map[uint64]bool{}
	for _, n := range nodes {
		if n.ID == s.c.id {
			continue
		}
		seen[n.ID] = true
		if _, ok := s.peers[n.ID]; ok {
			continue
		}
		p, err := s.c.Node.DialPeer(n.Addr)
		if err != nil {
			continue
		}
		s.peers[n.ID], s.busy[n.ID] = p, &atomic.Bool{}
	}
	for id, p := range s.peers {
		if !seen[id] {
			_ = p.Close()
			delete(s.peers, id)
			delete(s.busy, id)
		}
	}
}

// send hands req to this node and, without waiting, to every peer whose
// previous message went out.
func (s *sideSender) send(ctx context.Context, req *node.ClosedTimestampsRequest) {
	s.c.side.take(req)
	s.refresh(ctx)
	for id, p := range s.peers {
		busy := s.busy[id]
		if !busy.CompareAndSwap(false, true) {
			continue
		}
		s.c.wg.Add(1)
		go func() {
			defer s.c.wg.Done()
			defer busy.Store(false)
			err := p.SendClosedTimestamps(ctx, req, 2*closeInterval)
			if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
				// A node down or starting: its follower reads wait for
				// the next message.
				return
			}
		}()
	}
}

// The manager loop (groupplace.go) read every child's membership, a
// ReadIndex, every round: that kept every group awake, so none could
// quiesce (cluster/raft's HostConfig.Quiesce). A child whose membership
// matched FirstGroup's (a replica on each of its nodes, voting as there,
// and none elsewhere) is not read again while FirstGroup's membership
// stays as it was (ConfigChangeID), up to childRecheck: any change of
// FirstGroup's (a node added, promoted, moved, replaced, removed) and a
// child's own trouble (an unread round, an error) read it again at once.

// childRecheck bounds how long a child in order goes unread.
const childRecheck = 30 * time.Second

type childOrder struct {
	firstChange uint64          // FirstGroup's ConfigChangeID it matched
	at          time.Time       // when
	membership  raft.Membership // g's, as read then
}

// childInOrder reports whether g matched first's membership when last
// read, first has not changed since, and that was within childRecheck;
// if so, it returns g's membership as read then (reseedFounders still
// needs it to find founders that do not run their replica).
func (c *Cluster) childInOrder(g raft.GroupID, first raft.Membership) (raft.Membership, bool) {
	c.orderMu.Lock()
	defer c.orderMu.Unlock()
	o, ok := c.inOrder[g]
	if !ok || o.firstChange != first.ConfigChangeID || time.Since(o.at) >= childRecheck {
		return raft.Membership{}, false
	}
	return o.membership, true
}

// noteChildOrder records whether m, g's membership as just read, matches
// first's (members: first's replicas, voters and non-voters).
func (c *Cluster) noteChildOrder(g raft.GroupID, first, m raft.Membership, members map[raft.ReplicaID]string) {
	match := len(m.Voters)+len(m.NonVoters) == len(members)
	for r1 := range members {
		_, votesFirst := first.Voters[r1]
		_, voter, ok := replicaOnNode(m, placement.NodeOf(r1))
		if !ok || voter != votesFirst {
			match = false
			break
		}
	}
	c.orderMu.Lock()
	defer c.orderMu.Unlock()
	if c.inOrder == nil {
		c.inOrder = map[raft.GroupID]childOrder{}
	}
	if match {
		c.inOrder[g] = childOrder{firstChange: first.ConfigChangeID, at: time.Now(), membership: m}
	} else {
		delete(c.inOrder, g)
	}
}

// QuiescesGroup picks the groups whose replicas may quiesce
// (raft.HostConfig.Quiesce): the split children, which the side channel
// leaves without entries while nothing is written to them. FirstGroup
// (the serving lease's reads every renewLease keep it awake anyway, and
// serving follows its leader) and the metadata group do not.
func QuiescesGroup(g raft.GroupID) bool { return g > FirstGroup }

// wakeChildren reads every child this node runs, in parallel (a ReadIndex
// wakes a quiet replica, and its group elects a leader if its leader
// died), and waits up to wakeTimeout: a node about to serve would
// otherwise wake them one by one (ShardGroups, RecoverCommits), an
// election timeout each when the old serving node, which led them all,
// died. Errors are left to the reads that follow.
func (c *Cluster) wakeChildren(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, wakeTimeout)
	defer cancel()
	sem := make(chan struct{}, wakeParallel)
	var wg sync.WaitGroup
	for _, g := range c.knownChildren() {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, _ = c.Node.Host().Read(ctx, g, shardsm.State{})
		}()
	}
	wg.Wait()
}

const (
	wakeTimeout  = 5 * time.Second
	wakeParallel = 32
)
