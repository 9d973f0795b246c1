package raft

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4/raftio"
	pb "github.com/lni/dragonboat/v4/raftpb"
)

// A group founded with this replica as its only voter (a one-node
// cluster's metadata and first shard group, `serve --one-node-cluster`)
// would wait for its election timeout before electing itself: ElectionTicks
// to twice that many RTTs (0.5-1 s by default), once per group, and a
// one-node cluster's start waits for two groups in turn. A single voter is
// a quorum on its own, so it may campaign at once; dragonboat has no call
// for that, but a replica that receives TimeoutNow (what a leader sends
// the target of a leadership transfer) campaigns at its next tick, without
// the pre-vote. So the host hands such a replica a TimeoutNow through the
// transport's receive path every RTT until the group has a leader
// (dragonboat skips the campaign while the bootstrap membership is
// committed but not yet applied), for no longer than the election timeout
// would have taken anyway.
//
// Only a freshly founded group whose initial members are this replica
// alone gets it: a restarted replica's membership may have grown since,
// and a forced campaign there would cut a leader's term short. Groups of
// several voters are not touched, so multi-node behaviour is unchanged.
// With dragonboat's own transport (tests only) there is no receive path
// to use, and the group elects itself after the election timeout as
// before.

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

// campaigns runs the founding single voters' campaigns until the host
// closes.
type campaigns struct {
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func newCampaigns() *campaigns { return &campaigns{stop: make(chan struct{})} }

func (c *campaigns) close() {
	c.once.Do(func() { close(c.stop) })
	c.wg.Wait()
}

// isSoleFoundingVoter says whether spec founds a group whose only initial
// member is its own replica, as a voter.
func isSoleFoundingVoter(spec ReplicaSpec) bool {
	if spec.Join || spec.NonVoter || len(spec.InitialMembers) != 1 {
		return false
	}
	_, ok := spec.InitialMembers[spec.Replica]
	return ok
}

// campaignAlone makes replica r of g, its group's only voter, campaign
// now rather than after the election timeout (see above).
func (h *dragonboatHost) campaignAlone(g GroupID, r ReplicaID) {
	if h.local == nil || h.local.batches.Load() == nil {
		return
	}
	h.campaigns.wg.Add(1)
	go func() {
		defer h.campaigns.wg.Done()
		nhc := h.nh.NodeHostConfig()
		deploymentID := nhc.GetDeploymentID()
		// The election timeout's upper end: by then the group has
		// elected itself the ordinary way.
		deadline := time.Now().Add(2 * time.Duration(h.cfg.ElectionTicks) * h.cfg.RTT)
		tick := time.NewTicker(h.cfg.RTT)
		defer tick.Stop()
		for time.Now().Before(deadline) {
			if _, _, ok, err := h.nh.GetLeaderID(uint64(g)); err != nil || ok {
				return // a leader, or the replica stopped
			}
			// Term 0: taken as the replica's current term.
			h.local.deliver(deploymentID, pb.Message{Type: pb.TimeoutNow, ShardID: uint64(g), From: uint64(r), To: uint64(r)})
			select {
			case <-h.campaigns.stop:
				return
			case <-tick.C:
			}
		}
	}()
}
