package shardsm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// TestApplyRunsMatchOneByOne: a cluster node's replica (local-lock mode)
// given many entries per Apply puts runs of Writes into one batch
// (applyrun.go). Random commands — Writes of a few keys from a small set
// (so that runs meet keys they wrote already), tombstones, range
// deletions, Writes of a stale generation or an old serving epoch, Serves,
// and MVCC batches — are applied to one replica an entry at a time and to
// another in random slices. Every entry's result, and after each slice the
// applied index, stats counter, newest timestamp, serving state and the
// fingerprint of all the replica holds, must be the same; the counter must
// equal a recount.
func TestApplyRunsMatchOneByOne(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testApplyRuns(t, seed) })
	}
}

func testApplyRuns(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 17))
	open := func() raft.StateMachine {
		s := openTestStore(t)
		s.SetLocalLocks()
		m := s.NewStateMachine(1, 1)
		if _, err := m.Open(nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	one, runs := open(), open()
	var cmds [][]byte
	add := func(b []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, b)
	}
	add(EncodeInit(Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}}))
	epoch := uint64(0)
	at := int64(10)
	key := func() string { return fmt.Sprintf("k%02d", r.IntN(24)) }
	for len(cmds) < 600 {
		at++
		switch x := r.IntN(100); {
		case x < 70: // a commit of one to three rows
			var ms []storage.Mutation
			for range 1 + r.IntN(3) {
				k := key()
				if r.IntN(5) == 0 {
					ms = append(ms, storage.Mutation{Kind: storage.MutationSet,
						Key: enginekey.AppendVersionKey(nil, rk(k), ts(at)), Value: []byte{0x02}}) // a tombstone
				} else {
					ms = append(ms, version(k, at, fmt.Sprint("v", at)))
				}
			}
			ep := epoch
			if r.IntN(12) == 0 && epoch > 0 {
				ep = epoch - 1 // a node that served before: fenced
			}
			gen := uint64(1)
			if r.IntN(15) == 0 {
				gen = 2 // stale
			}
			add(EncodeWrite(Write{Generation: gen, Timestamp: ts(at), Epoch: ep, Mutations: ms}))
		case x < 75: // a range deletion of a few keys
			lo := r.IntN(24)
			del := storage.Mutation{Kind: storage.MutationDeleteRange, Key: mvcc.AppendBareKey(nil, rk(fmt.Sprintf("k%02d", lo))),
				Value: mvcc.AppendBareKey(nil, rk(fmt.Sprintf("k%02d", lo+1+r.IntN(4))))}
			add(EncodeWrite(Write{Generation: 1, Epoch: epoch, Mutations: []storage.Mutation{del}}))
		case x < 80:
			epoch++
			add(EncodeServe(Serve{Node: uint64(1 + r.IntN(3))}))
		case x < 85: // an MVCC batch of the older command set
			add(EncodeBatch(Batch{Ops: []Op{putOp("b"+key(), "x", at)}}))
		default: // a write of many rows: applied alone
			var ms []storage.Mutation
			for i := range 20 {
				ms = append(ms, version(fmt.Sprintf("m%02d", i), at, "bulk"))
			}
			add(EncodeWrite(Write{Generation: 1, Timestamp: ts(at), Epoch: epoch, Mutations: ms}))
		}
	}

	state := func(m raft.StateMachine) (StateResult, CheckResult) {
		t.Helper()
		v, err := m.Lookup(State{})
		if err != nil {
			t.Fatal(err)
		}
		return v.(StateResult), checkReplica(t, m)
	}
	index := uint64(0)
	for len(cmds) > 0 {
		n := min(len(cmds), 1+r.IntN(12))
		batch := make([]raft.Entry, n)
		for i := range batch {
			batch[i] = raft.Entry{Index: index + uint64(i) + 1, Cmd: cmds[i]}
		}
		if err := runs.Apply(batch); err != nil {
			t.Fatal(err)
		}
		for i := range batch {
			e := []raft.Entry{{Index: batch[i].Index, Cmd: cmds[i]}}
			if err := one.Apply(e); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(e[0].Result) != fmt.Sprint(batch[i].Result) {
				t.Fatalf("entry %d: alone %v, in a run %v", e[0].Index, DecodeResult(e[0].Result), DecodeResult(batch[i].Result))
			}
		}
		index += uint64(n)
		cmds = cmds[n:]
		s1, c1 := state(one)
		s2, c2 := state(runs)
		if fmt.Sprint(s1) != fmt.Sprint(s2) || c1 != c2 {
			t.Fatalf("after entry %d: alone %+v %+v, in runs %+v %+v", index, s1, c1, s2, c2)
		}
		if s2.Applied != index {
			t.Fatalf("applied index %d after entry %d", s2.Applied, index)
		}
	}
	st := runs.(*stateMachine).store.Stats()
	if st.WriteRuns == 0 || st.RunWrites <= st.WriteRuns {
		t.Fatalf("no run held several writes: %+v", st)
	}
	t.Logf("%d runs of %d writes", st.WriteRuns, st.RunWrites)
}
