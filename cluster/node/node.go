package node

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Config configures a node.
type Config struct {
	// DataDir holds the identity, the Raft log store (raft/) and the
	// replicas' store (store/).
	DataDir string
	// Addr is the cluster RPC address (host:port): what --join lists name.
	Addr string
	// RaftAddr is the Raft transport's address; it may not change across
	// restarts of DataDir.
	RaftAddr string
	// Join lists the cluster RPC addresses of the founding nodes (the same
	// list on each, Addr among them) or, for a node added later, of any
	// live members. Empty: a one-node cluster.
	Join []string
	// MetaReplicas is how many voters the metadata group gets: 3 by default.
	// A node that joins when the group has that many stays a non-voter.
	MetaReplicas int
	// Raft tunes the host (RTT, snapshot interval); its Dir and RaftAddress
	// must be empty: they follow DataDir and RaftAddr.
	Raft raft.HostConfig
	// TLS makes the cluster RPC and Raft traffic mutual TLS with these
	// files. Required when Addr or RaftAddr is not a loopback address: a
	// cluster port open to a network without it would let anyone join.
	TLS *raft.TLSFiles
	// Store are the options of the replicas' Pebble store (nil: defaults).
	Store *pebble.Options
	// Logf reports progress while the node waits for peers (nil: quiet).
	Logf func(format string, args ...any)
	// PollInterval is how often a forming node asks its peers again: 200ms
	// by default.
	PollInterval time.Duration
	// MaxOffset bounds the clock offset between nodes (clockoffset.go):
	// a node whose clock is off by more than 80% of it from a majority of
	// the nodes it hears from is unhealthy (ClockMonitor.Check). 0:
	// DefaultMaxOffset; negative: no check.
	MaxOffset time.Duration
	// Physical is the wall clock, in nanoseconds since the Unix epoch,
	// that the node's pings report and measure with; nil: the system's.
	// The storage engine's HLC must read the same one (the testing knob,
	// clocksource.go, shifts both).
	Physical func() int64
}

// Node is one member of a cluster: its identity, its Raft host with the
// metadata replica, its store, and the cluster RPC server.
type Node struct {
	cfg         Config
	host        raft.Host
	store       *kvsm.Store
	lis         net.Listener
	srv         *grpc.Server
	hostCluster string // the cluster host was started for
	// clientTLS is the TLS configuration of calls to peers; nil: plain.
	clientTLS *tls.Config

	mu    sync.Mutex
	id    *Identity // nil while the node has no identity
	ready bool      // the metadata replica runs

	changeMu sync.Mutex // serialises the joins this node runs

	// clocks keeps the peers' clock offsets its pings measure
	// (clockoffset.go).
	clocks *ClockMonitor

	// closedHandler takes the closed-timestamp side channel's messages
	// (server.go's ClosedTimestamps; nil until set).
	closedHandler atomic.Pointer[func(*ClosedTimestampsRequest)]

	// bg runs background work (a restarted non-voter's promotion) until
	// Close cancels it.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup
}

// Start starts the node and returns once it is a member of its cluster:
// restarted, founded, or joined. While it waits for peers (a quorum of the
// founders, or a live member), ctx bounds the wait.
//
// The rules, for a data directory without an identity:
//   - if a peer of the join list belongs to a cluster, the node joins it
//     (nodes of two different clusters in the list are refused);
//   - else, only the node whose address is the lowest of the list founds the
//     cluster, and only once a quorum of the list (itself included) are
//     empty and agree on the list.
//
// A directory with an identity restarts its node and never founds a
// cluster; a peer in its join list that belongs to another cluster is an
// error. A wiped directory has no identity: the node joins again as a new
// node under a new id, and the member it asks removes the old one.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	id, err := loadIdentity(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if id != nil && id.RaftAddr != cfg.RaftAddr {
		return nil, fmt.Errorf("node: %s belongs to node %d, whose Raft address is %s, not %s: the address may not change",
			cfg.DataDir, id.NodeID, id.RaftAddr, cfg.RaftAddr)
	}
	n := &Node{cfg: cfg, id: id, clocks: NewClockMonitor(max(cfg.MaxOffset, 0), DefaultOffsetTTL, nil)}
	n.bgCtx, n.bgCancel = context.WithCancel(context.Background())
	if err := n.open(); err != nil {
		n.Close()
		return nil, err
	}
	if id != nil {
		err = n.restart(ctx)
	} else {
		err = n.form(ctx)
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (c *Config) validate() error {
	if c.DataDir == "" || c.Addr == "" || c.RaftAddr == "" {
		return errors.New("node: DataDir, Addr and RaftAddr are required")
	}
	if c.Addr == c.RaftAddr {
		return fmt.Errorf("node: the cluster RPC and Raft addresses are both %s", c.Addr)
	}
	if c.Raft.Dir != "" || c.Raft.RaftAddress != "" || c.Raft.TLS != nil {
		return errors.New("node: Config.Raft.Dir, RaftAddress and TLS follow DataDir, RaftAddr and TLS; leave them empty")
	}
	if c.TLS == nil {
		for _, a := range []string{c.Addr, c.RaftAddr} {
			if !isLoopback(a) {
				return fmt.Errorf("node: %s is not a loopback address: cluster traffic off this machine needs mutual TLS (a CA, a certificate and a key)", a)
			}
		}
	}
	seen := map[string]bool{}
	for _, a := range c.Join {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("node: join address %q: %w", a, err)
		}
		if seen[a] {
			return fmt.Errorf("node: the join list names %s twice", a)
		}
		seen[a] = true
	}
	if len(c.Join) == 0 {
		c.Join = []string{c.Addr}
	}
	if c.MetaReplicas == 0 {
		c.MetaReplicas = 3
	}
	if c.MetaReplicas < 1 {
		return fmt.Errorf("node: MetaReplicas %d", c.MetaReplicas)
	}
	if c.PollInterval == 0 {
		c.PollInterval = 200 * time.Millisecond
	}
	if c.MaxOffset == 0 {
		c.MaxOffset = DefaultMaxOffset
	}
	if c.Physical == nil {
		c.Physical = func() int64 { return time.Now().UnixNano() }
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return nil
}

// open starts the store and the RPC server: peers may ask this node about
// itself from now on. The Raft host starts once the node knows its cluster
// (startMeta).
func (n *Node) open() error {
	var err error
	n.store, err = kvsm.OpenStore(filepath.Join(n.cfg.DataDir, "store"), n.cfg.Store)
	if err != nil {
		return err
	}
	var opts []grpc.ServerOption
	if n.cfg.TLS != nil {
		server, client, err := loadTLS(n.cfg.TLS)
		if err != nil {
			return err
		}
		n.clientTLS = client
		opts = append(opts, grpc.Creds(credentials.NewTLS(server)))
	}
	n.lis, err = net.Listen("tcp", n.cfg.Addr)
	if err != nil {
		return fmt.Errorf("node: cluster RPC: %w", err)
	}
	n.srv = grpc.NewServer(opts...)
	n.srv.RegisterService(&serviceDesc, (*rpcServer)(n))
	go n.srv.Serve(n.lis)
	return nil
}

// Close stops the RPC server, the host and the store.
func (n *Node) Close() error {
	n.bgCancel()
	n.bg.Wait()
	if n.srv != nil {
		n.srv.Stop()
	} else if n.lis != nil {
		n.lis.Close()
	}
	var err error
	if n.host != nil {
		err = n.host.Close()
	}
	if n.store != nil {
		if cerr := n.store.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Identity returns the node's identity.
func (n *Node) Identity() Identity {
	n.mu.Lock()
	defer n.mu.Unlock()
	return *n.id
}

// Clocks returns the monitor of the peers' clock offsets, which the
// node's pings (Peer.Ping) feed.
func (n *Node) Clocks() *ClockMonitor { return n.clocks }

// WallNanos reads the node's wall clock (Config.Physical).
func (n *Node) WallNanos() int64 { return n.cfg.Physical() }

// Host returns the node's Raft host.
func (n *Node) Host() raft.Host { return n.host }

// Store returns the node's store of replicas.
func (n *Node) Store() *kvsm.Store { return n.store }

// Nodes reads the cluster's node registry linearizably.
func (n *Node) Nodes(ctx context.Context) ([]NodeRecord, error) {
	return readNodes(ctx, n.host)
}

func (n *Node) setIdentity(id Identity) error {
	if err := saveIdentity(n.cfg.DataDir, id); err != nil {
		return err
	}
	n.mu.Lock()
	n.id = &id
	n.mu.Unlock()
	return nil
}

// restart brings back a node that has an identity.
func (n *Node) restart(ctx context.Context) error {
	id := n.Identity()
	// A peer of another cluster in the join list is a configuration error
	// that must not go unnoticed, even though this node needs no peer to
	// restart. Unreachable peers are not checked.
	for _, st := range n.peerStatuses(ctx) {
		if st.resp != nil && !st.resp.Empty && st.resp.ClusterID != id.ClusterID {
			return fmt.Errorf("node: the join list names %s, a node of cluster %s, but %s belongs to cluster %s",
				st.addr, st.resp.ClusterID, n.cfg.DataDir, id.ClusterID)
		}
		if st.resp != nil && st.resp.Removed && st.resp.ClusterID == id.ClusterID {
			// Its replica ids are spent (raft): restarting it would
			// only wait for a group that ignores it.
			return fmt.Errorf("node: node %d was removed from cluster %s (decommissioned, or its replicas were replaced after it was dead), as %s reports: "+
				"the data in %s is no longer used; start the node with an empty data directory to rejoin as a new node",
				id.NodeID, id.ClusterID, st.addr, n.cfg.DataDir)
		}
	}
	if err := n.startMeta(ctx); err != nil {
		return err
	}
	if id.JoinedAsNonVoter && !id.Promoted {
		// The promotion this node asked for before it stopped may not have
		// happened; its peers may be down too, and a restart must not wait
		// for them.
		n.promoteInBackground()
	}
	return nil
}

// promoteInBackground asks for the promotion until it is settled or the
// node closes.
func (n *Node) promoteInBackground() {
	n.bg.Add(1)
	go func() {
		defer n.bg.Done()
		for {
			err := n.promote(n.bgCtx)
			if err == nil || n.bgCtx.Err() != nil {
				return
			}
			n.cfg.Logf("node %s: %v", n.cfg.Addr, err)
			select {
			case <-n.bgCtx.Done():
				return
			case <-time.After(n.cfg.PollInterval):
			}
		}
	}()
}

// startMeta starts the metadata replica as the identity's state says.
func (n *Node) startMeta(ctx context.Context) error {
	id := n.Identity()
	if err := n.startHost(id.ClusterID); err != nil {
		return err
	}
	r := raft.ReplicaID(id.NodeID)
	spec := raft.ReplicaSpec{Group: MetaGroup, Replica: r, NonVoter: id.JoinedAsNonVoter}
	has := n.host.HasReplicaData(MetaGroup, r)
	switch {
	case has:
		// A restart: the log store has the replica.
	case id.State == stateBootstrapping:
		spec.InitialMembers = map[raft.ReplicaID]string{r: id.RaftAddr}
	case id.State == stateJoining:
		spec.Join = true
	default:
		return fmt.Errorf("node: %s belongs to node %d of cluster %s, but its Raft log is gone; "+
			"remove the directory to bring the machine back as a new node", n.cfg.DataDir, id.NodeID, id.ClusterID)
	}
	if err := n.host.StartReplica(spec, n.store.NewStateMachine); err != nil {
		return err
	}
	if id.State == stateBootstrapping {
		// The founder's first commands: the cluster id and itself.
		if _, err := propose(ctx, n.host,
			kvsm.Op{Kind: kvsm.OpPut, Key: []byte(keyClusterID), Value: []byte(id.ClusterID)},
			kvsm.Op{Kind: kvsm.OpAdd, Key: []byte(keyNodeIDs), Delta: 1},
			putNodeOp(NodeRecord{ID: id.NodeID, Addr: id.Addr, RaftAddr: id.RaftAddr}),
		); err != nil {
			return fmt.Errorf("node: recording the new cluster: %w", err)
		}
	}
	if id.State != stateMember {
		id.State = stateMember
		if err := n.setIdentity(id); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.ready = true
	n.mu.Unlock()
	return nil
}

func reachable(statuses []peerStatus) int {
	n := 0
	for _, st := range statuses {
		if st.resp != nil {
			n++
		}
	}
	return n
}

// startHost starts the Raft host of a node of cluster clusterID. Its
// deployment id comes from the cluster id, so hosts of different clusters
// drop each other's Raft messages (a node of another cluster that reuses an
// address cannot disturb this one).
func (n *Node) startHost(clusterID string) error {
	if n.host != nil {
		if n.hostCluster == clusterID {
			return nil
		}
		// Started for a cluster this node did not join (that cluster's
		// nodes left the join list's addresses): start over.
		if err := n.host.Close(); err != nil {
			return err
		}
		n.host = nil
	}
	did, err := deploymentID(clusterID)
	if err != nil {
		return err
	}
	hc := n.cfg.Raft
	hc.Dir = filepath.Join(n.cfg.DataDir, "raft")
	hc.RaftAddress = n.cfg.RaftAddr
	hc.TLS = n.cfg.TLS
	hc.DeploymentID = did
	h, err := raft.Start(hc)
	if err != nil {
		return err
	}
	n.host, n.hostCluster = h, clusterID
	return nil
}

// deploymentID is the first 8 bytes of the cluster id (random hex), never 0.
func deploymentID(clusterID string) (uint64, error) {
	b, err := hex.DecodeString(clusterID)
	if err != nil || len(b) < 8 {
		return 0, fmt.Errorf("node: cluster id %q is not 16 hex bytes", clusterID)
	}
	return binary.BigEndian.Uint64(b) | 1, nil
}

type peerStatus struct {
	addr string
	resp *StatusResponse // nil: unreachable
}

// peerStatuses asks every other address of the join list for its status,
// concurrently.
func (n *Node) peerStatuses(ctx context.Context) []peerStatus {
	var out []peerStatus
	for _, a := range n.cfg.Join {
		if a != n.cfg.Addr {
			out = append(out, peerStatus{addr: a})
		}
	}
	var self uint64
	n.mu.Lock()
	if n.id != nil {
		self = n.id.NodeID
	}
	n.mu.Unlock()
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func(p *peerStatus) {
			defer wg.Done()
			c, err := n.dial(p.addr)
			if err != nil {
				return
			}
			defer c.Close()
			p.resp, _ = c.Status(ctx, self)
		}(&out[i])
	}
	wg.Wait()
	return out
}

// form makes a node without an identity a member: it joins the cluster a
// peer belongs to, or founds one if the rules let it (see Start).
func (n *Node) form(ctx context.Context) error {
	list := slices.Clone(n.cfg.Join)
	slices.Sort(list)
	lowest := list[0] == n.cfg.Addr
	quorum := len(list)/2 + 1
	var lastWait string
	for {
		statuses := n.peerStatuses(ctx)
		clusters := map[string][]string{} // cluster id -> ready members
		empty := 1                        // this node
		for _, st := range statuses {
			switch r := st.resp; {
			case r == nil:
			case r.Empty:
				// Founders must agree on the list (each founds with its own
				// view of the quorum); a later node only waits for them.
				other := slices.Clone(r.JoinList)
				slices.Sort(other)
				if slices.Contains(list, n.cfg.Addr) && !slices.Equal(other, list) {
					return fmt.Errorf("node: %s was started with the join list %v, this node with %v: founders must be given the same list",
						st.addr, r.JoinList, n.cfg.Join)
				}
				empty++
			default:
				if _, ok := clusters[r.ClusterID]; !ok {
					clusters[r.ClusterID] = nil
				}
				if r.Ready {
					clusters[r.ClusterID] = append(clusters[r.ClusterID], st.addr)
				}
			}
		}
		var wait string
		switch {
		case len(clusters) > 1:
			ids := make([]string, 0, len(clusters))
			for id := range clusters {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			return fmt.Errorf("node: the join list names nodes of different clusters (%v); a node joins one cluster", ids)
		case len(clusters) == 1:
			for cid, members := range clusters {
				if len(members) == 0 {
					wait = fmt.Sprintf("waiting for a member of cluster %s to be ready", cid)
					break
				}
				err := n.join(ctx, cid, members)
				if err == nil {
					return nil
				}
				if fatal := (errJoinFatal{}); errors.As(err, &fatal) {
					return fatal.err
				}
				wait = fmt.Sprintf("joining cluster %s failed, retrying: %v", cid, err)
			}
		case lowest && empty >= quorum:
			return n.bootstrap(ctx)
		case lowest:
			wait = fmt.Sprintf("waiting for a quorum of the join list: %d of %d empty nodes reachable, %d needed", empty, len(list), quorum)
		case slices.Contains(list, n.cfg.Addr):
			wait = fmt.Sprintf("waiting for %s to found the cluster", list[0])
		default:
			wait = fmt.Sprintf("waiting for a member among %v to answer (%d of %d reachable)", n.cfg.Join, reachable(statuses), len(statuses))
		}
		if wait != lastWait {
			n.cfg.Logf("node %s: %s", n.cfg.Addr, wait)
			lastWait = wait
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node: %s: gave up %s: %w", n.cfg.Addr, wait, ctx.Err())
		case <-time.After(n.cfg.PollInterval):
		}
	}
}

// bootstrap founds a cluster with this node as node 1 and the only voter of
// the metadata group; the other founders join it as any later node does.
func (n *Node) bootstrap(ctx context.Context) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	id := Identity{
		ClusterID: hex.EncodeToString(b[:]),
		NodeID:    1,
		Addr:      n.cfg.Addr,
		RaftAddr:  n.cfg.RaftAddr,
		State:     stateBootstrapping,
	}
	if err := n.setIdentity(id); err != nil {
		return err
	}
	n.cfg.Logf("node %s: founded cluster %s as node 1", n.cfg.Addr, id.ClusterID)
	return n.startMeta(ctx)
}

// join asks the members, one after the other, to add this node, then
// starts its metadata replica and asks for its promotion.
func (n *Node) join(ctx context.Context, clusterID string, members []string) error {
	// The host listens before a member adds this node, so that the
	// leader's first messages to the new replica find it (a refused
	// connection makes dragonboat back off from the address for a while).
	if err := n.startHost(clusterID); err != nil {
		return errJoinFatal{err}
	}
	var errs []error
	for _, m := range members {
		c, err := n.dial(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		resp, err := c.Join(ctx, &JoinRequest{ClusterID: clusterID, Addr: n.cfg.Addr, RaftAddr: n.cfg.RaftAddr})
		c.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m, err))
			continue
		}
		id := Identity{
			ClusterID: resp.ClusterID,
			NodeID:    resp.NodeID,
			Addr:      n.cfg.Addr,
			RaftAddr:  n.cfg.RaftAddr,
			State:     stateJoining,

			JoinedAsNonVoter: true,
		}
		// From here on the node has an identity: a failure is final for
		// this start, and the next start repeats the step from the identity.
		if err := n.setIdentity(id); err != nil {
			return errJoinFatal{err}
		}
		n.cfg.Logf("node %s: joined cluster %s as node %d", n.cfg.Addr, id.ClusterID, id.NodeID)
		if err := n.startMeta(ctx); err != nil {
			return errJoinFatal{err}
		}
		if err := n.promote(ctx); err != nil {
			n.cfg.Logf("node %s: %v; retrying in the background", n.cfg.Addr, err)
			n.promoteInBackground()
		}
		return nil
	}
	return errors.Join(errs...)
}

// errJoinFatal ends the attempts to join: the node may no longer ask again
// under a new id.
type errJoinFatal struct{ err error }

func (e errJoinFatal) Error() string { return e.err.Error() }
func (e errJoinFatal) Unwrap() error { return e.err }

// promote waits for the metadata replica to catch up, then asks members to
// make it a voter while the group has fewer than MetaReplicas.
func (n *Node) promote(ctx context.Context) error {
	id := n.Identity()
	// A linearizable read on the replica returns once it has applied what
	// was committed when the read began: it has caught up.
	if _, err := n.host.Read(ctx, MetaGroup, kvsm.Applied{}); err != nil {
		return fmt.Errorf("node: catching up the metadata replica: %w", err)
	}
	for {
		var errs []error
		for _, st := range n.peerStatuses(ctx) {
			if st.resp == nil || !st.resp.Ready || st.resp.ClusterID != id.ClusterID {
				continue
			}
			c, err := n.dial(st.addr)
			if err != nil {
				continue
			}
			resp, err := c.Promote(ctx, &PromoteRequest{ClusterID: id.ClusterID, NodeID: id.NodeID})
			c.Close()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", st.addr, err))
				continue
			}
			if resp.Voter {
				id.Promoted = true
				return n.setIdentity(id)
			}
			// Enough voters: this node stays a non-voter.
			return nil
		}
		n.cfg.Logf("node %s: waiting for a member to promote node %d: %v", n.cfg.Addr, id.NodeID, errors.Join(errs...))
		select {
		case <-ctx.Done():
			return fmt.Errorf("node: promoting node %d: %w", id.NodeID, ctx.Err())
		case <-time.After(n.cfg.PollInterval):
		}
	}
}
