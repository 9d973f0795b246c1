package placement

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// DefaultDeadNodeTimeout is how long a node may go unheard before it is
// dead and its replicas are replaced (CockroachDB's
// server.time_until_store_dead is 5 minutes too).
const DefaultDeadNodeTimeout = 5 * time.Minute

// Kinds of the jobs placement starts (sys.jobs' job_type).
const (
	KindDecommission   = "DECOMMISSION"
	KindReplicaMove    = "REPLICA MOVE"
	KindReReplication  = "RE-REPLICATION"
	jobUser            = "node" // CockroachDB's user for the system's own jobs
	stateActive        = "active"
	stateDecommission  = "decommissioning"
	stateDecommissoned = "decommissioned"
)

// keyMembership + node id (8 bytes BE) in the metadata group: the node's
// membership, "decommissioning" or "decommissioned" (no key: active).
const (
	keyMembership    = "node-membership/"
	keyMembershipEnd = "node-membership0" // '/'+1
)

func membershipKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(keyMembership), id)
}

// Group is one Raft group whose replicas placement keeps on live, active
// nodes.
type Group struct {
	ID   raft.GroupID
	Name string // for messages and job descriptions: "the metadata group"
	// CaughtUp reports whether node id's non-voting replica has applied the
	// group's log once (it may be promoted then). Nil: always.
	CaughtUp func(ctx context.Context, id uint64) (bool, error)
}

// Config configures a Manager.
type Config struct {
	Node   *node.Node
	Groups []Group
	// DeadNodeTimeout: a node not heard from for longer is dead (0:
	// DefaultDeadNodeTimeout).
	DeadNodeTimeout time.Duration
	// Interval is how often nodes are pinged and the placement checked:
	// 500ms by default.
	Interval time.Duration
	// SQLAddr returns node id's SQL address for sys.nodes (nil: none).
	SQLAddr func(ctx context.Context, id uint64) (string, error)
	// Logf reports replica moves (nil: quiet).
	Logf func(format string, args ...any)
}

// Manager tracks the liveness of the cluster's nodes (on every node) and,
// on the node that runs Run, replaces the replicas of dead and
// decommissioning nodes. See doc.go for the policy.
type Manager struct {
	cfg     Config
	self    uint64
	started time.Time

	mu       sync.Mutex
	heard    map[uint64]time.Time // last answered ping
	nodes    []node.NodeRecord    // the registry as last read
	states   map[uint64]string    // memberships as last read or written
	stateGen uint64               // setState's writes, so refresh keeps them
	jobs     *jobs.Registry
	peers    map[uint64]*node.Peer // pinged nodes' connections
	draining map[uint64]bool       // nodes a DECOMMISSION statement drains now
	reported map[string]bool       // "cannot replace" messages logged once

	// moveMu serialises membership changes made by policy: a statement's
	// drain and the loop's steps.
	moveMu sync.Mutex
}

// New returns a manager for cfg; Start begins pinging.
func New(cfg Config) *Manager {
	if cfg.DeadNodeTimeout <= 0 {
		cfg.DeadNodeTimeout = DefaultDeadNodeTimeout
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Manager{cfg: cfg, self: cfg.Node.Identity().NodeID, started: time.Now(),
		heard: map[uint64]time.Time{}, states: map[uint64]string{}, draining: map[uint64]bool{}, peers: map[uint64]*node.Peer{},
		reported: map[string]bool{}}
}

// AttachJobs makes replica moves and decommissions rows of sys.jobs (the
// serving node's registry).
func (m *Manager) AttachJobs(r *jobs.Registry) {
	m.mu.Lock()
	m.jobs = r
	m.mu.Unlock()
}

// DeadNodeTimeout is the configured timeout.
func (m *Manager) DeadNodeTimeout() time.Duration { return m.cfg.DeadNodeTimeout }

// liveWindow is how recently a node must have answered to count as live in
// sys.nodes: a few missed pings, never more than the dead timeout.
func (m *Manager) liveWindow() time.Duration {
	return min(m.cfg.DeadNodeTimeout, max(5*time.Second, 4*m.cfg.Interval))
}

// lastHeard is when node id last answered; a node never heard counts from
// the manager's start (a restarted serving node gives every node the full
// timeout before calling it dead).
func (m *Manager) lastHeardLocked(id uint64) time.Time {
	if id == m.self {
		return time.Now()
	}
	if t, ok := m.heard[id]; ok {
		return t
	}
	return m.started
}

// Live reports whether node id answered recently.
func (m *Manager) Live(id uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.liveLocked(id)
}

func (m *Manager) liveLocked(id uint64) bool {
	if id == m.self {
		return true
	}
	t, ok := m.heard[id]
	return ok && time.Since(t) < m.liveWindow()
}

// Dead reports whether node id has not answered for DeadNodeTimeout.
func (m *Manager) Dead(id uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deadLocked(id)
}

func (m *Manager) deadLocked(id uint64) bool {
	return time.Since(m.lastHeardLocked(id)) > m.cfg.DeadNodeTimeout
}

// Eligible reports whether node id may receive replicas: it is active (not
// decommissioning or decommissioned) and not dead. shardrepl's membership
// loop asks before it adds or promotes a node's replica.
func (m *Manager) Eligible(id uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.eligibleLocked(id)
}

func (m *Manager) eligibleLocked(id uint64) bool {
	return m.stateLocked(id) == stateActive && !m.deadLocked(id)
}

func (m *Manager) stateLocked(id uint64) string {
	if s, ok := m.states[id]; ok {
		return s
	}
	return stateActive
}

// Start pings the registry's nodes every Interval until ctx ends, on every
// node (sys.nodes' is_live wherever SQL runs).
func (m *Manager) Start(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer m.closePeers()
		var refreshed time.Time
		for ctx.Err() == nil {
			// The registry and memberships change rarely (and this
			// node's own changes update them at once): reading them
			// every few pings spares the metadata group the reads.
			if time.Since(refreshed) >= refreshEvery && m.refresh(ctx) {
				refreshed = time.Now()
			}
			m.pingAll(ctx)
			sleep(ctx, m.cfg.Interval)
		}
	}()
}

// refreshEvery is how often Start reads the registry and memberships.
const refreshEvery = 2 * time.Second

// refresh reads the registry and the memberships; on failure (no metadata
// quorum) the last ones stay and it reports false.
func (m *Manager) refresh(ctx context.Context) bool {
	m.mu.Lock()
	gen := m.stateGen
	m.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nodes, err := m.cfg.Node.Nodes(rctx)
	if err != nil {
		return false
	}
	states, err := m.readStates(rctx)
	if err != nil {
		return false
	}
	m.mu.Lock()
	m.nodes = nodes
	if m.stateGen == gen {
		// Else setState wrote while this read ran: its state is newer
		// than what the read may have seen.
		m.states = states
	}
	m.mu.Unlock()
	return true
}

func (m *Manager) readStates(ctx context.Context) (map[uint64]string, error) {
	v, err := m.cfg.Node.Host().Read(ctx, node.MetaGroup, kvsm.Scan{Start: []byte(keyMembership), End: []byte(keyMembershipEnd)})
	if err != nil {
		return nil, err
	}
	out := map[uint64]string{}
	for _, kv := range v.([]kvsm.KV) {
		if len(kv.Key) == len(keyMembership)+8 {
			out[binary.BigEndian.Uint64(kv.Key[len(keyMembership):])] = string(kv.Value)
		}
	}
	return out, nil
}

// pingAll asks every other node of the registry for its status, all at
// once, each within a second (or the interval, if longer).
func (m *Manager) pingAll(ctx context.Context) {
	m.mu.Lock()
	nodes := slices.Clone(m.nodes)
	m.mu.Unlock()
	timeout := max(m.cfg.Interval, time.Second)
	var wg sync.WaitGroup
	for _, nd := range nodes {
		if nd.ID == m.self {
			continue
		}
		p, err := m.peer(nd)
		if err != nil {
			m.logOnce("dial "+nd.Addr, "node %d: cannot reach node %d at %s: %v", m.self, nd.ID, nd.Addr, err)
			continue
		}
		wg.Add(1)
		go func(nd node.NodeRecord) {
			defer wg.Done()
			if p.Ping(ctx, nd.ID, timeout) == nil {
				m.mu.Lock()
				m.heard[nd.ID] = time.Now()
				m.mu.Unlock()
			}
		}(nd)
	}
	wg.Wait()
}

// peer returns the connection to node nd, made on first use.
func (m *Manager) peer(nd node.NodeRecord) (*node.Peer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.peers[nd.ID]; ok {
		return p, nil
	}
	p, err := m.cfg.Node.DialPeer(nd.Addr)
	if err != nil {
		return nil, err
	}
	m.peers[nd.ID] = p
	return p, nil
}

func (m *Manager) closePeers() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, p := range m.peers {
		p.Close()
		delete(m.peers, id)
	}
}

// setState records node id's membership in the metadata group.
func (m *Manager) setState(ctx context.Context, id uint64, state string) error {
	cmd, err := kvsm.Command{Ops: []kvsm.Op{{Kind: kvsm.OpPut, Key: membershipKey(id), Value: []byte(state)}}}.Encode()
	if err != nil {
		return err
	}
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := m.cfg.Node.Host().Propose(actx, node.MetaGroup, cmd)
		cancel()
		if errors.Is(err, raft.ErrTimeout) && ctx.Err() == nil {
			continue // a put is safe to repeat
		}
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.states[id] = state
		m.stateGen++
		m.mu.Unlock()
		return nil
	}
}

// NodeStatus is one row of sys.nodes.
type NodeStatus struct {
	ID               uint64
	Addr, SQLAddr    string
	Live             bool
	Membership       string // active, decommissioning, decommissioned
	Replicas, Voters int    // replicas of the groups, voting ones among them
	Leaders          int    // groups whose leader it is, as this node knows
}

// Nodes returns sys.nodes' rows, in node id order.
func (m *Manager) Nodes(ctx context.Context) ([]NodeStatus, error) {
	nodes, err := m.cfg.Node.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	states, err := m.readStates(ctx)
	if err != nil {
		return nil, err
	}
	type count struct{ replicas, voters, leaders int }
	counts := map[uint64]*count{}
	for _, nd := range nodes {
		counts[nd.ID] = &count{}
	}
	h := m.cfg.Node.Host()
	for _, g := range m.cfg.Groups {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			if errors.Is(err, raft.ErrGroupNotFound) {
				continue // not started here yet
			}
			return nil, err
		}
		for r := range mem.Voters {
			if c := counts[uint64(r)]; c != nil {
				c.replicas++
				c.voters++
			}
		}
		for r := range mem.NonVoters {
			if c := counts[uint64(r)]; c != nil {
				c.replicas++
			}
		}
		if l, _, ok, err := h.Leader(g.ID); err == nil && ok {
			if c := counts[uint64(l)]; c != nil {
				c.leaders++
			}
		}
	}
	out := make([]NodeStatus, 0, len(nodes))
	for _, nd := range nodes {
		st := NodeStatus{ID: nd.ID, Addr: nd.Addr, Live: m.Live(nd.ID), Membership: stateActive}
		if s, ok := states[nd.ID]; ok {
			st.Membership = s
		}
		if m.cfg.SQLAddr != nil {
			if st.SQLAddr, err = m.cfg.SQLAddr(ctx, nd.ID); err != nil {
				return nil, err
			}
		}
		c := counts[nd.ID]
		st.Replicas, st.Voters, st.Leaders = c.replicas, c.voters, c.leaders
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b NodeStatus) int { return int(a.ID) - int(b.ID) })
	return out, nil
}

// Decommission drains node id: every replica it holds moves to another
// live, active node (its voters are replaced one group at a time: leadership
// moves away first if it leads, a caught-up non-voter elsewhere is
// promoted, then its replica is removed), then the node is marked
// decommissioned and may be stopped with nothing lost. progress receives
// the replicas moved so far and how many there are. A node that is already
// decommissioned answers at once. Errors carry SQLSTATEs (sqlerr).
func (m *Manager) Decommission(ctx context.Context, id uint64, progress func(done, total int64)) error {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	nodes, err := m.cfg.Node.Nodes(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(nodes, func(nd node.NodeRecord) bool { return nd.ID == id }) {
		return sqlerr.New(sqlerr.UndefinedObject, "node %d does not exist", id)
	}
	if id == m.self {
		return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: fmt.Sprintf("decommissioning node %d, the node that serves SQL, is not supported yet", id),
			Hint:    "Decommission the other nodes; the node that serves SQL cannot hand that role over yet."}
	}
	states, err := m.readStates(ctx)
	if err != nil {
		return err
	}
	if states[id] == stateDecommissoned {
		progress(0, 0)
		return nil
	}
	m.mu.Lock()
	if m.draining[id] {
		m.mu.Unlock()
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "node %d is being decommissioned by another statement", id)
	}
	m.draining[id] = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.draining, id)
		m.mu.Unlock()
	}()
	if err := m.checkCapacity(ctx, nodes, states, id); err != nil {
		return err
	}
	if err := m.setState(ctx, id, stateDecommission); err != nil {
		return err
	}
	m.cfg.Logf("node %d: decommissioning node %d", m.self, id)
	if err := m.drain(ctx, id, KindReplicaMove, progress, true); err != nil {
		return err
	}
	if err := m.setState(ctx, id, stateDecommissoned); err != nil {
		return err
	}
	m.cfg.Logf("node %d: node %d is decommissioned: it holds no replica and may be stopped", m.self, id)
	return nil
}

// checkCapacity refuses a decommission that would leave a group fewer
// voters than it has now: the other live, active nodes must be able to
// hold them all.
func (m *Manager) checkCapacity(ctx context.Context, nodes []node.NodeRecord, states map[uint64]string, id uint64) error {
	var others []uint64
	for _, nd := range nodes {
		s := states[nd.ID]
		if nd.ID != id && (s == "" || s == stateActive) && m.Live(nd.ID) {
			others = append(others, nd.ID)
		}
	}
	for _, g := range m.cfg.Groups {
		mem, err := m.cfg.Node.Host().Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		if _, ok := mem.Voters[raft.ReplicaID(id)]; !ok {
			continue
		}
		if len(others) < len(mem.Voters) {
			return &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
				Message: fmt.Sprintf("cannot decommission node %d: %s has %d replicas and only %d other live nodes could hold them",
					id, g.Name, len(mem.Voters), len(others)),
				Hint: "Add a node (pivotdb serve --join) or bring a dead one back before decommissioning this one."}
		}
	}
	return nil
}

// drain moves every replica of node id away, group by group. wait: a
// voter without a caught-up non-voter to take over is waited for (a
// statement, whose capacity was checked); else it is left for the next
// round (the loop).
func (m *Manager) drain(ctx context.Context, id uint64, kind string, progress func(done, total int64), wait bool) error {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	h := m.cfg.Node.Host()
	r := raft.ReplicaID(id)
	var todo []Group
	for _, g := range m.cfg.Groups {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		if _, ok := mem.Voters[r]; ok {
			todo = append(todo, g)
		} else if _, ok := mem.NonVoters[r]; ok {
			todo = append(todo, g)
		}
	}
	total := int64(len(todo))
	progress(0, total)
	for i, g := range todo {
		waitUntil := time.Now().Add(targetWait)
		for {
			err := m.moveOut(ctx, g, id, kind)
			if err == nil {
				break
			}
			if !errors.Is(err, errNoTarget) || !wait {
				return err
			}
			if time.Now().After(waitUntil) {
				return &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
					Message: fmt.Sprintf("decommissioning node %d: %v after %s", id, err, targetWait),
					Hint:    "The node stays decommissioning: the cluster goes on moving its replicas once another node has caught up; run the statement again to wait for it."}
			}
			m.logOnce(fmt.Sprintf("wait %d %d", g.ID, id), "node %d: %v; waiting for one", m.self, err)
			select {
			case <-ctx.Done():
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "decommissioning node %d: %v", id, err)
			case <-time.After(m.cfg.Interval):
			}
		}
		progress(int64(i+1), total)
	}
	return nil
}

// targetWait bounds how long a decommission statement waits for a node
// that could take over a replica (one that just joined and is catching
// up) before it fails.
const targetWait = 2 * time.Minute

// errNoTarget: no live, active node holds a caught-up non-voting replica
// of the group that could take over a voter.
var errNoTarget = errors.New("no live node holds a caught-up replica to take over")

// moveOut removes node id's replica of g; a voter is first replaced by a
// caught-up non-voter on a live, active node (the move is a job of kind
// with its steps as progress).
func (m *Manager) moveOut(ctx context.Context, g Group, id uint64, kind string) error {
	h := m.cfg.Node.Host()
	r := raft.ReplicaID(id)
	mem, err := h.Membership(ctx, g.ID)
	if err != nil {
		return err
	}
	if _, ok := mem.NonVoters[r]; ok {
		if err := h.RemoveReplica(ctx, g.ID, r); err != nil {
			return fmt.Errorf("removing node %d's non-voting replica of %s: %w", id, g.Name, err)
		}
		m.cfg.Logf("node %d: removed node %d's non-voting replica of %s", m.self, id, g.Name)
		return nil
	}
	if _, ok := mem.Voters[r]; !ok {
		return nil // gone already (a repeat after a failure)
	}
	target, err := m.pickTarget(ctx, g, mem, id)
	if err != nil {
		return err
	}
	if target == 0 {
		return fmt.Errorf("%s: node %d's replica: %w", g.Name, id, errNoTarget)
	}
	job := m.startJob(kind, fmt.Sprintf("move the replica of %s from node %d to node %d", g.Name, id, target))
	const steps = 3
	job.progress(0, steps)
	err = m.replace(ctx, g, id, target, job)
	job.finish(err)
	if err == nil {
		m.cfg.Logf("node %d: moved the replica of %s from node %d to node %d", m.self, g.Name, id, target)
	}
	return err
}

func (m *Manager) replace(ctx context.Context, g Group, id, target uint64, job *jobHandle) error {
	h := m.cfg.Node.Host()
	r := raft.ReplicaID(id)
	// Leadership first: the leader should not be the replica that goes.
	if l, _, ok, err := h.Leader(g.ID); err == nil && ok && l == r && m.Live(id) {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		to := raft.ReplicaID(0)
		if _, ok := mem.Voters[raft.ReplicaID(m.self)]; ok {
			to = raft.ReplicaID(m.self)
		} else {
			for v := range mem.Voters {
				if v != r && m.Live(uint64(v)) {
					to = v
					break
				}
			}
		}
		if to != 0 {
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := h.TransferLeadership(tctx, g.ID, to)
			cancel()
			if err != nil {
				return fmt.Errorf("moving the leadership of %s away from node %d: %w", g.Name, id, err)
			}
		}
	}
	job.progress(1, 3)
	// Promote the target while the leaving replica still votes: the group
	// never has fewer voters than before.
	ok, err := h.PromoteIf(ctx, g.ID, raft.ReplicaID(target), func(mem raft.Membership) bool {
		_, still := mem.Voters[r]
		return still
	})
	if err != nil {
		return fmt.Errorf("promoting node %d's replica of %s: %w", target, g.Name, err)
	}
	if !ok {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		if _, voter := mem.Voters[raft.ReplicaID(target)]; !voter {
			return fmt.Errorf("promoting node %d's replica of %s: the membership changed", target, g.Name)
		}
	}
	job.progress(2, 3)
	if err := h.RemoveReplica(ctx, g.ID, r); err != nil {
		return fmt.Errorf("removing node %d's replica of %s: %w", id, g.Name, err)
	}
	job.progress(3, 3)
	return nil
}

// pickTarget chooses the node whose non-voting replica of g takes over
// from node id's voter: live, active, caught up; the one with the fewest
// voters over all groups first, then the lowest id. 0: none.
func (m *Manager) pickTarget(ctx context.Context, g Group, mem raft.Membership, id uint64) (uint64, error) {
	var cands []uint64
	for nv := range mem.NonVoters {
		n := uint64(nv)
		m.mu.Lock()
		ok := n != id && m.eligibleLocked(n) && m.liveLocked(n)
		m.mu.Unlock()
		if !ok {
			continue
		}
		if g.CaughtUp != nil {
			up, err := g.CaughtUp(ctx, n)
			if err != nil {
				return 0, err
			}
			if !up {
				continue
			}
		}
		cands = append(cands, n)
	}
	if len(cands) == 0 {
		return 0, nil
	}
	load := map[uint64]int{}
	for _, og := range m.cfg.Groups {
		om, err := m.cfg.Node.Host().Membership(ctx, og.ID)
		if err != nil {
			return 0, err
		}
		for v := range om.Voters {
			load[uint64(v)]++
		}
	}
	slices.SortFunc(cands, func(a, b uint64) int {
		if load[a] != load[b] {
			return load[a] - load[b]
		}
		return int(a) - int(b)
	})
	return cands[0], nil
}

// Run replaces the replicas of dead nodes, and finishes decommissions a
// restart interrupted, every Interval until ctx ends. It runs on the node
// that manages the shard group's membership (the serving node).
func (m *Manager) Run(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := m.step(ctx); err != nil && ctx.Err() == nil {
				m.logOnce("step "+err.Error(), "node %d: placement: %v", m.self, err)
			}
			sleep(ctx, m.cfg.Interval)
		}
	}()
}

// step is one round of Run.
func (m *Manager) step(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	m.mu.Lock()
	nodes := slices.Clone(m.nodes)
	var work []uint64
	var dead []bool
	for _, nd := range nodes {
		if nd.ID == m.self || m.draining[nd.ID] {
			continue
		}
		s := m.stateLocked(nd.ID)
		switch {
		case s == stateDecommission:
			work, dead = append(work, nd.ID), append(dead, false)
		case s == stateActive && m.deadLocked(nd.ID):
			work, dead = append(work, nd.ID), append(dead, true)
		}
	}
	m.mu.Unlock()
	for i, id := range work {
		if !dead[i] {
			// A decommission whose statement ended (the serving node
			// restarted, or the client went away): finish it.
			if err := m.drain(ctx, id, KindReplicaMove, func(int64, int64) {}, false); err != nil {
				return err
			}
			if err := m.setState(ctx, id, stateDecommissoned); err != nil {
				return err
			}
			m.cfg.Logf("node %d: node %d is decommissioned: it holds no replica and may be stopped", m.self, id)
			continue
		}
		if err := m.heal(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// heal replaces dead node id's replicas: its voters by caught-up
// non-voters of live nodes (when there are any: a voter that cannot be
// replaced stays, since removing it would only shrink the group), its
// non-voters are removed.
func (m *Manager) heal(ctx context.Context, id uint64) error {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	h := m.cfg.Node.Host()
	r := raft.ReplicaID(id)
	for _, g := range m.cfg.Groups {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		_, voter := mem.Voters[r]
		_, nonVoter := mem.NonVoters[r]
		if !voter && !nonVoter {
			continue
		}
		m.logOnce(fmt.Sprintf("dead %d", id), "node %d: node %d has not answered for %s: it is dead; replacing its replicas",
			m.self, id, m.cfg.DeadNodeTimeout)
		err = m.moveOut(ctx, g, id, KindReReplication)
		if errors.Is(err, errNoTarget) {
			m.logOnce(fmt.Sprintf("notarget %d %d", g.ID, id), "node %d: cannot replace dead node %d's replica of %s yet: %v",
				m.self, id, g.Name, err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) logOnce(key, format string, args ...any) {
	m.mu.Lock()
	seen := m.reported[key]
	m.reported[key] = true
	m.mu.Unlock()
	if !seen {
		m.cfg.Logf(format, args...)
	}
}

// jobHandle is a job of the attached registry, or nothing when none is
// attached (a node that does not serve SQL).
type jobHandle struct{ j *jobs.Job }

func (m *Manager) startJob(kind, description string) *jobHandle {
	m.mu.Lock()
	r := m.jobs
	m.mu.Unlock()
	if r == nil {
		return &jobHandle{}
	}
	return &jobHandle{j: r.Start(kind, description, jobUser)}
}

func (j *jobHandle) progress(done, total int64) {
	if j.j != nil {
		j.j.Progress(done, total)
	}
}

func (j *jobHandle) finish(err error) {
	if j.j != nil {
		j.j.Finish(err)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
