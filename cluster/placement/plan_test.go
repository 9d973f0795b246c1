package placement

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
)

// TestPlan runs the allocator's decision function on views, table-driven:
// leaderships by count and by load, voters by count and by zone diversity,
// and what is never moved.
func TestPlan(t *testing.T) {
	nodes := func(zones ...string) []allocNode {
		out := make([]allocNode, len(zones))
		for i, z := range zones {
			out[i] = allocNode{id: uint64(i + 1), zone: z, target: true}
		}
		return out
	}
	all := []uint64{1, 2, 3}
	tests := []struct {
		name   string
		nodes  []allocNode
		groups []allocGroup
		want   []string // moves as "leader|voter group from->to"
	}{
		{
			name:   "balanced leaderships: 1 and 1",
			nodes:  nodes("", "", ""),
			groups: []allocGroup{{id: 1, leader: 1, voters: all}, {id: 2, leader: 2, voters: all}},
		},
		{
			name:   "by count: node 1 leads both, node 3 none",
			nodes:  nodes("", "", ""),
			groups: []allocGroup{{id: 1, leader: 1, voters: all}, {id: 2, leader: 1, voters: all, serving: true}, {id: 3, leader: 2, voters: all}},
			want:   []string{"leader 1 1->3"},
		},
		{
			name:   "the serving group's leadership never moves",
			nodes:  nodes("", "", ""),
			groups: []allocGroup{{id: 1, leader: 1, voters: all, serving: true}, {id: 2, leader: 1, voters: all, serving: true}},
		},
		{
			name:  "by count a cold leadership would move; by load node 2's hot group outweighs node 1's three cold ones",
			nodes: nodes("", ""),
			groups: []allocGroup{
				{id: 1, leader: 1, voters: []uint64{1, 2}, rate: 0},
				{id: 2, leader: 1, voters: []uint64{1, 2}, rate: 0},
				{id: 3, leader: 1, voters: []uint64{1, 2}, rate: 0},
				{id: 4, leader: 2, voters: []uint64{1, 2}, rate: 300},
			},
		},
		{
			name:  "same counts, no load: the cold leadership moves",
			nodes: nodes("", ""),
			groups: []allocGroup{
				{id: 1, leader: 1, voters: []uint64{1, 2}},
				{id: 2, leader: 1, voters: []uint64{1, 2}},
				{id: 3, leader: 1, voters: []uint64{1, 2}},
				{id: 4, leader: 2, voters: []uint64{1, 2}},
			},
			want: []string{"leader 1 1->2", "leader 2 1->2", "leader 3 1->2"},
		},
		{
			name:  "by load: the hot node gives a cold leadership away, never the hot one (it would only swap who is ahead)",
			nodes: nodes("", "", ""),
			groups: []allocGroup{
				{id: 1, leader: 1, voters: all, rate: 300},
				{id: 2, leader: 1, voters: all},
				{id: 3, leader: 2, voters: all},
				{id: 4, leader: 3, voters: all},
			},
			// weights: hot 0.5+0.5*4 = 2.5, cold 0.5: node 1 weighs 3,
			// node 2 and 3 0.5 each: group 2 (0.5) moves, group 1 (2.5)
			// may not (3-0.5 < 5).
			want: []string{"leader 2 1->2"},
		},
		{
			name:  "the heaviest leader gives first",
			nodes: nodes("", "", "", ""),
			groups: []allocGroup{
				{id: 1, leader: 1, voters: []uint64{1, 2, 4}},
				{id: 2, leader: 1, voters: []uint64{1, 2, 4}},
				{id: 3, leader: 2, voters: []uint64{1, 2, 4}},
				{id: 4, leader: 2, voters: []uint64{1, 2, 4}},
				{id: 5, leader: 2, voters: []uint64{1, 2, 4}},
			},
			want: []string{"leader 3 2->4", "leader 4 2->4", "leader 5 2->4", "leader 1 1->4", "leader 2 1->4"},
		},
		{
			name:  "a target that is not eligible gets nothing",
			nodes: []allocNode{{id: 1, target: true}, {id: 2, target: true}, {id: 3}},
			groups: []allocGroup{
				{id: 1, leader: 1, voters: all}, {id: 2, leader: 1, voters: all}, {id: 3, leader: 2, voters: all},
			},
		},
		{
			name:  "voters by count: a fourth node gets a voter of a movable group, not from its leader",
			nodes: nodes("", "", "", ""),
			groups: []allocGroup{
				{id: 1, leader: 1, voters: all, ready: []uint64{4}},
				{id: 2, leader: 2, voters: all, ready: []uint64{4}, movable: true, serving: true},
			},
			want: []string{"voter 2 3->4"},
		},
		{
			name:  "voters: a decommissioning node's voter is the drain's, not the allocator's",
			nodes: []allocNode{{id: 1, target: true}, {id: 2, target: true}, {id: 3}, {id: 4, target: true}},
			groups: []allocGroup{
				{id: 1, leader: 1, voters: []uint64{1, 2, 3}, movable: true, serving: true},
				{id: 2, leader: 1, voters: []uint64{1, 2, 3}, ready: []uint64{4}, movable: true, serving: true},
			},
			want: []string{"voter 2 2->4"},
		},
		{
			name:  "voters: not without a caught-up non-voter, nor when counts differ by one",
			nodes: nodes("", "", "", ""),
			groups: []allocGroup{
				{id: 1, leader: 1, voters: all, movable: true},
				{id: 2, leader: 2, voters: []uint64{1, 2, 4}, ready: []uint64{3}, movable: true},
			},
		},
		{
			name:  "diversity: two voters in zone a, a caught-up non-voter in zone c",
			nodes: nodes("az=a", "az=a", "az=b", "az=c"),
			groups: []allocGroup{
				{id: 2, leader: 3, voters: []uint64{1, 2, 3}, ready: []uint64{4}, movable: true, serving: true},
			},
			want: []string{"voter 2 2->4"},
		},
		{
			name:  "diversity beats the leader in the crowded zone: the other voter moves",
			nodes: nodes("az=a", "az=a", "az=b", "az=c"),
			groups: []allocGroup{
				{id: 2, leader: 2, voters: []uint64{1, 2, 3}, ready: []uint64{4}, movable: true, serving: true},
			},
			want: []string{"voter 2 1->4"},
		},
		{
			name:  "diversity: a count move that would lose a zone is not made",
			nodes: nodes("az=a", "az=b", "az=c", "az=a"),
			groups: []allocGroup{
				{id: 1, leader: 2, voters: []uint64{1, 2, 3}},
				{id: 2, leader: 1, voters: []uint64{1, 2, 3}, ready: []uint64{4}, movable: true, serving: true},
			},
			// node 2 and 3 vote twice, node 4 never: moving 2 or 3 to
			// node 4 (zone a, like node 1) would leave two zones.
		},
		{
			name:  "diversity: the count move takes the voter whose zone node 4 repeats",
			nodes: nodes("az=a", "az=b", "az=c", "az=b"),
			groups: []allocGroup{
				{id: 1, leader: 2, voters: []uint64{1, 2, 3}},
				{id: 2, leader: 1, voters: []uint64{1, 2, 3}, ready: []uint64{4}, movable: true, serving: true},
			},
			want: []string{"voter 2 2->4"},
		},
		{
			name:   "an election runs: nothing is decided for the group",
			nodes:  nodes("", "", ""),
			groups: []allocGroup{{id: 1, voters: all, ready: []uint64{}, movable: true}, {id: 2, leader: 1, voters: all}, {id: 3, leader: 1, voters: all}},
			want:   []string{"leader 2 1->2", "leader 3 1->2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, mv := range plan(tt.nodes, tt.groups) {
				kind := "leader"
				if mv.voter {
					kind = "voter"
				}
				got = append(got, strings.Join([]string{kind, itoa(uint64(mv.group)), itoa(mv.from) + "->" + itoa(mv.to)}, " "))
				if mv.why == "" {
					t.Errorf("move %v without a reason", mv)
				}
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Fatalf("plan: %q, want %q", got, tt.want)
			}
		})
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestGenerations: replica ids of later generations map back to their
// node; a node's replica in a membership is found whatever its generation.
func TestGenerations(t *testing.T) {
	r := ReplicaOf(5, 3)
	if NodeOf(r) != 5 || GenOf(r) != 3 || ReplicaOf(5, 0) != 5 {
		t.Fatalf("ReplicaOf(5, 3) = %#x: node %d gen %d", r, NodeOf(r), GenOf(r))
	}
	mem := raft.Membership{Voters: map[raft.ReplicaID]string{1: "a", ReplicaOf(2, 1): "b"},
		NonVoters: map[raft.ReplicaID]string{ReplicaOf(3, 2): "c"},
		Removed:   map[raft.ReplicaID]bool{3: true, ReplicaOf(3, 1): true, 4: true}}
	if got, voter, ok := replicaOn(mem, 2); !ok || !voter || got != ReplicaOf(2, 1) {
		t.Fatalf("node 2: %#x %v %v", got, voter, ok)
	}
	if got, voter, ok := replicaOn(mem, 3); !ok || voter || got != ReplicaOf(3, 2) {
		t.Fatalf("node 3: %#x %v %v", got, voter, ok)
	}
	if gaveUp(mem, 3) || !gaveUp(mem, 4) || gaveUp(mem, 1) {
		t.Fatal("gaveUp: node 3 keeps a later generation, node 4 holds none, node 1 never left")
	}
}

// TestParseLocality: tiers are validated and made canonical.
func TestParseLocality(t *testing.T) {
	for in, want := range map[string]string{"": "", "az=a": "az=a", " az=a , rack=r1 ": "az=a,rack=r1", "region=eu-west.1": "region=eu-west.1"} {
		if got, err := ParseLocality(in); err != nil || got != want {
			t.Errorf("ParseLocality(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"az": "not key=value", "az=": "empty key or value", "=a": "empty key or value",
		"az=a,az=b": "given twice", "az=a b": "letters, digits", "az=a,,rack=1": "not key=value"} {
		if _, err := ParseLocality(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLocality(%q): %v, want %q", in, err, msg)
		}
	}
}
