package raft_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// TestSoleFoundingVoterCampaignsAtOnce: a group founded with one voter
// elects it without waiting for its election timeout (campaign.go), and
// so does the replica when restarted. The
// timeout here is 30-60 s (3000 ticks of 10 ms), so a leader within 20 s
// can only come from the early campaign; it takes milliseconds unloaded.
func TestSoleFoundingVoterCampaignsAtOnce(t *testing.T) {
	dir, addr := filepath.Join(t.TempDir(), "n1"), clustertest.FreeAddr(t)
	slowElection := func(c *raft.HostConfig) { c.ElectionTicks = 3000; c.CampaignAlone = true }
	n := clustertest.StartNodeWith(t, dir, addr, nil, slowElection)
	spec := raft.ReplicaSpec{Group: group, Replica: 1, InitialMembers: map[raft.ReplicaID]string{1: n.Addr}}
	if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	waitSoleLeader(t, n, "founded")
	mustPut(t, testCtx(t), n.Host, "k", "v")

	// Restarted, it is still the only voter of its applied membership.
	n.Stop()
	n = clustertest.StartNodeWith(t, dir, addr, nil, slowElection)
	if err := n.Host.StartReplica(raft.ReplicaSpec{Group: group, Replica: 1}, n.Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	waitSoleLeader(t, n, "restarted")
	mustGet(t, testCtx(t), n.Host, "k", "v")
}

func waitSoleLeader(t *testing.T, n *clustertest.Node, what string) {
	t.Helper()
	start := time.Now()
	for {
		leader, _, ok, err := n.Host.Leader(group)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if leader != 1 {
				t.Fatalf("leader %d, want 1", leader)
			}
			t.Logf("%s: elected after %s", what, time.Since(start))
			return
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%s: no leader after 20 s: the sole voter waited for its election timeout", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
