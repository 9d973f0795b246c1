package placement

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// Serving: the group's leader serves SQL (the shard group today): the
	// allocator leaves its leadership alone, and decommissioning the
	// serving node hands it over first (Decommission).
	Serving bool
	// Size returns the group's bytes as this node's replica holds them
	// (nil: 0); the allocator compares nodes by the bytes they lead when
	// their counts tie.
	Size func(ctx context.Context) (int64, error)
	// Applied returns the group's applied index on this node's replica
	// (nil: unknown, rate 0); the allocator weighs leaderships by how fast
	// it grows (commands per second: the group's write rate).
	Applied func(ctx context.Context) (uint64, error)
	// Generations: the group's replicas may change generations
	// (generations.go): its nodes rejoin as non-voters under a new replica
	// id when their voter moves away, so the allocator moves its voters.
	// The nodes must run the rejoin (Rejoin) when their recorded replica
	// id changes (cluster/shardrepl does for the shard group).
	Generations bool
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
	// NoRebalance turns the allocator off (serve --rebalance=false): Run
	// then only drains, heals and removes orphans.
	NoRebalance bool
	// Locality is this node's --locality (ParseLocality's canonical form;
	// "": none), recorded in the metadata group by Start.
	Locality string
	// ReadReplicaGroups lists the shard groups and the read replicas
	// their tables ask for (READ_REPLICAS_SETTINGS; readreplicas.go); nil:
	// Run places none. An error skips the round's read-replica step.
	ReadReplicaGroups func(ctx context.Context) ([]ReadReplicaGroup, error)
	// ReadReplicaCaughtUp reports whether node id's non-voters may serve
	// reads (nil: always), asked once per node a round. Reads stay safe
	// without it (a follower reads only below its replicas' closed
	// timestamps); it keeps the choice off a node still receiving its
	// snapshot.
	ReadReplicaCaughtUp func(ctx context.Context, id uint64) (bool, error)
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
	pending  []*jobHandle          // jobs started while no registry was attached
	peers    map[uint64]*node.Peer // pinged nodes' connections
	draining map[uint64]bool       // nodes a DECOMMISSION statement drains now
	reported map[string]bool       // "cannot replace" messages logged once
	alloc    allocState            // allocator.go
	resumed  map[uint64]*jobHandle // decommissions the loop finishes
	// localities as last read (locality.go)
	localities map[uint64]string

	// moveMu serialises membership changes made by policy: a statement's
	// drain and the loop's steps.
	moveMu sync.Mutex

	// snapMu guards snapSends, the snapshot streams' targets and jobs
	// not matched yet (snapshotjobs.go); held across their jobs' writes,
	// so not under mu.
	snapMu    sync.Mutex
	snapSends snapshotSends
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
		reported: map[string]bool{}, resumed: map[uint64]*jobHandle{}, localities: map[uint64]string{},
		alloc: allocState{imbalanced: map[string]time.Time{}, moved: map[raft.GroupID]time.Time{}, rates: map[raft.GroupID]rateSample{}}}
}

// AttachJobs makes replica moves and decommissions rows of sys.jobs (the
// serving node's registry), the jobs started while none was attached
// included (jobHandle); nil (the node stops serving) detaches it and
// drops those.
func (m *Manager) AttachJobs(r *jobs.Registry) {
	m.mu.Lock()
	m.jobs = r
	pending := m.pending
	m.pending = nil
	m.mu.Unlock()
	if r != nil {
		for _, h := range pending {
			h.attach(r)
		}
	}
}

// DeadNodeTimeout is the configured timeout.
func (m *Manager) DeadNodeTimeout() time.Duration { return m.cfg.DeadNodeTimeout }

// Self is the id of the node the manager runs on.
func (m *Manager) Self() uint64 { return m.self }

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
		recorded := false
		for ctx.Err() == nil {
			if !recorded {
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				err := m.recordLocality(rctx)
				cancel()
				if recorded = err == nil; !recorded {
					m.logOnce("locality", "node %d: recording its locality (retrying): %v", m.self, err)
				}
			}
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
	locs, err := m.readLocalities(rctx)
	if err != nil {
		return false
	}
	m.mu.Lock()
	m.nodes = nodes
	m.localities = locs
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
	m.pingNodes(ctx, nodes)
}

func (m *Manager) pingNodes(ctx context.Context, nodes []node.NodeRecord) {
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
	if err := m.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: membershipKey(id), Value: []byte(state)}); err != nil {
		return err
	}
	m.mu.Lock()
	m.states[id] = state
	m.stateGen++
	m.mu.Unlock()
	return nil
}

// NodeStatus is one row of sys.nodes.
type NodeStatus struct {
	ID               uint64
	Addr, SQLAddr    string
	Live             bool
	Membership       string // active, decommissioning, decommissioned
	Locality         string // --locality: "az=a,rack=1"; "" none
	Replicas, Voters int    // replicas of the groups, voting ones among them
	Leaders          int    // groups whose leader it is, as this node knows
	Bytes            int64  // the sizes (Group.Size) of the groups it holds a replica of
}

// Nodes returns sys.nodes' rows, in node id order, counting the groups of
// Config.Groups (sys.nodes' placed_* columns; cmd/pivotdb adds the split
// children for its replicas, voters and leaders).
func (m *Manager) Nodes(ctx context.Context) ([]NodeStatus, error) {
	nodes, err := m.cfg.Node.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	states, err := m.readStates(ctx)
	if err != nil {
		return nil, err
	}
	locs, err := m.readLocalities(ctx)
	if err != nil {
		return nil, err
	}
	type count struct {
		replicas, voters, leaders int
		bytes                     int64
	}
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
		var size int64
		if g.Size != nil {
			if size, err = g.Size(ctx); err != nil {
				return nil, err
			}
		}
		for r := range mem.Voters {
			if c := counts[NodeOf(r)]; c != nil {
				c.replicas++
				c.voters++
				c.bytes += size
			}
		}
		for r := range mem.NonVoters {
			if c := counts[NodeOf(r)]; c != nil {
				c.replicas++
				c.bytes += size
			}
		}
		if l, _, ok, err := h.Leader(g.ID); err == nil && ok {
			if c := counts[NodeOf(l)]; c != nil {
				c.leaders++
			}
		}
	}
	out := make([]NodeStatus, 0, len(nodes))
	for _, nd := range nodes {
		st := NodeStatus{ID: nd.ID, Addr: nd.Addr, Live: m.Live(nd.ID), Membership: stateActive, Locality: locs[nd.ID]}
		if s, ok := states[nd.ID]; ok {
			st.Membership = s
		}
		if m.cfg.SQLAddr != nil {
			if st.SQLAddr, err = m.cfg.SQLAddr(ctx, nd.ID); err != nil {
				return nil, err
			}
		}
		c := counts[nd.ID]
		st.Replicas, st.Voters, st.Leaders, st.Bytes = c.replicas, c.voters, c.leaders, c.bytes
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
	if id == m.self {
		return m.handOverServing(ctx)
	}
	if err := m.drain(ctx, id, KindReplicaMove, progress, true); err != nil {
		return err
	}
	if err := m.setState(ctx, id, stateDecommissoned); err != nil {
		return err
	}
	m.cfg.Logf("node %d: node %d is decommissioned: it holds no replica and may be stopped", m.self, id)
	return nil
}

// handOverServing is Decommission of the node it runs on, which serves
// SQL: it moves the leadership of every group it leads to another live,
// active voter, the serving group's (Group.Serving) first, so that node
// takes over serving; its placement loop then drains this node as it
// finishes any decommission left "decommissioning" (step). It returns once
// the leaderships moved; this node stops serving SQL shortly after, when
// its replica applies the new node's claim (cluster/shardrepl). If no
// group's leadership could move, the node is active again and the error
// says why.
func (m *Manager) handOverServing(ctx context.Context) error {
	groups := slices.Clone(m.cfg.Groups)
	slices.SortStableFunc(groups, func(a, b Group) int {
		if a.Serving != b.Serving && a.Serving {
			return -1
		} else if a.Serving != b.Serving {
			return 1
		}
		return 0
	})
	for _, g := range groups {
		if _, err := m.HandOver(ctx, g.ID); err != nil {
			if g.Serving {
				// Still serving: it is not draining, so it is active.
				return errors.Join(err, m.setState(context.WithoutCancel(ctx), m.self, stateActive))
			}
			// The new serving node moves it when it drains this one.
			m.cfg.Logf("node %d: %v", m.self, err)
		}
	}
	return nil
}

// HandOver moves the leadership of group g away from this node, if it
// leads g, to the live, active voter that leads the fewest groups (then
// votes in the fewest, then the lowest id), and returns that node (0: this
// node did not lead g). shardrepl calls it when its replica leads the shard
// group while this node is not eligible (a decommissioning node that an
// election made leader again), instead of claiming serving. Errors carry
// SQLSTATEs (55000: no voter could take it).
func (m *Manager) HandOver(ctx context.Context, g raft.GroupID) (uint64, error) {
	h := m.cfg.Node.Host()
	name := fmt.Sprintf("group %d", g)
	for _, cg := range m.cfg.Groups {
		if cg.ID == g {
			name = cg.Name
		}
	}
	l, _, ok, err := h.Leader(g)
	if err != nil {
		return 0, err
	}
	if !ok || NodeOf(l) != m.self {
		return 0, nil
	}
	mem, err := h.Membership(ctx, g)
	if err != nil {
		return 0, err
	}
	leaders := map[uint64]int{}
	voters := map[uint64]int{}
	for _, og := range m.cfg.Groups {
		if ol, _, ok, err := h.Leader(og.ID); err == nil && ok {
			leaders[NodeOf(ol)]++
		}
		if om, err := h.Membership(ctx, og.ID); err == nil {
			for v := range om.Voters {
				voters[NodeOf(v)]++
			}
		}
	}
	var cands []uint64
	m.mu.Lock()
	for v := range mem.Voters {
		if id := NodeOf(v); id != m.self && m.eligibleLocked(id) && m.liveLocked(id) {
			cands = append(cands, id)
		}
	}
	m.mu.Unlock()
	if len(cands) == 0 {
		return 0, &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
			Message: fmt.Sprintf("node %d cannot hand over the leadership of %s: no other live, active node votes in it", m.self, name),
			Hint:    "Wait until the group's other voters are up, or add a node, then try again."}
	}
	slices.SortFunc(cands, func(a, b uint64) int {
		if leaders[a] != leaders[b] {
			return leaders[a] - leaders[b]
		}
		if voters[a] != voters[b] {
			return voters[a] - voters[b]
		}
		return cmpInt64(int64(a), int64(b))
	})
	var last error
	for _, to := range cands {
		gr := Group{ID: g, Name: name}
		last = m.transferLeadership(ctx, gr, m.self, to,
			fmt.Sprintf("move the leadership of %s from node %d to node %d (node %d is decommissioning)", name, m.self, to, m.self))
		if last == nil {
			return to, nil
		}
	}
	return 0, last
}

// Recommission makes a node that is being decommissioned active again: a
// drain in progress stops before its next move, and the node may receive
// replicas and leaderships again. It holds what it has not given up yet;
// of a group whose replicas change generations (Group.Generations: the
// drain does those first) it gets a non-voter of the next generation
// back, which its node rejoins (Rejoin). A node that already gave up a
// replica of any other group is refused (55000: its replica id, which is
// its node id there, can never come back), and so is a decommissioned
// one: it rejoins with an empty data directory, as a new node. An active
// node answers at once. Errors carry SQLSTATEs.
func (m *Manager) Recommission(ctx context.Context, id uint64) error {
	nodes, err := m.cfg.Node.Nodes(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(nodes, func(nd node.NodeRecord) bool { return nd.ID == id }) {
		return sqlerr.New(sqlerr.UndefinedObject, "node %d does not exist", id)
	}
	states, err := m.readStates(ctx)
	if err != nil {
		return err
	}
	rejoin := "Stop the node, empty its data directory and start it again with --join: it joins as a new node."
	switch states[id] {
	case "", stateActive:
		return nil
	case stateDecommissoned:
		return &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
			Message: fmt.Sprintf("cannot recommission node %d: it is decommissioned, and its replicas were removed for good", id),
			Hint:    rejoin}
	}
	// The drain and this check are serialised: a drain's next move sees
	// the new state, and no replica goes between the check and the write.
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	var back []Group // groups it gave up and rejoins under a new generation
	var last []raft.ReplicaID
	for _, g := range m.cfg.Groups {
		mem, err := m.cfg.Node.Host().Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		if gaveUp(mem, id) && g.Generations {
			back, last = append(back, g), append(last, lastRemoved(mem, id))
		} else if gaveUp(mem, id) {
			return &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
				Message: fmt.Sprintf("cannot recommission node %d: it already gave up its replica of %s, which cannot come back", id, g.Name),
				Hint:    "Let the decommission finish, then " + strings.ToLower(rejoin[:1]) + rejoin[1:]}
		}
	}
	if err := m.setState(ctx, id, stateActive); err != nil {
		return err
	}
	for i, g := range back {
		addr := ""
		for _, nd := range nodes {
			if nd.ID == id {
				addr = nd.RaftAddr
			}
		}
		if err := m.addNextGeneration(ctx, g, last[i], addr); err != nil {
			return fmt.Errorf("recommissioning node %d: %w", id, err)
		}
		m.cfg.Logf("node %d: node %d rejoins %s as a non-voter of a new generation", m.self, id, g.Name)
	}
	m.cfg.Logf("node %d: node %d is recommissioned (active again)", m.self, id)
	return nil
}

// checkCapacity refuses a decommission that would leave a group fewer
// voters than it has now: the other live, active nodes must be able to
// hold them all.
func (m *Manager) checkCapacity(ctx context.Context, nodes []node.NodeRecord, states map[uint64]string, id uint64) error {
	// Nodes not heard from lately (one that just joined, before the
	// pinger's next read of the registry) are asked now.
	m.pingNodes(ctx, slices.DeleteFunc(slices.Clone(nodes), func(nd node.NodeRecord) bool { return m.Live(nd.ID) }))
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
		if _, voter, _ := replicaOn(mem, id); !voter {
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
	h := m.cfg.Node.Host()
	var todo []Group
	for _, g := range m.cfg.Groups {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		if _, _, ok := replicaOn(mem, id); ok {
			todo = append(todo, g)
		}
	}
	// Groups whose replicas change generations first: a node recommissioned
	// before the drain reaches the others rejoins those as a non-voter
	// (Recommission), while a replica of any other group it gave up could
	// never come back.
	slices.SortStableFunc(todo, func(a, b Group) int {
		if a.Generations == b.Generations {
			return 0
		}
		if a.Generations {
			return -1
		}
		return 1
	})
	total := int64(len(todo))
	progress(0, total)
	for i, g := range todo {
		waitUntil := time.Now().Add(targetWait)
		for {
			// Each move holds moveMu, but not the waits between them, so
			// a recommission is not held up by a drain waiting for a
			// target.
			m.moveMu.Lock()
			err := m.stillDecommissioning(id)
			if err == nil {
				err = m.moveOut(ctx, g, id, kind)
			}
			m.moveMu.Unlock()
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

// stillDecommissioning fails once node id was recommissioned (Recommission,
// which holds moveMu as drain does, so it is seen before the next move).
func (m *Manager) stillDecommissioning(id uint64) error {
	m.mu.Lock()
	s := m.stateLocked(id)
	m.mu.Unlock()
	if s != stateDecommission {
		return sqlerr.New(sqlerr.QueryCanceled, "decommissioning node %d stopped: the node was recommissioned", id)
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
	mem, err := h.Membership(ctx, g.ID)
	if err != nil {
		return err
	}
	r, voter, ok := replicaOn(mem, id)
	if ok && !voter {
		if err := retry(ctx, func(ctx context.Context) error { return h.RemoveReplica(ctx, g.ID, r) }); err != nil {
			return fmt.Errorf("removing node %d's non-voting replica of %s: %w", id, g.Name, err)
		}
		m.cfg.Logf("node %d: removed node %d's non-voting replica of %s", m.self, id, g.Name)
		return nil
	}
	if !ok {
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
	err = m.replace(ctx, g, r, target, job)
	job.finish(err)
	if err == nil {
		m.cfg.Logf("node %d: moved the replica of %s from node %d to node %d", m.self, g.Name, id, target)
	}
	return err
}

func (m *Manager) replace(ctx context.Context, g Group, r raft.ReplicaID, target uint64, job *jobHandle) error {
	h := m.cfg.Node.Host()
	id := NodeOf(r)
	// Leadership first: the leader should not be the replica that goes.
	if l, _, ok, err := h.Leader(g.ID); err == nil && ok && l == r && m.Live(id) {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		to := raft.ReplicaID(0)
		if self, voter, _ := replicaOn(mem, m.self); voter {
			to = self
		} else {
			for v := range mem.Voters {
				if v != r && m.Live(NodeOf(v)) {
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
	mem, err := h.Membership(ctx, g.ID)
	if err != nil {
		return err
	}
	rTarget, _, found := replicaOn(mem, target)
	if !found {
		return fmt.Errorf("promoting node %d's replica of %s: it holds none any more", target, g.Name)
	}
	if err := m.promoteWhileVoter(ctx, g, rTarget, r); err != nil {
		return err
	}
	job.progress(2, 3)
	if err := retry(ctx, func(ctx context.Context) error { return h.RemoveReplica(ctx, g.ID, r) }); err != nil {
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
		n := NodeOf(nv)
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
			load[NodeOf(v)]++
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
	if err := m.removeOrphans(ctx); err != nil {
		return err
	}
	for i, id := range work {
		if !dead[i] {
			// A decommission whose statement ended (the serving node
			// handed serving over to this one, restarted, or the client
			// went away): finish it, as a job of its own.
			if err := m.finishDecommission(ctx, id); err != nil {
				return err
			}
			continue
		}
		if err := m.heal(ctx, id); err != nil {
			return err
		}
	}
	if err := m.placeReadReplicas(ctx); err != nil && ctx.Err() == nil {
		// Logged, not returned: a group that cannot be read now must
		// not hold up the allocator.
		m.logOnce("read replicas "+err.Error(), "node %d: placement: %v", m.self, err)
	}
	_, err := m.rebalance(ctx)
	return err
}

// finishDecommission drains node id, left decommissioning, as a
// DECOMMISSION job, and marks it decommissioned.
// The job stays running across rounds while the drain waits or fails for
// a while (no target yet, a timeout): it ends when the node is
// decommissioned or recommissioned.
func (m *Manager) finishDecommission(ctx context.Context, id uint64) error {
	m.mu.Lock()
	job := m.resumed[id]
	m.mu.Unlock()
	if job == nil {
		job = m.startJob(KindDecommission, fmt.Sprintf("finish decommissioning node %d", id))
		m.mu.Lock()
		m.resumed[id] = job
		m.mu.Unlock()
	}
	err := m.drain(ctx, id, KindReplicaMove, job.progress, false)
	if err == nil {
		err = m.setState(ctx, id, stateDecommissoned)
	}
	var canceled *sqlerr.Error
	if err != nil && !(errors.As(err, &canceled) && canceled.Code == sqlerr.QueryCanceled) {
		return err
	}
	job.finish(err)
	m.mu.Lock()
	delete(m.resumed, id)
	m.mu.Unlock()
	if err == nil {
		m.cfg.Logf("node %d: node %d is decommissioned: it holds no replica and may be stopped", m.self, id)
	}
	return nil
}

// removeOrphans removes the replicas whose node left the registry: a node
// whose data directory was wiped rejoins under a new id, and the join
// deletes the old id's registry entry and metadata replica (cluster/node),
// but its replicas of the other groups stay members until removed here.
// They go first, unlike a dead node's voters: the new incarnation has the
// same Raft address, which dragonboat refuses to add while the old replica
// holds it, and the old replica's data is gone for good, so removing it
// costs the group no fault tolerance it had. shardrepl's loop then adds
// the new incarnation and promotes it once it caught up. The registry is
// read after each membership: a node's entry is written before any of its
// replicas is added, so a replica whose node is missing from the later
// read is an orphan, not a node still joining.
func (m *Manager) removeOrphans(ctx context.Context) error {
	h := m.cfg.Node.Host()
	for _, g := range m.cfg.Groups {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		nodes, err := m.cfg.Node.Nodes(ctx)
		if err != nil {
			return err
		}
		known := map[uint64]bool{}
		for _, nd := range nodes {
			known[nd.ID] = true
		}
		var orphans []raft.ReplicaID
		for r := range mem.Voters {
			if !known[NodeOf(r)] {
				orphans = append(orphans, r)
			}
		}
		for r := range mem.NonVoters {
			if !known[NodeOf(r)] {
				orphans = append(orphans, r)
			}
		}
		for _, id := range orphans {
			m.moveMu.Lock()
			job := m.startJob(KindReReplication, fmt.Sprintf("remove replica %d of %s: its node left the registry (rejoined under a new id)", id, g.Name))
			job.progress(0, 1)
			err := retry(ctx, func(ctx context.Context) error { return h.RemoveReplica(ctx, g.ID, id) })
			if err == nil {
				job.progress(1, 1)
			}
			job.finish(err)
			m.moveMu.Unlock()
			if err != nil {
				return fmt.Errorf("removing replica %d of %s: %w", id, g.Name, err)
			}
			m.cfg.Logf("node %d: removed replica %d of %s: its node left the registry (rejoined under a new id)", m.self, id, g.Name)
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
	for _, g := range m.cfg.Groups {
		mem, err := h.Membership(ctx, g.ID)
		if err != nil {
			return err
		}
		if _, _, ok := replicaOn(mem, id); !ok {
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

// jobHandle is a job of the attached registry. One started while none is
// attached is pending: a node that just took over serving runs its rounds
// before its SQL engine is open and attaches sys.jobs' registry, and a
// drain or move it ran then must still show (a decommission finished so
// was missing from sys.jobs: TestClusterDecommissionServing). Its progress
// and outcome are kept until AttachJobs starts it in the registry; a node
// that stops serving first drops it, as it would its registry.
type jobHandle struct {
	mu sync.Mutex
	j  *jobs.Job // nil while pending

	kind, description string
	done, total       int64
	finished          bool
	err               error
}

// maxPendingJobs bounds the jobs kept for a registry that may never come
// (a manager on a node that does not serve SQL): the oldest are dropped.
const maxPendingJobs = 64

func (m *Manager) startJob(kind, description string) *jobHandle {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs != nil {
		return &jobHandle{j: m.jobs.Start(kind, description, jobUser)}
	}
	h := &jobHandle{kind: kind, description: description}
	if len(m.pending) == maxPendingJobs {
		m.pending = m.pending[1:]
	}
	m.pending = append(m.pending, h)
	return h
}

func (j *jobHandle) progress(done, total int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.j != nil {
		j.j.Progress(done, total)
		return
	}
	j.done, j.total = done, total
}

func (j *jobHandle) finish(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.j != nil {
		j.j.Finish(err)
		return
	}
	j.finished, j.err = true, err
}

// attach starts a pending job in r with what it recorded so far.
func (j *jobHandle) attach(r *jobs.Registry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.j != nil {
		return
	}
	j.j = r.Start(j.kind, j.description, jobUser)
	if j.total != 0 {
		j.j.Progress(j.done, j.total)
	}
	if j.finished {
		j.j.Finish(j.err)
	}
}

// changeAttempt bounds one attempt of a membership change: a change
// forwarded to a leader that lost its leadership meanwhile (a transfer
// just ran) is neither applied nor refused, only its deadline ends it.
const changeAttempt = 5 * time.Second

// retry runs a membership change with attempts of changeAttempt until it
// succeeds, fails otherwise than by timing out, or ctx ends. Repeating is
// safe: raft.Host skips a change whose effect is in place (a promotion or
// removal that did apply), and PromoteIf checks its condition again.
func retry(ctx context.Context, change func(ctx context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, changeAttempt)
		err := change(actx)
		cancel()
		if err == nil || !errors.Is(err, raft.ErrTimeout) || ctx.Err() != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// promoteWhileVoter makes replica to of g a voter while leaving, the
// replica it replaces, still votes, so that the group never has fewer
// voters than before. A promotion refused because leaving is gone already
// is fine if to votes anyway (an earlier try of the same move got there).
func (m *Manager) promoteWhileVoter(ctx context.Context, g Group, to, leaving raft.ReplicaID) error {
	h := m.cfg.Node.Host()
	var promoted bool
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		promoted, err = h.PromoteIf(ctx, g.ID, to, func(mem raft.Membership) bool {
			_, still := mem.Voters[leaving]
			return still
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("promoting node %d's replica of %s: %w", NodeOf(to), g.Name, err)
	}
	if promoted {
		return nil
	}
	mem, err := h.Membership(ctx, g.ID)
	if err != nil {
		return err
	}
	if _, voter := mem.Voters[to]; !voter {
		return fmt.Errorf("promoting node %d's replica of %s: the membership changed", NodeOf(to), g.Name)
	}
	return nil
}
