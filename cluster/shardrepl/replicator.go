package shardrepl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// DefaultProposeTimeout bounds one proposal of a commit.
const DefaultProposeTimeout = 10 * time.Second

// ErrOutcomeUnknown wraps the error of a commit whose proposal timed out:
// it may still be applied. It is storage's, which the SQL layer reports
// as 08007.
var ErrOutcomeUnknown = storage.ErrOutcomeUnknown

// route is one group of the shard map.
type route struct {
	group raft.GroupID
	desc  shardsm.Descriptor
}

// Replicator is a storage.Replicator over shardsm groups: it cuts each
// commit by its shard map (the groups' descriptors), proposes each part to
// its group through the node's raft.Host, and returns once every part is
// applied by this node's replica (which writes into the engine's Pebble).
// Lock records (0x03 0x01) are not shard data but the locking node's
// state: their deletions in a commit are applied to the local store only,
// after the replicated writes.
type Replicator struct {
	host    raft.Host
	db      *pebble.DB // the engine's: local-only writes go here
	clock   *hlc.Clock // the engine's
	timeout time.Duration
	// epoch is the serving epoch the node's commits carry (shardsm's
	// Serve): a node that another took over from is refused.
	epoch uint64
	// onAbandon stops the node serving (Cluster.abandon; nil: nothing).
	onAbandon func(error)

	mu     sync.RWMutex
	routes []route // ascending by span start, disjoint
	// changed is closed at the map's next change (nil: nobody waits).
	changed chan struct{}

	cross crossState // commits across groups (crossgroup.go)
	// writeSeq numbers the one-group Writes' commit ids (proposeOne);
	// commits across groups number theirs in cross, which counts them.
	writeSeq atomic.Uint64
	lead     leadState // this node's replicas as leaders (leadpropose.go)
}

var (
	_ storage.Replicator    = (*Replicator)(nil)
	_ storage.BulkAbandoner = (*Replicator)(nil)
)

// AbandonServing implements storage.BulkAbandoner: a bulk load may be left
// half applied, so the node stops serving and the next serving node rolls
// it back.
func (r *Replicator) AbandonServing(reason error) {
	if r.onAbandon != nil {
		r.onAbandon(reason)
	}
}

// New returns a replicator of e's commits proposing through host. Add the
// groups with AddGroup, then set it on e (storage.Engine.SetReplicator).
func New(host raft.Host, e *storage.Engine) *Replicator {
	db, _, _ := e.PebbleForReplication()
	return &Replicator{host: host, db: db, clock: e.Clock(), timeout: DefaultProposeTimeout}
}

// SetEpoch sets the serving epoch every Write carries (Cluster.Serve); 0,
// the default, is a group nobody claimed.
func (r *Replicator) SetEpoch(epoch uint64) { r.epoch = epoch }

// SetProposeTimeout sets how long one proposal may take before the commit
// fails with ErrOutcomeUnknown.
func (r *Replicator) SetProposeTimeout(d time.Duration) { r.timeout = d }

// AddGroup reads g's descriptor linearizably and adds it to the shard map,
// and moves the engine's clock past the newest commit timestamp the group
// holds: a node that takes over serving commits above every version of
// the node that served before it.
func (r *Replicator) AddGroup(ctx context.Context, g raft.GroupID) error {
	v, err := r.host.Read(ctx, g, shardsm.State{})
	if err != nil {
		return fmt.Errorf("shardrepl: reading group %d: %w", g, err)
	}
	st := v.(shardsm.StateResult)
	if !st.Initialized {
		return fmt.Errorf("shardrepl: group %d has no shard yet", g)
	}
	if !st.MaxTimestamp.IsEmpty() {
		if err := r.clock.Update(st.MaxTimestamp); err != nil {
			return fmt.Errorf("shardrepl: group %d: %w", g, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setLocked(g, st.Descriptor)
	return nil
}

// setLocked installs g's descriptor d. Where entries overlap, the newer
// descriptor wins, by generation: a split gives the parent's remaining
// span and the child's both the parent's generation + 1, so the
// descriptors that contain a key form a chain of strictly growing
// generations (there are no merges), and of two that overlap the one with
// the higher generation is the later. An older entry keeps the parts of
// its span the newer one does not cover (trimmed, under its own
// generation: a commit routed there is answered stale and refreshes it),
// so the map takes a child and its shrunk parent in either order. An
// older descriptor of g itself is ignored; a newer one replaces every
// entry of g.
func (r *Replicator) setLocked(g raft.GroupID, d shardsm.Descriptor) {
	for _, rt := range r.routes {
		if rt.group == g && rt.desc.Generation > d.Generation {
			return // a stale answer or read: the map knows better
		}
	}
	// d's pieces not covered by a newer entry of another group.
	pieces := []storage.Span{d.Span}
	out := r.routes[:0:0]
	for _, rt := range r.routes {
		switch {
		case rt.group == g:
			// d replaces it.
		case !overlaps(rt.desc.Span, d.Span):
			out = append(out, rt)
		case rt.desc.Generation >= d.Generation:
			out = append(out, rt)
			pieces = subtractAll(pieces, rt.desc.Span)
		default:
			for _, sp := range subtract(rt.desc.Span, d.Span) {
				trimmed := rt
				trimmed.desc.Span = sp
				out = append(out, trimmed)
			}
		}
	}
	for _, sp := range pieces {
		piece := d
		piece.Span = sp
		out = append(out, route{group: g, desc: piece})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].desc.Span.Start, out[j].desc.Span.Start) < 0 })
	r.routes = out
	r.notifyLocked()
}

// notifyLocked wakes the commits waiting for the map to change
// (waitMapChange). Hold mu for writing.
func (r *Replicator) notifyLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// mapChanged returns a channel closed at the map's next change.
func (r *Replicator) mapChanged() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// subtract returns the parts of a outside b (none, one or two spans).
func subtract(a, b storage.Span) []storage.Span {
	if !overlaps(a, b) {
		return []storage.Span{a}
	}
	var out []storage.Span
	if bytes.Compare(a.Start, b.Start) < 0 {
		out = append(out, storage.Span{Start: a.Start, End: b.Start})
	}
	if bytes.Compare(b.End, a.End) < 0 {
		out = append(out, storage.Span{Start: b.End, End: a.End})
	}
	return out
}

func subtractAll(spans []storage.Span, b storage.Span) []storage.Span {
	var out []storage.Span
	for _, sp := range spans {
		out = append(out, subtract(sp, b)...)
	}
	return out
}

func overlaps(a, b storage.Span) bool {
	return bytes.Compare(a.Start, b.End) < 0 && bytes.Compare(b.Start, a.End) < 0
}

// Groups returns the shard map: each group with its descriptor.
func (r *Replicator) Groups() map[raft.GroupID]shardsm.Descriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[raft.GroupID]shardsm.Descriptor, len(r.routes))
	for _, rt := range r.routes {
		out[rt.group] = rt.desc
	}
	return out
}

// findLocked returns the route holding row key k.
func (r *Replicator) findLocked(k []byte) (route, bool) {
	i := sort.Search(len(r.routes), func(i int) bool { return bytes.Compare(r.routes[i].desc.Span.End, k) > 0 })
	if i < len(r.routes) && r.routes[i].desc.Contains(k) {
		return r.routes[i], true
	}
	return route{}, false
}

// isLockRecord reports whether engine key k is a lock record (0x03 0x01).
func isLockRecord(k []byte) bool {
	return len(k) >= 2 && k[0] == mvcc.LocalPrefix && k[1] == 0x01
}

// part is one group's share of a commit.
type part struct {
	rt  route
	ops []storage.Mutation
}

// Replicate implements storage.Replicator.
func (r *Replicator) Replicate(ts hlc.Timestamp, writes []storage.Mutation) error {
	var local []storage.Mutation
	replicated := writes[:0:0]
	for _, m := range writes {
		if isLockRecord(m.Key) && m.Kind != storage.MutationDeleteRange {
			local = append(local, m)
			continue
		}
		replicated = append(replicated, m)
	}
	var waitUntil time.Time
	for attempt := 0; len(replicated) > 0; attempt++ {
		parts, err := r.cut(replicated)
		var gap *noRouteError
		if errors.As(err, &gap) {
			// A split's child is not in the map yet (its replica is
			// starting here: groups.go adds it): wait for the map. The
			// channel is taken only here, off the commit path's common
			// case (it takes mu for writing), and the writes are cut
			// again after it, so a change in between is not missed.
			changed := r.mapChanged()
			if parts, err = r.cut(replicated); errors.As(err, &gap) {
				if waitUntil.IsZero() {
					waitUntil = time.Now().Add(r.timeout)
				}
				if !r.waitMapChange(changed, waitUntil) {
					return err
				}
				attempt--
				continue
			}
		}
		if err != nil {
			return err
		}
		stale, err := r.propose(ts, parts)
		if err == nil {
			break
		}
		// A stale answer applied nothing (across groups too: the staged
		// parts were discarded): the map is refreshed from the answer and
		// the commit cut again.
		if stale == nil || attempt >= 3 {
			return err
		}
	}
	if len(local) == 0 {
		return nil
	}
	b := r.db.NewBatch()
	defer b.Close()
	if err := storage.ApplyMutations(b, local); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

// noRouteError: no group of the map holds key (a split child whose
// replica has not started here yet).
type noRouteError struct{ key []byte }

func (e *noRouteError) Error() string {
	return fmt.Sprintf("shardrepl: no shard group of the map holds key %x", e.key)
}

// waitMapChange waits until changed is closed (the map changed) or until
// the deadline; false at the deadline.
func (r *Replicator) waitMapChange(changed <-chan struct{}, until time.Time) bool {
	d := time.Until(until)
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-changed:
		return true
	case <-t.C:
		return false
	}
}

// cut splits writes by the shard map; a range deletion is cut at the
// boundaries of the groups it crosses.
func (r *Replicator) cut(writes []storage.Mutation) ([]part, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	byGroup := map[raft.GroupID]int{}
	var parts []part
	add := func(rt route, m storage.Mutation) {
		i, ok := byGroup[rt.group]
		if !ok {
			i = len(parts)
			byGroup[rt.group] = i
			parts = append(parts, part{rt: rt})
		}
		parts[i].ops = append(parts[i].ops, m)
	}
	for _, m := range writes {
		if m.Kind != storage.MutationDeleteRange {
			k, err := shardsm.RouteKey(m.Key)
			if err != nil {
				return nil, err
			}
			rt, ok := r.findLocked(k)
			if !ok {
				return nil, &noRouteError{key: k}
			}
			add(rt, m)
			continue
		}
		// [start, end) in row keys, with the local kind prefix (if any)
		// the engine keys carry in front of them.
		prefix, sk, err := splitRouted(m.Key)
		if err != nil {
			return nil, err
		}
		_, ek, err := splitRouted(m.Value)
		if err != nil {
			return nil, err
		}
		for bytes.Compare(sk, ek) < 0 {
			rt, ok := r.findLocked(sk)
			if !ok {
				return nil, &noRouteError{key: sk}
			}
			end := ek
			if bytes.Compare(rt.desc.Span.End, end) < 0 {
				end = rt.desc.Span.End
			}
			add(rt, storage.Mutation{Kind: storage.MutationDeleteRange,
				Key: bare(prefix, sk), Value: bare(prefix, end)})
			sk = end
		}
	}
	return parts, nil
}

// splitRouted cuts an engine key's user key into the local kind prefix
// (0x03 <kind>, or nothing for a row or system key) and the row key it
// routes by.
func splitRouted(k []byte) (prefix, row []byte, err error) {
	row, err = shardsm.RouteKey(k)
	if err != nil {
		return nil, nil, err
	}
	uk := k[:enginekey.Split(k)-1]
	return uk[:len(uk)-len(row)], row, nil
}

// bare returns the bare engine key of prefix+k.
func bare(prefix, k []byte) []byte {
	out := make([]byte, 0, len(prefix)+len(k)+1)
	return append(append(append(out, prefix...), k...), 0)
}

// propose proposes the parts: one group's as one Write, several groups'
// atomically (commitAcross); stale is set when a group answered that the
// map is stale (its descriptor is then installed) and nothing applied.
func (r *Replicator) propose(ts hlc.Timestamp, parts []part) (stale *shardsm.StaleError, err error) {
	if len(parts) == 1 {
		return r.proposeOne(ts, parts[0])
	}
	return r.commitAcross(ts, parts)
}

// proposeOne proposes one group's part as one Write. A Write with a
// commit timestamp carries a commit id (shardsm's Writes applied once), so
// an attempt whose answer did not come (a proposal forwarded to a leader
// that dropped it while handing over, or lost with a leader's log tail in
// an election) is proposed again until the state machine answers or the
// proposal timeout ends: the group applies it once however many copies
// reach its log. Only what the state machine answered is definite; after
// an unanswered attempt a refusal that a takeover could explain (fenced,
// closed) no longer proves that nothing applied (writeonce.go), and
// neither does an attempt the engine refused.
func (r *Replicator) proposeOne(ts hlc.Timestamp, p part) (*shardsm.StaleError, error) {
	w := shardsm.Write{Generation: p.rt.desc.Generation, Timestamp: ts, Epoch: r.epoch, Mutations: p.ops}
	repeatable := !ts.IsEmpty()
	if repeatable {
		w.ID = shardsm.NewCommitID(r.epoch, r.writeSeq.Add(1))
	}
	// The stats change, read here once, so that the replicas need not
	// read the keys (shardsm/statshint.go).
	if err := shardsm.AddStatsHint(r.db, p.rt.group, &w); err != nil {
		return nil, err
	}
	cmd, err := shardsm.EncodeWrite(w)
	if err != nil {
		return nil, err
	}
	g := p.rt.group
	deadline := time.Now().Add(r.timeout)
	var lost error // the last attempt that went unanswered (nil: none)
	var res raft.Result
	for {
		left := time.Until(deadline)
		// Not forwarded to a leader that may drop it unanswered
		// (leadpropose.go), when this node can lead g.
		if leadErr := r.awaitLead(g, min(r.leadWait(), left)); leadErr != nil {
			if lost == nil {
				return nil, leadErr
			}
			// An earlier copy may still apply; go on while time is
			// left, without spinning on a transfer that fails at once.
			time.Sleep(min(leaderWatchEvery, max(time.Until(deadline), 0)))
		} else {
			attempt := left
			if repeatable {
				attempt = min(left, r.timeout/proposeAttempts)
			}
			res, err = r.proposeAttempt(g, cmd, attempt, repeatable)
			if err == nil {
				break
			}
			switch {
			case errors.Is(err, raft.ErrNotProposed):
				// This copy never reached the log.
			case errors.Is(err, raft.ErrTimeout) && repeatable:
				lost = err
			case errors.Is(err, raft.ErrTimeout):
				return nil, fmt.Errorf("%w: shard group %d did not apply it within %s: %w", ErrOutcomeUnknown, g, r.timeout, err)
			case lost != nil:
				return nil, fmt.Errorf("%w: shard group %d: an earlier copy went unanswered (%v), then: %w", ErrOutcomeUnknown, g, lost, err)
			default:
				return nil, fmt.Errorf("shardrepl: proposing to shard group %d: %w", g, err)
			}
		}
		if time.Until(deadline) > 0 {
			continue
		}
		if lost != nil {
			return nil, fmt.Errorf("%w: shard group %d did not apply it within %s: %w", ErrOutcomeUnknown, g, r.timeout, lost)
		}
		// Nothing reached the log: definite, and nothing to settle.
		return nil, &sqlerr.Error{Code: sqlerr.SerializationFailure,
			Message: fmt.Sprintf("could not commit: shard group %d took no proposal within %s (no leader, or too busy); nothing was written", g, r.timeout),
			Detail:  err.Error(), Hint: "Retry the transaction."}
	}
	err = shardsm.DecodeResult(res)
	var se *shardsm.StaleError
	if errors.As(err, &se) {
		// Definite even after a lost copy: the group's generation moved
		// past the Write's, so that copy can never apply either, and the
		// repeat found no record of it (no takeover in between: that is
		// checked first, as fenced).
		if se.Initialized {
			r.mu.Lock()
			r.setLocked(g, se.Descriptor)
			r.mu.Unlock()
		}
		return se, fmt.Errorf("shardrepl: shard group %d: %w", g, err)
	}
	var fe *shardsm.FencedError
	if errors.As(err, &fe) {
		if lost != nil {
			// The lost copy may have applied before the takeover, and
			// the next node's Close may have deleted its record since.
			return nil, fmt.Errorf("%w: shard group %d: node %d took over serving SQL after a copy of the commit went unanswered (%v): %w",
				ErrOutcomeUnknown, g, fe.Serving.Node, lost, err)
		}
		// Nothing was written: definite, and the node is about to stop
		// serving (its replica applied the takeover before this).
		return nil, &sqlerr.Error{Code: sqlerr.AdminShutdown,
			Message: fmt.Sprintf("terminating connection: node %d took over serving SQL; the transaction did not commit", fe.Serving.Node),
			Detail:  err.Error(), Hint: "Connect again (through any node) and retry.", Fatal: true}
	}
	if cerr, ok := closedCommitError(err); ok {
		if lost != nil {
			return nil, fmt.Errorf("%w: shard group %d: a copy of the commit went unanswered (%v): %w", ErrOutcomeUnknown, g, lost, err)
		}
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("shardrepl: shard group %d refused a commit: %w", g, err)
	}
	return nil, nil
}

// proposeAttempts is how many attempts of at most a proposal timeout's
// share a repeatable Write gets when each goes unanswered.
const proposeAttempts = 3

// proposeAttempt proposes cmd to g once, for at most d. With watch (a
// repeatable command) it gives up early when g's leader or term changes
// while it waits: a proposal in the old leader's log tail may be lost
// with it, and the dragonboat request of a lost one is only ended by its
// deadline. A command that cannot be repeated waits its whole time: the
// new leader may still apply it.
func (r *Replicator) proposeAttempt(g raft.GroupID, cmd []byte, d time.Duration, watch bool) (raft.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if !watch {
		return r.host.Propose(ctx, g, cmd)
	}
	w := &leaderWatch{host: r.host, g: g, cancel: cancel}
	w.leader, w.term, w.known, _ = r.host.Leader(g)
	w.arm()
	defer w.stop()
	return r.host.Propose(ctx, g, cmd)
}

// leaderWatchEvery is how often an attempt that has not been answered
// looks at its group's leader: a commit is usually answered in a few
// milliseconds, before the first look.
const leaderWatchEvery = 50 * time.Millisecond

// leaderWatch cancels an attempt once its group's leader or term is no
// longer the one it started under.
type leaderWatch struct {
	host   raft.Host
	g      raft.GroupID
	cancel context.CancelFunc

	mu      sync.Mutex
	t       *time.Timer
	stopped bool
	leader  raft.ReplicaID
	term    uint64
	known   bool
}

func (w *leaderWatch) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t = time.AfterFunc(leaderWatchEvery, w.look)
	}
}

func (w *leaderWatch) look() {
	leader, term, known, err := w.host.Leader(w.g)
	if err != nil {
		return // the proposal reports it
	}
	w.mu.Lock()
	changed := w.known && (!known || leader != w.leader || term != w.term)
	if !w.known && known {
		// No leader when the attempt started: its proposal waited for
		// this one, so this is the leader to watch.
		w.leader, w.term, w.known = leader, term, true
	}
	w.mu.Unlock()
	if changed {
		w.cancel()
		return
	}
	w.arm()
}

func (w *leaderWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.t != nil {
		w.t.Stop()
	}
}
