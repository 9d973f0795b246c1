package shardrepl

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Commits go through this node's own replica as the leader of a split
// child (groups along partition shards, splitqueue.go).
//
// A proposal made on a follower is forwarded to the leader, and a leader
// that is handing its leadership over drops what followers send it
// without telling them: dragonboat reports only the drops of its own
// replica. Such a proposal is neither applied nor answered, so its commit
// failed after the proposal timeout with 08007 although nothing was
// written, and the node stopped serving. The serving node moves every
// child's leadership to itself (leadGroups, leadChild), so its own
// transfers met its own forwarded commits: TestClusterCopy with
// --shard-group-per-shard failed so in 4 of 10 runs, each time a few
// hundred ms after a split made the group its COPY wrote to; the old
// leader logged "dropped proposal, leader transferring".
//
// So before the Replicator proposes a command to a child that another
// replica leads, it takes the leadership (one transfer per group at a
// time; every commit to the group waits for it) and proposes once its
// replica leads. A commit that cannot get the leadership within leadWait
// fails definitely (40001, nothing was proposed). FirstGroup is left
// alone (serving follows its leadership, not the reverse), and so is a
// group where this node's replica does not vote (it cannot lead it, and
// the serving node asks for no transfer to it either): their proposals
// are forwarded as before. A proposal lost anyway (to an election while
// it was in flight, or forwarded to a FirstGroup leader handing over) is
// proposed again: Writes apply at most once (replicator.go's proposeOne,
// shardsm's writeonce.go).

// leadWait bounds how long a commit waits for its node to take a child's
// leadership: a fraction of the proposal timeout, so that the proposal
// itself still gets the whole timeout.
func (r *Replicator) leadWait() time.Duration { return r.timeout / 2 }

// leadState is the Replicator's view of its node's replicas as leaders.
type leadState struct {
	// self caches this node's voting replica of each group (a
	// raft.ReplicaID), as LocalReplicas last listed it: the commit path
	// compares it with the leader without listing the host's replicas.
	self sync.Map

	mu     sync.Mutex
	taking map[raft.GroupID]*leadTake // transfers in progress
}

// leadTake is one transfer of a group's leadership to this node; the
// commits that need it wait on done.
type leadTake struct {
	done chan struct{}
	err  error
}

// awaitLead returns once this node's replica leads g, or at once when
// its proposals to g go to another leader anyway (FirstGroup, a group it
// does not vote in or does not run). An error means that the node could
// not take the leadership within wait: nothing was proposed.
func (r *Replicator) awaitLead(g raft.GroupID, wait time.Duration) error {
	if g == FirstGroup {
		return nil
	}
	leader, _, known, err := r.host.Leader(g)
	if err != nil {
		return nil // Propose reports it
	}
	if v, ok := r.lead.self.Load(g); ok && known && v.(raft.ReplicaID) == leader {
		return nil
	}
	self, votes := r.localVoter(g)
	if !votes {
		return nil
	}
	if known && leader == self {
		return nil
	}
	return r.takeLead(g, self, wait)
}

// localVoter returns this node's replica of g and whether it votes, and
// caches it for awaitLead.
func (r *Replicator) localVoter(g raft.GroupID) (raft.ReplicaID, bool) {
	for _, ri := range r.host.LocalReplicas() {
		if ri.Group != g {
			continue
		}
		if ri.NonVoter {
			r.lead.self.Delete(g)
			return ri.Replica, false
		}
		r.lead.self.Store(g, ri.Replica)
		return ri.Replica, true
	}
	r.lead.self.Delete(g)
	return 0, false
}

// takeLead moves g's leadership to replica self, or waits for the
// transfer another commit started.
func (r *Replicator) takeLead(g raft.GroupID, self raft.ReplicaID, wait time.Duration) error {
	r.lead.mu.Lock()
	t := r.lead.taking[g]
	if t == nil {
		t = &leadTake{done: make(chan struct{})}
		if r.lead.taking == nil {
			r.lead.taking = map[raft.GroupID]*leadTake{}
		}
		r.lead.taking[g] = t
		go r.transfer(g, self, wait, t)
	}
	r.lead.mu.Unlock()
	select {
	case <-t.done:
		if t.err != nil {
			return leadError(g, t.err)
		}
		return nil
	case <-time.After(wait):
		return leadError(g, fmt.Errorf("%w: group %d: the leadership did not move here within %s", raft.ErrTimeout, g, wait))
	}
}

// transfer runs one leadership transfer of takeLead.
func (r *Replicator) transfer(g raft.GroupID, self raft.ReplicaID, wait time.Duration, t *leadTake) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.err = r.host.TransferLeadership(ctx, g, self)
	cancel()
	r.lead.mu.Lock()
	delete(r.lead.taking, g)
	r.lead.mu.Unlock()
	close(t.done)
}

// leadError is the definite failure of a commit whose node could not
// lead the group: retryable, nothing was written.
func leadError(g raft.GroupID, err error) error {
	return &sqlerr.Error{Code: sqlerr.SerializationFailure,
		Message: fmt.Sprintf("could not commit: this node could not take the leadership of shard group %d, so nothing was proposed", g),
		Detail:  err.Error(), Hint: "Retry the transaction."}
}
