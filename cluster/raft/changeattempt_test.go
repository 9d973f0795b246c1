package raft_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4"

	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// A membership change whose request is never answered (a follower's change
// the leader dropped, "dropped config change, pending change") is asked
// again after one attempt's time under the same config change id, instead
// of waiting for the caller's whole deadline; and an unanswered attempt
// that applied after all is found done, not made twice.
func TestChangeMembershipAttempts(t *testing.T) {
	nodes := startGroup(t, 3, 1)
	h := nodes[0].Host
	clustertest.WaitLeader(t, h, group)
	isNonVoter := func(r raft.ReplicaID) func(raft.Membership) bool {
		return func(m raft.Membership) bool { _, ok := m.NonVoters[r]; return ok }
	}

	t.Run("lost", func(t *testing.T) {
		real := raft.RequestAddNonVoter(h, group, 2, nodes[1].Addr)
		var calls atomic.Int32
		var firstID uint64
		lose := func(ctx context.Context, ccid uint64) error {
			if calls.Add(1) == 1 {
				firstID = ccid
				<-ctx.Done() // dropped by the leader: no answer ever
				return dragonboat.ErrTimeout
			}
			if ccid != firstID {
				t.Errorf("asked again under config change id %d, first under %d", ccid, firstID)
			}
			return real(ctx, ccid)
		}
		// The caller's deadline is far beyond one attempt: before, the
		// lost attempt took all of it and the change failed.
		ctx, cancel := context.WithTimeout(context.Background(), 10*raft.ChangeAttemptTimeout)
		defer cancel()
		start := time.Now()
		made, err := raft.ChangeMembership(ctx, h, group, lose, isNonVoter(2))
		if err != nil || !made {
			t.Fatalf("after a lost attempt: made %v, %v (%s)", made, err, time.Since(start))
		}
		if n := calls.Load(); n != 2 {
			t.Fatalf("%d attempts, want 2", n)
		}
		m, err := h.Membership(ctx, group)
		if err != nil || !isNonVoter(2)(m) {
			t.Fatalf("membership %+v, %v: no non-voter 2", m, err)
		}
	})

	t.Run("applied late", func(t *testing.T) {
		real := raft.RequestAddNonVoter(h, group, 3, nodes[2].Addr)
		var calls, applied atomic.Int32
		late := func(ctx context.Context, ccid uint64) error {
			calls.Add(1)
			<-ctx.Done()
			// The request was not answered in time but commits after
			// all (a slow apply): done before the next read.
			bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := real(bg, ccid); err == nil {
				applied.Add(1)
			} else {
				t.Errorf("the late request: %v", err)
			}
			return dragonboat.ErrTimeout
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*raft.ChangeAttemptTimeout)
		defer cancel()
		made, err := raft.ChangeMembership(ctx, h, group, late, isNonVoter(3))
		if err != nil || made {
			// made: false, the change applied but no answer said so.
			t.Fatalf("after an attempt that applied late: made %v, %v", made, err)
		}
		if c, a := calls.Load(), applied.Load(); c != 1 || a != 1 {
			t.Fatalf("%d attempts, %d applied; want 1 and 1 (found done, not asked again)", c, a)
		}
	})
}
