package raft

import (
	"context"
	"errors"
	"io"
)

// GroupID names a Raft group: a shard, an index shard or the metadata. The
// group id is the shard id (design §12); 0 is never a group.
type GroupID uint64

// ReplicaID names one replica of a group. Replica ids are never reused inside
// a group: the engine refuses to re-add a removed id, and a node whose data was
// lost must come back under a new one (dragonboat #256, #393).
type ReplicaID uint64

// Host is PivotDB's interface to the consensus engine on one node: it runs
// this node's replicas of many groups and carries their traffic. Every method
// is safe for concurrent use. The implementation is dragonboat's NodeHost
// (Start); the interface is kept small so that the engine can be replaced.
type Host interface {
	// RaftAddress is the address other hosts reach this one on; it names this
	// host in memberships.
	RaftAddress() string

	// StartReplica starts this host's replica of a group. See ReplicaSpec for
	// the three ways to start one (bootstrap, join, restart).
	StartReplica(spec ReplicaSpec, create CreateStateMachine) error
	// StopReplica stops the local replica of g; its data stays and a later
	// StartReplica restarts it. It is not a membership change. A replica
	// removed from its group may have been stopped by the engine already:
	// then StopReplica returns ErrGroupNotFound.
	StopReplica(g GroupID) error
	// HasReplicaData reports whether the log store holds a replica r of g that
	// was started before: the caller then restarts it (no members, no join).
	HasReplicaData(g GroupID, r ReplicaID) bool
	// RemoveReplicaData deletes the log store's data of a replica that has
	// been removed from its group and stopped here. Removing the data of a
	// replica that is still a member corrupts the group.
	RemoveReplicaData(ctx context.Context, g GroupID, r ReplicaID) error

	// Propose replicates cmd through g's log and returns once the command is
	// committed and applied by this host's replica, with the state machine's
	// result. A proposal the engine dropped before replicating it (no leader
	// yet, busy) is retried until ctx ends; ErrTimeout means the outcome is
	// unknown: the command may still be applied, unless the error is also
	// ErrNotProposed (every try was refused before replication). A
	// proposal forwarded to a leader that then died, or that was handing
	// its leadership over (a leader drops what followers send it then,
	// and does not tell them), is neither applied nor dropped here: only
	// ctx ends it, so give each attempt a short deadline and make commands
	// safe to repeat (or able to tell a repeat) before retrying them, or
	// propose through the leader's own host.
	Propose(ctx context.Context, g GroupID, cmd []byte) (Result, error)
	// Read runs query against the local replica once it has applied
	// everything committed when Read was called (ReadIndex): a linearizable
	// read, from a leader or a follower alike.
	Read(ctx context.Context, g GroupID, query any) (any, error)
	// StaleRead runs query against the local replica as it is, without asking
	// the leader: it may miss recent writes.
	StaleRead(g GroupID, query any) (any, error)

	// AddVoter adds replica r on the host at addr as a voting member. The
	// replica is started there afterwards with ReplicaSpec.Join.
	AddVoter(ctx context.Context, g GroupID, r ReplicaID, addr string) error
	// AddNonVoter adds replica r as a non-voting member: it receives the log
	// (or a snapshot) but counts in no quorum. Start it with Join and NonVoter.
	AddNonVoter(ctx context.Context, g GroupID, r ReplicaID, addr string) error
	// Promote turns non-voting replica r into a voter.
	Promote(ctx context.Context, g GroupID, r ReplicaID) error
	// PromoteIf promotes non-voting replica r if cond holds for g's
	// membership, atomically: a membership change between reading it and
	// promoting makes PromoteIf read and decide again. It reports whether
	// it promoted r (false if r was a voter already or cond was false).
	PromoteIf(ctx context.Context, g GroupID, r ReplicaID, cond func(Membership) bool) (bool, error)
	// RemoveReplica removes replica r from g's membership. Its host should
	// then stop it and remove its data; its id is never valid again in g.
	RemoveReplica(ctx context.Context, g GroupID, r ReplicaID) error
	// CompactLog makes this host's replica of g take a snapshot at its
	// applied index and drop its whole log up to it, and returns that
	// index. A replica this one leads that needs an entry at or below the
	// index afterwards catches up from a snapshot instead. A split child
	// needs it (design §12): its log starts at index 0 without the rows the
	// founding replicas took from their copy of the parent, so a replica
	// that did not apply the split must never be sent the child's log from
	// its start. Nothing applied since the last snapshot: that snapshot's
	// index (it bounds the log already); no snapshot and nothing applied:
	// ErrRejected. The snapshot is this replica's alone: a leader elected
	// later sends from its own log, so every replica that may lead must
	// compact its own (cluster/shardrepl's recordRunningChildren).
	CompactLog(ctx context.Context, g GroupID) (uint64, error)
	// TransferLeadership asks the leader of g to hand over to replica r and
	// waits until this host sees r as the leader.
	TransferLeadership(ctx context.Context, g GroupID, r ReplicaID) error

	// Leader returns g's leader as this host knows it; ok is false while no
	// leader is known (an election is running, or the replica just started).
	Leader(g GroupID) (leader ReplicaID, term uint64, ok bool, err error)
	// Membership returns g's membership, read linearizably.
	Membership(ctx context.Context, g GroupID) (Membership, error)
	// LocalReplicas lists the replicas this host runs.
	LocalReplicas() []ReplicaInfo

	// Close stops every replica and the host. The state machines' data and
	// the log store stay on disk for the next start.
	Close() error
}

// ReplicaSpec says how to start a replica. There are three cases:
//
//   - bootstrap a new group: InitialMembers lists every founding replica with
//     its host's address (the same map on every founding host), Join false;
//   - join a group that already added this replica (AddVoter, AddNonVoter):
//     Join true, no InitialMembers;
//   - restart a replica whose data is on this host (HasReplicaData): neither.
type ReplicaSpec struct {
	Group   GroupID
	Replica ReplicaID
	// InitialMembers maps replica ids to the addresses of their hosts.
	InitialMembers map[ReplicaID]string
	Join           bool
	// NonVoter starts the replica as a non-voting member: it must be one in
	// the membership (AddNonVoter). A replica that joined as a non-voter
	// must say so at every later start too, promoted or not: replaying its
	// log it meets its own addition as a non-voter, which dragonboat refuses
	// (panics) on a voter; it becomes a voter when it replays or restores
	// its promotion.
	NonVoter bool
}

// CreateStateMachine makes the state machine of one replica.
type CreateStateMachine func(g GroupID, r ReplicaID) StateMachine

// Membership is a group's replica set.
type Membership struct {
	// ConfigChangeID identifies this membership: the log index of the
	// change that made it.
	ConfigChangeID uint64
	// Voters and NonVoters map replica ids to their hosts' addresses.
	Voters    map[ReplicaID]string
	NonVoters map[ReplicaID]string
	// Removed lists ids that were members once and may never come back.
	Removed map[ReplicaID]bool
}

// ReplicaInfo describes a replica running on this host.
type ReplicaInfo struct {
	Group    GroupID
	Replica  ReplicaID
	Leader   ReplicaID // 0 when unknown
	Term     uint64
	NonVoter bool
}

// Result is what the state machine's Apply returned for one command.
type Result struct {
	Value uint64
	Data  []byte
}

// Entry is one committed command handed to StateMachine.Apply.
type Entry struct {
	Index  uint64 // the command's Raft log index, ascending without gaps per group
	Cmd    []byte
	Result Result // set by Apply
}

// StateMachine is a replica's state kept on disk (the Raft thesis §5.2): the
// engine hands it committed commands in log order, and it persists, in the
// same atomic write as their effects, the index of the last one it applied.
// That index is what Open returns after a restart, so it must never be older
// than the data (dragonboat #156, #369): the engine replays the log above it.
//
// Apply, Sync, PrepareSnapshot, RecoverFromSnapshot and Close are never called
// concurrently with one another; Lookup and SaveSnapshot may run while Apply
// does.
type StateMachine interface {
	// Open returns the index of the last applied command, 0 for a new replica.
	// stop is closed if the replica is stopped while Open runs.
	Open(stop <-chan struct{}) (uint64, error)
	// Apply applies entries in order and sets each one's Result. It need not
	// sync: the engine's log is the durable copy, and after a crash the
	// entries above Open's index are applied again. An error stops the node:
	// only I/O failures return one, never a bad command.
	Apply(entries []Entry) error
	// Lookup answers a read.
	Lookup(query any) (any, error)
	// Sync makes everything applied so far durable. The engine calls it
	// before it compacts the log below the applied index.
	Sync() error
	// PrepareSnapshot captures a point-in-time view for SaveSnapshot.
	PrepareSnapshot() (any, error)
	// SaveSnapshot writes the view PrepareSnapshot captured to w, streaming:
	// memory stays bounded whatever the size of the state.
	SaveSnapshot(view any, w io.Writer, stop <-chan struct{}) error
	// RecoverFromSnapshot replaces the whole state with the one read from r,
	// atomically as far as Open can tell.
	RecoverFromSnapshot(r io.Reader, stop <-chan struct{}) error
	// Close releases the replica's resources; its data stays on disk.
	Close() error
}

// ErrStopped is returned by StateMachine methods that gave up because their
// stop channel was closed.
var ErrStopped = errors.New("raft: replica stopped")

// Errors returned by Host. Classify them with errors.Is.
var (
	// ErrClosed: the host is closed.
	ErrClosed = errors.New("raft: host closed")
	// ErrGroupNotFound: this host runs no replica of the group.
	ErrGroupNotFound = errors.New("raft: group not found on this host")
	// ErrGroupExists: StartReplica for a group that already runs here.
	ErrGroupExists = errors.New("raft: group already started on this host")
	// ErrTimeout: ctx ended before the request completed; a proposal may
	// still be applied later, unless the error is also ErrNotProposed.
	ErrTimeout = errors.New("raft: request timed out")
	// ErrNotProposed: Propose's ctx ended while the engine refused every
	// try before replicating it (no leader known, the replica loading or
	// busy, too little time left to start one): the command was never
	// proposed and will never apply. Such an error is ErrTimeout too, for
	// the callers that only ask whether they ran out of time.
	ErrNotProposed = errors.New("raft: the command was not proposed")
	// ErrRejected: the engine refused the request (for example re-adding a
	// removed replica id, or a membership change that conflicts).
	ErrRejected = errors.New("raft: request rejected")
	// ErrReplicaRemoved: the local replica was removed from its group.
	ErrReplicaRemoved = errors.New("raft: replica removed from its group")
)
