package raft

import "context"

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
