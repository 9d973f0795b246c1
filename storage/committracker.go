package storage

import (
	"sync"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// commitTracker hands out commit timestamps and read timestamps.
//
// A commit takes its timestamp (begin) before its batch lands in Pebble —
// on a replicated engine before its Raft round — and stays open until the
// batch is visible or has failed (end). A read timestamp obeys two rules:
//
//   - Visibility: every commit at or below it is visible when the read
//     opens its view. Otherwise a read could miss a commit that a later
//     read at the same timestamp sees. So readTimestamp waits for the open
//     commits at or below the timestamp it picks.
//   - Linearizability: every commit that returned to its client before
//     the read began is at or below it. A commit returns only after end,
//     so it is enough to stay at or above covered: the newest timestamp
//     of an ended commit or of a published one (publish).
//
// Nothing asks a read to see a commit that is still open: its client has
// not been told it happened. So the read takes the clock's now lowered to
// just below the oldest open commit above covered, and waits only for the
// open commits below covered (older ones still open when a newer one
// ended; commits end mostly in the order they began), not for every commit
// in flight, each of which costs a WAL sync or, on a cluster, a Raft round
// (issue 17: 10 of 16 writing sessions waited here for Raft rounds).
//
// The picked timestamp never decreases from one call to the next, which
// readFloor relies on: covered only grows, and the open commits above
// covered at a later call are among those open above it now or began
// later, above the clock's now.
//
// Every timestamp that later reads must be at or above comes from begin
// (and is covered once its commit ends) or from publish: a timestamp taken
// from the clock elsewhere may be above the next read's.
type commitTracker struct {
	clock *hlc.Clock
	mu    sync.Mutex
	cond  sync.Cond
	next  uint64                   // id of the next registered commit
	open  map[uint64]*inflightKeys // registered, not yet visible; the keys they write, if known (refresh.go)
	// stamps holds the commit timestamp of each open commit. Ids are
	// taken in timestamp order (both under mu).
	stamps map[uint64]hlc.Timestamp
	// covered is the newest timestamp of an ended commit or a published
	// timestamp: every read timestamp picked from now on is at or above it.
	covered hlc.Timestamp
	// refreshers counts the transactions that may run a read refresh
	// (refresh.go); while there are any, commits register their keys.
	refreshers atomic.Int64
	// gate, when set, must pass before a read timestamp is handed out
	// (SetReadGate).
	gate atomic.Pointer[func() error]
}

func newCommitTracker(clock *hlc.Clock) *commitTracker {
	t := &commitTracker{clock: clock, open: map[uint64]*inflightKeys{}, stamps: map[uint64]hlc.Timestamp{}}
	t.cond.L = &t.mu
	return t
}

// begin takes a commit timestamp and registers the commit; call end(id)
// once its batch is visible (or failed).
func (t *commitTracker) begin() (hlc.Timestamp, uint64, error) { return t.beginWith(nil) }

// beginWith is begin for a commit that says which keys it writes (nil:
// unknown), for the read refreshes of the commits above it (refresh.go).
func (t *commitTracker) beginWith(keys *inflightKeys) (hlc.Timestamp, uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts, err := t.clock.Now()
	if err != nil {
		return hlc.Timestamp{}, 0, err
	}
	id := t.next
	t.next++
	t.open[id] = keys
	t.stamps[id] = ts
	return ts, id, nil
}

// end marks the commit visible (or failed). From here on it may have
// returned to its client, so reads must cover it.
func (t *commitTracker) end(id uint64) {
	t.mu.Lock()
	t.covered = t.covered.Forward(t.stamps[id])
	delete(t.open, id)
	delete(t.stamps, id)
	t.mu.Unlock()
	t.cond.Broadcast()
}

// pickLocked returns the read timestamp a read beginning now takes: the
// clock's now, or just below the oldest open commit above covered.
func (t *commitTracker) pickLocked() (hlc.Timestamp, error) {
	ts, err := t.clock.Now()
	if err != nil {
		return hlc.Timestamp{}, err
	}
	for _, c := range t.stamps {
		if t.covered.Less(c) && c.LessEq(ts) {
			ts = c.Prev() // at or above covered, since c is above it
		}
	}
	return ts, nil
}

// readTimestamp picks a read timestamp and waits until every commit at or
// below it is visible.
func (t *commitTracker) readTimestamp() (hlc.Timestamp, error) {
	if err := t.passGate(); err != nil {
		return hlc.Timestamp{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ts, err := t.pickLocked()
	if err != nil {
		return hlc.Timestamp{}, err
	}
	// Commits that begin from here on take timestamps above the clock's
	// now, so only those open already can be at or below ts.
	for t.anyThroughLocked(ts) {
		t.cond.Wait()
	}
	return ts, nil
}

// readFloor returns a timestamp at or below every read timestamp picked
// after the call (without waiting for anything).
func (t *commitTracker) readFloor() (hlc.Timestamp, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pickLocked()
}

// publish returns the clock's now and makes every read timestamp picked
// after the call at or above it: for a write that is not a registered
// commit but hands its timestamp to what reads go by (a schema change of
// system keys only, whose catalog is installed at it).
func (t *commitTracker) publish() (hlc.Timestamp, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts, err := t.clock.Now()
	if err != nil {
		return hlc.Timestamp{}, err
	}
	t.covered = t.covered.Forward(ts)
	return ts, nil
}

// waitThrough waits until every commit at or below ts that is open now is
// visible.
func (t *commitTracker) waitThrough(ts hlc.Timestamp) error {
	if err := t.passGate(); err != nil {
		return err
	}
	t.waitThroughUngated(ts)
	return nil
}

// waitThroughUngated waits for the open commits at or below ts, whatever
// the read gate says.
func (t *commitTracker) waitThroughUngated(ts hlc.Timestamp) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.anyThroughLocked(ts) {
		t.cond.Wait()
	}
}

func (t *commitTracker) passGate() error {
	if g := t.gate.Load(); g != nil {
		return (*g)()
	}
	return nil
}

// anyThroughLocked reports whether an open commit has a timestamp at or
// below ts.
func (t *commitTracker) anyThroughLocked(ts hlc.Timestamp) bool {
	for _, c := range t.stamps {
		if c.LessEq(ts) {
			return true
		}
	}
	return false
}

// ReadTimestamp returns a timestamp at which a statement can read every
// shard and index it touches: every commit acknowledged before the call is
// at or below it, and every commit at or below it is visible once it
// returns (it waits for those still in flight). It may be below commits
// still in flight, which no client has seen acknowledged yet (see
// commitTracker). Pass it to At or Batch.SetReadTimestamp. Successive
// calls never go back in time.
func (e *Engine) ReadTimestamp() (hlc.Timestamp, error) {
	return e.commits.readTimestamp()
}

// WaitCommitted waits until every commit at or below ts that is in flight
// now is visible (or fails as the read gate says): a read at a timestamp it did not get from ReadTimestamp
// (AS OF SYSTEM TIME, at most the clock's now) calls it before reading.
func (e *Engine) WaitCommitted(ts hlc.Timestamp) error {
	return e.commits.waitThrough(ts)
}

// WaitClosed is WaitCommitted for a read at or below a closed timestamp
// the caller knows this engine's replicas applied (cluster/shardrepl's
// ClosedTimestamp): no commit will ever land at or below it, and every one
// that did is in this engine once the commits in flight are, so the read
// is complete without the read gate's lease (a serving node that lost its
// quorum still answers it). It waits for the commits in flight at or
// below ts and never fails.
func (e *Engine) WaitClosed(ts hlc.Timestamp) {
	e.commits.waitThroughUngated(ts)
}

// SetReadGate makes ReadTimestamp and WaitCommitted call f first and fail
// with its error: a cluster node serves reads only while it holds its
// read lease (cluster/shardrepl), since another node may commit once it
// lost it. nil removes the gate.
func (e *Engine) SetReadGate(f func() error) {
	if f == nil {
		e.commits.gate.Store(nil)
		return
	}
	e.commits.gate.Store(&f)
}
