package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// TestChooseReadReplicas is the read-replica choice's table: PER_AZ and
// ANY_AZ over zones, voters and unusable nodes never chosen, the current
// choice kept, and the bad cases (more asked than nodes, zones whose nodes
// all vote, no localities at all).
func TestChooseReadReplicas(t *testing.T) {
	// n makes a node: zone, usable ("u" usable, "v" votes or is down:
	// not usable), held.
	n := func(id uint64, zone string, usable bool, held int) rrNode {
		return rrNode{id: id, zone: zone, usable: usable, held: held}
	}
	tests := []struct {
		name    string
		want    ReadReplicaWant
		nodes   []rrNode
		current []uint64
		chosen  []uint64
		add     []uint64
		remove  []uint64
		short   []string // substrings, one per short message
	}{
		{
			name: "PER_AZ:1 over zones a, a, b, c: voters on 1, 3, 4; node 2 in a is the only non-voter",
			want: ReadReplicaWant{PerZone: 1},
			nodes: []rrNode{n(1, "az=a", false, 0), n(2, "az=a", true, 0),
				n(3, "az=b", false, 0), n(4, "az=c", false, 0)},
			chosen: []uint64{2}, add: []uint64{2},
			short: []string{"zone az=b: 0 of 1", "zone az=c: 0 of 1"},
		},
		{
			name: "PER_AZ:1 with a non-voter in every zone: one each, lowest id first",
			want: ReadReplicaWant{PerZone: 1},
			nodes: []rrNode{n(1, "az=a", true, 0), n(2, "az=a", true, 0), n(3, "az=b", true, 0),
				n(4, "az=b", true, 0), n(5, "az=c", true, 0)},
			chosen: []uint64{1, 3, 5}, add: []uint64{1, 3, 5},
		},
		{
			name: "PER_AZ:2: more asked than a zone has",
			want: ReadReplicaWant{PerZone: 2},
			nodes: []rrNode{n(1, "az=a", true, 0), n(2, "az=a", true, 0), n(3, "az=b", true, 0),
				n(4, "az=b", false, 0)},
			chosen: []uint64{1, 2, 3}, add: []uint64{1, 2, 3},
			short: []string{"zone az=b: 1 of 2"},
		},
		{
			name:    "the current read replica stays although another has a lower id",
			want:    ReadReplicaWant{PerZone: 1},
			nodes:   []rrNode{n(1, "az=a", true, 0), n(2, "az=a", true, 0)},
			current: []uint64{2}, chosen: []uint64{2},
		},
		{
			name:    "a current read replica that now votes (or died) is replaced in its zone",
			want:    ReadReplicaWant{PerZone: 1},
			nodes:   []rrNode{n(1, "az=a", true, 0), n(2, "az=a", false, 0)},
			current: []uint64{2}, chosen: []uint64{1}, add: []uint64{1}, remove: []uint64{2},
		},
		{
			name:   "fewest held read replicas first",
			want:   ReadReplicaWant{PerZone: 1},
			nodes:  []rrNode{n(1, "az=a", true, 3), n(2, "az=a", true, 1)},
			chosen: []uint64{2}, add: []uint64{2},
		},
		{
			name:   "ANY_AZ:2 spreads over zones",
			want:   ReadReplicaWant{Total: 2},
			nodes:  []rrNode{n(1, "az=a", true, 0), n(2, "az=a", true, 0), n(3, "az=b", true, 0)},
			chosen: []uint64{1, 3}, add: []uint64{1, 3},
		},
		{
			name: "ANY_AZ:3 takes a second node of a zone once every zone has one",
			want: ReadReplicaWant{Total: 3},
			nodes: []rrNode{n(1, "az=a", true, 0), n(2, "az=a", true, 0), n(3, "az=b", true, 0),
				n(4, "az=c", false, 0)},
			chosen: []uint64{1, 2, 3}, add: []uint64{1, 2, 3},
		},
		{
			name:    "ANY_AZ:1 keeps its current zone on a tie",
			want:    ReadReplicaWant{Total: 1},
			nodes:   []rrNode{n(1, "az=a", true, 0), n(3, "az=b", true, 0)},
			current: []uint64{3}, chosen: []uint64{3},
		},
		{
			name:   "ANY_AZ:5 asks more than the cluster has",
			want:   ReadReplicaWant{Total: 5},
			nodes:  []rrNode{n(1, "az=a", true, 0), n(2, "az=b", false, 0), n(3, "az=b", true, 0)},
			chosen: []uint64{1, 3}, add: []uint64{1, 3},
			short: []string{"2 of 5 in all"},
		},
		{
			name: "PER_AZ:1 and ANY_AZ:3 (two tables in the group): one per zone, then the rest",
			want: ReadReplicaWant{PerZone: 1, Total: 3},
			nodes: []rrNode{n(1, "az=a", true, 0), n(2, "az=a", true, 0), n(3, "az=b", true, 0),
				n(4, "az=b", true, 0)},
			chosen: []uint64{1, 2, 3}, add: []uint64{1, 2, 3},
		},
		{
			name:   "no localities: one zone of its own",
			want:   ReadReplicaWant{PerZone: 1},
			nodes:  []rrNode{n(1, "", false, 0), n(2, "", true, 0), n(3, "", true, 0)},
			chosen: []uint64{2}, add: []uint64{2},
		},
		{
			name:    "lowered: the extra ones go, the first ones stay",
			want:    ReadReplicaWant{Total: 1},
			nodes:   []rrNode{n(1, "az=a", true, 0), n(2, "az=b", true, 0)},
			current: []uint64{1, 2}, chosen: []uint64{1}, remove: []uint64{2},
		},
		{
			name:    "reset: every one goes",
			want:    ReadReplicaWant{},
			nodes:   []rrNode{n(1, "az=a", true, 0), n(2, "az=b", true, 0)},
			current: []uint64{1, 2}, remove: []uint64{1, 2},
		},
		{
			name:  "no usable node at all",
			want:  ReadReplicaWant{PerZone: 1},
			nodes: []rrNode{n(1, "az=a", false, 0), n(2, "az=b", false, 0), n(3, "az=c", false, 0)},
			short: []string{"zone az=a: 0 of 1", "zone az=b: 0 of 1", "zone az=c: 0 of 1"},
		},
		{
			name:  "no nodes",
			want:  ReadReplicaWant{PerZone: 1, Total: 1},
			short: []string{"0 of 1 in all"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := chooseReadReplicas(tc.want, tc.nodes, tc.current)
			eq := func(what string, got, want []uint64) {
				if !slices.Equal(got, want) {
					t.Errorf("%s: got %v, want %v", what, got, want)
				}
			}
			eq("chosen", ch.chosen, tc.chosen)
			eq("add", ch.add, tc.add)
			eq("remove", ch.remove, tc.remove)
			if len(ch.short) != len(tc.short) {
				t.Fatalf("short: got %q, want %q", ch.short, tc.short)
			}
			for i, s := range tc.short {
				if !strings.Contains(ch.short[i], s) {
					t.Errorf("short[%d] = %q, want it to contain %q", i, ch.short[i], s)
				}
			}
			// Whatever the case: never an unusable node, never twice.
			usable := map[uint64]bool{}
			for _, nd := range tc.nodes {
				usable[nd.id] = nd.usable
			}
			for i, id := range ch.chosen {
				if !usable[id] {
					t.Errorf("chose node %d, which is not usable", id)
				}
				if i > 0 && ch.chosen[i-1] == id {
					t.Errorf("chose node %d twice", id)
				}
			}
		})
	}
}

func TestReadReplicaWant(t *testing.T) {
	w := ReadReplicaWant{PerZone: 1}.Max(ReadReplicaWant{Total: 3}).Max(ReadReplicaWant{PerZone: 2, Total: 1})
	if got := fmt.Sprint(w); got != "PER_AZ:2 and ANY_AZ:3" {
		t.Fatalf("max of the wants: %s", got)
	}
	if !(ReadReplicaWant{}).None() || w.None() {
		t.Fatal("None")
	}
}

// TestPlaceReadReplicas runs Run's read-replica step on four nodes in
// process, the metadata group standing for a shard group: its non-voter
// becomes the read replica (no localities: one zone), RESET (no want)
// removes it, ANY_AZ:1 puts it back, and its node's death removes it (no
// other non-voter qualifies). Voters never become read replicas.
func TestPlaceReadReplicas(t *testing.T) {
	nodes := startNodes(t, 4)
	h := nodes[0].Host()
	_, _, spare := formed(t, h)
	var want atomic.Pointer[ReadReplicaWant]
	want.Store(&ReadReplicaWant{PerZone: 1})
	m := New(Config{Node: nodes[0], Groups: []Group{{ID: node.MetaGroup, Name: "the metadata group"}},
		DeadNodeTimeout: time.Second, Interval: 100 * time.Millisecond, Logf: t.Logf, NoRebalance: true,
		ReadReplicaGroups: func(context.Context) ([]ReadReplicaGroup, error) {
			return []ReadReplicaGroup{{ID: node.MetaGroup, Name: "the metadata group", Want: *want.Load()}}, nil
		}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	m.Start(ctx, &wg)
	defer func() { cancel(); wg.Wait() }()
	waitLive(t, m, 1, 2, 3, 4)
	m.Run(ctx, &wg)

	wait := func(what string, ids ...uint64) {
		t.Helper()
		var got map[raft.GroupID][]uint64
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var err error
			if got, err = m.ReadReplicas(context.Background(), false); err == nil && slices.Equal(got[node.MetaGroup], ids) {
				return
			}
		}
		t.Fatalf("%s: read replicas %v, want %v", what, got, ids)
	}
	// The other nodes have not recorded their localities (their managers
	// have not started): none is chosen, not even for a zone of "no
	// locality" of its own, which a round would move once it knows.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got, err := m.ReadReplicas(context.Background(), false); err == nil && len(got) > 0 {
			t.Fatalf("read replicas %v on nodes whose localities are not known yet", got)
		}
	}
	// Every node's manager records its locality (none here) when it
	// starts.
	stopOthers := map[uint64]func(){}
	for _, nd := range nodes[1:] {
		octx, ocancel := context.WithCancel(ctx)
		other := New(Config{Node: nd, DeadNodeTimeout: time.Second, Interval: 100 * time.Millisecond, Logf: t.Logf, NoRebalance: true})
		var owg sync.WaitGroup
		other.Start(octx, &owg)
		stopOthers[other.Self()] = func() { ocancel(); owg.Wait() }
	}
	defer func() {
		for _, stop := range stopOthers {
			stop()
		}
	}()
	wait("PER_AZ:1", spare)
	want.Store(&ReadReplicaWant{})
	wait("reset")
	want.Store(&ReadReplicaWant{Total: 1})
	wait("ANY_AZ:1", spare)
	stopOthers[spare]()
	delete(stopOthers, spare)
	nodes[spare-1].Close()
	nodes[spare-1] = nil
	wait("after the read replica's node died")
}
