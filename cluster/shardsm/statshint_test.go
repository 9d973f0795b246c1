package shardsm

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// TestStatsHint proposes Writes carrying their stats change, read from one
// replica's store, to two replicas, and checks that a replica takes the
// change only when nothing applied since its base touched the Write's row
// keys: after a write of the same key, after a Batch, or on a replica that
// reopened in between, it reads the versions itself. A stale change taken
// would leave the counter off the recount, which checkReplica compares
// after every step, with both replicas' fingerprints.
func TestStatsHint(t *testing.T) {
	stores := [2]*Store{openTestStore(t), openTestStore(t)}
	var as [2]*applier
	for i, s := range stores {
		s.SetLocalLocks()
		as[i] = &applier{t: t, m: s.NewStateMachine(1, raft.ReplicaID(i+1))}
		if _, err := as[i].m.Open(nil); err != nil {
			t.Fatal(err)
		}
	}
	applyAll := func(cmd []byte) {
		t.Helper()
		for _, a := range as {
			if err := a.apply(cmd); err != nil {
				t.Fatal(err)
			}
		}
		c0, c1 := checkReplica(t, as[0].m), checkReplica(t, as[1].m)
		if c0.Fingerprint != c1.Fingerprint || c0.Stored != c1.Stored {
			t.Fatalf("replicas differ: %+v and %+v", c0, c1)
		}
	}
	// hinted encodes a Write of ms with the change read from replica 1's
	// store now.
	hinted := func(ms ...storage.Mutation) []byte {
		t.Helper()
		w := Write{Generation: 1, Mutations: ms}
		if err := AddStatsHint(stores[0].DB(), 1, &w); err != nil {
			t.Fatal(err)
		}
		if w.Stats == nil || w.Stats.Base != as[0].index {
			t.Fatalf("hint %+v, want one at index %d", w.Stats, as[0].index)
		}
		b, err := EncodeWrite(w)
		if err != nil {
			t.Fatal(err)
		}
		d, err := decodeCommand(b)
		if err != nil || *d.(*Write).Stats != *w.Stats {
			t.Fatalf("decoded %+v, %v; want the hint %+v", d, err, w.Stats)
		}
		return b
	}
	wantHinted := func(step string, n0, n1 int64) {
		t.Helper()
		if h0, h1 := stores[0].Stats().HintedWrites, stores[1].Stats().HintedWrites; h0 != n0 || h1 != n1 {
			t.Fatalf("%s: the replicas took %d and %d carried changes, want %d and %d", step, h0, h1, n0, n1)
		}
	}

	// A store that holds nothing of the group gives no hint.
	w := Write{Generation: 1, Mutations: []storage.Mutation{version("a", 1, "a1")}}
	if err := AddStatsHint(stores[0].DB(), 1, &w); err != nil || w.Stats != nil {
		t.Fatalf("hint %+v, %v before the group's first entry", w.Stats, err)
	}
	applyAll(mustEncode(t, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}}))
	applyAll(encodeWrite(t, 1, version("a", 1, "a1"), version("b", 1, "b1"), version("c", 1, "c1")))

	cmd := hinted(version("a", 2, "a22"))
	applyAll(encodeWrite(t, 1, version("c", 2, "c2"))) // another key
	applyAll(cmd)
	wantHinted("after a write of another key", 1, 1)

	// b's newest version changes between the read and the apply: the
	// carried change (b1 was the newest) is wrong for the entry.
	cmd = hinted(version("b", 3, "b3"))
	applyAll(encodeWrite(t, 1, version("b", 2, "b2 longer")))
	applyAll(cmd)
	wantHinted("after a write of the same key", 1, 1)

	// A Batch may touch any key: what came before it is forgotten.
	cmd = hinted(version("a", 4, "a4444"))
	applyAll(mustEncode(t, Batch{Ops: []Op{putOp("d", "d", 4)}}))
	applyAll(cmd)
	wantHinted("after a Batch", 1, 1)

	// Replica 2 restarts between the read and the apply: it knows nothing
	// of the entries before and reads; replica 1 takes the change.
	cmd = hinted(version("c", 5, "c5"))
	as[1].m = stores[1].NewStateMachine(1, 2)
	if applied, err := as[1].m.Open(nil); err != nil || applied != as[1].index {
		t.Fatalf("reopened at %d, %v; want %d", applied, err, as[1].index)
	}
	applyAll(cmd)
	wantHinted("after a restart", 2, 1)

	// The next one it takes again: it applied everything since the base.
	applyAll(hinted(version("a", 6, "a6"), version("new", 6, "n")))
	wantHinted("after the restart", 3, 2)

	// Two Writes in flight at once, of different rows, that both merge
	// into one counter that is not a version (every commit merges into
	// its shard's statistics counter): the second's carried change holds,
	// as the counter is no part of any stats change.
	counter := func() storage.Mutation {
		return storage.Mutation{Kind: storage.MutationMerge, Key: mvcc.AppendBareKey(nil, rk("counter")),
			Value: binary.BigEndian.AppendUint64(nil, 1)}
	}
	first := hinted(version("a", 8, "a8"), counter())
	second := hinted(version("b", 8, "b8"), counter())
	applyAll(first)
	applyAll(second)
	wantHinted("after a Write that merged into the same counter", 5, 4)

	// A trailer that is not a hint is malformed, on every replica.
	bad := append(encodeWrite(t, 1, version("a", 7, "a7")), 2)
	for _, a := range as {
		if err := a.apply(bad); err == nil {
			t.Fatal("a write with a bad trailer applied")
		}
	}
}

// TestRecentWritesLargeWrites: the record finds a shared key whichever
// way untouched compares (pairs one by one, or through a set once the
// Writes are large), forgets everything at a Write of more than
// maxHintedKeys keys instead of holding its keys, and such a Write
// carries no change. Before the bound, a bulk load's Writes (thousands of
// keys) were compared pair by pair against each other on every replica.
func TestRecentWritesLargeWrites(t *testing.T) {
	keys := func(from, n int) []uint64 {
		ks := make([]uint64, n)
		for i := range ks {
			ks[i] = uint64(from + i)
		}
		return ks
	}
	for _, n := range []int{1, 4, 100, maxHintedKeys} {
		var r recentWrites
		r.floor = 10
		r.writes = []recentWrite{{index: 11, keys: keys(0, n)}, {index: 12, keys: keys(1000, n)}}
		if r.untouched(10, 13, keys(5000, n)) != true {
			t.Errorf("n=%d: disjoint keys reported touched", n)
		}
		if r.untouched(10, 13, append(keys(5000, n), uint64(n-1))) {
			t.Errorf("n=%d: a key of the Write at 11 not found", n)
		}
		if r.untouched(10, 13, append(keys(5000, n), 1000)) {
			t.Errorf("n=%d: a key of the Write at 12 not found", n)
		}
		if !r.untouched(11, 13, append(keys(5000, n), uint64(n-1))) {
			t.Errorf("n=%d: a key of the Write at base 11 itself counted", n)
		}
	}

	var r recentWrites
	r.note(20, &Write{Mutations: []storage.Mutation{version("a", 1, "a1")}})
	big := &Write{}
	for i := range maxHintedKeys + 1 {
		big.Mutations = append(big.Mutations, version(fmt.Sprintf("k%04d", i), 1, "v"))
	}
	r.note(21, big)
	if len(r.writes) != 0 || r.floor != 22 {
		t.Fatalf("after a Write of %d keys the record holds %d Writes from %d; want none, from 22", len(big.Mutations), len(r.writes), r.floor)
	}
	s := openTestStore(t)
	s.SetLocalLocks()
	m := s.NewStateMachine(1, 1)
	if _, err := m.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := AddStatsHint(s.DB(), 1, big); err != nil || big.Stats != nil {
		t.Fatalf("a Write of %d keys got the change %+v, %v; want none", len(big.Mutations), big.Stats, err)
	}
}
