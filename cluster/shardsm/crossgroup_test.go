package shardsm

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

func mustCross(t testing.TB, c any) []byte {
	t.Helper()
	var b []byte
	var err error
	switch c := c.(type) {
	case Stage:
		b, err = EncodeStage(c)
	case Decide:
		b, err = EncodeDecide(c)
	case Resolve:
		b, err = EncodeResolve(c)
	case ServeAt:
		b, err = EncodeServeAt(c)
	default:
		t.Fatalf("unknown command %T", c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applyResult applies cmd and returns its raw result.
func (a *applier) applyResult(cmd []byte) raft.Result {
	a.t.Helper()
	a.index++
	e := []raft.Entry{{Index: a.index, Cmd: cmd}}
	if err := a.m.Apply(e); err != nil {
		a.t.Fatal(err)
	}
	return e[0].Result
}

func TestCrossGroupEncoding(t *testing.T) {
	w := Write{Generation: 2, Timestamp: hlc.Timestamp{WallTime: 5, Logical: 1}, Epoch: 3, Mutations: []storage.Mutation{version("a", 5, "x")}}
	id := NewCommitID(3, 9)
	for _, c := range []any{
		Stage{ID: id, Coordinator: 4, Write: w},
		Decide{ID: id, Decision: DecisionCommitted, Epoch: 3, Write: &w, Forget: []CommitID{NewCommitID(3, 1), NewCommitID(3, 2)}},
		Decide{ID: id, Decision: DecisionAborted, Epoch: 4},
		Resolve{ID: id, Commit: true, Forget: []CommitID{NewCommitID(1, 1)}},
		Resolve{ID: id},
		ServeAt{Node: 2, Epoch: 7},
	} {
		b := mustCross(t, c)
		got, err := decodeCommand(b)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if g := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(g, c) {
			t.Fatalf("decoded %+v, encoded %+v", g, c)
		}
		for i := 0; i < len(b); i++ {
			if _, err := decodeCommand(b[:i]); !errors.Is(err, errBadCommand) {
				t.Fatalf("%T: a prefix of %d bytes decoded: %v", c, i, err)
			}
		}
	}
	for _, bad := range []any{
		Stage{ID: id, Write: w}, // no coordinator
		Decide{ID: id, Decision: 3},
		Decide{ID: id, Decision: DecisionAborted, Write: &w},
		ServeAt{Node: 1},
	} {
		var err error
		switch c := bad.(type) {
		case Stage:
			_, err = EncodeStage(c)
		case Decide:
			_, err = EncodeDecide(c)
		case ServeAt:
			_, err = EncodeServeAt(c)
		}
		if err == nil {
			t.Fatalf("%+v encoded", bad)
		}
	}
	if NewCommitID(3, 9).String() != "3.9" {
		t.Fatal(NewCommitID(3, 9).String())
	}
}

// TestCrossGroupCommands drives one commit over two groups by hand, the
// way shardrepl does, and checks each command's rules: a staged part is
// invisible until Resolve applies it, the first decision wins, new
// decisions and stages are fenced by the serving epoch, Resolve is
// idempotent, splits wait for staged parts and the child inherits the
// epoch, and decision records are forgotten on request.
func TestCrossGroupCommands(t *testing.T) {
	s := openTestStore(t)
	left := &applier{t: t, m: s.NewStateMachine(2, 1)}
	right := &applier{t: t, m: s.NewStateMachine(3, 1)}
	initShard(t, left, storage.Span{Start: rk(""), End: rk("m")})
	initShard(t, right, storage.Span{Start: rk("m"), End: tableSpan.End})
	for _, a := range []*applier{left, right} {
		if _, err := ServeEpoch(a.applyResult(mustCross(t, ServeAt{Node: 1, Epoch: 1}))); err != nil {
			t.Fatal(err)
		}
	}
	write := func(epoch uint64, ms ...storage.Mutation) Write {
		var at hlc.Timestamp
		for _, m := range ms {
			at = ts(int64(len(m.Key))) // any timestamp; the newest is kept
		}
		return Write{Generation: 1, Timestamp: at, Epoch: epoch, Mutations: ms}
	}
	id1 := NewCommitID(1, 1)
	var fe *FencedError

	// Stage: fenced, stale outside the shard, else kept and invisible.
	if err := right.apply(mustCross(t, Stage{ID: id1, Coordinator: 2, Write: write(0, version("z", 10, "1"))})); !errors.As(err, &fe) {
		t.Fatalf("a stage of epoch 0: %v", err)
	}
	if err := right.apply(mustCross(t, Stage{ID: id1, Coordinator: 2, Write: write(1, version("a", 10, "1"))})); !isStale(err) {
		t.Fatalf("a stage outside the shard: %v", err)
	}
	if err := right.apply(mustCross(t, Stage{ID: id1, Coordinator: 2, Write: write(1, version("z", 10, "1"))})); err != nil {
		t.Fatal(err)
	}
	if got, _ := rows(t, right.m, tableSpan.Intersect(storage.Span{Start: rk("m"), End: tableSpan.End}), 20); len(got) != 0 {
		t.Fatalf("a staged part is visible: %v", got)
	}
	v, err := right.m.Lookup(Staged{})
	if parts := v.([]StagedPart); err != nil || len(parts) != 1 || parts[0].ID != id1 || parts[0].Coordinator != 2 || parts[0].Mutations != 1 {
		t.Fatalf("staged parts %+v, %v", v, err)
	}
	checkReplica(t, right.m)

	// Decide: the coordinator's own part applies with the record; the
	// first decision wins.
	res := left.applyResult(mustCross(t, Decide{ID: id1, Decision: DecisionCommitted, Epoch: 1, Write: ptr(write(1, version("a", 10, "-1")))}))
	if d, err := DecideResult(res); err != nil || d != DecisionCommitted {
		t.Fatalf("decide: %v, %v", d, err)
	}
	res = left.applyResult(mustCross(t, Decide{ID: id1, Decision: DecisionAborted, Epoch: 1}))
	if d, err := DecideResult(res); err != nil || d != DecisionCommitted {
		t.Fatalf("a second decision: %v, %v; want the first, committed", d, err)
	}
	if got, _ := rows(t, left.m, storage.Span{Start: rk(""), End: rk("m")}, 20); !reflect.DeepEqual(got, []string{"a=-1"}) {
		t.Fatalf("coordinator rows %v", got)
	}

	// Resolve applies the staged part once.
	for i := 0; i < 2; i++ {
		if err := right.apply(mustCross(t, Resolve{ID: id1, Commit: true})); err != nil {
			t.Fatal(err)
		}
		if got, _ := rows(t, right.m, storage.Span{Start: rk("m"), End: tableSpan.End}, 20); !reflect.DeepEqual(got, []string{"z=1"}) {
			t.Fatalf("rows after resolve %d: %v", i, got)
		}
		if c := checkReplica(t, right.m); c.Stored.LiveCount != 1 {
			t.Fatalf("stats after resolve %+v", c.Stored)
		}
	}

	// A split waits for staged parts; a discarded part leaves nothing.
	id2 := NewCommitID(1, 2)
	if err := right.apply(mustCross(t, Stage{ID: id2, Coordinator: 2, Write: write(1, version("y", 11, "2"))})); err != nil {
		t.Fatal(err)
	}
	split := mustEncode(t, Split{Key: rk("t"), Child: 4, Members: map[raft.ReplicaID]string{1: "a:1"}})
	if err := right.apply(split); err == nil || isStale(err) {
		t.Fatalf("a split over a staged part: %v", err)
	}
	if err := right.apply(mustCross(t, Resolve{ID: id2})); err != nil {
		t.Fatal(err)
	}
	if got, _ := rows(t, right.m, storage.Span{Start: rk("m"), End: tableSpan.End}, 20); !reflect.DeepEqual(got, []string{"z=1"}) {
		t.Fatalf("rows after a discard: %v", got)
	}
	if err := right.apply(split); err != nil {
		t.Fatal(err)
	}
	child := s.NewStateMachine(4, 1)
	if _, err := child.Open(nil); err != nil {
		t.Fatal(err)
	}
	if v, err := child.Lookup(State{}); err != nil || v.(StateResult).Serving != (Serving{Epoch: 1, Node: 1}) {
		t.Fatalf("the split child's state %+v, %v; want serving epoch 1", v, err)
	}

	// ServeAt: raises, repeats, refuses lower or another node's equal.
	if ep, err := ServeEpoch(left.applyResult(mustCross(t, ServeAt{Node: 2, Epoch: 5}))); err != nil || ep != 5 {
		t.Fatalf("serve-at 5: %d, %v", ep, err)
	}
	if err := left.apply(mustCross(t, ServeAt{Node: 2, Epoch: 5})); err != nil {
		t.Fatalf("a repeated serve-at: %v", err)
	}
	for _, c := range []ServeAt{{Node: 3, Epoch: 5}, {Node: 2, Epoch: 4}} {
		if err := left.apply(mustCross(t, c)); !errors.As(err, &fe) {
			t.Fatalf("%+v: %v", c, err)
		}
	}
	// A new decision of the old epoch is fenced and writes nothing; the
	// recorded one is still answered.
	id3 := NewCommitID(1, 3)
	if err := left.apply(mustCross(t, Decide{ID: id3, Decision: DecisionCommitted, Epoch: 1, Write: ptr(write(1, version("b", 12, "3")))})); !errors.As(err, &fe) {
		t.Fatalf("a decision of an old epoch: %v", err)
	}
	if d, err := DecideResult(left.applyResult(mustCross(t, Decide{ID: id1, Decision: DecisionAborted, Epoch: 5}))); err != nil || d != DecisionCommitted {
		t.Fatalf("the recorded decision under the new epoch: %v, %v", d, err)
	}
	if got, _ := rows(t, left.m, storage.Span{Start: rk(""), End: rk("m")}, 20); !reflect.DeepEqual(got, []string{"a=-1"}) {
		t.Fatalf("coordinator rows %v", got)
	}
	if d, err := DecideResult(left.applyResult(mustCross(t, Decide{ID: id3, Decision: DecisionAborted, Epoch: 5}))); err != nil || d != DecisionAborted {
		t.Fatalf("an abort under the new epoch: %v, %v", d, err)
	}
	v, err = left.m.Lookup(Decisions{})
	if recs := v.([]DecisionRecord); err != nil || len(recs) != 2 || recs[0] != (DecisionRecord{id1, DecisionCommitted, 1}) || recs[1] != (DecisionRecord{id3, DecisionAborted, 5}) {
		t.Fatalf("decision records %+v, %v", v, err)
	}
	if err := left.apply(mustCross(t, Resolve{Forget: []CommitID{id1, id3}})); err != nil {
		t.Fatal(err)
	}
	if v, err := left.m.Lookup(Decisions{}); err != nil || len(v.([]DecisionRecord)) != 0 {
		t.Fatalf("decision records after forgetting: %+v, %v", v, err)
	}
	checkReplica(t, left.m)
	checkReplica(t, right.m)
}

// A staged part and a decision record travel with a snapshot: the
// installed replica lists them, agrees on the fingerprint, and applies the
// part when told to.
func TestCrossGroupSnapshot(t *testing.T) {
	src, dst := openTestStore(t), openTestStore(t)
	span := storage.Span{Start: rk("a"), End: rk("m")}
	from := &applier{t: t, m: src.NewStateMachine(5, 1)}
	initShard(t, from, span)
	from.applyResult(mustCross(t, ServeAt{Node: 1, Epoch: 2}))
	id := NewCommitID(2, 1)
	st := Stage{ID: id, Coordinator: 6, Write: Write{Generation: 1, Timestamp: ts(7), Epoch: 2, Mutations: []storage.Mutation{version("b", 7, "x")}}}
	if err := from.apply(mustCross(t, st)); err != nil {
		t.Fatal(err)
	}
	if err := from.apply(mustCross(t, Decide{ID: NewCommitID(2, 0), Decision: DecisionAborted, Epoch: 2})); err != nil {
		t.Fatal(err)
	}
	snap := takeSnapshot(t, from.m)
	to := &applier{t: t, m: dst.NewStateMachine(5, 2), index: from.index}
	if err := to.m.RecoverFromSnapshot(bytes.NewReader(snap), nil); err != nil {
		t.Fatal(err)
	}
	a, b := checkReplica(t, from.m), checkReplica(t, to.m)
	if a.Fingerprint != b.Fingerprint || a.Keys != b.Keys {
		t.Fatalf("fingerprints differ after the snapshot: %d keys vs %d", a.Keys, b.Keys)
	}
	v, err := to.m.Lookup(Staged{})
	if err != nil || len(v.([]StagedPart)) != 1 {
		t.Fatalf("staged parts after the snapshot: %+v, %v", v, err)
	}
	v, err = to.m.Lookup(Decisions{})
	if err != nil || len(v.([]DecisionRecord)) != 1 {
		t.Fatalf("decisions after the snapshot: %+v, %v", v, err)
	}
	for _, ap := range []*applier{from, to} {
		if err := ap.apply(mustCross(t, Resolve{ID: id, Commit: true})); err != nil {
			t.Fatal(err)
		}
		if got, _ := rows(t, ap.m, span, 10); !reflect.DeepEqual(got, []string{"b=x"}) {
			t.Fatalf("rows %v", got)
		}
	}
	a, b = checkReplica(t, from.m), checkReplica(t, to.m)
	if a.Fingerprint != b.Fingerprint {
		t.Fatal("fingerprints differ after resolving")
	}
}

func ptr[T any](v T) *T { return &v }
