package raft_test

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// gatedStreams is a state machine whose snapshot streams wait at their
// start until the test opens the gate.
type gatedStreams struct {
	raft.StateMachine
	g *streamGate
}

type streamGate struct {
	once    sync.Once
	entered chan struct{} // closed when a stream first waits
	open    chan struct{} // closed by the test
}

func (s gatedStreams) SaveSnapshot(view any, w io.Writer, stop <-chan struct{}) error {
	s.g.once.Do(func() { close(s.g.entered) })
	select {
	case <-s.g.open:
	case <-stop:
		return raft.ErrStopped
	}
	return s.StateMachine.SaveSnapshot(view, w, stop)
}

// A snapshot streamed to a new replica while the group takes writes is
// streamed once: the leader keeps its log from the snapshot's index until
// the new replica has been sent the entries after it (logkeeper.go), even
// though the writes during the stream pass several snapshot points
// (SnapshotEntries 50, CompactionOverhead 10 here). dragonboat's own
// automatic snapshots compacted the log to 10 entries behind the applied
// index as soon as the stream ended: the new replica, its snapshot
// installed, found the entries after it gone and the leader streamed the
// whole snapshot again (a 1 GB move under writes never ended that way).
// The stream is held at its start (the gate) while 300 writes apply, 100
// more follow, and the receiver handles the stream's last chunk only once
// the leader compacted its log after the stream (a snapshot point is
// due), so the writes always outrun the stream: without the hold the new
// replica's snapshot is always too old for the leader's log.
func TestSnapshotStreamKeepsTheLogAfterIt(t *testing.T) {
	if n := streamUnderWrites(t, nil, 0); n != 1 {
		t.Fatalf("the leader streamed the snapshot to the new replica %d times, want once", n)
	}
}

// The log a snapshot holds is capped (HostConfig.MaxHeldLogBytes): past
// the cap the leader compacts as if no snapshot were on its way, and the
// new replica needs another stream, which it gets.
func TestSnapshotHoldCapped(t *testing.T) {
	capped := func(c *raft.HostConfig) { c.MaxHeldLogBytes = 1 << 10 } // 300 writes are ~10 KB of commands
	// The receiver handles the stream once the leader compacted past it
	// (the stream is at about index 100, the writes end near 400).
	// The later streams' holds reach the tiny cap too while writes go on:
	// two streams at least.
	if n := streamUnderWrites(t, capped, 200); n < 2 {
		t.Fatalf("the leader streamed the snapshot to the new replica %d times, want more than once (the hold was capped)", n)
	}
}

// streamUnderWrites adds a fourth replica to a group of three, whose
// leader streams it a snapshot while 300 writes apply (see
// TestSnapshotStreamKeepsTheLogAfterIt), and returns how many streams the
// new replica was sent before it caught up. tune adjusts the hosts'
// configuration (nil: clustertest's). The receiver handles the stream's
// last chunk only once the leader's log starts more than past entries
// after where it started when the stream did.
func streamUnderWrites(t *testing.T, tune func(*raft.HostConfig), past uint64) int32 {
	dir := t.TempDir()
	// Set before any host starts, reset after they stopped (cleanups run
	// last first).
	var leaderHost atomic.Pointer[raft.Host]
	var firstAtStream atomic.Uint64
	raft.SetChunkReceivedHook(func(g raft.GroupID, to raft.ReplicaID, last bool) {
		if g != group || to != 4 || !last {
			return
		}
		// Bounded: a leader that never compacts fails the test below.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if h := leaderHost.Load(); h != nil {
				if first, _, err := raft.LogRange(*h, group); err == nil && first > firstAtStream.Load()+past {
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Cleanup(func() { raft.SetChunkReceivedHook(nil) })
	gate := &streamGate{entered: make(chan struct{}), open: make(chan struct{})}
	defer func() {
		select {
		case <-gate.open:
		default:
			close(gate.open)
		}
	}()
	nodes := make([]*clustertest.Node, 4)
	initial := map[raft.ReplicaID]string{}
	for i := range nodes {
		nodes[i] = clustertest.StartNodeWith(t, filepath.Join(dir, fmt.Sprintf("n%d", i+1)), clustertest.FreeAddr(t), nil, tune)
		if i < 3 {
			initial[raft.ReplicaID(i+1)] = nodes[i].Addr
		}
	}
	for i, n := range nodes[:3] {
		store := n.Store
		create := func(g raft.GroupID, r raft.ReplicaID) raft.StateMachine {
			return gatedStreams{StateMachine: store.NewStateMachine(g, r), g: gate}
		}
		spec := raft.ReplicaSpec{Group: group, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
		if err := n.Host.StartReplica(spec, create); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testCtx(t)
	leader := nodes[clustertest.WaitLeader(t, nodes[0].Host, group)-1]
	for i := 0; i < 100; i++ {
		mustPut(t, ctx, leader.Host, clustertest.Key(i), "before")
	}
	// The leader compacted its log: the new replica needs a snapshot.
	waitFor(t, func() bool {
		first, _, err := raft.LogRange(leader.Host, group)
		return err == nil && first > 1
	})
	var streams atomic.Int32
	for _, n := range nodes {
		n.Host.OnSnapshotSend(func(g raft.GroupID, to raft.ReplicaID) {
			if g == group && to == 4 {
				streams.Add(1)
			}
		})
	}
	if err := leader.Host.AddNonVoter(ctx, group, 4, nodes[3].Addr); err != nil {
		t.Fatal(err)
	}
	spec := raft.ReplicaSpec{Group: group, Replica: 4, Join: true, NonVoter: true}
	if err := nodes[3].Host.StartReplica(spec, nodes[3].Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the leader did not start streaming a snapshot to the new replica in 20s")
	}
	first, _, err := raft.LogRange(leader.Host, group)
	if err != nil {
		t.Fatal(err)
	}
	firstAtStream.Store(first)
	leaderHost.Store(&leader.Host)
	const writes = 300
	for i := 0; i < writes; i++ {
		mustPut(t, ctx, leader.Host, clustertest.Key(100+i), "during")
	}
	close(gate.open)
	// Writes go on while the stream ends (a compaction needs a new
	// snapshot, which needs something applied since the last one).
	for i := 0; i < 100; i++ {
		mustPut(t, ctx, leader.Host, clustertest.Key(100+writes+i), "after the stream")
	}
	waitFor(t, func() bool {
		v, err := nodes[3].Host.StaleRead(group, kvsm.Get{Key: []byte(clustertest.Key(100 + writes + 99))})
		return err == nil && string(v.(kvsm.GetResult).Value) == "after the stream"
	})
	mustGet(t, ctx, nodes[3].Host, clustertest.Key(0), "before")
	streamed := streams.Load()
	// The hold ended with the catch-up: the log is compacted past the
	// stream's index again once more snapshot points pass.
	_, lastAtCatchUp, err := raft.LogRange(leader.Host, group)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		mustPut(t, ctx, leader.Host, clustertest.Key(i), "after")
	}
	waitFor(t, func() bool {
		first, _, err := raft.LogRange(leader.Host, group)
		return err == nil && first > lastAtCatchUp
	})
	return streamed
}

// gatedInstall is a state machine whose snapshot installs wait at their
// start until the test opens the gate.
type gatedInstall struct {
	raft.StateMachine
	g *streamGate
}

func (s gatedInstall) RecoverFromSnapshot(r io.Reader, stop <-chan struct{}) error {
	s.g.once.Do(func() { close(s.g.entered) })
	select {
	case <-s.g.open:
	case <-stop:
		return raft.ErrStopped
	}
	return s.StateMachine.RecoverFromSnapshot(r, stop)
}

// A snapshot the new replica takes long to install is streamed once: the
// leader keeps its log from the snapshot's index until the new replica
// acknowledged it. The leader sends the new replica the entries after the
// snapshot as soon as the stream's last chunk is handed over, while the
// receiver may install it for as long as the stream took; the hold used
// to end there, the log was compacted during the install, and the new
// replica, its snapshot installed, found the entries after it gone and
// was streamed the whole snapshot again (a 1 GB move under 200 writes a
// second streamed 2.1 GB). Here the install waits (the gate) while 300
// writes apply, past several snapshot points (SnapshotEntries 50); the
// hold ends once the new replica caught up (the log is compacted past the
// snapshot again), after installGrace at least.
func TestSnapshotInstallKeepsTheLog(t *testing.T) {
	dir := t.TempDir()
	gate := &streamGate{entered: make(chan struct{}), open: make(chan struct{})}
	defer func() {
		select {
		case <-gate.open:
		default:
			close(gate.open)
		}
	}()
	nodes := make([]*clustertest.Node, 4)
	initial := map[raft.ReplicaID]string{}
	for i := range nodes {
		nodes[i] = clustertest.StartNode(t, filepath.Join(dir, fmt.Sprintf("n%d", i+1)), clustertest.FreeAddr(t), nil)
		if i < 3 {
			initial[raft.ReplicaID(i+1)] = nodes[i].Addr
		}
	}
	for i, n := range nodes[:3] {
		spec := raft.ReplicaSpec{Group: group, Replica: raft.ReplicaID(i + 1), InitialMembers: initial}
		if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testCtx(t)
	leader := nodes[clustertest.WaitLeader(t, nodes[0].Host, group)-1]
	for i := 0; i < 100; i++ {
		mustPut(t, ctx, leader.Host, clustertest.Key(i), "before")
	}
	// The leader compacted its log: the new replica needs a snapshot.
	waitFor(t, func() bool {
		first, _, err := raft.LogRange(leader.Host, group)
		return err == nil && first > 1
	})
	var streams atomic.Int32
	for _, n := range nodes {
		n.Host.OnSnapshotSend(func(g raft.GroupID, to raft.ReplicaID) {
			if g == group && to == 4 {
				streams.Add(1)
			}
		})
	}
	if err := leader.Host.AddNonVoter(ctx, group, 4, nodes[3].Addr); err != nil {
		t.Fatal(err)
	}
	store := nodes[3].Store
	create := func(g raft.GroupID, r raft.ReplicaID) raft.StateMachine {
		return gatedInstall{StateMachine: store.NewStateMachine(g, r), g: gate}
	}
	spec := raft.ReplicaSpec{Group: group, Replica: 4, Join: true, NonVoter: true}
	if err := nodes[3].Host.StartReplica(spec, create); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the new replica did not start installing a snapshot in 20s")
	}
	_, lastAtInstall, err := raft.LogRange(leader.Host, group)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 300
	for i := 0; i < writes; i++ {
		mustPut(t, ctx, leader.Host, clustertest.Key(100+i), "during the install")
	}
	// The leader compacts every 50 entries, but not past what the new
	// replica acknowledged: it took a few entries after the snapshot
	// while installing it, then no more.
	if first, _, err := raft.LogRange(leader.Host, group); err == nil {
		t.Logf("the leader's log starts at %d while the new replica installs a snapshot at or before index %d", first, lastAtInstall)
	}
	close(gate.open)
	waitFor(t, func() bool {
		v, err := nodes[3].Host.StaleRead(group, kvsm.Get{Key: []byte(clustertest.Key(100 + writes - 1))})
		return err == nil && string(v.(kvsm.GetResult).Value) == "during the install"
	})
	mustGet(t, ctx, nodes[3].Host, clustertest.Key(0), "before")
	if n := streams.Load(); n != 1 {
		t.Fatalf("the leader streamed the snapshot to the new replica %d times, want once", n)
	}
	// The hold ends once the new replica acknowledges writes near the
	// leader's, installGrace (5 s) after the stream at least.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; raft.LogHolds(leader.Host) > 0; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the leader still holds its log for the new replica 30 s after it caught up")
		}
		mustPut(t, ctx, leader.Host, clustertest.Key(i%100), "after")
		time.Sleep(10 * time.Millisecond)
	}
}

// A log of large commands is compacted by size (HostConfig.SnapshotLogBytes)
// long before its entry count reaches SnapshotEntries, and keeps at most
// half of SnapshotLogBytes behind the applied index: a bulk load's entries
// (a MiB each) kept thousands of them, gigabytes on disk, which a restart
// read back to apply.
func TestLogCompactedBySize(t *testing.T) {
	const (
		valueBytes = 4 << 10
		limit      = 64 << 10
	)
	bySize := func(c *raft.HostConfig) {
		c.SnapshotEntries = 100000 // the count never triggers here
		c.CompactionOverhead = 1000
		c.SnapshotLogBytes = limit
	}
	n := clustertest.StartNodeWith(t, t.TempDir(), clustertest.FreeAddr(t), nil, bySize)
	spec := raft.ReplicaSpec{Group: group, Replica: 1, InitialMembers: map[raft.ReplicaID]string{1: n.Addr}}
	if err := n.Host.StartReplica(spec, n.Store.NewStateMachine); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitLeader(t, n.Host, group)
	ctx := testCtx(t)
	value := string(make([]byte, valueBytes))
	for i := 0; i < 200; i++ { // 800 KiB: past the limit twelve times
		mustPut(t, ctx, n.Host, clustertest.Key(i), value)
	}
	waitFor(t, func() bool {
		first, last, err := raft.LogRange(n.Host, group)
		// Kept: at most limit/2 of 4 KiB commands (8 entries) behind
		// the applied index at the last snapshot, plus what applied after
		// it (under limit), so under 8 + 16 + a few entries of
		// membership and leader changes.
		return err == nil && first > 100 && last-first < 40
	})
	mustGet(t, ctx, n.Host, clustertest.Key(0), value)
}
