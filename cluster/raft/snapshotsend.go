package raft

import (
	"sync/atomic"

	"github.com/lni/dragonboat/v4/raftio"
)

// Snapshot targets (issue 18: the REPLICA SNAPSHOT job names the node it
// streams to). dragonboat does not tell the state machine where a stream
// it saves goes, but the node host publishes SendSnapshotStarted, with the
// group and the target replica, when it hands an InstallSnapshot message
// to the stream (its system events, delivered on a goroutine of their
// own: before or after the state machine begins the stream).

// snapshotSendEvents is the node host's system event listener: it passes
// SendSnapshotStarted on to the function OnSnapshotSend set, and ignores
// every other event.
type snapshotSendEvents struct {
	send atomic.Pointer[func(g GroupID, to ReplicaID)]
}

var _ raftio.ISystemEventListener = (*snapshotSendEvents)(nil)

func (l *snapshotSendEvents) SendSnapshotStarted(info raftio.SnapshotInfo) {
	if f := l.send.Load(); f != nil {
		(*f)(GroupID(info.ShardID), ReplicaID(info.ReplicaID))
	}
}

func (*snapshotSendEvents) NodeHostShuttingDown()                       {}
func (*snapshotSendEvents) NodeUnloaded(raftio.NodeInfo)                {}
func (*snapshotSendEvents) NodeDeleted(raftio.NodeInfo)                 {}
func (*snapshotSendEvents) NodeReady(raftio.NodeInfo)                   {}
func (*snapshotSendEvents) MembershipChanged(raftio.NodeInfo)           {}
func (*snapshotSendEvents) ConnectionEstablished(raftio.ConnectionInfo) {}
func (*snapshotSendEvents) ConnectionFailed(raftio.ConnectionInfo)      {}
func (*snapshotSendEvents) SendSnapshotCompleted(raftio.SnapshotInfo)   {}
func (*snapshotSendEvents) SendSnapshotAborted(raftio.SnapshotInfo)     {}
func (*snapshotSendEvents) SnapshotReceived(raftio.SnapshotInfo)        {}
func (*snapshotSendEvents) SnapshotRecovered(raftio.SnapshotInfo)       {}
func (*snapshotSendEvents) SnapshotCreated(raftio.SnapshotInfo)         {}
func (*snapshotSendEvents) SnapshotCompacted(raftio.SnapshotInfo)       {}
func (*snapshotSendEvents) LogCompacted(raftio.EntryInfo)               {}
func (*snapshotSendEvents) LogDBCompacted(raftio.EntryInfo)             {}

func (h *dragonboatHost) OnSnapshotSend(f func(g GroupID, to ReplicaID)) {
	if f == nil {
		h.events.send.Store(nil)
		return
	}
	h.events.send.Store(&f)
}
