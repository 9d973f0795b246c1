package raft

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4"
	"github.com/lni/dragonboat/v4/logger"
	pb "github.com/lni/dragonboat/v4/raftpb"
)

// Log compaction that waits for snapshots on the way (issue 18).
//
// dragonboat's own automatic snapshots (Config.SnapshotEntries) compact a
// replica's log every SnapshotEntries applied entries to CompactionOverhead
// entries behind, whatever a follower still needs. A snapshot the leader
// streams is taken at its applied index A when the stream starts; the new
// replica, once it installed it, continues from entry A+1. A big snapshot
// streamed under writes (1 GB at 32 MB/s: half a minute and more) outlived
// the log after A, so the leader found A+1 compacted and streamed the whole
// shard again, forever (BenchmarkClusterReplicaMove at 1 GB under 200-300
// writes a second).
//
// So dragonboat's automatic snapshots are off (Config.SnapshotEntries 0) and
// the host's logKeeper takes them: every keeperInterval it looks at each
// local replica and, when its log holds more than SnapshotEntries +
// CompactionOverhead entries, asks for a snapshot that compacts the log to
// CompactionOverhead entries behind the applied index, as dragonboat did
// (and, by size, when SnapshotLogBytes of commands were applied since its
// last snapshot: toKeep), but never past a hold: the index of a snapshot this host is streaming or
// has streamed to a replica that has not caught up yet (or, once it
// acknowledged entries after the snapshot, the last one it did). CockroachDB's raft log queue does the same with its "pending
// snapshot index" (it truncates, but not past the snapshot's index).
//
// A hold starts when the state machine prepares a stream (PrepareSnapshot:
// for a replica on disk dragonboat prepares only streams; its own
// snapshots are metadata, "dummy" ones) at the index before the batch
// of commands the replica is applying (the stream's index is that or
// later), and is set to the stream's own index, and its target replica,
// with the stream's first chunk (the transport, snapshotsend.go; the
// stream may have been written whole by then: the transport sends from
// a queue). It ends when
//
//   - the target caught up: the transport receives its acknowledgement
//     (an accepted ReplicateResp) of an index past the snapshot's and
//     within CompactionOverhead entries of what the leader applied. An acknowledgement of less, at
//     or after the hold's index, moves the hold up to it: the target's
//     Raft takes the snapshot and acknowledges its index at once, and
//     appends the entries after it, but its state machine installs the
//     snapshot meanwhile, for as long as the stream took, and applies
//     nothing, so the target stops taking entries once its unapplied log
//     is full (MaxInMemLogBytes) and needs the log from there when the
//     install ends. The hold ended earlier when the leader sent the
//     target the entries after the snapshot, which it does as soon as the
//     stream's last chunk is handed over: at 1 GB under 200 writes a
//     second the log was compacted during the install and the whole shard
//     streamed twice (BenchmarkClusterReplicaMove writing into the moving
//     group; TestSnapshotInstallKeepsTheLog). The cap still counts the
//     commands applied since the hold began;
//   - the stream fails (SaveSnapshot returns an error, a chunk cannot be
//     sent, the stream's connection closes before its last chunk);
//   - another stream to the same replica starts (that one holds instead);
//   - this host no longer leads the group (a new leader streams from its
//     own log);
//   - the log held past the hold's index reaches HostConfig.MaxHeldLogBytes
//     (the cap: the commands applied since the hold's index, 512 MiB by
//     default): the keeper logs a warning and compacts as if there were no
//     hold, so a receiver that is stuck or gone cannot grow the log without
//     bound; that replica then needs another snapshot.
//
// Held entries are on disk in the log store (dragonboat keeps in memory
// only what is not applied yet), so the cap bounds disk, not memory.
// Explicit compactions (Host.CompactLog: split children, a replica about
// to be added) do not look at holds: they happen before a stream starts.

// keeperInterval is how often the keeper looks at each local replica. A
// log grows by what the group applies in one interval past its bound;
// each look costs a map walk and a lock of each replica's log reader.
const keeperInterval = 200 * time.Millisecond

// keeperLog logs the keeper's decisions ("raftlog" is one of the engine
// loggers SetEngineLogLevel sets: holds at info, the cap at warning).
var keeperLog = logger.GetLogger("raftlog")

// logKeeper takes the snapshots that bound a host's Raft logs, keeping
// the log after every hold.
type logKeeper struct {
	snapshotEntries uint64
	snapshotBytes   uint64
	overhead        uint64
	maxHeldBytes    uint64
	// holds is off with dragonboat's own transport (tests only), which
	// does not tell the keeper where streams go and when they end.
	holds bool

	nh   *dragonboat.NodeHost // set once the node host runs
	stop chan struct{}
	done chan struct{}

	// heldGroups counts the holds; the transport looks at message batches
	// only while it is not zero.
	heldGroups atomic.Int32

	mu       sync.Mutex
	replicas map[GroupID]*replicaLog
}

// replicaLog is what the keeper knows of one local replica.
type replicaLog struct {
	group   GroupID
	replica ReplicaID
	// applied and appliedBytes are updated by the replica's state machine
	// adapter: the index of the last command applied (lagging behind
	// membership changes and snapshots installed, which the keeper only
	// makes it compact less), and the bytes of the commands applied since
	// the replica started here (the log a hold keeps).
	applied      atomic.Uint64
	appliedBytes atomic.Uint64
	// applyingFrom is the index before the batch being applied (or the
	// last one applied): a stream prepared meanwhile is at this index or
	// after it.
	applyingFrom atomic.Uint64

	holds   []*logHold               // guarded by logKeeper.mu
	pending *dragonboat.RequestState // a snapshot the keeper asked for; the keeper goroutine's
	// askedAt and askedAtBytes are applied and appliedBytes when the
	// keeper last asked for a snapshot (0: not yet since the replica
	// started here); the keeper goroutine's.
	askedAt, askedAtBytes uint64
}

// logHold keeps a replica's log after index for a snapshot on the way.
type logHold struct {
	index     uint64    // the log is kept after it: the snapshot's, then what the target acknowledged
	snapshot  uint64    // the stream's index, once its first chunk named it
	bytesAt   uint64    // replicaLog.appliedBytes when the hold began
	to        ReplicaID // 0 until the stream's first chunk names it
	streaming bool      // the state machine is still writing the stream
	// startedAt is when the stream's first chunk was sent, writtenAt when
	// the state machine finished writing it (about when its last chunk
	// went: the transport sends from a short queue).
	startedAt, writtenAt time.Time
}

// installedBy says whether the target has had the time to install the
// snapshot by now: the receiver reads and stages a stream at the same
// paced rate the sender streamed it (shardsm's snapshot rate), so about as
// long as the stream took (1 GB: 36-42 s streamed, 34-45 s installed);
// twice that and installGrace more. Nothing tells the leader when a
// follower's state machine installed a snapshot: its Raft acknowledges the
// snapshot's index when it takes the snapshot, before the install.
func (h *logHold) installedBy(now time.Time) bool {
	if h.streaming || h.writtenAt.IsZero() || h.startedAt.IsZero() {
		return false
	}
	took := max(h.writtenAt.Sub(h.startedAt), 0)
	return now.Sub(h.writtenAt) >= 2*took+installGrace
}

// installGrace is the least time a hold lasts after its stream was
// written: a small snapshot is installed in milliseconds, but a loaded
// receiver may take a while to start.
const installGrace = 5 * time.Second

// target names the hold's replica for the log.
func (h *logHold) target() string {
	if h.to == 0 {
		return "its stream not sent yet"
	}
	return fmt.Sprintf("snapshot to replica %d", h.to)
}

func newLogKeeper(cfg HostConfig) *logKeeper {
	return &logKeeper{
		snapshotEntries: cfg.SnapshotEntries,
		snapshotBytes:   cfg.SnapshotLogBytes,
		overhead:        cfg.CompactionOverhead,
		maxHeldBytes:    cfg.MaxHeldLogBytes,
		holds:           !useDragonboatTransport,
		stop:            make(chan struct{}),
		done:            make(chan struct{}),
		replicas:        map[GroupID]*replicaLog{},
	}
}

// start runs the keeper over nh's replicas until close.
func (k *logKeeper) start(nh *dragonboat.NodeHost) {
	k.nh = nh
	go k.run()
}

func (k *logKeeper) close() {
	select {
	case <-k.stop:
		return
	default:
	}
	close(k.stop)
	<-k.done
}

func (k *logKeeper) run() {
	defer close(k.done)
	t := time.NewTicker(keeperInterval)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			k.pass()
		}
	}
}

// register records a replica the host starts (its state machine adapter
// is being made); it replaces an earlier replica of the group.
func (k *logKeeper) register(g GroupID, r ReplicaID) *replicaLog {
	rl := &replicaLog{group: g, replica: r}
	k.mu.Lock()
	if old := k.replicas[g]; old != nil {
		k.dropHoldsLocked(old)
	}
	k.replicas[g] = rl
	k.mu.Unlock()
	return rl
}

// forget drops g's replica rl (stopped, or gone from the engine).
func (k *logKeeper) forget(g GroupID, rl *replicaLog) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if cur := k.replicas[g]; cur != nil && (rl == nil || cur == rl) {
		k.dropHoldsLocked(cur)
		delete(k.replicas, g)
	}
}

// streamPrepared starts a hold at rl's applied index: rl's state machine
// is preparing a stream, whose index is the applied one. Nil when holds
// are off.
func (k *logKeeper) streamPrepared(rl *replicaLog) *logHold {
	if !k.holds {
		return nil
	}
	h := &logHold{index: rl.applyingFrom.Load(), bytesAt: rl.appliedBytes.Load(), streaming: true}
	k.mu.Lock()
	defer k.mu.Unlock()
	rl.holds = append(rl.holds, h)
	k.heldGroups.Add(1)
	keeperLog.Infof("group %d: holding the log from index %d for a snapshot stream", rl.group, h.index)
	return h
}

// streamWritten: the state machine finished writing h's stream; failed:
// it did not write all of it, so the stream is lost.
func (k *logKeeper) streamWritten(rl *replicaLog, h *logHold, failed bool) {
	if h == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	h.streaming = false
	h.writtenAt = time.Now()
	if failed {
		k.releaseLocked(rl, h, "the stream failed")
	}
}

// streamStarted: the transport sends the first chunk of a stream of g's
// snapshot at index to replica to. The hold the state machine began takes
// the stream's index and target; an older hold for the same target ends.
func (k *logKeeper) streamStarted(g GroupID, to ReplicaID, index uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	rl := k.replicas[g]
	if rl == nil {
		return
	}
	// The oldest hold not named yet: streams start on the transport in
	// the order their state machine prepared them, except when two go to
	// different targets at once; then the holds swap, and each takes the
	// index and target of the stream that named it all the same.
	var started *logHold
	for _, h := range rl.holds {
		if h.to == 0 {
			started = h
			break
		}
	}
	for _, h := range append([]*logHold(nil), rl.holds...) {
		if h != started && h.to == to {
			k.releaseLocked(rl, h, "another stream to the replica started")
		}
	}
	if started == nil {
		// A stream this host's state machine did not prepare (a test's
		// transport): nothing to hold.
		return
	}
	started.index, started.snapshot, started.to = index, index, to
	started.startedAt = time.Now()
}

// streamFailed: the transport could not send a chunk of a stream of g to
// to, or the stream's connection closed before its last chunk.
func (k *logKeeper) streamFailed(g GroupID, to ReplicaID) {
	k.releaseWhere(g, "the stream could not be sent", func(h *logHold) bool { return h.to == to })
}

// received is told of every message batch the transport receives while a
// hold exists: an accepted ReplicateResp from a held target at or after
// the hold's index ends the hold.
func (k *logKeeper) received(batch *pb.MessageBatch) {
	if k.heldGroups.Load() == 0 {
		return
	}
	for i := range batch.Requests {
		m := &batch.Requests[i]
		if m.Type != pb.ReplicateResp || m.Reject {
			continue
		}
		k.acknowledged(GroupID(m.ShardID), ReplicaID(m.From), m.LogIndex)
	}
}

// acknowledged: replica from of g holds the log up to index (a follower
// answers a snapshot with its index as soon as its Raft takes it, before
// its state machine installed it, and each append with its last index).
// A hold on from moves up to index, and ends once from took entries after
// the snapshot and is within CompactionOverhead entries of what this
// replica applied (the log the keeper keeps anyway feeds it from there),
// and has had the time to install the snapshot (installedBy): while it
// installs, it still takes entries after the snapshot, and is as near as
// any follower while the group takes few writes, but applies none, and
// stops taking them after a while (TestSnapshotInstallKeepsTheLog: 33
// entries).
func (k *logKeeper) acknowledged(g GroupID, from ReplicaID, index uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	rl := k.replicas[g]
	if rl == nil {
		return
	}
	near := index+k.overhead >= rl.applied.Load()
	now := time.Now()
	for _, h := range append([]*logHold(nil), rl.holds...) {
		switch {
		case h.to != from || index < h.index:
		case near && index > h.snapshot && h.installedBy(now):
			k.releaseLocked(rl, h, fmt.Sprintf("the replica acknowledged index %d, caught up", index))
		default:
			h.index = index
		}
	}
}

// releaseWhere ends the holds of g that match.
func (k *logKeeper) releaseWhere(g GroupID, why string, match func(*logHold) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	rl := k.replicas[g]
	if rl == nil {
		return
	}
	// A copy: releaseLocked removes from rl.holds.
	for _, h := range append([]*logHold(nil), rl.holds...) {
		if match(h) {
			k.releaseLocked(rl, h, why)
		}
	}
}

func (k *logKeeper) releaseLocked(rl *replicaLog, h *logHold, why string) {
	for i, x := range rl.holds {
		if x == h {
			rl.holds = append(rl.holds[:i], rl.holds[i+1:]...)
			k.heldGroups.Add(-1)
			keeperLog.Infof("group %d: released the log from index %d (%s): %s", rl.group, h.index, h.target(), why)
			return
		}
	}
}

func (k *logKeeper) dropHoldsLocked(rl *replicaLog) {
	k.heldGroups.Add(-int32(len(rl.holds)))
	rl.holds = nil
}

// pass looks at every replica once.
func (k *logKeeper) pass() {
	k.mu.Lock()
	rls := make([]*replicaLog, 0, len(k.replicas))
	for _, rl := range k.replicas {
		rls = append(rls, rl)
	}
	k.mu.Unlock()
	for _, rl := range rls {
		k.look(rl)
	}
}

// look ends rl's holds that are over (leadership lost, the cap) and
// compacts rl's log when it is due, never past a hold.
//
// It never calls the node host while holding k.mu: the node host starts
// a replica under its own lock and, under it, makes the replica's state
// machine, which registers here (k.mu); GetLogReader takes the node host's
// lock too.
func (k *logKeeper) look(rl *replicaLog) {
	k.mu.Lock()
	holds := len(rl.holds) > 0
	k.mu.Unlock()
	if holds {
		leader, _, ok, err := k.nh.GetLeaderID(uint64(rl.group))
		lost := err == nil && ok && ReplicaID(leader) != rl.replica
		k.mu.Lock()
		for _, h := range append([]*logHold(nil), rl.holds...) {
			if lost {
				k.releaseLocked(rl, h, "this replica no longer leads")
			} else if held := rl.appliedBytes.Load() - h.bytesAt; held >= k.maxHeldBytes {
				keeperLog.Warningf("group %d: stopped holding the log from index %d for a snapshot (%s): "+
					"%d bytes of commands applied since, the cap is %d (HostConfig.MaxHeldLogBytes); "+
					"its replica will need another snapshot", rl.group, h.index, h.target(), held, k.maxHeldBytes)
				k.releaseLocked(rl, h, "the cap")
			}
		}
		k.mu.Unlock()
	}

	// rl.pending is the keeper goroutine's alone. One snapshot request at
	// a time (dragonboat refuses a second); one asked for during a stream
	// waits for the stream's end.
	if rl.pending != nil {
		select {
		case <-rl.pending.ResultC():
			rl.pending.Release()
			rl.pending = nil
		default:
			return
		}
	}
	lr, err := k.nh.GetLogReader(uint64(rl.group))
	if err != nil {
		// Stopped, or not started yet: StartReplica registers before the
		// engine knows the replica.
		return
	}
	first, _ := lr.GetRange()
	compacted := first - 1 // the log's marker: entries up to it are gone
	applied, appliedBytes := rl.applied.Load(), rl.appliedBytes.Load()
	keep, due := k.toKeep(rl, compacted, applied, appliedBytes)
	if !due {
		return
	}
	target := applied - keep
	k.mu.Lock()
	for _, h := range rl.holds {
		target = min(target, h.index)
	}
	k.mu.Unlock()
	if target <= compacted {
		return
	}
	// A hold that begins now is at the index before the batch being
	// applied, past target unless the group applied CompactionOverhead
	// entries in between: a stream prepared now is safe.
	rs, err := k.nh.RequestSnapshot(uint64(rl.group), dragonboat.SnapshotOption{
		OverrideCompactionOverhead: true,
		CompactionIndex:            target,
	}, keeperSnapshotTimeout)
	if err == nil {
		rl.pending = rs
		rl.askedAt, rl.askedAtBytes = applied, appliedBytes
	}
	// Otherwise another snapshot is being taken (CompactLog's), or the
	// replica is not ready: the next pass asks again.
}

// toKeep decides whether rl's log is due for a snapshot and how many
// entries behind applied the compaction keeps: by count, once the log
// holds SnapshotEntries + CompactionOverhead entries (keeping
// CompactionOverhead); by size, once the commands applied since the
// keeper's last snapshot reach SnapshotLogBytes (keeping at most half of
// that, in entries of their average size, so a big bulk load's kept log
// stays tens of MiB, not thousands of entries of a MiB each).
func (k *logKeeper) toKeep(rl *replicaLog, compacted, applied, appliedBytes uint64) (keep uint64, due bool) {
	keep = min(k.overhead, applied)
	if applied > compacted+k.snapshotEntries+k.overhead {
		due = true
	}
	if k.snapshotBytes == 0 || applied <= rl.askedAt || appliedBytes < rl.askedAtBytes {
		return keep, due
	}
	since := appliedBytes - rl.askedAtBytes
	if since < k.snapshotBytes {
		return keep, due
	}
	avg := max(since/(applied-rl.askedAt), 1)
	return min(keep, k.snapshotBytes/2/avg), true
}

// keeperSnapshotTimeout bounds a snapshot the keeper asked for: an on-disk
// replica's snapshot is a sync of its state machine and a record in the
// log store.
const keeperSnapshotTimeout = time.Minute
