package shardrepl

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/storage"
)

func desc(start, end string, gen uint64) shardsm.Descriptor {
	return shardsm.Descriptor{Span: storage.Span{Start: []byte(start), End: []byte(end)}, Generation: gen}
}

// formatRoutes renders the map as "group[start,end)@gen ...".
func formatRoutes(r *Replicator) string {
	var b strings.Builder
	for i, rt := range r.routes {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d[%s,%s)@%d", rt.group, rt.desc.Span.Start, rt.desc.Span.End, rt.desc.Generation)
	}
	return b.String()
}

// The shard map takes a split's child and its shrunk parent in either
// order, and a descriptor older than what it holds changes nothing.
func TestReplicatorMapTakesSplitsInAnyOrder(t *testing.T) {
	const parent, child, grandchild raft.GroupID = 2, 3, 4
	for _, tc := range []struct {
		name  string
		steps []route
		want  string
	}{
		{"parent first", []route{{parent, desc("a", "z", 1)}, {parent, desc("a", "m", 2)}, {child, desc("m", "z", 2)}},
			"2[a,m)@2 3[m,z)@2"},
		{"child first", []route{{parent, desc("a", "z", 1)}, {child, desc("m", "z", 2)}, {parent, desc("a", "m", 2)}},
			"2[a,m)@2 3[m,z)@2"},
		{"child first, parent not yet refreshed", []route{{parent, desc("a", "z", 1)}, {child, desc("m", "z", 2)}},
			"2[a,m)@1 3[m,z)@2"},
		{"a middle child first", []route{{parent, desc("a", "z", 1)}, {child, desc("h", "q", 3)}},
			"2[a,h)@1 3[h,q)@3 2[q,z)@1"},
		{"the parent's stale descriptor after the split", []route{{parent, desc("a", "m", 2)}, {child, desc("m", "z", 2)}, {parent, desc("a", "z", 1)}},
			"2[a,m)@2 3[m,z)@2"},
		{"an old child under a newer grandchild", []route{{parent, desc("a", "m", 2)}, {grandchild, desc("q", "z", 3)}, {child, desc("m", "z", 2)}},
			"2[a,m)@2 3[m,q)@2 4[q,z)@3"},
		{"two splits, children before parents", []route{{parent, desc("a", "z", 1)}, {grandchild, desc("q", "z", 3)}, {child, desc("m", "q", 3)}, {parent, desc("a", "m", 2)}},
			"2[a,m)@2 3[m,q)@3 4[q,z)@3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Replicator{}
			for _, st := range tc.steps {
				r.setLocked(st.group, st.desc)
			}
			if got := formatRoutes(r); got != tc.want {
				t.Fatalf("map %s, want %s", got, tc.want)
			}
			for i := 1; i < len(r.routes); i++ {
				if bytes.Compare(r.routes[i-1].desc.Span.End, r.routes[i].desc.Span.Start) > 0 {
					t.Fatalf("routes overlap: %s", formatRoutes(r))
				}
			}
		})
	}
}

// A commit waits for the map to change when no group holds one of its
// keys (a split child not added yet), and gives up after its timeout.
func TestReplicatorWaitsForMissingGroup(t *testing.T) {
	r := &Replicator{timeout: 200 * time.Millisecond}
	r.setLocked(2, desc("a", "m", 2))
	changed := r.mapChanged()
	go func() {
		time.Sleep(20 * time.Millisecond)
		r.mu.Lock()
		r.setLocked(3, desc("m", "z", 2))
		r.mu.Unlock()
	}()
	if !r.waitMapChange(changed, time.Now().Add(time.Second)) {
		t.Fatal("the map's change did not wake the waiter")
	}
	if _, err := r.cut([]storage.Mutation{{Kind: storage.MutationSet, Key: bare(nil, []byte("p"))}}); err != nil {
		t.Fatalf("cut after the child came: %v", err)
	}
	if r.waitMapChange(r.mapChanged(), time.Now().Add(20*time.Millisecond)) {
		t.Fatal("woken without a change")
	}
}
