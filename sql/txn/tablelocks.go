package txn

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Table locks: PostgreSQL's eight relation lock modes with its conflict
// table. LOCK TABLE takes them explicitly; statements take the weak ones
// implicitly (ACCESS SHARE to read, ROW EXCLUSIVE to write) and DDL the
// strong ones, so that LOCK TABLE t IN SHARE MODE holds writers off and
// pg_dump's ACCESS SHARE holds DROP TABLE off. A lock is held by an owner
// (a transaction ID, or a statement's own ID outside a transaction) until
// the owner releases all its locks at once (transaction end) or back to a
// mark (ROLLBACK TO SAVEPOINT).
//
// This is separate from the key locks (locks.go) but shares their wait-for
// graph, so a cycle through a row lock and a table lock is a deadlock too.
// Waiters queue first come, first served: a request that conflicts with an
// earlier waiter's waits behind it, unless its owner already holds a lock
// on the table (PostgreSQL grants such a request ahead of the queue too,
// since the waiter may be waiting for it).

// LockMode is a table lock mode, weakest first.
type LockMode uint8

// The modes, in PostgreSQL's order (its lockdefs.h numbering).
const (
	AccessShare LockMode = iota + 1
	RowShare
	RowExclusive
	ShareUpdateExclusive
	Share
	ShareRowExclusive
	Exclusive
	AccessExclusive
)

var modeNames = [...]string{"", "AccessShareLock", "RowShareLock", "RowExclusiveLock",
	"ShareUpdateExclusiveLock", "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"}

// String is the mode as pg_locks names it ("AccessShareLock").
func (m LockMode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "UnknownLock"
}

func bit(m LockMode) uint16 { return 1 << m }

// conflicts[m] is the set of modes m conflicts with (PostgreSQL's
// LockConflicts table).
var conflicts = [...]uint16{
	AccessShare:          bit(AccessExclusive),
	RowShare:             bit(Exclusive) | bit(AccessExclusive),
	RowExclusive:         bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
	ShareUpdateExclusive: bit(ShareUpdateExclusive) | bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
	Share:                bit(RowExclusive) | bit(ShareUpdateExclusive) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
	ShareRowExclusive:    bit(RowExclusive) | bit(ShareUpdateExclusive) | bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
	Exclusive:            bit(RowShare) | bit(RowExclusive) | bit(ShareUpdateExclusive) | bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
	AccessExclusive:      bit(AccessShare) | bit(RowShare) | bit(RowExclusive) | bit(ShareUpdateExclusive) | bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
}

// Conflicts reports whether a lock in mode a conflicts with one in mode b
// held by another owner.
func Conflicts(a, b LockMode) bool { return conflicts[a]&bit(b) != 0 }

// TableLocks is the table lock manager.
type TableLocks struct {
	graph *LockTable // the wait-for graph shared with the key locks
	mu    sync.Mutex
	rels  map[uint64]*relLocks
	// held lists each owner's grants in the order taken, for release.
	held map[uint64][]heldLock
	// spareRels and spareHeld are states of tables and lists of grants
	// that went idle, kept for the next statement: every statement locks
	// its tables and releases them at its end, and without these each
	// would allocate a table's state (its map and channel) and a list.
	spareRels []*relLocks
	spareHeld [][]heldLock
	// spareGrants are owners' grants on a table that were released, for
	// the next (a statement's implicit lock is one grant, taken and given
	// back once per statement). Every use is under mu.
	spareGrants []*grant
}

// spareMax bounds each spare list.
const spareMax = 16

type heldLock struct {
	rel      uint64
	mode     LockMode
	implicit bool
}

// relLocks is the state of one table: the modes each owner holds, and the
// queue of waiters. changed is closed (and replaced) whenever a lock is
// released or a waiter leaves while others wait, so waiters look again (a
// waiter is in queue from before it reads changed until it stops waiting).
type relLocks struct {
	granted map[uint64]*grant
	queue   []*tableWaiter
	changed chan struct{}
}

type grant struct {
	modes uint16 // bit(mode) for each mode held
	// strong has the modes held by LOCK TABLE or DDL, not only by the
	// implicit locks of reads and writes (see LockRequest.Implicit).
	strong uint16
	pid    uint32
	count  [AccessExclusive + 1][2]int // by mode, then implicit (0) or not (1)
}

type tableWaiter struct {
	owner    uint64
	pid      uint32
	mode     LockMode
	implicit bool
}

func newTableLocks(graph *LockTable) *TableLocks {
	return &TableLocks{graph: graph, rels: map[uint64]*relLocks{}, held: map[uint64][]heldLock{}}
}

// LockRequest is one table lock to take.
type LockRequest struct {
	Owner uint64 // the transaction (or statement) that will hold it
	PID   uint32 // the owner's session, for pg_locks
	Rel   uint64 // the table's ID
	Mode  LockMode
	// NoWait fails at once with 55P03 instead of waiting.
	NoWait bool
	// Name is the table's name for error messages.
	Name string
	// Implicit marks the lock a read or write takes on the tables it
	// uses; DDL marks a schema change's. A DDL request waits only for
	// LOCK TABLE's and other DDL's locks, not for implicit ones: a schema
	// change does not wait for the transactions that read or wrote the
	// table (they fail at commit if it changed what they wrote), but LOCK
	// TABLE — pg_dump's ACCESS SHARE — holds it off.
	Implicit, DDL bool
}

func (tl *TableLocks) rel(id uint64) *relLocks {
	r := tl.rels[id]
	if r == nil {
		if n := len(tl.spareRels); n > 0 {
			r = tl.spareRels[n-1]
			tl.spareRels[n-1] = nil
			tl.spareRels = tl.spareRels[:n-1]
		} else {
			r = &relLocks{granted: map[uint64]*grant{}, changed: make(chan struct{})}
		}
		tl.rels[id] = r
	}
	return r
}

// blocker returns an owner that rq must wait for, or 0 if it may be
// granted now. Called with tl.mu held; w is rq's own queue entry (nil
// before it queues).
func (r *relLocks) blocker(rq LockRequest, w *tableWaiter) uint64 {
	var buf [8]uint64 // most tables have few holders: no allocation
	holders := buf[:0]
	for o := range r.granted {
		holders = append(holders, o)
	}
	// A fixed order, so that repeated looks name the same holder.
	slices.Sort(holders)
	for _, o := range holders {
		held := r.granted[o].modes
		if rq.DDL {
			held = r.granted[o].strong
		}
		if o != rq.Owner && conflicts[rq.Mode]&held != 0 {
			return o
		}
	}
	if _, holds := r.granted[rq.Owner]; holds {
		return 0
	}
	for _, q := range r.queue {
		if q == w {
			break
		}
		if q.owner != rq.Owner && Conflicts(rq.Mode, q.mode) && !(rq.DDL && q.implicit) {
			return q.owner
		}
	}
	return 0
}

// grant gives rq's owner rq.Mode on r. Called with tl.mu held.
func (tl *TableLocks) grant(r *relLocks, rq LockRequest) {
	g := r.granted[rq.Owner]
	if g == nil {
		if n := len(tl.spareGrants); n > 0 {
			g = tl.spareGrants[n-1]
			tl.spareGrants[n-1] = nil
			tl.spareGrants = tl.spareGrants[:n-1]
			*g = grant{pid: rq.PID}
		} else {
			g = &grant{pid: rq.PID}
		}
		r.granted[rq.Owner] = g
	}
	g.modes |= bit(rq.Mode)
	if rq.Implicit {
		g.count[rq.Mode][0]++
	} else {
		g.strong |= bit(rq.Mode)
		g.count[rq.Mode][1]++
	}
}

func (r *relLocks) wake() {
	if len(r.queue) == 0 {
		return // nobody waits on changed
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// Lock takes rq.Mode on table rq.Rel for rq.Owner, waiting while other
// owners hold or wait for conflicting modes. A lock its owner already
// holds in that mode is taken again (and released with the rest).
// Errors: 55P03 for NoWait or lock_timeout, 40P01 for a deadlock, the
// context's error when the statement is cancelled.
func (tl *TableLocks) Lock(ctx context.Context, rq LockRequest) error {
	_, err := tl.LockWaited(ctx, rq)
	return err
}

// LockWaited is Lock, also reporting whether the request had to wait.
func (tl *TableLocks) LockWaited(ctx context.Context, rq LockRequest) (waited bool, err error) {
	var deadline time.Time
	tl.mu.Lock()
	r := tl.rel(rq.Rel)
	var w *tableWaiter
	defer func() {
		if w != nil {
			tl.mu.Lock()
			r.removeWaiter(w)
			tl.dropIfIdle(rq.Rel, r)
			tl.mu.Unlock()
		}
	}()
	for {
		b := r.blocker(rq, w)
		if b == 0 {
			tl.grant(r, rq)
			hs := tl.held[rq.Owner]
			if hs == nil {
				if n := len(tl.spareHeld); n > 0 {
					hs = tl.spareHeld[n-1]
					tl.spareHeld[n-1] = nil
					tl.spareHeld = tl.spareHeld[:n-1]
				}
			}
			tl.held[rq.Owner] = append(hs, heldLock{rel: rq.Rel, mode: rq.Mode, implicit: rq.Implicit})
			if w != nil {
				r.removeWaiter(w)
				w = nil
			}
			tl.mu.Unlock()
			return waited, nil
		}
		if rq.NoWait {
			tl.dropIfIdle(rq.Rel, r)
			tl.mu.Unlock()
			return false, sqlerr.New(sqlerr.LockNotAvailable, "could not obtain lock on relation %q", rq.Name)
		}
		if w == nil {
			w = &tableWaiter{owner: rq.Owner, pid: rq.PID, mode: rq.Mode, implicit: rq.Implicit}
			r.queue = append(r.queue, w)
		}
		// Any owner this one waits for that waits (directly or not) for
		// this one closes a cycle; the graph keeps one edge per waiter, so
		// every conflicting holder is checked here, not only b.
		if err := tl.cycle(rq, r); err != nil {
			tl.mu.Unlock()
			return true, err
		}
		ch := r.changed
		tl.mu.Unlock()
		// The wait ends when the table's locks change, and every
		// deadlockRecheck to look for a cycle again; lock_timeout runs
		// from the first wait.
		if !waited {
			if d := lockTimeout(ctx); d > 0 {
				deadline = time.Now().Add(d)
			}
		}
		waited = true
		wctx := ctx
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return true, errLockTimeout()
			}
			wctx = WithLockTimeout(ctx, left)
		}
		wake, stop := wakeAfter(ch, deadlockRecheck)
		err := tl.graph.wait(wctx, LockInfo{Key: relKey(rq.Rel), Txn: rq.Owner, PID: rq.PID, Holder: b}, wake)
		stop()
		if err != nil {
			return true, err
		}
		tl.mu.Lock()
	}
}

// deadlockRecheck is how often a waiting table lock request looks for a
// deadlock again (PostgreSQL's deadlock_timeout is 1 s). The graph keeps
// one edge per waiter, so a cycle that closes after the request started
// waiting through a holder other than the one its edge names (a schema
// change waiting for several writers, one of which then waits for a
// writer queued behind the change) is found only by the request's own
// look over all its conflicting holders (cycle).
const deadlockRecheck = 100 * time.Millisecond

// wakeAfter returns a channel closed when ch closes or d has passed;
// stop ends the watch.
func wakeAfter(ch <-chan struct{}, d time.Duration) (wake chan struct{}, stop func()) {
	wake = make(chan struct{})
	done := make(chan struct{})
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		case <-done:
			return
		}
		close(wake)
	}()
	return wake, func() { close(done) }
}

// relKey names a table in the key lock table's waiter records; it is
// never a real key (keys start with a table prefix byte, not 0xff 't').
func relKey(id uint64) string {
	b := []byte{0xff, 't', 0, 0, 0, 0, 0, 0, 0, 0}
	for i := 0; i < 8; i++ {
		b[2+i] = byte(id >> (56 - 8*i))
	}
	return string(b)
}

// RelFromKey returns the table of a waiter record made by a table lock.
func RelFromKey(key string) (uint64, bool) {
	if len(key) != 10 || key[0] != 0xff || key[1] != 't' {
		return 0, false
	}
	var id uint64
	for i := 0; i < 8; i++ {
		id = id<<8 | uint64(key[2+i])
	}
	return id, true
}

// cycle fails with 40P01 if an owner rq conflicts with is waiting,
// directly or through others, for rq's owner.
func (tl *TableLocks) cycle(rq LockRequest, r *relLocks) error {
	var others []uint64
	for o, g := range r.granted {
		held := g.modes
		if rq.DDL {
			held = g.strong
		}
		if o != rq.Owner && conflicts[rq.Mode]&held != 0 {
			others = append(others, o)
		}
	}
	lt := tl.graph
	lt.graph.Lock()
	defer lt.graph.Unlock()
	for _, o := range others {
		for cur, steps := o, 0; steps < 1<<16; steps++ {
			if cur == rq.Owner {
				return sqlerr.New(sqlerr.DeadlockDetected, "deadlock detected")
			}
			next, ok := lt.graph.waitsFor[cur]
			if !ok {
				break
			}
			cur = next
		}
	}
	return nil
}

func (r *relLocks) removeWaiter(w *tableWaiter) {
	for i, q := range r.queue {
		if q == w {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			// Requests queued behind it may go now.
			r.wake()
			return
		}
	}
}

func (tl *TableLocks) dropIfIdle(id uint64, r *relLocks) {
	if len(r.granted) == 0 && len(r.queue) == 0 && tl.rels[id] == r {
		delete(tl.rels, id)
		// Nobody holds r now (every use is under tl.mu, by a holder or a
		// waiter of the table), so it can serve another table.
		if len(tl.spareRels) < spareMax {
			tl.spareRels = append(tl.spareRels, r)
		}
	}
}

// Mark is how many locks owner holds now, for ReleaseTo.
func (tl *TableLocks) Mark(owner uint64) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.held[owner])
}

// Release gives back every table lock owner holds.
func (tl *TableLocks) Release(owner uint64) { tl.ReleaseTo(owner, 0) }

// ReleaseTo gives back the locks owner took after Mark returned mark
// (ROLLBACK TO SAVEPOINT releases the locks taken since the savepoint).
func (tl *TableLocks) ReleaseTo(owner uint64, mark int) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	hs := tl.held[owner]
	if mark >= len(hs) {
		return
	}
	for _, h := range hs[mark:] {
		r := tl.rels[h.rel]
		if r == nil {
			continue
		}
		if g := r.granted[owner]; g != nil {
			k := 1
			if h.implicit {
				k = 0
			}
			if g.count[h.mode][k] > 0 {
				g.count[h.mode][k]--
			}
			if g.count[h.mode][1] == 0 {
				g.strong &^= bit(h.mode)
				if g.count[h.mode][0] == 0 {
					g.modes &^= bit(h.mode)
				}
			}
			if g.modes == 0 {
				delete(r.granted, owner)
				if len(tl.spareGrants) < spareMax {
					tl.spareGrants = append(tl.spareGrants, g)
				}
			}
		}
		r.wake()
		tl.dropIfIdle(h.rel, r)
	}
	if mark == 0 {
		delete(tl.held, owner)
		if len(tl.spareHeld) < spareMax && cap(hs) <= 64 {
			tl.spareHeld = append(tl.spareHeld, hs[:0])
		}
	} else {
		tl.held[owner] = hs[:mark]
	}
}

// Holds reports whether owner holds a lock on rel at least as strong as
// conflicting with everything mode conflicts with (the mode itself or a
// stronger one in PostgreSQL's order).
func (tl *TableLocks) Holds(owner, rel uint64, mode LockMode) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	r := tl.rels[rel]
	if r == nil {
		return false
	}
	g := r.granted[owner]
	return g != nil && g.modes&bit(mode) != 0
}

// TableLockInfo is one table lock for pg_locks: held (Granted) or awaited.
type TableLockInfo struct {
	Rel     uint64
	Owner   uint64
	PID     uint32
	Mode    LockMode
	Granted bool
}

// List returns the table locks held and awaited now.
func (tl *TableLocks) List() []TableLockInfo {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []TableLockInfo
	for id, r := range tl.rels {
		for o, g := range r.granted {
			for m := AccessShare; m <= AccessExclusive; m++ {
				if g.modes&bit(m) != 0 {
					out = append(out, TableLockInfo{Rel: id, Owner: o, PID: g.pid, Mode: m, Granted: true})
				}
			}
		}
		for _, w := range r.queue {
			out = append(out, TableLockInfo{Rel: id, Owner: w.owner, PID: w.pid, Mode: w.mode})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rel != out[j].Rel {
			return out[i].Rel < out[j].Rel
		}
		if out[i].Owner != out[j].Owner {
			return out[i].Owner < out[j].Owner
		}
		return out[i].Mode < out[j].Mode
	})
	return out
}

// Tables returns the manager's table lock manager.
func (m *Manager) Tables() *TableLocks { return m.tables }

// NewOwner returns an ID for a lock owner that is not a transaction: a
// statement outside a transaction holds its table locks under one. IDs
// come from the transactions' sequence, so they never collide.
func (m *Manager) NewOwner() uint64 { return m.nextID.Add(1) }
