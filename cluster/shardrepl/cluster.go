package shardrepl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// A node's part in a cluster serving SQL through the first shard group
// (`pivotdb serve --join`). The metadata group (cluster/node) holds, besides
// the node registry, what the nodes need to agree on about the shard group:
//
//	"shard-founded"                    the founder bootstrapped the group
//	"shard-replica/" + id (8 BE)       node id's replica was added:
//	                                   "founder" or "non-voter"
//	"shard-caught-up/" + id (8 BE)     that replica applied the group's log
//	"sql-addr/" + id (8 BE)            node id's SQL address
//
// The founder (node 1) bootstraps the group alone, initializes it with
// WholeSpan and serves SQL; its manager loop adds every other node of the
// registry as a non-voter (AddNonVoter, then the record), each such node
// starts its replica (Join, NonVoter), catches up (a linearizable read)
// and records it, and the loop promotes it while the group has fewer than
// three voters. The other nodes serve no SQL: their engines are written by
// their replicas only (a takeover reopens the engine first; not automatic
// yet).
const (
	keyShardFounded  = "shard-founded"
	keyShardReplica  = "shard-replica/"
	keyShardCaughtUp = "shard-caught-up/"
	keySQLAddr       = "sql-addr/"
)

// shardVoters is how many voters the manager loop gives the shard group.
const shardVoters = 3

// ClusterConfig configures StartCluster.
type ClusterConfig struct {
	// Node is the membership configuration (cluster/node); its DataDir is
	// separate from EngineDir.
	Node node.Config
	// EngineDir is the storage engine's directory; Storage its options
	// (GC is turned off: OpenEngine).
	EngineDir string
	Storage   storage.Options
	// SQLAddr is this node's SQL address, recorded for the other nodes to
	// name in their refusals.
	SQLAddr string
	// Logf reports progress (nil: quiet).
	Logf func(format string, args ...any)
	// Alarmf reports what an operator must act on, such as a clock off by
	// more than the maximum offset (clockgate.go); nil: Logf.
	Alarmf func(format string, args ...any)
	// DeadNodeTimeout: a node not heard from for longer is dead and its
	// replicas are replaced (cluster/placement; 0: its default).
	DeadNodeTimeout time.Duration
	// NoRebalance turns placement's allocator off (serve --rebalance=false).
	NoRebalance bool
	// SnapshotRate bounds the bytes per second of the node's snapshot work,
	// streaming and installing together (serve --snapshot-rate;
	// shardsm.Store.SetSnapshotRate): 0 is shardsm.DefaultSnapshotRate,
	// a negative rate leaves it unbounded.
	SnapshotRate int64
	// SnapshotRateElastic scales the snapshot rate down while the node's
	// CPU is short (serve --snapshot-rate-elastic;
	// shardsm.Store.SetSnapshotRateElastic).
	SnapshotRateElastic bool
	// SplitShardGroups makes the serving node split the shard group
	// where each partition shard begins (splitqueue.go), when cmd/pivotdb
	// gives it the boundaries; off, one shard group holds every table.
	// serve --shard-group-per-shard, on by default, sets it.
	SplitShardGroups bool
	// Locality is the node's --locality (placement.ParseLocality's form).
	Locality string
	// ClosedTarget is how far the closed timestamps the node publishes
	// while it serves trail its clock (closedts.go; 0:
	// DefaultClosedTarget).
	ClosedTarget time.Duration
}

// Cluster is a node's part: its membership, its engine and its replica of
// the first shard group.
type Cluster struct {
	Node   *node.Node
	Engine *storage.Engine
	Store  *shardsm.Store
	// Placement tracks the nodes' liveness and, on the serving node,
	// replaces the replicas of dead and decommissioning nodes.
	Placement *placement.Manager

	cfg    ClusterConfig
	id     uint64
	bg     context.Context // the background work's, until Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	srv    servingState // serving.go
	// side holds the closed timestamps the serving node's side channel
	// brought (closedside.go).
	side *sideClosed
	// inOrder: the split children whose membership matched FirstGroup's
	// when the manager loop last read it (closedside.go); under orderMu.
	orderMu sync.Mutex
	inOrder map[raft.GroupID]childOrder
	// nonVoter: the replica joined the group as a non-voter.
	nonVoter bool
	// replica is this node's replica id in FirstGroup (generation.go);
	// regenMu serialises a rejoin under a new one with StepDown.
	replica atomic.Uint64
	regenMu sync.Mutex
	// children are the split children's replicas running here, by group
	// (groups.go); under regenMu.
	children map[raft.GroupID]raft.ReplicaID
	// joined are the child replicas this node joined as non-voters
	// (groupplace.go), which every later start names so; under regenMu.
	joined map[raft.GroupID]raft.ReplicaID
	// missedFailed are the groups startMissedChildren could not start
	// (logged once each); under regenMu.
	missedFailed map[raft.GroupID]bool
	// recorded are the child replicas whose "group-caught-up/" record
	// this node wrote or found (groupplace.go); under regenMu.
	recorded map[raft.GroupID]raft.ReplicaID
	// noRows are the child replicas found caught up without a shard
	// (compactCaughtUp), each logged once; under regenMu.
	noRows map[groupReplica]bool
	// founders is the serving node's watch over the children's founders
	// (groupplace.go's reseedFounders).
	founders founderWatch
	// known lists every child group started here, ascending (read
	// without a lock: closedts.go).
	known atomic.Pointer[[]raft.GroupID]
	// splitKeys gives the keys where shard groups must begin while the
	// node serves (splitqueue.go; nil: none).
	splitKeys atomic.Pointer[func() [][]byte]
	// readReplicaSpans gives the spans whose tables ask for read replicas
	// while the node serves (readreplicas.go; nil: not known yet).
	readReplicaSpans atomic.Pointer[func() []ReadReplicaSpan]
	// clockOff and clockLogged: the clock gate's last judgement and when
	// it last said so (clockgate.go); under clockMu.
	// clockWaitLogged: when knowsEnoughClocks last said it waits.
	clockMu         sync.Mutex
	clockOff        bool
	clockLogged     time.Time
	clockWaitLogged time.Time
	// clockHandOverLogged: when handOverForClock last said it failed.
	clockHandOverLogged time.Time
}

// StartCluster joins or forms the cluster (node.Start), opens the engine
// and starts this node's replica of FirstGroup as the metadata group says.
// It returns once the replica runs; a joining node's replica may still be
// catching up in the background.
func StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Alarmf == nil {
		cfg.Alarmf = cfg.Logf
	}
	if cfg.Node.Logf == nil {
		cfg.Node.Logf = cfg.Logf
	}
	if cfg.Node.Physical != nil && cfg.Storage.Physical == nil {
		// The HLC and the pings read one clock: the offsets the pings
		// measure are the HLC's.
		cfg.Storage.Physical = cfg.Node.Physical
	}
	n, err := node.Start(ctx, cfg.Node)
	if err != nil {
		return nil, err
	}
	e, st, err := OpenEngine(cfg.EngineDir, cfg.Storage)
	if err != nil {
		n.Close()
		return nil, err
	}
	c := &Cluster{Node: n, Engine: e, Store: st, cfg: cfg, id: n.Identity().NodeID,
		children: map[raft.GroupID]raft.ReplicaID{}, joined: map[raft.GroupID]raft.ReplicaID{},
		recorded: map[raft.GroupID]raft.ReplicaID{}, noRows: map[groupReplica]bool{}}
	c.initServing()
	c.side = newSideClosed(func(ts hlc.Timestamp) error { return c.Engine.Clock().Update(ts) })
	n.SetClosedTimestampHandler(c.side.take) // closedside.go
	bg, cancel := context.WithCancel(context.Background())
	c.bg, c.cancel = bg, cancel
	c.Placement = c.newPlacement()
	// Each snapshot this node streams is a sys.jobs row while it serves
	// (cluster/placement's snapshotjobs.go).
	c.Store.SetSnapshotTracker(func(g raft.GroupID, estimate int64) shardsm.SnapshotProgress {
		if j := c.Placement.StartSnapshotJob(g, estimate); j != nil {
			return j
		}
		return nil
	})
	// ... naming the node it goes to (dragonboat tells the host, not the
	// state machine).
	n.Host().OnSnapshotSend(c.Placement.SnapshotSent)
	c.Placement.Start(bg, &c.wg)
	if err := c.start(ctx, bg); err != nil {
		c.Close()
		c.Engine.Close()
		return nil, err
	}
	return c, nil
}

func idKey(prefix string, id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefix), id)
}

// metaPut records ops in the metadata group (idempotent puts, so a repeat
// after a timeout is harmless).
func (c *Cluster) metaPut(ctx context.Context, ops ...kvsm.Op) error {
	cmd, err := kvsm.Command{Ops: ops}.Encode()
	if err != nil {
		return err
	}
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		res, err := c.Node.Host().Propose(actx, node.MetaGroup, cmd)
		cancel()
		if errors.Is(err, raft.ErrTimeout) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return err
		}
		_, err = kvsm.DecodeResult(res.Value, res.Data)
		return err
	}
}

func (c *Cluster) metaGet(ctx context.Context, key []byte) (string, bool, error) {
	v, err := c.Node.Host().Read(ctx, node.MetaGroup, kvsm.Get{Key: key})
	if err != nil {
		return "", false, err
	}
	r := v.(kvsm.GetResult)
	return string(r.Value), r.Found, nil
}

func (c *Cluster) start(ctx, bg context.Context) error {
	h := c.Node.Host()
	r, err := c.currentReplica(ctx)
	if err != nil {
		return err
	}
	c.replica.Store(uint64(r))
	if err := c.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: idKey(keySQLAddr, c.id), Value: []byte(c.cfg.SQLAddr)}); err != nil {
		return fmt.Errorf("shardrepl: recording the SQL address: %w", err)
	}
	role, _, err := c.metaGet(ctx, idKey(keyShardReplica, c.id))
	if err != nil {
		return err
	}
	_, founded, err := c.metaGet(ctx, []byte(keyShardFounded))
	if err != nil {
		return err
	}
	switch {
	case h.HasReplicaData(FirstGroup, r):
		spec := raft.ReplicaSpec{Group: FirstGroup, Replica: r, NonVoter: role == "non-voter" || placement.GenOf(r) > 0}
		if err := h.StartReplica(spec, c.Store.NewStateMachine); err != nil {
			return err
		}
	case c.id == 1 && !founded:
		members := map[raft.ReplicaID]string{r: c.Node.Identity().RaftAddr}
		if err := StartReplica(h, c.Store, FirstGroup, r, members); err != nil {
			return err
		}
		if err := InitGroup(ctx, h, FirstGroup, WholeSpan); err != nil {
			return err
		}
		if err := c.metaPut(ctx,
			kvsm.Op{Kind: kvsm.OpPut, Key: []byte(keyShardFounded), Value: []byte("1")},
			kvsm.Op{Kind: kvsm.OpPut, Key: idKey(keyShardReplica, c.id), Value: []byte("founder")}); err != nil {
			return err
		}
		role = "founder"
	case placement.GenOf(r) > 0:
		// Its voter moved away while it was down, or it stopped before
		// rejoining: rejoin now, as the watcher would have.
		old := placement.ReplicaOf(c.id, placement.GenOf(r)-1)
		if err := placement.Rejoin(ctx, h, FirstGroup, old, r, func() error { return c.Store.DropGroup(FirstGroup) }, c.Store.NewStateMachine); err != nil {
			return err
		}
		role = "non-voter"
	default:
		// Wait for the serving node to add this node's replica.
		for role != "non-voter" {
			c.cfg.Logf("node %d: waiting for the serving node to add its shard replica", c.id)
			select {
			case <-ctx.Done():
				return fmt.Errorf("shardrepl: waiting to be added to the shard group: %w", ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
			if role, _, err = c.metaGet(ctx, idKey(keyShardReplica, c.id)); err != nil {
				return err
			}
		}
		spec := raft.ReplicaSpec{Group: FirstGroup, Replica: r, Join: true, NonVoter: true}
		if err := h.StartReplica(spec, c.Store.NewStateMachine); err != nil {
			return err
		}
	}
	// A restart of the replica (StepDown) must say what its first start
	// said: dragonboat replays the log's membership changes against it.
	c.nonVoter = role == "non-voter" || placement.GenOf(r) > 0
	// The split children this node holds (groups.go).
	var joined map[raft.GroupID]raft.ReplicaID
	if gs, err := c.Store.Groups(); err != nil {
		return err
	} else if len(gs) > 1 || (len(gs) == 1 && gs[0] != FirstGroup) {
		recs, err := c.joinedChildren(ctx) // groupplace.go
		if err != nil {
			return err
		}
		joined = nonVoterJoins(recs)
	}
	c.regenMu.Lock()
	err = c.startChildren(joined)
	c.regenMu.Unlock()
	if err != nil {
		return err
	}
	if c.nonVoter {
		c.wg.Add(1)
		go c.catchUp(bg)
	}
	c.wg.Add(2)
	go c.watchServing(bg)
	go c.watchGeneration(bg)
	return nil
}

// catchUp waits until the replica applied the group's log (a linearizable
// read returns then) and records it for the manager loop to promote.
func (c *Cluster) catchUp(ctx context.Context) {
	defer c.wg.Done()
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r := c.replicaID()
		_, err := c.Node.Host().Read(rctx, FirstGroup, shardsm.State{})
		cancel()
		if err == nil && r != c.replicaID() {
			return // rejoined under a later generation, which catches up anew
		}
		if err == nil {
			err = c.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: idKey(keyShardCaughtUp, c.id), Value: []byte(caughtUpValue(r))})
		}
		if err == nil {
			c.cfg.Logf("node %d: the shard replica caught up", c.id)
			return
		}
		c.cfg.Logf("node %d: catching up the shard replica: %v", c.id, err)
		sleep(ctx, time.Second)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// manage adds the registry's nodes to the shard group as non-voters and
// promotes those that caught up while the group has fewer voters than
// shardVoters.
func (c *Cluster) manage(ctx context.Context) {
	defer c.wg.Done()
	for ctx.Err() == nil {
		if err := c.manageOnce(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logf("node %d: shard group membership: %v", c.id, err)
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

func (c *Cluster) manageOnce(ctx context.Context) error {
	h := c.Node.Host()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	nodes, err := c.Node.Nodes(ctx)
	if err != nil {
		return err
	}
	m, err := h.Membership(ctx, FirstGroup)
	if err != nil {
		return err
	}
	ids, err := placement.ReplicaIDs(ctx, h, FirstGroup)
	if err != nil {
		return err
	}
	for _, nd := range nodes {
		r, ok := ids[nd.ID]
		if !ok {
			r = raft.ReplicaID(nd.ID)
		}
		_, voter := m.Voters[r]
		_, nonVoter := m.NonVoters[r]
		switch {
		case m.Removed[r]:
		case !c.Placement.Eligible(nd.ID):
			// Decommissioning, decommissioned or dead: placement moves
			// its replicas away rather than adding any.
		case !voter && !nonVoter:
			placement.CompactBeforeAdd(ctx, h, FirstGroup, c.cfg.Logf)
			if err := h.AddNonVoter(ctx, FirstGroup, r, nd.RaftAddr); err != nil {
				return fmt.Errorf("adding node %d: %w", nd.ID, err)
			}
			if err := c.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: idKey(keyShardReplica, nd.ID), Value: []byte("non-voter")}); err != nil {
				return err
			}
			c.cfg.Logf("node %d: added node %d to the shard group as a non-voter", c.id, nd.ID)
		case nonVoter && len(m.Voters) < shardVoters:
			caughtUp, err := c.caughtUp(ctx, nd.ID)
			if err != nil || !caughtUp {
				return err
			}
			ok, err := h.PromoteIf(ctx, FirstGroup, r, func(m raft.Membership) bool { return len(m.Voters) < shardVoters })
			if err != nil {
				return fmt.Errorf("promoting node %d: %w", nd.ID, err)
			}
			if ok {
				c.cfg.Logf("node %d: node %d votes in the shard group", c.id, nd.ID)
				return nil // the membership changed: read it again
			}
		}
	}
	// The split children follow FirstGroup's members (groupplace.go).
	return c.manageChildren(ctx, m)
}

// newPlacement makes the placement manager over the metadata group and
// FirstGroup (cluster/placement): a non-voter of the shard group may take
// over a voter once it recorded that it caught up.
func (c *Cluster) newPlacement() *placement.Manager {
	return placement.New(placement.Config{
		Node: c.Node,
		Groups: []placement.Group{
			{ID: node.MetaGroup, Name: "the metadata group", Applied: c.metaApplied},
			{ID: FirstGroup, Name: "the shard group", Serving: true, CaughtUp: c.caughtUp, Size: c.groupSize,
				Applied: c.groupApplied, Generations: true},
		},
		DeadNodeTimeout:   c.cfg.DeadNodeTimeout,
		NoRebalance:       c.cfg.NoRebalance,
		Locality:          c.cfg.Locality,
		ReadReplicaGroups: c.readReplicaGroups,
		// A node's replicas of every group are on the nodes of its
		// FirstGroup replica (groupplace.go), so FirstGroup's caught-up
		// record stands for all (a child replica still catching up is
		// safe anyway: its reads wait for its closed timestamp).
		ReadReplicaCaughtUp: c.caughtUp,
		SQLAddr: func(ctx context.Context, id uint64) (string, error) {
			addr, _, err := c.metaGet(ctx, idKey(keySQLAddr, id))
			return addr, err
		},
		Logf: c.cfg.Logf,
	})
}

// groupSize is the bytes (live, old and intent versions) of every shard
// group this node's replicas hold, FirstGroup and its split children, as
// they count them: every node holds a replica of every group, so this is
// what it stores; placement's allocator compares nodes by the bytes they
// lead, and sys.nodes shows them.
func (c *Cluster) groupSize(context.Context) (int64, error) {
	h := c.Node.Host()
	var total int64
	for _, g := range append([]raft.GroupID{FirstGroup}, c.knownChildren()...) {
		v, err := h.StaleRead(g, shardsm.State{})
		if err != nil {
			if g == FirstGroup {
				return 0, err
			}
			continue // stopped for a moment (StepDown) or not started yet
		}
		st := v.(shardsm.StateResult).Stats
		total += st.LiveBytes + st.OldBytes + st.IntentBytes
	}
	return total, nil
}

// Close stops the background work and the node (its Raft host, so that no
// replica writes into the engine any more). It does not close Engine: the
// caller closes it, directly or through the sql.Engine that owns it.
func (c *Cluster) Close() error {
	if c.cancel != nil {
		c.cancel()
	}
	c.stopServingLease()
	c.wg.Wait()
	return c.Node.Close()
}
