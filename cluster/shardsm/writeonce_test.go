package shardsm

import (
	"errors"
	"reflect"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// counterKey is partition's statistics counter of table 7's first shard
// (0x03 0x11 <pivot>): a key commits merge into, which a Write applied
// twice would count twice. The test store has Pebble's default merge
// operator, which concatenates: each merge of one byte adds one.
var counterKey = mvcc.AppendBareKey(nil, append([]byte{mvcc.LocalPrefix, partitionStatsKind}, rk("")...))

// onceWrite is a Write with id seq under epoch: row k at at, and 1 merged
// into counterKey.
func onceWrite(t testing.TB, epoch, seq uint64, k string, at int64) []byte {
	t.Helper()
	b, err := EncodeWrite(Write{Generation: 1, Timestamp: ts(at), Epoch: epoch, ID: NewCommitID(epoch, seq),
		Mutations: []storage.Mutation{version(k, at, "v"),
			{Kind: storage.MutationMerge, Key: counterKey, Value: []byte{'+'}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func counterOf(t testing.TB, s *Store) int64 {
	t.Helper()
	v, ok, err := get(s.db, counterKey)
	if err != nil || !ok {
		t.Fatalf("counter: %v (found %v)", err, ok)
	}
	return int64(len(v))
}

func TestWriteOnceEncoding(t *testing.T) {
	w := Write{Generation: 4, Timestamp: hlc.Timestamp{WallTime: 5, Logical: 2}, Epoch: 3, ID: NewCommitID(3, 9),
		Mutations: []storage.Mutation{version("a", 5, "x")}}
	b, err := EncodeWrite(w)
	if err != nil {
		t.Fatal(err)
	}
	if b[1] != cmdWriteOnce {
		t.Fatalf("command %d, want %d", b[1], cmdWriteOnce)
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
	// Without a commit timestamp the closed fence would not stop a late
	// copy once the record is gone: refused.
	w.Timestamp = hlc.Timestamp{}
	if _, err := EncodeWrite(w); err == nil {
		t.Fatal("a write applied once without a commit timestamp was encoded")
	}
}

// A Write with an ID applies once however often it is proposed: a repeat
// is answered as applied and writes nothing, in a batch of its own or in
// a run with its first copy (applyrun.go), and also after a takeover
// fenced its epoch. Once a Close covers its timestamp its record is gone
// and a copy is refused by the fences instead.
func TestWriteOnceAppliesOnce(t *testing.T) {
	s := openTestStore(t)
	s.SetLocalLocks()
	a := &applier{t: t, m: s.NewStateMachine(1, 1)}
	if _, err := a.m.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
	serve := func(node uint64) {
		cmd, err := EncodeServe(Serve{Node: node})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.apply(cmd); err != nil {
			t.Fatal(err)
		}
	}
	serve(1)

	w1 := onceWrite(t, 1, 1, "a", 10)
	for i := 0; i < 3; i++ {
		if err := a.apply(w1); err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
	}
	if got := counterOf(t, s); got != 1 {
		t.Fatalf("counter %d after three copies of one write, want 1", got)
	}
	if got := s.Stats().DuplicateWrites; got != 2 {
		t.Fatalf("%d duplicates counted, want 2", got)
	}

	// Two copies in one Apply: the run path.
	w2 := onceWrite(t, 1, 2, "b", 11)
	entries := []raft.Entry{{Index: a.index + 1, Cmd: w2}, {Index: a.index + 2, Cmd: w2}}
	a.index += 2
	if err := a.m.Apply(entries); err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if err := DecodeResult(e.Result); err != nil {
			t.Fatalf("copy %d in one run: %v", i, err)
		}
	}
	if got := counterOf(t, s); got != 2 {
		t.Fatalf("counter %d after two writes, want 2", got)
	}
	checkReplica(t, a.m)

	// Another node takes over: a late copy of w1 still learns it applied.
	serve(2)
	if err := a.apply(w1); err != nil {
		t.Fatalf("a copy after a takeover: %v", err)
	}
	if got := counterOf(t, s); got != 2 {
		t.Fatalf("counter %d, want 2", got)
	}

	// A Close at 10 deletes w1's record, not w2's (at 11).
	if err := a.apply(encodeClose(t, 2, 10)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := get(s.db, onceKey(1, ts(10), NewCommitID(1, 1))); ok {
		t.Fatal("the record of a write at the closed timestamp is still there")
	}
	if _, ok, _ := get(s.db, onceKey(1, ts(11), NewCommitID(1, 2))); !ok {
		t.Fatal("the record of a write above the closed timestamp is gone")
	}
	var fe *FencedError
	if err := a.apply(w1); !errors.As(err, &fe) {
		t.Fatalf("a copy of a forgotten write of an old epoch: %v, want fenced", err)
	}
	w3 := onceWrite(t, 2, 1, "c", 12)
	if err := a.apply(w3); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(encodeClose(t, 2, 20)); err != nil {
		t.Fatal(err)
	}
	var ce *ClosedError
	if err := a.apply(w3); !errors.As(err, &ce) {
		t.Fatalf("a copy of a forgotten write below the closed timestamp: %v, want closed", err)
	}
	if got := counterOf(t, s); got != 3 {
		t.Fatalf("counter %d after three writes, want 3", got)
	}
	// Reopened, the replica starts its deletions from the first record.
	if err := a.m.Close(); err != nil {
		t.Fatal(err)
	}
	a.m = s.NewStateMachine(1, 1)
	if _, err := a.m.Open(nil); err != nil {
		t.Fatal(err)
	}
	checkReplica(t, a.m)
}
