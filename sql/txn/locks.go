package txn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// lockShards spreads the lock table over several mutexes so that writers of
// different keys rarely contend on the table itself.
const lockShards = 64

// LockTable holds the key locks of all open transactions, each in one of
// PostgreSQL's four row lock strengths.
type LockTable struct {
	shards [lockShards]lockShard
	// graph guards waitsFor, the wait-for edges used for deadlock detection.
	graph struct {
		sync.Mutex
		waitsFor map[uint64]uint64
		// waiting describes each waiting transaction, for pg_locks.
		waiting map[uint64]LockInfo
	}
	spans spanLocks
}

type lockShard struct {
	sync.Mutex
	held map[string]*lock
}

// lock is one key's holders: one transaction in a strength that conflicts
// with itself (FOR NO KEY UPDATE, FOR UPDATE: every write), or several in
// strengths that do not conflict with each other (FOR KEY SHARE, FOR SHARE;
// mvcc.Strength.Conflicts is PostgreSQL's table).
type lock struct {
	holders []holder
	// changed is closed, and replaced, whenever a holder leaves or
	// weakens its hold: a waiter then looks again.
	changed chan struct{}
}

type holder struct {
	txn      uint64
	pid      uint32 // the holder's session (pg_locks)
	strength mvcc.Strength
}

// conflict returns a holder other than txn whose strength conflicts with
// strength (ok false: none), and the strength txn itself holds (0: none).
func (l *lock) conflict(txn uint64, strength mvcc.Strength) (h holder, ok bool, own mvcc.Strength) {
	for _, x := range l.holders {
		if x.txn == txn {
			own = x.strength
		} else if !ok && x.strength.Conflicts(strength) {
			h, ok = x, true
		}
	}
	return h, ok, own
}

// grant records txn's hold at strength (a new holder, or a stronger hold
// of one already there).
func (l *lock) grant(txn uint64, pid uint32, strength mvcc.Strength) {
	for i := range l.holders {
		if l.holders[i].txn == txn {
			l.holders[i].strength = max(l.holders[i].strength, strength)
			return
		}
	}
	l.holders = append(l.holders, holder{txn: txn, pid: pid, strength: strength})
}

// NewLockTable returns an empty lock table.
func NewLockTable() *LockTable {
	lt := &LockTable{}
	for i := range lt.shards {
		lt.shards[i].held = map[string]*lock{}
	}
	lt.graph.waitsFor = map[uint64]uint64{}
	lt.graph.waiting = map[uint64]LockInfo{}
	return lt
}

func (lt *LockTable) shard(key string) *lockShard {
	// FNV-1a: cheap and good enough to spread keys.
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return &lt.shards[h%lockShards]
}

// acquire locks key exclusively (FOR UPDATE strength) for txn, waiting
// while another transaction holds it. It reports whether the lock was
// newly taken (false if txn already held it).
func (lt *LockTable) acquire(ctx context.Context, txn uint64, pid uint32, key string) (bool, error) {
	prev, err := lt.acquireStrength(ctx, txn, pid, key, mvcc.Update, waitBlock)
	return err == nil && prev == 0, err
}

// waitPolicy is what acquireStrength does when another transaction holds
// the key in a conflicting strength.
type waitPolicy uint8

const (
	waitBlock waitPolicy = iota // wait (deadlock detection, lock_timeout)
	waitNone                    // fail at once with errWouldBlock
)

// errWouldBlock is acquireStrength's answer under waitNone when the key is
// held in a conflicting strength.
var errWouldBlock = errors.New("txn: lock held by another transaction")

// acquireStrength takes key for txn at strength (or strengthens txn's hold
// of it), waiting, or not (policy), while other transactions hold it in a
// conflicting strength. prev is the strength txn held before (0: none), so
// that ROLLBACK TO SAVEPOINT can give a strengthening back.
func (lt *LockTable) acquireStrength(ctx context.Context, txn uint64, pid uint32, key string, strength mvcc.Strength, policy waitPolicy) (prev mvcc.Strength, err error) {
	s := lt.shard(key)
	for {
		s.Lock()
		l, ok := s.held[key]
		if !ok {
			l = &lock{holders: []holder{{txn: txn, pid: pid, strength: strength}}, changed: make(chan struct{})}
			s.held[key] = l
			s.Unlock()
			sl := lt.foreignSpan(txn, key)
			if sl == nil {
				return 0, nil
			}
			// A bulk load owns the span: give the key back and wait.
			s.Lock()
			lt.releaseLocked(s, txn, key)
			s.Unlock()
			if policy == waitNone {
				return 0, errWouldBlock
			}
			if err := lt.wait(ctx, LockInfo{Key: key, Txn: txn, PID: pid, Holder: sl.owner, Strength: strength}, sl.released); err != nil {
				return 0, err
			}
			continue
		}
		h, conflict, own := l.conflict(txn, strength)
		if !conflict {
			if own < strength {
				l.grant(txn, pid, strength)
			}
			s.Unlock()
			return own, nil
		}
		ch := l.changed
		s.Unlock()
		if policy == waitNone {
			return own, errWouldBlock
		}
		if err := lt.wait(ctx, LockInfo{Key: key, Txn: txn, PID: pid, Holder: h.txn, Strength: strength}, ch); err != nil {
			return own, err
		}
	}
}

func (lt *LockTable) wait(ctx context.Context, w LockInfo, released chan struct{}) error {
	txn, owner := w.Txn, w.Holder
	lt.graph.Lock()
	// Follow the chain of waits from the owner; reaching txn means a cycle.
	for cur, steps := owner, 0; steps < 1<<16; steps++ {
		if cur == txn {
			lt.graph.Unlock()
			return sqlerr.New(sqlerr.DeadlockDetected, "deadlock detected")
		}
		next, ok := lt.graph.waitsFor[cur]
		if !ok {
			break
		}
		cur = next
	}
	lt.graph.waitsFor[txn] = owner
	lt.graph.waiting[txn] = w
	lt.graph.Unlock()
	defer func() {
		lt.graph.Lock()
		delete(lt.graph.waitsFor, txn)
		delete(lt.graph.waiting, txn)
		lt.graph.Unlock()
	}()
	var timeout <-chan time.Time
	if d := lockTimeout(ctx); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	// pg_stat_activity shows the session waiting on a lock, as
	// PostgreSQL's wait_event_type Lock / wait_event transactionid does
	// for a row held by another transaction.
	defer activity.FromContext(ctx).Wait("Lock", "transactionid")()
	select {
	case <-released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		return errLockTimeout()
	}
}

// release unlocks keys held by txn.
func (lt *LockTable) release(txn uint64, keys []string) {
	for _, key := range keys {
		s := lt.shard(key)
		s.Lock()
		lt.releaseLocked(s, txn, key)
		s.Unlock()
	}
}

// releaseLocked drops txn's hold of key; s is key's shard, locked.
func (lt *LockTable) releaseLocked(s *lockShard, txn uint64, key string) {
	lt.setStrengthLocked(s, txn, key, 0)
}

// setStrength weakens txn's hold of key to strength (0: releases it):
// ROLLBACK TO SAVEPOINT gives back what was taken after the savepoint.
func (lt *LockTable) setStrength(txn uint64, key string, strength mvcc.Strength) {
	s := lt.shard(key)
	s.Lock()
	lt.setStrengthLocked(s, txn, key, strength)
	s.Unlock()
}

func (lt *LockTable) setStrengthLocked(s *lockShard, txn uint64, key string, strength mvcc.Strength) {
	l, ok := s.held[key]
	if !ok {
		return
	}
	for i, h := range l.holders {
		if h.txn != txn || h.strength <= strength && strength != 0 {
			continue
		}
		if strength == 0 {
			l.holders = append(l.holders[:i], l.holders[i+1:]...)
		} else {
			l.holders[i].strength = strength
		}
		close(l.changed)
		if len(l.holders) == 0 {
			delete(s.held, key)
		} else {
			l.changed = make(chan struct{})
		}
		return
	}
}

// tryAcquire locks key exclusively for txn if it is free, without waiting
// and without entering the wait-for graph. held reports whether txn holds
// the lock now; taken whether it took it just now.
func (lt *LockTable) tryAcquire(txn uint64, pid uint32, key string) (taken, held bool) {
	prev, err := lt.acquireStrength(context.Background(), txn, pid, key, mvcc.Update, waitNone)
	if err != nil {
		return false, false
	}
	return prev == 0, true
}

// LockInfo is one key lock for pg_locks: held by transaction Txn of
// session PID (Granted), or awaited by it while Holder holds it.
type LockInfo struct {
	Key     string
	Txn     uint64
	PID     uint32
	Granted bool
	Holder  uint64 // for a waiter: the transaction it waits for
	// Strength is the row lock's strength held or asked for: FOR UPDATE
	// for every write, the locking clause's for a SELECT FOR ...
	Strength mvcc.Strength
}

// list returns the locks held and awaited now; each shard and the graph
// are read under their own mutex, so the list is a close, not an atomic,
// picture.
func (lt *LockTable) list() []LockInfo {
	var out []LockInfo
	for i := range lt.shards {
		s := &lt.shards[i]
		s.Lock()
		for k, l := range s.held {
			for _, h := range l.holders {
				out = append(out, LockInfo{Key: k, Txn: h.txn, PID: h.pid, Granted: true, Strength: h.strength})
			}
		}
		s.Unlock()
	}
	lt.graph.Lock()
	for _, w := range lt.graph.waiting {
		out = append(out, w)
	}
	lt.graph.Unlock()
	return out
}

// Span locks (Txn.LockSpan): a bulk load makes itself the only writer of a
// key span while it checks its keys against the committed data and
// ingests them. Key locks are taken first and the spans checked after, and
// a span is registered before the held key locks inside it are looked
// for, so a writer and a span owner always see each other: the writer
// gives its new key lock back and waits for the span, or the span owner
// waits for the writer's transaction.

type spanLock struct {
	owner      uint64
	pid        uint32
	start, end string
	released   chan struct{}
}

type spanLocks struct {
	sync.Mutex
	list []*spanLock
	n    atomic.Int32
}

// foreignSpan returns the span lock of another transaction covering key.
func (lt *LockTable) foreignSpan(txn uint64, key string) *spanLock {
	if lt.spans.n.Load() == 0 {
		return nil
	}
	lt.spans.Lock()
	defer lt.spans.Unlock()
	for _, sl := range lt.spans.list {
		if sl.owner != txn && key >= sl.start && key < sl.end {
			return sl
		}
	}
	return nil
}

// acquireSpan registers [start, end) for txn and waits for the other
// transactions holding key locks inside it to end.
func (lt *LockTable) acquireSpan(ctx context.Context, txn uint64, pid uint32, start, end string) (*spanLock, error) {
	for {
		// Two span owners over one span: the later waits for the earlier.
		if other := lt.overlappingSpan(txn, start, end); other != nil {
			if err := lt.wait(ctx, LockInfo{Key: start, Txn: txn, PID: pid, Holder: other.owner}, other.released); err != nil {
				return nil, err
			}
			continue
		}
		lt.spans.Lock()
		if lt.overlappingSpanLocked(txn, start, end) != nil {
			lt.spans.Unlock()
			continue
		}
		sl := &spanLock{owner: txn, pid: pid, start: start, end: end, released: make(chan struct{})}
		lt.spans.list = append(lt.spans.list, sl)
		lt.spans.n.Add(1)
		lt.spans.Unlock()
		for {
			holder, ch, key := lt.heldIn(txn, start, end)
			if ch == nil {
				return sl, nil
			}
			if err := lt.wait(ctx, LockInfo{Key: key, Txn: txn, PID: pid, Holder: holder}, ch); err != nil {
				lt.releaseSpan(sl)
				return nil, err
			}
		}
	}
}

func (lt *LockTable) overlappingSpan(txn uint64, start, end string) *spanLock {
	lt.spans.Lock()
	defer lt.spans.Unlock()
	return lt.overlappingSpanLocked(txn, start, end)
}

func (lt *LockTable) overlappingSpanLocked(txn uint64, start, end string) *spanLock {
	for _, sl := range lt.spans.list {
		if sl.owner != txn && start < sl.end && sl.start < end {
			return sl
		}
	}
	return nil
}

// heldIn finds a key lock inside [start, end) held by another transaction.
func (lt *LockTable) heldIn(txn uint64, start, end string) (holder uint64, released chan struct{}, key string) {
	for i := range lt.shards {
		s := &lt.shards[i]
		s.Lock()
		for k, l := range s.held {
			if k < start || k >= end {
				continue
			}
			for _, h := range l.holders {
				if h.txn != txn {
					s.Unlock()
					return h.txn, l.changed, k
				}
			}
		}
		s.Unlock()
	}
	return 0, nil, ""
}

func (lt *LockTable) releaseSpan(sl *spanLock) {
	lt.spans.Lock()
	for i, x := range lt.spans.list {
		if x == sl {
			lt.spans.list = append(lt.spans.list[:i], lt.spans.list[i+1:]...)
			lt.spans.n.Add(-1)
			close(sl.released)
			break
		}
	}
	lt.spans.Unlock()
}
