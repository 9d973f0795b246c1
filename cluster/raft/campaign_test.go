package raft_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// TestSoleFoundingVoterCampaignsAtOnce: a group founded with one voter
// elects it without waiting for its election timeout (campaign.go). The
// timeout here is 30-60 s (3000 ticks of 10 ms), so a leader within 20 s
// can only come from the early campaign; it takes milliseconds unloaded.
func TestSoleFoundingVoterCampaignsAtOnce(t *testing.T) {
	n := clustertest.StartNodeWith(t, filepath.Join(t.TempDir(), "n1"), clustertest.FreeAddr(t), nil, func(c *raft.HostConfig) {
		c.ElectionTicks = 3000
	})
	spec := raft.ReplicaSpec{Group: group, Replica: 1, InitialMembers: map[raft.ReplicaID]string{1: n.Addr}}
	start := time.Now()
	if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	for {
		leader, _, ok, err := n.Host.Leader(group)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if leader != 1 {
				t.Fatalf("leader %d, want 1", leader)
			}
			t.Logf("elected after %s", time.Since(start))
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("no leader 20 s after founding: the sole voter waited for its election timeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mustPut(t, testCtx(t), n.Host, "k", "v")
}
