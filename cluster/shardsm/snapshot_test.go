package shardsm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

func initShard(t testing.TB, a *applier, span storage.Span) {
	t.Helper()
	if err := a.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: span, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
}

func takeSnapshot(t testing.TB, m raft.StateMachine) []byte {
	t.Helper()
	view, err := m.PrepareSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.SaveSnapshot(view, &buf, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A snapshot carries the shard's rows, intents, lock records, GC threshold
// and the group's own state; installed on another store it replaces exactly
// what the replica owned there (old rows and locks gone, neighbours kept),
// and a damaged stream changes nothing.
func TestSnapshotRoundTrip(t *testing.T) {
	src, dst := openTestStore(t), openTestStore(t)
	span := storage.Span{Start: rk("a"), End: rk("m")}
	from := &applier{t: t, m: src.NewStateMachine(5, 1)}
	initShard(t, from, span)
	var want []string
	for i := 0; i < 2000; i++ {
		k, v := fmt.Sprintf("b%05d", i), fmt.Sprintf("%0*d", i%300, i)
		from.mustOps(putOp(k, v, 5))
		want = append(want, k+"="+v)
	}
	txn := &mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: rk("c"), WriteTimestamp: ts(20)}
	from.mustOps(Op{Kind: OpIntent, Key: rk("c"), Value: []byte("i"), Timestamp: ts(19), Txn: txn, Strength: mvcc.Update},
		Op{Kind: OpLock, Key: rk("b00001"), Timestamp: ts(19), Txn: txn, Strength: mvcc.Share},
		Op{Kind: OpGC, Timestamp: ts(6)})
	// Neighbours on the source must not leak into the snapshot.
	nb := &applier{t: t, m: src.NewStateMachine(6, 1)}
	initShard(t, nb, storage.Span{Start: rk("m"), End: rk("z")})
	nb.mustOps(putOp("n", "x", 1))

	snap := takeSnapshot(t, from.m)
	from.mustOps(putOp("late", "x", 30)) // after the snapshot: not in it
	want0 := checkReplica(t, from.m)

	// The destination holds an older life of the group: other rows and a
	// lock record in the span, and a neighbour.
	to := &applier{t: t, m: dst.NewStateMachine(5, 2)}
	initShard(t, to, span)
	stranger := &mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: rk("d"), WriteTimestamp: ts(3)}
	to.mustOps(putOp("gone", "x", 1), putOp("b00001", "old", 2),
		Op{Kind: OpLock, Key: rk("d"), Timestamp: ts(3), Txn: stranger, Strength: mvcc.Update})
	dnb := &applier{t: t, m: dst.NewStateMachine(6, 2)}
	initShard(t, dnb, storage.Span{Start: rk("m"), End: rk("z")})
	dnb.mustOps(putOp("mine", "kept", 1))

	before := checkReplica(t, to.m)
	for _, bad := range [][]byte{snap[:len(snap)/2], snap[:len(snap)-1], append([]byte("XXXX"), snap[4:]...)} {
		if err := to.m.RecoverFromSnapshot(bytes.NewReader(bad), nil); err == nil {
			t.Fatal("a damaged snapshot was installed")
		}
		if got := checkReplica(t, to.m); got != before {
			t.Fatal("a refused snapshot changed the replica")
		}
	}
	if err := to.m.RecoverFromSnapshot(bytes.NewReader(snap), nil); err != nil {
		t.Fatal(err)
	}
	got := checkReplica(t, to.m)
	if got.Applied != from.index-1 {
		t.Fatalf("applied index after recovery %d, want %d", got.Applied, from.index-1)
	}
	if idx, err := dst.NewStateMachine(5, 2).Open(nil); err != nil || idx != got.Applied {
		t.Fatalf("Open after recovery: %d, %v", idx, err)
	}
	// Same data as the source at the snapshot: the source's state minus
	// the late write.
	rs, err := rows(t, to.m, span, 19)
	if err != nil || fmt.Sprint(rs) != fmt.Sprint(want) {
		t.Fatalf("installed rows: %d, want %d (%v)", len(rs), len(want), err)
	}
	if got.Stored.LockCount != 1 || got.Stored.IntentCount != 1 || got.Stored.LiveCount != int64(len(want)+1) {
		t.Fatalf("installed stats %+v", got.Stored)
	}
	if want0.Stored.LiveCount != got.Stored.LiveCount+1 {
		t.Fatalf("source has %d live rows, installed %d", want0.Stored.LiveCount, got.Stored.LiveCount)
	}
	if _, err := rows(t, to.m, span, 5); err == nil {
		t.Fatal("the GC threshold did not travel")
	}
	if rs, err := rows(t, dnb.m, storage.Span{Start: rk("m"), End: rk("z")}, 100); err != nil || fmt.Sprint(rs) != "[mine=kept]" {
		t.Fatalf("neighbour after recovery: %v %v", rs, err)
	}
	// The installed replica goes on applying where the snapshot left off.
	to.index = got.Applied
	to.mustOps(putOp("late", "x", 30))
	if a, b := checkReplica(t, from.m), checkReplica(t, to.m); a.Fingerprint != b.Fingerprint || a.Applied != b.Applied {
		t.Fatalf("replicas differ after the same log: %+v vs %+v", a, b)
	}
}

// A split shrinks the parent and seeds the child from the same rows in
// place; each then takes writes in its own span only, stats add up, and the
// child's snapshot carries its half.
func TestSplit(t *testing.T) {
	s := openTestStore(t)
	var events []SplitEvent
	s.SetSplitHandler(func(e SplitEvent) { events = append(events, e) })
	span := storage.Span{Start: rk("a"), End: rk("z")}
	p := &applier{t: t, m: s.NewStateMachine(5, 1)}
	initShard(t, p, span)
	for _, k := range []string{"b", "d", "k", "m", "q", "y"} {
		p.mustOps(putOp(k, k, 5))
	}
	txn := &mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: rk("q"), WriteTimestamp: ts(8)}
	p.mustOps(Op{Kind: OpIntent, Key: rk("q"), Value: []byte("Q"), Timestamp: ts(7), Txn: txn, Strength: mvcc.Update},
		Op{Kind: OpLock, Key: rk("b"), Timestamp: ts(7), Txn: txn, Strength: mvcc.Share},
		Op{Kind: OpGC, Timestamp: ts(6)})
	whole := checkReplica(t, p.m).Stored

	members := map[raft.ReplicaID]string{1: "h1", 2: "h2"}
	if err := p.apply(mustEncode(t, Split{Key: rk("a"), Child: 6, Members: members})); !isStale(err) {
		t.Fatalf("split at the start: %v", err)
	}
	if err := p.apply(mustEncode(t, Split{Key: rk("m"), Child: 6, Members: members})); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Child != 6 || events[0].Replica != 1 || !events[0].Seeded ||
		events[0].Index != p.index || !bytes.Equal(events[0].Descriptor.Span.Start, rk("m")) || len(events[0].Members) != 2 {
		t.Fatalf("split events %+v", events)
	}
	c := &applier{t: t, m: s.NewStateMachine(6, 1)}
	if idx, err := c.m.Open(nil); err != nil || idx != 0 {
		t.Fatalf("child opens at %d, %v", idx, err)
	}
	ps, cs := checkReplica(t, p.m).Stored, checkReplica(t, c.m).Stored
	sum := ps
	sum.Add(cs)
	if sum != whole {
		t.Fatalf("parent %+v + child %+v != %+v", ps, cs, whole)
	}
	if cs.IntentCount != 1 || ps.LockCount != 1 {
		t.Fatalf("intent and lock on the wrong side: parent %+v child %+v", ps, cs)
	}
	if got, err := rows(t, p.m, storage.Span{Start: rk("a"), End: rk("m")}, 7); err != nil || fmt.Sprint(got) != "[b=b d=d k=k]" {
		t.Fatalf("parent rows %v %v", got, err)
	}
	if got, err := rows(t, c.m, storage.Span{Start: rk("m"), End: rk("z")}, 7); err != nil || fmt.Sprint(got) != "[m=m q=q y=y]" {
		t.Fatalf("child rows %v %v", got, err)
	}
	if _, err := rows(t, c.m, storage.Span{Start: rk("m"), End: rk("z")}, 5); err == nil {
		t.Fatal("the child lost the GC threshold")
	}
	// Old generation and keys across the split are stale on both sides.
	if err := p.apply(mustEncode(t, Batch{Generation: 1, Ops: []Op{putOp("c", "x", 9)}})); !isStale(err) {
		t.Fatalf("old generation: %v", err)
	}
	if err := p.ops(putOp("n", "x", 9)); !isStale(err) {
		t.Fatalf("parent write in the child's span: %v", err)
	}
	if err := c.ops(putOp("c", "x", 9)); !isStale(err) {
		t.Fatalf("child write in the parent's span: %v", err)
	}
	c.mustOps(Op{Kind: OpResolve, Key: rk("m"), EndKey: rk("z"),
		Resolution: mvcc.Resolution{ID: txn.ID, Status: mvcc.Committed, CommitTimestamp: ts(9)}})
	c.mustOps(putOp("n", "n", 10))
	p.mustOps(putOp("c", "c", 10), Op{Kind: OpResolve, Key: rk("b"),
		Resolution: mvcc.Resolution{ID: txn.ID, Status: mvcc.Committed, CommitTimestamp: ts(9)}})
	checkReplica(t, p.m)
	checkReplica(t, c.m)
	if got, err := rows(t, c.m, storage.Span{Start: rk("m"), End: rk("z")}, 10); err != nil || fmt.Sprint(got) != "[m=m n=n q=Q y=y]" {
		t.Fatalf("child rows after writes %v %v", got, err)
	}

	// The child's snapshot holds its half only; installed on a store that
	// has the parent unsplit (a replica that missed the split), it replaces
	// that copy of the child's span.
	other := openTestStore(t)
	op := &applier{t: t, m: other.NewStateMachine(5, 2)}
	initShard(t, op, span)
	for _, k := range []string{"b", "d", "k", "m", "q", "y"} {
		op.mustOps(putOp(k, k, 5))
	}
	oc := other.NewStateMachine(6, 2)
	if err := oc.RecoverFromSnapshot(bytes.NewReader(takeSnapshot(t, c.m)), nil); err != nil {
		t.Fatal(err)
	}
	if a, b := checkReplica(t, c.m), checkReplica(t, oc); a.Fingerprint != b.Fingerprint || a.Applied != b.Applied {
		t.Fatalf("child snapshot installed differs: %+v vs %+v", a, b)
	}
	// That replica then applies the split from the parent's log: the
	// child's newer state stays.
	var oev []SplitEvent
	other.SetSplitHandler(func(e SplitEvent) { oev = append(oev, e) })
	if err := op.apply(mustEncode(t, Split{Key: rk("m"), Child: 6, Members: members})); err != nil {
		t.Fatal(err)
	}
	if len(oev) != 1 || oev[0].Seeded {
		t.Fatalf("late split events %+v", oev)
	}
	if a, b := checkReplica(t, c.m), checkReplica(t, oc); a.Fingerprint != b.Fingerprint || a.Applied != b.Applied {
		t.Fatalf("a late split changed the child: %+v vs %+v", a, b)
	}
}

// A store's snapshots stream and install at its snapshot rate (both ways,
// so about twice the stream's size over the rate for a round trip), the
// installed replica is the source's, and a stream stopped while it waits
// for its turn ends at once with raft.ErrStopped.
func TestSnapshotRate(t *testing.T) {
	src, dst := openTestStore(t), openTestStore(t)
	span := storage.Span{Start: rk("a"), End: rk("m")}
	from := &applier{t: t, m: src.NewStateMachine(5, 1)}
	initShard(t, from, span)
	for i := 0; i < 400; i++ {
		from.mustOps(putOp(fmt.Sprintf("b%05d", i), fmt.Sprintf("%01000d", i), 5))
	}
	const rate = 1 << 20
	src.SetSnapshotRate(rate)
	dst.SetSnapshotRate(rate)
	start := time.Now()
	snap := takeSnapshot(t, from.m)
	saved := time.Since(start)
	to := &applier{t: t, m: dst.NewStateMachine(5, 2)}
	start = time.Now()
	if err := to.m.RecoverFromSnapshot(bytes.NewReader(snap), nil); err != nil {
		t.Fatal(err)
	}
	recovered := time.Since(start)
	// The first write or read of each is due at once; the rest wait.
	least := time.Duration(float64(len(snap)-64<<10) / rate * float64(time.Second))
	if saved < least || recovered < least {
		t.Fatalf("a %d-byte snapshot at %d bytes/s was saved in %s and installed in %s, want each at least %s",
			len(snap), rate, saved, recovered, least)
	}
	if got, want := checkReplica(t, to.m), checkReplica(t, from.m); got != want {
		t.Fatalf("installed replica %+v, source %+v", got, want)
	}
	if st := src.Stats(); st.SnapshotBytesSaved != int64(len(snap)) {
		t.Fatalf("SnapshotBytesSaved %d, the stream had %d", st.SnapshotBytesSaved, len(snap))
	}
	if st := dst.Stats(); st.SnapshotBytesRecovered != int64(len(snap)) {
		t.Fatalf("SnapshotBytesRecovered %d, the stream had %d", st.SnapshotBytesRecovered, len(snap))
	}

	// Stopped while waiting: at 1 KB/s the second write waits minutes.
	src.SetSnapshotRate(1 << 10)
	view, err := from.m.PrepareSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(stop) })
	start = time.Now()
	if err := from.m.SaveSnapshot(view, io.Discard, stop); !errors.Is(err, raft.ErrStopped) {
		t.Fatalf("stopped stream: %v, want raft.ErrStopped", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the stopped stream ended after %s", d)
	}
}

// progressRecord is a SnapshotProgress that records what it is told.
type progressRecord struct {
	group    raft.GroupID
	estimate int64
	reports  [][2]int64 // sent, total
	finished bool
	err      error
}

func (p *progressRecord) Progress(sent, total int64) {
	p.reports = append(p.reports, [2]int64{sent, total})
}
func (p *progressRecord) Finish(err error) { p.finished, p.err = true, err }

// A store tells its snapshot tracker about each stream: the group and an
// estimate of the stream's bytes from the replica's stats counter at the
// start (close to the real size), the bytes sent as it goes (ascending,
// never above the total), and at the end all of them sent of exactly
// that many, or the error of a stream that stopped.
func TestSnapshotTracker(t *testing.T) {
	src := openTestStore(t)
	span := storage.Span{Start: rk("a"), End: rk("m")}
	from := &applier{t: t, m: src.NewStateMachine(5, 1)}
	initShard(t, from, span)
	for i := 0; i < 4000; i++ {
		from.mustOps(putOp(fmt.Sprintf("b%05d", i), fmt.Sprintf("%01000d", i), 5))
	}
	var streams []*progressRecord
	src.SetSnapshotTracker(func(g raft.GroupID, estimate int64) SnapshotProgress {
		p := &progressRecord{group: g, estimate: estimate}
		streams = append(streams, p)
		return p
	})
	snap := takeSnapshot(t, from.m)
	if len(streams) != 1 {
		t.Fatalf("%d streams tracked, want 1", len(streams))
	}
	p := streams[0]
	n := int64(len(snap))
	if p.group != 5 || p.estimate < n*9/10 || p.estimate > n*11/10 {
		t.Fatalf("tracked group %d with an estimate of %d bytes; want group 5, about %d", p.group, p.estimate, n)
	}
	if !p.finished || p.err != nil {
		t.Fatalf("the stream's end: finished %v, %v", p.finished, p.err)
	}
	if len(p.reports) < 3 {
		t.Fatalf("%d progress reports of a %d-byte stream, want one a megabyte and the end", len(p.reports), n)
	}
	for i, r := range p.reports {
		if r[0] > r[1] || i > 0 && r[0] < p.reports[i-1][0] {
			t.Fatalf("report %d: %d of %d (reports %v)", i, r[0], r[1], p.reports)
		}
	}
	if last := p.reports[len(p.reports)-1]; last != [2]int64{n, n} {
		t.Fatalf("the last report %v, want all %d bytes of %d", last, n, n)
	}

	// A stream that stops ends its tracking with the error.
	src.SetSnapshotRate(1 << 10)
	view, err := from.m.PrepareSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	close(stop)
	if err := from.m.SaveSnapshot(view, io.Discard, stop); !errors.Is(err, raft.ErrStopped) {
		t.Fatalf("stopped stream: %v, want raft.ErrStopped", err)
	}
	if p := streams[len(streams)-1]; len(streams) != 2 || !p.finished || !errors.Is(p.err, raft.ErrStopped) {
		t.Fatalf("the stopped stream's tracking: %d streams, finished %v, %v", len(streams), p.finished, p.err)
	}
}
