package raft

import (
	"context"

	pb "github.com/lni/dragonboat/v4/raftpb"
)

// UseDragonboatTransport makes the hosts started after it use dragonboat's
// own TCP transport (true) or PivotDB's (transport.go).
func UseDragonboatTransport(on bool) { useDragonboatTransport = on }

// ChangeMembership runs h's changeMembership (h from Start) with change in
// place of the engine's request, so that a test can lose an attempt.
func ChangeMembership(ctx context.Context, h Host, g GroupID, change func(ctx context.Context, ccid uint64) error,
	done func(Membership) bool) (bool, error) {
	return h.(*dragonboatHost).changeMembership(ctx, g, change, done, nil)
}

// RequestAddNonVoter is the engine's request AddNonVoter makes: add replica
// r at addr to g as a non-voter, decided on the membership ccid names.
func RequestAddNonVoter(h Host, g GroupID, r ReplicaID, addr string) func(ctx context.Context, ccid uint64) error {
	return func(ctx context.Context, ccid uint64) error {
		return h.(*dragonboatHost).nh.SyncRequestAddNonVoting(ctx, uint64(g), uint64(r), addr, ccid)
	}
}

// ChangeAttemptTimeout is how long one attempt of a membership change waits.
const ChangeAttemptTimeout = changeAttemptTimeout

// LogRange is the first and last index of the Raft log h keeps for g.
func LogRange(h Host, g GroupID) (first, last uint64, err error) {
	lr, err := h.(*dragonboatHost).nh.GetLogReader(uint64(g))
	if err != nil {
		return 0, 0, err
	}
	first, last = lr.GetRange()
	return first, last, nil
}

// SetChunkReceivedHook makes every host's transport call f with each
// snapshot chunk it receives, before the host handles it (nil: none). Set
// it while no host runs.
func SetChunkReceivedHook(f func(g GroupID, to ReplicaID, last bool)) {
	if f == nil {
		chunkReceivedHook = nil
		return
	}
	chunkReceivedHook = func(c *pb.Chunk) { f(GroupID(c.ShardID), ReplicaID(c.ReplicaID), c.IsLastChunk()) }
}

// BusyRefusals is how many proposal tries h's engine refused as busy.
func BusyRefusals(h Host) int64 { return h.(*dragonboatHost).busyRefusals.Load() }

// LogHolds is how many snapshot holds h's log keeper has.
func LogHolds(h Host) int {
	return int(h.(*dragonboatHost).keeper.heldGroups.Load())
}
