package shardsm

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

func TestCommandEncoding(t *testing.T) {
	txn := &mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: rk("a"), Epoch: 2, WriteTimestamp: hlc.Timestamp{WallTime: 9, Logical: 3}, Seq: 4}
	cmds := []any{
		Batch{Generation: 3, Ops: []Op{
			putOp("a", "1", 5),
			{Kind: OpDelete, Key: rk("b"), Timestamp: ts(6)},
			{Kind: OpIntent, Key: rk("c"), Value: []byte{}, IsDelete: true, Timestamp: ts(7), Txn: txn, Strength: mvcc.Update},
			{Kind: OpLock, Key: rk("d"), Timestamp: ts(7), Txn: txn, Strength: mvcc.Share},
			{Kind: OpResolve, Key: rk("a"), EndKey: rk("z"), Resolution: mvcc.Resolution{ID: txn.ID, Epoch: 2, Status: mvcc.Committed, CommitTimestamp: ts(10)}},
			{Kind: OpGC, Timestamp: ts(4)},
		}},
		Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}},
		Split{Key: rk("m"), Child: 9, Members: map[raft.ReplicaID]string{1: "a:1", 2: "b:2"}},
	}
	for _, c := range cmds {
		b := mustEncode(t, c)
		got, err := decodeCommand(b)
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		if v := reflect.ValueOf(got).Elem().Interface(); show(v) != show(c) {
			t.Fatalf("decoded %v, encoded %v", v, c)
		}
		for i := 0; i < len(b); i++ {
			if _, err := decodeCommand(b[:i]); !errors.Is(err, errBadCommand) {
				t.Fatalf("%T: prefix of %d bytes decoded: %v", c, i, err)
			}
		}
		if _, err := decodeCommand(append(b, 0)); !errors.Is(err, errBadCommand) {
			t.Fatalf("%T: trailing byte decoded: %v", c, err)
		}
	}
	for _, bad := range []Batch{{}, {Ops: []Op{{Kind: OpPut}}}, {Ops: []Op{{Kind: 99, Key: rk("k")}}}, {Ops: []Op{{Kind: OpIntent, Key: rk("k")}}}} {
		if _, err := EncodeBatch(bad); err == nil {
			t.Fatalf("EncodeBatch(%v) accepted", bad)
		}
	}
	if _, err := EncodeInit(Init{Descriptor: Descriptor{Span: storage.Span{Start: rk("b"), End: rk("a")}}}); err == nil {
		t.Fatal("an inverted span was accepted")
	}
	if _, err := EncodeInit(Init{Descriptor: Descriptor{Span: storage.Span{Start: rk("b"), End: []byte{0x03, 1}}}}); err == nil {
		t.Fatal("a span into the local area was accepted")
	}
}

// show prints a command with its transactions' contents, not pointers.
func show(c any) string {
	b, ok := c.(Batch)
	if !ok {
		return fmt.Sprint(c)
	}
	out := fmt.Sprint(b.Generation)
	for _, op := range b.Ops {
		txn := "-"
		if op.Txn != nil {
			txn = fmt.Sprintf("%+v", *op.Txn)
		}
		out += fmt.Sprintf(" {%s %x %x %x %v %s %s %s %+v}", op.Kind, op.Key, op.EndKey, op.Value, op.IsDelete, op.Timestamp, txn, op.Strength, op.Resolution)
	}
	return out
}

// Commands apply atomically with the applied index and stats; a failing
// operation leaves nothing of its command; keys outside the shard are
// stale; intents block reads and writes until resolved; GC raises the
// threshold reads are checked against; other groups are untouched.
func TestApply(t *testing.T) {
	s := openTestStore(t)
	m := s.NewStateMachine(5, 1)
	if idx, err := m.Open(nil); err != nil || idx != 0 {
		t.Fatalf("Open of a new replica: %d, %v", idx, err)
	}
	a := &applier{t: t, m: m}
	// Before Init every batch is stale (no shard yet).
	if err := a.ops(putOp("a", "1", 5)); !isStale(err) {
		t.Fatalf("batch before Init: %v", err)
	}
	half := storage.Span{Start: rk("a"), End: rk("m")}
	if err := a.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: half, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: half, Generation: 1}})); err == nil {
		t.Fatal("a second Init was applied")
	}
	a.mustOps(putOp("a", "1", 5), putOp("b", "2", 5))
	// A neighbour group on the same store.
	other := &applier{t: t, m: s.NewStateMachine(6, 1)}
	if err := other.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: storage.Span{Start: rk("m"), End: rk("z")}, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
	other.mustOps(putOp("q", "other", 3))

	// Out of the span: stale, with the descriptor; nothing written.
	err := a.ops(putOp("c", "3", 6), putOp("q", "x", 6))
	var se *StaleError
	if !errors.As(err, &se) || !se.Initialized || !bytes.Equal(se.Descriptor.Span.End, rk("m")) {
		t.Fatalf("out-of-span batch: %v", err)
	}
	if err := a.ops(Op{Kind: OpResolve, Key: rk("a"), EndKey: rk("n")}); !isStale(err) {
		t.Fatalf("resolve past the span end: %v", err)
	}
	if err := a.apply(mustEncode(t, Batch{Generation: 7, Ops: []Op{putOp("c", "3", 6)}})); !isStale(err) {
		t.Fatalf("batch of another generation: %v", err)
	}
	// A conflict in the second op: the first is not written either.
	var wc *mvcc.WriteConflictError
	if err := a.ops(putOp("c", "3", 6), putOp("a", "old", 4)); !errors.As(err, &wc) || wc.Existing != ts(5) {
		t.Fatalf("conflicting batch: %v", err)
	}
	if got, _ := rows(t, m, half, 100); fmt.Sprint(got) != "[a=1 b=2]" {
		t.Fatalf("after a rejected batch: %v", got)
	}
	// A one-phase batch repeated (a retry after an unknown outcome) is
	// answered applied and changes nothing; the same timestamp with
	// another value is a conflict.
	before := checkReplica(t, m)
	a.mustOps(putOp("a", "1", 5), putOp("b", "2", 5))
	a.mustOps(Op{Kind: OpDelete, Key: rk("a"), Timestamp: ts(7)})
	a.mustOps(Op{Kind: OpDelete, Key: rk("a"), Timestamp: ts(7)})
	if err := a.ops(putOp("b", "other", 5)); !errors.As(err, &wc) {
		t.Fatalf("same timestamp, other value: %v", err)
	}
	if err := a.ops(Op{Kind: OpDelete, Key: rk("b"), Timestamp: ts(5)}); !errors.As(err, &wc) {
		t.Fatalf("delete at a put's timestamp: %v", err)
	}
	if got := checkReplica(t, m); got.Stored.LiveCount != before.Stored.LiveCount-1 || got.Stored.OldCount != before.Stored.OldCount+2 {
		t.Fatalf("repeats changed the stats: %+v, before %+v", got.Stored, before.Stored)
	}
	a.mustOps(putOp("a", "1", 8))
	if err := a.apply([]byte("garbage")); !errors.Is(err, ErrMalformed) {
		t.Fatalf("garbage: %v", err)
	}

	// An intent: reads at or above it stop, writes too; resolution commits.
	txn := &mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: rk("b"), WriteTimestamp: ts(10), Seq: 1}
	a.mustOps(Op{Kind: OpIntent, Key: rk("b"), Value: []byte("20"), Timestamp: ts(9), Txn: txn, Strength: mvcc.Update},
		Op{Kind: OpLock, Key: rk("a"), Timestamp: ts(9), Txn: txn, Strength: mvcc.Share})
	var lc *mvcc.LockConflictError
	if _, err := rows(t, m, half, 10); !errors.As(err, &lc) || lc.Txn.ID != txn.ID {
		t.Fatalf("read at the intent: %v", err)
	}
	if got, err := rows(t, m, half, 9); err != nil || fmt.Sprint(got) != "[a=1 b=2]" {
		t.Fatalf("read below the intent: %v %v", got, err)
	}
	if err := a.ops(putOp("b", "x", 11)); !errors.As(err, &lc) || !lc.Intent {
		t.Fatalf("write on an intent: %v", err)
	}
	if err := a.ops(putOp("a", "x", 11)); !errors.As(err, &lc) || lc.Intent || lc.Strength != mvcc.Share {
		t.Fatalf("write on a share lock: %v", err)
	}
	st := checkReplica(t, m)
	if st.Stored.IntentCount != 1 || st.Stored.LockCount != 1 || st.Stored.LiveCount != 2 {
		t.Fatalf("stats with an intent and a lock: %+v", st.Stored)
	}
	a.mustOps(Op{Kind: OpResolve, Key: rk("a"), EndKey: rk("m"),
		Resolution: mvcc.Resolution{ID: txn.ID, Status: mvcc.Committed, CommitTimestamp: ts(12)}})
	if got, err := rows(t, m, half, 12); err != nil || fmt.Sprint(got) != "[a=1 b=20]" {
		t.Fatalf("after commit: %v %v", got, err)
	}
	if got, err := rows(t, m, half, 11); err != nil || fmt.Sprint(got) != "[a=1 b=2]" {
		t.Fatalf("below the commit: %v %v", got, err)
	}
	st = checkReplica(t, m)
	// Old: a at 5 and its tombstone at 7 (under a at 8), b at 5.
	if st.Stored.IntentCount != 0 || st.Stored.LockCount != 0 || st.Stored.OldCount != 3 {
		t.Fatalf("stats after commit: %+v", st.Stored)
	}

	// GC at 12 removes b@5; a read below 12 is refused.
	a.mustOps(Op{Kind: OpGC, Timestamp: ts(12)})
	var below *mvcc.BelowGCThresholdError
	if _, err := rows(t, m, half, 11); !errors.As(err, &below) {
		t.Fatalf("read below the GC threshold: %v", err)
	}
	if st := checkReplica(t, m); st.Stored.OldCount != 0 {
		t.Fatalf("stats after GC: %+v", st.Stored)
	}
	if err := a.ops(Op{Kind: OpGC, Timestamp: ts(11)}); err == nil {
		t.Fatal("GC threshold moved down")
	}

	// The applied index is the last entry's, rejected or not.
	if idx, err := s.NewStateMachine(5, 1).Open(nil); err != nil || idx != a.index {
		t.Fatalf("Open after Apply: %d, %v; want %d", idx, err, a.index)
	}
	if got, err := rows(t, other.m, storage.Span{Start: rk("m"), End: rk("z")}, 100); err != nil || fmt.Sprint(got) != "[q=other]" {
		t.Fatalf("group 6: %v %v", got, err)
	}
	if _, err := m.Lookup(Get{Key: rk("q"), Timestamp: ts(100)}); !isStale(err) {
		t.Fatalf("get outside the shard: %v", err)
	}
	if err := s.DropGroup(5); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Descriptor(5); ok {
		t.Fatal("dropped group has a descriptor")
	}
	if got, err := rows(t, other.m, storage.Span{Start: rk("m"), End: rk("z")}, 100); err != nil || fmt.Sprint(got) != "[q=other]" {
		t.Fatalf("dropping group 5 touched group 6: %v %v", got, err)
	}
}

// WaitReplicasClosed waits for every state machine the store made to be
// closed (the barrier StepDown keeps before it closes the engine).
func TestWaitReplicasClosed(t *testing.T) {
	st := openTestStore(t)
	a := st.NewStateMachine(5, 1)
	b := st.NewStateMachine(6, 1)
	if n := st.WaitReplicasClosed(10 * time.Millisecond); n != 2 {
		t.Fatalf("%d open, want 2", n)
	}
	a.Close()
	a.Close() // a second Close counts once
	if n := st.WaitReplicasClosed(10 * time.Millisecond); n != 1 {
		t.Fatalf("%d open, want 1", n)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		b.Close()
	}()
	if n := st.WaitReplicasClosed(10 * time.Second); n != 0 {
		t.Fatalf("%d open, want 0", n)
	}
}
