package raft

import (
	"sync/atomic"

	pb "github.com/lni/dragonboat/v4/raftpb"
)

// Snapshot targets (issue 18: the REPLICA SNAPSHOT job names the node it
// streams to). dragonboat does not tell the state machine where a stream
// it saves goes, but every chunk the transport sends carries the group
// and the target replica: the host's transport (transport.go) calls the
// function OnSnapshotSend set with the first chunk of each stream (chunk
// 0), on the goroutine that sends the stream, after the state machine
// began saving it. (dragonboat's SendSnapshotStarted system event says
// the same, but a system event listener makes the Raft step worker wait
// for the event goroutine whenever it compacts a log.) With dragonboat's
// own transport (useDragonboatTransport, tests only) nothing is called.

//
// The same chunks, and the message batches the transport receives, tell
// the host's logKeeper (logkeeper.go) where a stream goes, when it failed,
// and when its target acknowledged the entries up to the snapshot's index
// (it installed the snapshot).

// snapshotSendHook holds the function OnSnapshotSend set, and the host's
// log keeper.
type snapshotSendHook struct {
	f      atomic.Pointer[func(g GroupID, to ReplicaID)]
	keeper *logKeeper // nil: none (a test's transport)
}

// sending is told of every chunk a snapshot connection sends.
func (h *snapshotSendHook) sending(chunk *pb.Chunk) {
	if h == nil || chunk.ChunkId != 0 {
		return
	}
	if h.keeper != nil {
		h.keeper.streamStarted(GroupID(chunk.ShardID), ReplicaID(chunk.ReplicaID), chunk.Index)
	}
	if f := h.f.Load(); f != nil {
		(*f)(GroupID(chunk.ShardID), ReplicaID(chunk.ReplicaID))
	}
}

// streamFailed: a chunk of a stream of g to replica to could not be sent,
// or the stream's connection closed before its last chunk.
func (h *snapshotSendHook) streamFailed(g GroupID, to ReplicaID) {
	if h != nil && h.keeper != nil {
		h.keeper.streamFailed(g, to)
	}
}

// receivedBatch is told of every message batch the transport received.
func (h *snapshotSendHook) receivedBatch(batch *pb.MessageBatch) {
	if h != nil && h.keeper != nil {
		h.keeper.received(batch)
	}
}

func (h *dragonboatHost) OnSnapshotSend(f func(g GroupID, to ReplicaID)) {
	if f == nil {
		h.snapSend.f.Store(nil)
		return
	}
	h.snapSend.f.Store(&f)
}
