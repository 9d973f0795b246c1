package shardsm

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// version is the engine key and the storage engine's value of row k at t
// (a tagged value: 0x01 then the row, storage/versions.go).
func version(k string, at int64, v string) storage.Mutation {
	return storage.Mutation{Kind: storage.MutationSet, Key: enginekey.AppendVersionKey(nil, rk(k), ts(at)),
		Value: append([]byte{0x01}, v...)}
}

func encodeWrite(t testing.TB, gen uint64, ms ...storage.Mutation) []byte {
	t.Helper()
	var at hlc.Timestamp
	for _, m := range ms {
		if _, ts, ok := enginekey.DecodeVersion(m.Key); ok && at.Less(ts) {
			at = ts
		}
	}
	b, err := EncodeWrite(Write{Generation: gen, Timestamp: at, Mutations: ms})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteEncoding(t *testing.T) {
	w := Write{Generation: 4, Timestamp: hlc.Timestamp{WallTime: 5, Logical: 2}, Mutations: []storage.Mutation{
		version("a", 5, "x"),
		{Kind: storage.MutationDeleteRange, Key: mvcc.AppendBareKey(nil, rk("a")), Value: mvcc.AppendBareKey(nil, rk("b"))},
		{Kind: storage.MutationMerge, Key: mvcc.AppendBareKey(nil, []byte{1, 9}), Value: []byte{}},
	}}
	b, err := EncodeWrite(w)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got.(*Write), w) {
		t.Fatalf("decoded %+v, encoded %+v", got, w)
	}
	for i := 0; i < len(b); i++ {
		if _, err := decodeCommand(b[:i]); !errors.Is(err, errBadCommand) {
			t.Fatalf("prefix of %d bytes decoded: %v", i, err)
		}
	}
	for _, bad := range []Write{{}, {Mutations: []storage.Mutation{{Kind: storage.MutationSet}}}, {Mutations: []storage.Mutation{{Kind: 42, Key: []byte{1, 0}}}}} {
		if _, err := EncodeWrite(bad); err == nil {
			t.Fatalf("EncodeWrite(%+v) accepted", bad)
		}
	}
}

func TestRouteKey(t *testing.T) {
	lock := mvcc.LockKey(rk("a"), mvcc.Update, mvcc.NewTxnID())
	for _, c := range []struct {
		key  []byte
		want []byte
	}{
		{enginekey.AppendVersionKey(nil, rk("a"), ts(3)), rk("a")},
		{mvcc.AppendBareKey(nil, []byte{1, 2, 3}), []byte{1, 2, 3}},
		{lock, rk("a")},
		{mvcc.AppendBareKey(nil, append([]byte{3, schemaTimeKind}, rk("")...)), rk("")},
	} {
		got, err := RouteKey(c.key)
		if err != nil || string(got) != string(c.want) {
			t.Fatalf("RouteKey(%x) = %x, %v; want %x", c.key, got, err, c.want)
		}
	}
	for _, bad := range [][]byte{nil, {1, 2}, mvcc.AppendBareKey(nil, []byte{3, mvcc.LocalReplicaState, 1})} {
		if _, err := RouteKey(bad); err == nil {
			t.Fatalf("RouteKey(%x) accepted", bad)
		}
	}
}

// TestApplyWrite applies storage commits to a replica: the rows are the
// engine's, keys outside the shard make the write stale (nothing applied),
// and the stats counter follows, range deletions included.
// TestApplyWrite runs on a store of each mode: its stats counter is kept by
// a recount, or in local-lock mode (a cluster node's) by
// mvcc.VersionStatsDelta, which falls back to the recount for the range
// deletion; checkReplica compares the counter with a recount.
func TestApplyWrite(t *testing.T) {
	for _, localLocks := range []bool{false, true} {
		t.Run(fmt.Sprintf("localLocks=%v", localLocks), func(t *testing.T) { testApplyWrite(t, localLocks) })
	}
}

func testApplyWrite(t *testing.T, localLocks bool) {
	s := openTestStore(t)
	if localLocks {
		s.SetLocalLocks()
	}
	var clock hlc.Timestamp
	s.SetClock(func(ts hlc.Timestamp) error {
		if clock.Less(ts) {
			clock = ts
		}
		return nil
	})
	a := &applier{t: t, m: s.NewStateMachine(1, 1)}
	if _, err := a.m.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(encodeWrite(t, 0, version("a", 5, "x"))); !isStale(err) {
		t.Fatalf("a write before Init: %v", err)
	}
	if err := a.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(encodeWrite(t, 1, version("a", 5, "x"), version("b", 5, "y"), version("a", 6, "x2"))); err != nil {
		t.Fatal(err)
	}
	checkReplica(t, a.m)
	// The newest commit timestamp is kept and told to the clock.
	if v, err := a.m.Lookup(State{}); err != nil || v.(StateResult).MaxTimestamp != ts(6) || clock != ts(6) {
		t.Fatalf("newest timestamp %+v (%v), clock %v", v, err, clock)
	}
	got, err := rows(t, a.m, tableSpan, 10)
	if err != nil || len(got) != 2 || got[0] != "a=x2" || got[1] != "b=y" {
		t.Fatalf("rows %v, %v", got, err)
	}
	other := storage.Mutation{Kind: storage.MutationSet, Key: enginekey.AppendVersionKey(nil, []byte{2, 0, 0, 0, 0, 0, 0, 0, 9, 'z'}, ts(7)), Value: []byte{1}}
	if err := a.apply(encodeWrite(t, 1, version("c", 7, "z"), other)); !isStale(err) {
		t.Fatalf("a key of another shard: %v", err)
	}
	if err := a.apply(encodeWrite(t, 2, version("c", 7, "z"))); !isStale(err) {
		t.Fatalf("a later generation: %v", err)
	}
	if got, _ := rows(t, a.m, tableSpan, 10); len(got) != 2 {
		t.Fatalf("a stale write applied: %v", got)
	}
	crossing := storage.Mutation{Kind: storage.MutationDeleteRange, Key: mvcc.AppendBareKey(nil, rk("a")),
		Value: mvcc.AppendBareKey(nil, append([]byte{3, 1}, rk("b")...))}
	if err := a.apply(encodeWrite(t, 1, crossing)); err == nil || isStale(err) {
		t.Fatalf("a range deletion across kinds of keys: %v", err)
	}
	// A range deletion of half the rows, as DROP TABLE deletes a table.
	del := storage.Mutation{Kind: storage.MutationDeleteRange, Key: mvcc.AppendBareKey(nil, rk("a")), Value: mvcc.AppendBareKey(nil, rk("b"))}
	if err := a.apply(encodeWrite(t, 1, del)); err != nil {
		t.Fatal(err)
	}
	c := checkReplica(t, a.m)
	if c.Stored.LiveCount != 1 || c.Stored.OldCount != 0 {
		t.Fatalf("stats after the range deletion: %+v", c.Stored)
	}
	if got, _ := rows(t, a.m, tableSpan, 10); len(got) != 1 || got[0] != "b=y" {
		t.Fatalf("rows after the range deletion: %v", got)
	}
	// A reopened replica tells the clock again; a stale write moved nothing.
	clock = hlc.Timestamp{}
	m2 := s.NewStateMachine(1, 1)
	if _, err := m2.Open(nil); err != nil {
		t.Fatal(err)
	}
	if clock != ts(6) {
		t.Fatalf("clock after reopening: %v", clock)
	}
}

// TestPartitionStatsKeyInItsShard: partition's per-shard statistics
// counter (a shard-local key addressed by the shard's pivot) routes to the
// shard that starts at that pivot, is in that shard's data spans (so its
// snapshots carry it) and not in its neighbour's, and a write of a row with
// its shard's counter delta applies in that one group.
func TestPartitionStatsKeyInItsShard(t *testing.T) {
	left := Descriptor{Span: storage.Span{Start: rk(""), End: rk("m")}, Generation: 1}
	right := Descriptor{Span: storage.Span{Start: rk("m"), End: tableSpan.End}, Generation: 1}
	counter := func(pivot []byte) []byte { return mvcc.AppendBareKey(nil, partition.ShardStatsKey(pivot)) }
	inSpans := func(d *Descriptor, k []byte) bool {
		for _, sp := range dataSpans(1, d, false) {
			if enginekey.Compare(sp[0], k) <= 0 && enginekey.Compare(k, sp[1]) < 0 {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		pivot      []byte
		own, other *Descriptor
	}{{rk(""), &left, &right}, {rk("m"), &right, &left}} {
		k := counter(c.pivot)
		got, err := RouteKey(k)
		if err != nil || string(got) != string(c.pivot) {
			t.Fatalf("RouteKey(%x) = %x, %v; want the pivot %x", k, got, err, c.pivot)
		}
		if !c.own.Contains(got) || c.other.Contains(got) {
			t.Fatalf("counter of pivot %x routes to %x: in %s %v, in %s %v", c.pivot, got, c.own, c.own.Contains(got), c.other, c.other.Contains(got))
		}
		if !inSpans(c.own, k) || inSpans(c.other, k) {
			t.Fatalf("counter of pivot %x: in %s's data spans %v, in %s's %v", c.pivot, c.own, inSpans(c.own, k), c.other, inSpans(c.other, k))
		}
	}

	s := openTestStore(t)
	a := &applier{t: t, m: s.NewStateMachine(1, 1)}
	if _, err := a.m.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(mustEncode(t, Init{Descriptor: left})); err != nil {
		t.Fatal(err)
	}
	merge := func(pivot []byte) storage.Mutation {
		return storage.Mutation{Kind: storage.MutationMerge, Key: counter(pivot), Value: storage.AppendCounters(nil, 1, 10)}
	}
	if err := a.apply(encodeWrite(t, 1, version("a", 5, "x"), merge(rk("")))); err != nil {
		t.Fatalf("a row with its own shard's counter: %v", err)
	}
	checkReplica(t, a.m)
	if err := a.apply(encodeWrite(t, 1, version("b", 6, "y"), merge(rk("m")))); !isStale(err) {
		t.Fatalf("a row with the next shard's counter: %v, want stale", err)
	}
}
