package shardsm

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// The oracle: per key, the committed versions and at most one intent, with
// the rules of storage/mvcc as the layer above sees them.
type oVersion struct {
	ts      int64
	value   string
	deleted bool
}

type oIntent struct {
	txn     int
	value   string
	deleted bool
}

type oTxn struct {
	id      mvcc.TxnID
	writeTS int64
	keys    map[string]bool
}

type oracle struct {
	committed map[string][]oVersion // ascending ts
	intents   map[string]*oIntent
	txns      map[int]*oTxn
	gc        int64
}

func (o *oracle) newest(k string) int64 {
	vs := o.committed[k]
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1].ts
}

// put is a one-phase committed write: refused on an intent (lock
// conflict) or a version at or after at (write conflict).
func (o *oracle) put(k, v string, del bool, at int64) string {
	if o.intents[k] != nil {
		return "lock"
	}
	if o.newest(k) >= at {
		return "write"
	}
	o.committed[k] = append(o.committed[k], oVersion{at, v, del})
	return ""
}

func (o *oracle) intent(k, v string, del bool, txn int) string {
	t := o.txns[txn]
	if in := o.intents[k]; in != nil && in.txn != txn {
		return "lock"
	}
	if o.newest(k) >= t.writeTS {
		return "write"
	}
	o.intents[k] = &oIntent{txn, v, del}
	t.keys[k] = true
	return ""
}

func (o *oracle) resolve(txn int, commit bool, at int64) {
	t := o.txns[txn]
	for k := range t.keys {
		if in := o.intents[k]; in != nil && in.txn == txn {
			if commit {
				o.committed[k] = append(o.committed[k], oVersion{at, in.value, in.deleted})
			}
			delete(o.intents, k)
		}
	}
	delete(o.txns, txn)
}

// get answers a non-transactional read at `at`.
func (o *oracle) get(k string, at int64) (string, bool, string) {
	if at < o.gc {
		return "", false, "gc"
	}
	if in := o.intents[k]; in != nil && o.txns[in.txn].writeTS <= at {
		return "", false, "lock"
	}
	vs := o.committed[k]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].ts <= at {
			if vs[i].deleted {
				return "", false, ""
			}
			return vs[i].value, true, ""
		}
	}
	return "", false, ""
}

func errKind(err error) string {
	var lc *mvcc.LockConflictError
	var wc *mvcc.WriteConflictError
	var gc *mvcc.BelowGCThresholdError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &lc):
		return "lock"
	case errors.As(err, &wc):
		return "write"
	case errors.As(err, &gc):
		return "gc"
	}
	return err.Error()
}

// Random commands go to two replicas of a shard (two stores, applied in
// the same order), which splits once midway; now and then one replica's
// group is replaced by a snapshot of the other's. Every command's outcome,
// and reads at random timestamps on both replicas, must match the oracle;
// the replicas end identical and their stats counters equal a recount.
func TestRandomizedAgainstOracle(t *testing.T) {
	rng := storagetest.NewRand(t, "./cluster/shardsm/")
	stores := [2]*Store{openTestStore(t), openTestStore(t)}
	reps := map[raft.GroupID][2]*applier{}
	open := func(g raft.GroupID) {
		reps[g] = [2]*applier{{t: t, m: stores[0].NewStateMachine(g, 1)}, {t: t, m: stores[1].NewStateMachine(g, 2)}}
		for _, a := range reps[g] {
			if _, err := a.m.Open(nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	open(shardGroup)
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%02d", i)
	}
	splitKey := keys[len(keys)/2]
	split := false
	groupOf := func(k string) raft.GroupID {
		if split && k >= splitKey {
			return childGroup
		}
		return shardGroup
	}
	// apply sends cmd to g on both replicas; the results must agree.
	apply := func(g raft.GroupID, cmd []byte) error {
		t.Helper()
		e0, e1 := reps[g][0].apply(cmd), reps[g][1].apply(cmd)
		if fmt.Sprint(e0) != fmt.Sprint(e1) {
			t.Fatalf("replicas disagree on a command: %v vs %v", e0, e1)
		}
		return e0
	}
	for _, a := range reps[shardGroup] {
		initShard(t, a, storage.Span{Start: rk(""), End: rk("l")})
	}
	o := &oracle{committed: map[string][]oVersion{}, intents: map[string]*oIntent{}, txns: map[int]*oTxn{}}
	var clock int64 = 10
	nextTxn := 0
	steps := 1500
	if testing.Short() {
		steps = 500
	}
	for step := 0; step < steps; step++ {
		k := keys[rng.IntN(len(keys))]
		v := fmt.Sprint(step)
		switch p := rng.IntN(100); {
		case p < 30:
			clock++
			del := rng.IntN(5) == 0
			kind := OpPut
			if del {
				kind = OpDelete
			}
			want := o.put(k, v, del, clock)
			got := apply(groupOf(k), mustEncode(t, Batch{Ops: []Op{{Kind: kind, Key: rk(k), Value: []byte(v), Timestamp: ts(clock)}}}))
			if errKind(got) != want {
				t.Fatalf("step %d: put %s at %d: %v, oracle %q", step, k, clock, got, want)
			}
		case p < 40:
			clock++
			nextTxn++
			o.txns[nextTxn] = &oTxn{id: mvcc.NewTxnID(), writeTS: clock, keys: map[string]bool{}}
		case p < 65:
			if len(o.txns) == 0 {
				continue
			}
			id := pickTxn(o, rng.IntN(len(o.txns)))
			tx := o.txns[id]
			if tx.writeTS <= o.gc {
				// A write below the GC threshold is the caller's bug (GC
				// may have removed the newer tombstone it conflicts with);
				// the layer above pushes such transactions first.
				continue
			}
			del := rng.IntN(5) == 0
			want := o.intent(k, v, del, id)
			meta := &mvcc.TxnMeta{ID: tx.id, Anchor: rk(k), WriteTimestamp: ts(tx.writeTS)}
			got := apply(groupOf(k), mustEncode(t, Batch{Ops: []Op{{Kind: OpIntent, Key: rk(k), Value: []byte(v), IsDelete: del,
				Timestamp: ts(tx.writeTS), Txn: meta, Strength: mvcc.Update}}}))
			if errKind(got) != want {
				t.Fatalf("step %d: intent of txn %d on %s: %v, oracle %q", step, id, k, got, want)
			}
		case p < 75:
			if len(o.txns) == 0 {
				continue
			}
			id := pickTxn(o, rng.IntN(len(o.txns)))
			clock++
			commit := rng.IntN(3) > 0
			res := mvcc.Resolution{ID: o.txns[id].id, Status: mvcc.Aborted}
			if commit {
				res = mvcc.Resolution{ID: o.txns[id].id, Status: mvcc.Committed, CommitTimestamp: ts(clock)}
			}
			o.resolve(id, commit, clock)
			groups := []raft.GroupID{shardGroup}
			if split {
				groups = append(groups, childGroup)
			}
			for _, g := range groups {
				d := reps[g][0].m.(*stateMachine).desc
				if err := apply(g, mustEncode(t, Batch{Ops: []Op{{Kind: OpResolve, Key: d.Span.Start, EndKey: d.Span.End, Resolution: res}}})); err != nil {
					t.Fatalf("step %d: resolve: %v", step, err)
				}
			}
		case p < 77:
			// GC somewhere below the clock, never below the last threshold.
			th := o.gc + rng.Int64N(clock-o.gc+1)
			if th == 0 {
				continue
			}
			groups := []raft.GroupID{shardGroup}
			if split {
				groups = append(groups, childGroup)
			}
			for _, g := range groups {
				if err := apply(g, mustEncode(t, Batch{Ops: []Op{{Kind: OpGC, Timestamp: ts(th)}}})); err != nil {
					t.Fatalf("step %d: GC at %d: %v", step, th, err)
				}
			}
			o.gc = th
		case p < 79 && !split && step > steps/3:
			members := map[raft.ReplicaID]string{1: "a", 2: "b"}
			if err := apply(shardGroup, mustEncode(t, Split{Key: rk(splitKey), Child: childGroup, Members: members})); err != nil {
				t.Fatalf("step %d: split: %v", step, err)
			}
			split = true
			open(childGroup)
		case p < 82:
			// Replica 1's group is replaced by a snapshot of replica 0's.
			g := groupOf(k)
			snap := takeSnapshot(t, reps[g][0].m)
			if err := reps[g][1].m.RecoverFromSnapshot(bytes.NewReader(snap), nil); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		default:
			at := 1 + rng.Int64N(clock+1)
			wv, wok, werr := o.get(k, at)
			for i, a := range reps[groupOf(k)] {
				r, err := a.m.Lookup(Get{Key: rk(k), Timestamp: ts(at)})
				var got GetResult
				if err == nil {
					got = r.(GetResult)
				}
				if errKind(err) != werr || got.Found != wok || string(got.Value) != wv {
					t.Fatalf("step %d: replica %d reads %s at %d: %+v %v; oracle %q %v %q", step, i, k, at, got, err, wv, wok, werr)
				}
			}
		}
	}
	for g, rs := range reps {
		a, b := checkReplica(t, rs[0].m), checkReplica(t, rs[1].m)
		if a.Fingerprint != b.Fingerprint || a.Applied != b.Applied {
			t.Fatalf("group %d: replicas differ: %+v vs %+v", g, a, b)
		}
	}
	if !split {
		t.Fatal("the shard never split")
	}
}

// pickTxn returns the i-th open transaction in id order (map order is
// random, and the test must replay from its seed).
func pickTxn(o *oracle, i int) int {
	ids := make([]int, 0, len(o.txns))
	for id := range o.txns {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids[i]
}
