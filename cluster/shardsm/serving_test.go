package shardsm

import (
	"errors"
	"reflect"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

func writeAt(t *testing.T, epoch uint64, ms ...storage.Mutation) []byte {
	t.Helper()
	b, err := EncodeWrite(Write{Generation: 1, Timestamp: hlc.Timestamp{WallTime: 9}, Epoch: epoch, Mutations: ms})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServingFencesOldEpoch: Serve hands out increasing epochs; a Write
// applies only under the group's current epoch, so a node that served
// before a takeover is refused (FencedError, nothing written), on every
// replica alike, and the epoch survives a reopen.
func TestServingFencesOldEpoch(t *testing.T) {
	s := openTestStore(t)
	var seen []Serving
	s.SetServingHandler(func(g raft.GroupID, sv Serving) { seen = append(seen, sv) })
	a := &applier{t: t, m: s.NewStateMachine(1, 1)}
	if _, err := a.m.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
	// Before any Serve, epoch 0 writes apply (clusters of the first step).
	if err := a.apply(writeAt(t, 0, version("a", 5, "x"))); err != nil {
		t.Fatal(err)
	}
	serve := func(node uint64) uint64 {
		t.Helper()
		cmd, err := EncodeServe(Serve{Node: node})
		if err != nil {
			t.Fatal(err)
		}
		a.index++
		e := []raft.Entry{{Index: a.index, Cmd: cmd}}
		if err := a.m.Apply(e); err != nil {
			t.Fatal(err)
		}
		ep, err := ServeEpoch(e[0].Result)
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	if ep := serve(1); ep != 1 {
		t.Fatalf("first epoch %d", ep)
	}
	if err := a.apply(writeAt(t, 1, version("b", 6, "y"))); err != nil {
		t.Fatal(err)
	}
	if ep := serve(2); ep != 2 {
		t.Fatalf("second epoch %d", ep)
	}
	var fe *FencedError
	for _, old := range []uint64{0, 1, 3} {
		err := a.apply(writeAt(t, old, version("c", 7, "z")))
		if !errors.As(err, &fe) || fe.WriteEpoch != old || fe.Serving != (Serving{Epoch: 2, Node: 2}) {
			t.Fatalf("a write of epoch %d after node 2 took over: %v", old, err)
		}
	}
	if got, _ := rows(t, a.m, tableSpan, 10); !reflect.DeepEqual(got, []string{"a=x", "b=y"}) {
		t.Fatalf("rows %v: a fenced write applied", got)
	}
	if err := a.apply(writeAt(t, 2, version("c", 8, "z"))); err != nil {
		t.Fatal(err)
	}
	checkReplica(t, a.m)
	if !reflect.DeepEqual(seen, []Serving{{1, 1}, {2, 2}}) {
		t.Fatalf("serving handler saw %v", seen)
	}
	m2 := s.NewStateMachine(1, 1)
	if _, err := m2.Open(nil); err != nil {
		t.Fatal(err)
	}
	v, err := m2.Lookup(State{})
	if err != nil || v.(StateResult).Serving != (Serving{Epoch: 2, Node: 2}) {
		t.Fatalf("serving after reopening: %+v, %v", v, err)
	}
	// Encodings: a Write with an epoch round-trips; a Serve needs a node.
	w := Write{Generation: 3, Timestamp: ts(4), Epoch: 7, Mutations: []storage.Mutation{version("a", 4, "q")}}
	b, err := EncodeWrite(w)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCommand(b)
	if err != nil || !reflect.DeepEqual(*got.(*Write), w) {
		t.Fatalf("decoded %+v, %v; encoded %+v", got, err, w)
	}
	if _, err := EncodeServe(Serve{}); err == nil {
		t.Fatal("a Serve without a node encoded")
	}
}
