package shardrepl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Commits across several shard groups, made atomic (doc.go, "Commits
// across groups", has the protocol and why it holds). The Replicator
// commits a commit whose parts fall in one group as one Write (one Raft
// round); over several groups, commitAcross stages every part but the
// first group's, records the decision with the first group's part in that
// group (the coordinator), then applies the staged parts. A node that
// claims serving settles what the node before it left (RecoverCommits)
// before it reads its engine's state.

// crossState is the Replicator's state for commits across groups.
type crossState struct {
	seq atomic.Uint64 // the last commit id's sequence number
	mu  sync.Mutex
	// forget holds, by coordinator group, the commits whose every part is
	// applied: their decision records go with the next decision there.
	forget map[raft.GroupID][]shardsm.CommitID
	// hook, in tests, is called before each proposal of the protocol
	// ("stage", "decide", "apply"); an error stops the commit there, as
	// if the node had died (nothing more is proposed, nothing cleaned).
	hook func(point string) error
}

// maxForget bounds the decision records one decision forgets.
const maxForget = 256

// crossAttempts is how many times a command of the protocol is proposed
// before its outcome counts as unknown (proposeCross).
const crossAttempts = 3

func (r *Replicator) failpoint(point string) error {
	if h := r.cross.hook; h != nil {
		return h(point)
	}
	return nil
}

func (r *Replicator) takeForget(g raft.GroupID) []shardsm.CommitID {
	r.cross.mu.Lock()
	defer r.cross.mu.Unlock()
	ids := r.cross.forget[g]
	if len(ids) == 0 {
		return nil
	}
	n := min(len(ids), maxForget)
	out := append([]shardsm.CommitID(nil), ids[:n]...)
	r.cross.forget[g] = ids[n:]
	return out
}

func (r *Replicator) addForget(g raft.GroupID, ids ...shardsm.CommitID) {
	r.cross.mu.Lock()
	defer r.cross.mu.Unlock()
	if r.cross.forget == nil {
		r.cross.forget = map[raft.GroupID][]shardsm.CommitID{}
	}
	r.cross.forget[g] = append(r.cross.forget[g], ids...)
}

// commitAcross commits parts (two or more groups) atomically: either every
// part is applied on every replica, or none. It returns once this node's
// replicas applied every part. stale is set when a group answered that the
// map is stale and nothing was applied (the caller may cut again).
func (r *Replicator) commitAcross(ts hlc.Timestamp, parts []part) (stale *shardsm.StaleError, err error) {
	id := shardsm.NewCommitID(r.epoch, r.cross.seq.Add(1))
	coord, others := parts[0], parts[1:]
	write := func(p part) shardsm.Write {
		return shardsm.Write{Generation: p.rt.desc.Generation, Timestamp: ts, Epoch: r.epoch, Mutations: p.ops}
	}

	// 1. Stage the other groups' parts, in parallel.
	staged := make([]bool, len(others))
	errs := make([]error, len(others))
	stales := make([]*shardsm.StaleError, len(others))
	var wg sync.WaitGroup
	for i, p := range others {
		if err := r.failpoint("stage"); err != nil {
			wg.Wait()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd, err := shardsm.EncodeStage(shardsm.Stage{ID: id, Coordinator: coord.rt.group, Write: write(p)})
			if err == nil {
				_, stales[i], err = r.proposeCross(p.rt.group, cmd)
			}
			// A stage whose outcome is unknown may be there: discarded
			// with the others.
			staged[i], errs[i] = err == nil || errors.Is(err, ErrOutcomeUnknown), err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			continue
		}
		// Definite for the commit whatever the stage's outcome: nothing
		// is applied before the decision, and there will be none.
		var un *unanswered
		if errors.As(err, &un) {
			err = un.definite()
		}
		return r.abortStaged(id, others, staged, stales[i],
			fmt.Errorf("shardrepl: commit %s across %d shard groups did not commit: staging in group %d: %w", id, len(parts), others[i].rt.group, err))
	}

	// 2. Decide: the coordinator applies its part with the record.
	if err := r.failpoint("decide"); err != nil {
		return nil, err
	}
	forget := r.takeForget(coord.rt.group)
	w := write(coord)
	cmd, err := shardsm.EncodeDecide(shardsm.Decide{ID: id, Decision: shardsm.DecisionCommitted, Epoch: r.epoch, Write: &w, Forget: forget})
	if err != nil {
		r.addForget(coord.rt.group, forget...)
		return r.abortStaged(id, others, staged, nil, err)
	}
	res, st, err := r.proposeCross(coord.rt.group, cmd)
	var decision shardsm.Decision
	if err == nil {
		decision, err = shardsm.DecideResult(res)
	}
	if errors.Is(err, ErrOutcomeUnknown) {
		// The decision may still apply (and with it the coordinator's
		// part): only the next serving node can settle the commit.
		err = fmt.Errorf("shardrepl: commit %s across %d shard groups: deciding in group %d: %w", id, len(parts), coord.rt.group, err)
		r.AbandonServing(err)
		return nil, err
	}
	if err != nil {
		// The coordinator answered: nothing was recorded or applied.
		r.addForget(coord.rt.group, forget...)
		return r.abortStaged(id, others, staged, st,
			fmt.Errorf("shardrepl: commit %s across %d shard groups: deciding in group %d: %w", id, len(parts), coord.rt.group, err))
	}
	if decision != shardsm.DecisionCommitted {
		// Another node recovered the commit and aborted it: it serves
		// now, and settles the staged parts itself.
		return nil, &sqlerr.Error{Code: sqlerr.AdminShutdown, Fatal: true,
			Message: "terminating connection: another node took over serving SQL and aborted this commit; the transaction did not commit",
			Detail:  fmt.Sprintf("commit %s across shard groups was decided %s", id, decision),
			Hint:    "Connect again (through any node) and retry."}
	}

	// 3. Apply the staged parts, in parallel. The commit is decided:
	// from here on a failure leaves it committed but not applied
	// everywhere, which the next serving node completes.
	for i, p := range others {
		if err := r.failpoint("apply"); err != nil {
			wg.Wait()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd, err := shardsm.EncodeResolve(shardsm.Resolve{ID: id, Commit: true})
			if err == nil {
				_, _, err = r.proposeCross(p.rt.group, cmd)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			err = fmt.Errorf("%w: commit %s across %d shard groups is decided but group %d did not apply its part; the next serving node completes it: %w",
				ErrOutcomeUnknown, id, len(parts), others[i].rt.group, err)
			r.AbandonServing(err)
			return nil, err
		}
	}
	r.addForget(coord.rt.group, id)
	return nil, nil
}

// abortStaged discards the parts staged (or perhaps staged) for a commit
// that will not be decided committed, and returns cause with stale (which
// only counts if every discard went through: then nothing of the commit
// is anywhere). A discard that fails leaves parts this node cannot
// account for: it stops serving, and the next serving node settles them
// (RecoverCommits). A stage of unknown outcome that applies after its
// discard stays behind, never applied (nobody decides the commit
// committed), until the next serving node discards it.
func (r *Replicator) abortStaged(id shardsm.CommitID, others []part, staged []bool, stale *shardsm.StaleError, cause error) (*shardsm.StaleError, error) {
	// A fenced node discards too: nobody but this node decides its
	// commit committed (a recovering node only aborts), so a discard
	// agrees with whatever the next serving node does.
	var failed error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, p := range others {
		if !staged[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd, err := shardsm.EncodeResolve(shardsm.Resolve{ID: id})
			if err == nil {
				_, _, err = r.proposeCross(p.rt.group, cmd)
			}
			if err != nil {
				mu.Lock()
				failed = errors.Join(failed, fmt.Errorf("group %d: %w", p.rt.group, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		r.AbandonServing(fmt.Errorf("shardrepl: discarding the staged parts of commit %s: %w", id, failed))
		return nil, cause
	}
	return stale, cause
}

// proposeCross proposes one command of the protocol to g and maps its
// answer much as proposeOne does: a stale answer refreshes the map, a
// fenced one is 57P01; but every failure to get the state machine's
// answer (not only a timeout) is ErrOutcomeUnknown. Every command of the
// protocol is repeatable (Stage sets the same record again; the first
// decision stands, and a repeated Decide writes nothing; a part applies
// once), so an unanswered one is proposed again, up to crossAttempts times
// within the proposal timeout: a proposal forwarded to a leader that lost
// its leadership is neither applied nor refused, and a leader change must
// not end serving.
func (r *Replicator) proposeCross(g raft.GroupID, cmd []byte) (raft.Result, *shardsm.StaleError, error) {
	timeout := r.timeout / crossAttempts
	// Each command is repeatable, and an unanswered one is proposed
	// again, so taking the leadership first (leadpropose.go) only saves
	// an attempt lost to a transfer: its failure is no reason to stop.
	_ = r.awaitLead(g, timeout)
	var res raft.Result
	var err error
	for i := 0; i < crossAttempts; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		res, err = r.host.Propose(ctx, g, cmd)
		cancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		// Whatever stopped the wait (a timeout, the host closing), the
		// command may have been replicated: only the state machine's
		// answer is definite.
		return res, nil, &unanswered{group: g, timeout: r.timeout, err: err}
	}
	err = shardsm.DecodeResult(res)
	var se *shardsm.StaleError
	if errors.As(err, &se) {
		if se.Initialized {
			r.mu.Lock()
			r.setLocked(g, se.Descriptor)
			r.mu.Unlock()
		}
		return res, se, fmt.Errorf("shardrepl: shard group %d: %w", g, err)
	}
	var fe *shardsm.FencedError
	if errors.As(err, &fe) {
		return res, nil, &sqlerr.Error{Code: sqlerr.AdminShutdown,
			Message: fmt.Sprintf("terminating connection: node %d took over serving SQL; the transaction did not commit", fe.Serving.Node),
			Detail:  err.Error(), Hint: "Connect again (through any node) and retry.", Fatal: true}
	}
	if err != nil {
		return res, nil, fmt.Errorf("shardrepl: shard group %d refused a commit: %w", g, err)
	}
	return res, nil, nil
}

// unanswered is a proposal whose answer did not come: its outcome is
// unknown (errors.Is ErrOutcomeUnknown, 08007).
type unanswered struct {
	group   raft.GroupID
	timeout time.Duration
	err     error
}

func (e *unanswered) Error() string {
	return fmt.Sprintf("shard group %d did not answer within %s: %v", e.group, e.timeout, e.err)
}

func (e *unanswered) Is(target error) bool { return target == ErrOutcomeUnknown }

func (e *unanswered) Unwrap() error { return e.err }

// definite is the error without the unknown outcome: for a stage, whose
// commit fails whatever became of it.
func (e *unanswered) definite() error { return errors.New(e.Error()) }

// RecoverCommits settles, for a node that claimed serving under epoch, the
// commits across groups that the nodes which served before left staged:
// groups must be every shard group. First every group takes the epoch
// (shardsm.ServeAt), so that no older node stages or decides in it any
// more; then each staged part's decision is read by proposing ABORTED in
// its coordinator (the first decision stands, so the answer is the
// outcome: COMMITTED if the old node decided in time, else ABORTED, after
// which the old node's decision is refused), and the part is applied or
// discarded; last, the decision records, none of which a staged part
// needs any more, are deleted. It returns how many parts it applied and
// discarded. Run it before the engine's state is read (Cluster.Serve):
// the parts it applies change the store under the engine.
func RecoverCommits(ctx context.Context, h raft.Host, groups []raft.GroupID, node, epoch uint64) (applied, discarded int, err error) {
	// Each attempt gets its own deadline: a proposal forwarded to a leader
	// that died meanwhile ends only with its context, and the node must
	// not hang in Serve. Every command here is repeatable, so an
	// unanswered one is proposed again (see proposeCross).
	propose := func(g raft.GroupID, cmd []byte, what string) (raft.Result, error) {
		var res raft.Result
		err := ctx.Err()
		for i := 0; i < crossAttempts && ctx.Err() == nil; i++ {
			pctx, cancel := context.WithTimeout(ctx, DefaultProposeTimeout/crossAttempts)
			res, err = h.Propose(pctx, g, cmd)
			cancel()
			if err == nil {
				break
			}
		}
		if err == nil {
			err = shardsm.DecodeResult(res)
		}
		if err != nil {
			return res, fmt.Errorf("shardrepl: recovering commits across groups: %s in group %d: %w", what, g, err)
		}
		return res, nil
	}
	read := func(g raft.GroupID, q any) (any, error) {
		rctx, cancel := context.WithTimeout(ctx, DefaultProposeTimeout)
		defer cancel()
		return h.Read(rctx, g, q)
	}
	for _, g := range groups {
		v, err := read(g, shardsm.State{})
		if err != nil {
			return 0, 0, fmt.Errorf("shardrepl: recovering commits across groups: reading group %d: %w", g, err)
		}
		if sv := v.(shardsm.StateResult).Serving; sv.Epoch == epoch && sv.Node == node {
			continue
		}
		cmd, err := shardsm.EncodeServeAt(shardsm.ServeAt{Node: node, Epoch: epoch})
		if err != nil {
			return 0, 0, err
		}
		if _, err := propose(g, cmd, "taking the serving epoch"); err != nil {
			return 0, 0, err
		}
	}
	decided := map[shardsm.CommitID]shardsm.Decision{}
	for _, g := range groups {
		v, err := read(g, shardsm.Staged{})
		if err != nil {
			return applied, discarded, fmt.Errorf("shardrepl: recovering commits across groups: reading group %d: %w", g, err)
		}
		for _, p := range v.([]shardsm.StagedPart) {
			d, ok := decided[p.ID]
			if !ok {
				cmd, err := shardsm.EncodeDecide(shardsm.Decide{ID: p.ID, Decision: shardsm.DecisionAborted, Epoch: epoch})
				if err != nil {
					return applied, discarded, err
				}
				res, err := propose(p.Coordinator, cmd, "deciding commit "+p.ID.String())
				if err != nil {
					return applied, discarded, err
				}
				if d, err = shardsm.DecideResult(res); err != nil {
					return applied, discarded, err
				}
				decided[p.ID] = d
			}
			cmd, err := shardsm.EncodeResolve(shardsm.Resolve{ID: p.ID, Commit: d == shardsm.DecisionCommitted})
			if err != nil {
				return applied, discarded, err
			}
			if _, err := propose(g, cmd, "resolving commit "+p.ID.String()); err != nil {
				return applied, discarded, err
			}
			if d == shardsm.DecisionCommitted {
				applied++
			} else {
				discarded++
			}
		}
	}
	for _, g := range groups {
		v, err := read(g, shardsm.Decisions{})
		if err != nil {
			return applied, discarded, fmt.Errorf("shardrepl: recovering commits across groups: reading group %d: %w", g, err)
		}
		recs := v.([]shardsm.DecisionRecord)
		for len(recs) > 0 {
			n := min(len(recs), maxForget)
			ids := make([]shardsm.CommitID, n)
			for i := range ids {
				ids[i] = recs[i].ID
			}
			recs = recs[n:]
			cmd, err := shardsm.EncodeResolve(shardsm.Resolve{Forget: ids})
			if err != nil {
				return applied, discarded, err
			}
			if _, err := propose(g, cmd, "forgetting decisions"); err != nil {
				return applied, discarded, err
			}
		}
	}
	return applied, discarded, nil
}

// recoverCommits is Serve's call of RecoverCommits over every shard group
// (Cluster.ShardGroups: recovery that missed one would forget decisions
// its staged parts still need).
func (c *Cluster) recoverCommits(ctx context.Context, groups []raft.GroupID, epoch uint64) error {
	applied, discarded, err := RecoverCommits(ctx, c.Node.Host(), groups, c.id, epoch)
	if err != nil {
		return err
	}
	if applied+discarded > 0 {
		c.cfg.Logf("node %d: settled the commits across shard groups the node that served before left: %d part(s) applied, %d discarded", c.id, applied, discarded)
	}
	return nil
}
