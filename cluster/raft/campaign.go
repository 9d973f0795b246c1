package raft

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4"
	"github.com/lni/dragonboat/v4/raftio"
	pb "github.com/lni/dragonboat/v4/raftpb"
)

// A group whose only voter is this host's replica (a one-node cluster's
// metadata and first shard group, `serve --one-node-cluster`) would wait
// for its election timeout before electing itself: ElectionTicks to twice
// that many RTTs (0.5-1 s by default), once per group, and a one-node
// cluster's start waits for two groups in turn. A single voter is a quorum
// on its own, and wins the election it would start after the timeout
// anyway, so it may as well start it at once; dragonboat has no call for
// that, but a replica that receives TimeoutNow (what a leader sends the
// target of a leadership transfer) campaigns at its next tick, without the
// pre-vote. So the host hands such a replica a TimeoutNow through the
// transport's receive path every RTT until the group has a leader, for no
// longer than the election timeout would have taken anyway.
//
// Only with HostConfig.CampaignAlone (a one-node cluster): in a cluster of
// several nodes a split child's leader elected at once got ahead of the
// other founders' seeding and streamed them the whole shard
// (TestClusterSnapshotJob, 2 runs of 3).
//
// Whether the replica is its group's only voter is read from the
// membership its state machine applied (dragonboat's ShardInfo): it is
// looked at for every replica started as a voter (founded or restarted,
// not joining), and a replica whose membership lists any other voter, or
// lists it as a non-voter, is left alone, so groups of several voters
// elect as before. dragonboat itself skips the campaign while a membership
// change is committed but not yet applied (the bootstrap's, at first).
// With dragonboat's own transport (tests only) there is no receive path
// to use, and groups elect themselves after the election timeout.

// localDelivery is the transport's receive path, set when dragonboat
// creates the transport (transportFactory.Create).
type localDelivery struct {
	batches atomic.Pointer[raftio.MessageHandler]
}

func (d *localDelivery) set(h raftio.MessageHandler) {
	if d != nil {
		d.batches.Store(&h)
	}
}

// deliver hands msgs to this host's replicas as if received from the
// network; false when there is no receive path.
func (d *localDelivery) deliver(deploymentID uint64, msgs ...pb.Message) bool {
	if d == nil {
		return false
	}
	h := d.batches.Load()
	if h == nil {
		return false
	}
	(*h)(pb.MessageBatch{Requests: msgs, DeploymentId: deploymentID, BinVer: raftio.TransportBinVersion})
	return true
}

// campaigns watches the replicas that may be their group's only voter,
// one goroutine for all of them (one membership listing per RTT), running
// while any is watched.
type campaigns struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	running bool
	watched map[GroupID]campaignWatch
}

type campaignWatch struct {
	replica  ReplicaID
	deadline time.Time // the election timeout's upper end
}

func newCampaigns() *campaigns {
	return &campaigns{stop: make(chan struct{}), watched: map[GroupID]campaignWatch{}}
}

func (c *campaigns) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.stop)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// mayCampaignAlone says whether spec starts a replica that may be its
// group's only voter: not a joining replica nor a non-voter, and when it
// founds the group, its only initial member.
func mayCampaignAlone(spec ReplicaSpec) bool {
	if spec.Join || spec.NonVoter {
		return false
	}
	if len(spec.InitialMembers) == 0 {
		return true // a restart: its applied membership decides
	}
	_, ok := spec.InitialMembers[spec.Replica]
	return ok && len(spec.InitialMembers) == 1
}

// campaignAlone makes replica r of g campaign now rather than after the
// election timeout if it is its group's only voter (see above).
func (h *dragonboatHost) campaignAlone(g GroupID, r ReplicaID) {
	if h.local == nil || h.local.batches.Load() == nil {
		return
	}
	c := h.campaigns
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.watched[g] = campaignWatch{replica: r, deadline: time.Now().Add(2 * time.Duration(h.cfg.ElectionTicks) * h.cfg.RTT)}
	if !c.running {
		c.running = true
		c.wg.Add(1)
		go h.runCampaigns()
	}
}

func (h *dragonboatHost) runCampaigns() {
	c := h.campaigns
	defer c.wg.Done()
	nhc := h.nh.NodeHostConfig()
	deploymentID := nhc.GetDeploymentID()
	tick := time.NewTicker(h.cfg.RTT)
	defer tick.Stop()
	for {
		c.mu.Lock()
		if len(c.watched) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		watched := make(map[GroupID]campaignWatch, len(c.watched))
		for g, w := range c.watched {
			watched[g] = w
		}
		c.mu.Unlock()

		done := map[GroupID]bool{}
		var msgs []pb.Message
		now := time.Now()
		infos := map[GroupID]dragonboat.ShardInfo{}
		for _, info := range h.nh.GetNodeHostInfo(dragonboat.NodeHostInfoOption{SkipLogInfo: true}).ShardInfoList {
			infos[GroupID(info.ShardID)] = info
		}
		for g, w := range watched {
			info, ok := infos[g]
			switch {
			case now.After(w.deadline):
				done[g] = true
			case !ok || info.Pending || info.Replicas == nil:
				// Not started or its membership not loaded yet.
			case info.ReplicaID != uint64(w.replica) || info.LeaderID != 0 || info.IsNonVoting || info.IsWitness ||
				len(info.Replicas) != 1 || info.Replicas[uint64(w.replica)] == "":
				done[g] = true // another replica, a leader, or other voters
			default:
				// Term 0: taken as the replica's current term.
				msgs = append(msgs, pb.Message{Type: pb.TimeoutNow, ShardID: uint64(g), From: uint64(w.replica), To: uint64(w.replica)})
			}
		}
		if len(msgs) > 0 {
			h.local.deliver(deploymentID, msgs...)
		}
		c.mu.Lock()
		for g := range done {
			if c.watched[g] == watched[g] {
				delete(c.watched, g)
			}
		}
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
	}
}
