package txn

import (
	"context"
	"sync"
	"time"

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
	}
}

type lockShard struct {
	sync.Mutex
	held map[string]*lock
}

type lock struct {
	owner uint64
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
func (lt *LockTable) acquire(ctx context.Context, txn uint64, key string) (bool, error) {
	s := lt.shard(key)
	for {
		s.Lock()
		l, ok := s.held[key]
		if !ok {
			s.held[key] = &lock{owner: txn, released: make(chan struct{})}
			s.Unlock()
			return true, nil
		}
		if l.owner == txn {
			s.Unlock()
			return false, nil
		}
		ch := l.released
		owner := l.owner
		s.Unlock()
		if err := lt.wait(ctx, txn, owner, ch); err != nil {
			return false, err
		}
	}
}

func (lt *LockTable) wait(ctx context.Context, txn, owner uint64, released chan struct{}) error {
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
	lt.graph.Unlock()
	defer func() {
		lt.graph.Lock()
		delete(lt.graph.waitsFor, txn)
		lt.graph.Unlock()
	}()
	var timeout <-chan time.Time
	if d := lockTimeout(ctx); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
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
func (lt *LockTable) tryAcquire(txn uint64, key string) (taken, held bool) {
	s := lt.shard(key)
	s.Lock()
	defer s.Unlock()
	l, ok := s.held[key]
	if !ok {
		s.held[key] = &lock{owner: txn, released: make(chan struct{})}
		return true, true
	}
	return false, l.owner == txn
}
