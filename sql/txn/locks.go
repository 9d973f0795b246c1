package txn

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// lockShards spreads the lock table over several mutexes so that writers of
// different keys rarely contend on the table itself.
const lockShards = 64

// LockTable holds the exclusive key locks of all open transactions.
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

type lock struct {
	owner uint64
	pid   uint32 // the owner's session (pg_locks)
	// released is closed when the owner releases the lock.
	released chan struct{}
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

// acquire locks key for txn, waiting while another transaction holds it.
// It reports whether the lock was newly taken (false if txn already held it).
func (lt *LockTable) acquire(ctx context.Context, txn uint64, pid uint32, key string) (bool, error) {
	s := lt.shard(key)
	for {
		s.Lock()
		l, ok := s.held[key]
		if !ok {
			l = &lock{owner: txn, pid: pid, released: make(chan struct{})}
			s.held[key] = l
			s.Unlock()
			sl := lt.foreignSpan(txn, key)
			if sl == nil {
				return true, nil
			}
			// A bulk load owns the span: give the key back and wait.
			s.Lock()
			delete(s.held, key)
			close(l.released)
			s.Unlock()
			if err := lt.wait(ctx, LockInfo{Key: key, Txn: txn, PID: pid, Holder: sl.owner}, sl.released); err != nil {
				return false, err
			}
			continue
		}
		if l.owner == txn {
			s.Unlock()
			return false, nil
		}
		ch := l.released
		owner := l.owner
		s.Unlock()
		if err := lt.wait(ctx, LockInfo{Key: key, Txn: txn, PID: pid, Holder: owner}, ch); err != nil {
			return false, err
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
		if l, ok := s.held[key]; ok && l.owner == txn {
			delete(s.held, key)
			close(l.released)
		}
		s.Unlock()
	}
}

// tryAcquire locks key for txn if it is free, without waiting and without
// entering the wait-for graph. held reports whether txn holds the lock
// now; taken whether it took it just now.
func (lt *LockTable) tryAcquire(txn uint64, pid uint32, key string) (taken, held bool) {
	s := lt.shard(key)
	s.Lock()
	defer s.Unlock()
	l, ok := s.held[key]
	if !ok {
		if lt.foreignSpan(txn, key) != nil {
			return false, false
		}
		s.held[key] = &lock{owner: txn, pid: pid, released: make(chan struct{})}
		return true, true
	}
	return false, l.owner == txn
}

// LockInfo is one key lock for pg_locks: held by transaction Txn of
// session PID (Granted), or awaited by it while Holder holds it.
type LockInfo struct {
	Key     string
	Txn     uint64
	PID     uint32
	Granted bool
	Holder  uint64 // for a waiter: the transaction it waits for
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
			out = append(out, LockInfo{Key: k, Txn: l.owner, PID: l.pid, Granted: true})
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
			if l.owner != txn && k >= start && k < end {
				s.Unlock()
				return l.owner, l.released, k
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
