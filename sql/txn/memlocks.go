package txn

import (
	"context"
	"sync"

	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// One-phase transactions (CockroachDB's 1PC; issue 16 item 9).
//
// A transaction that runs as one statement (or one protocol cycle) outside
// a transaction block and commits all its writes in one storage batch
// (SetOnePhase) leaves nothing in the store that a crash could leave half
// done: before its commit nothing of it is in the store, after it all is.
// Its row locks are therefore not lock records but holds in memory, in the
// latch shard of their key (latchShard.mem), which saves two Pebble writes
// per row (the record and its deletion) and a transaction record.
// Everything else stays as for records: writers of a key meet each other
// under the key's latch whatever kind of lock each holds (a record-holding
// transaction's tryRecord looks at the memory holds first; a one-phase
// transaction's tryMem looks at the memory holds and then, if any live
// transaction may hold records, at the store with mvcc.CheckLock), waiters
// queue on the holder's channel in the same wait-for graph (deadlocks,
// lock_timeout, NOWAIT, SKIP LOCKED), and pg_locks lists the memory holds
// with the records. A one-phase transaction that turns into a block (BEGIN
// after a write in one protocol cycle) writes records for its holds first
// (Txn.KeepLocksInStore).
//
// Invariant: a key's memory holds change only under its latch, and a
// waiter takes the holder's channel under that latch, so a release (holds
// removed under the latch, then the signal) is never missed.

// latchShard is one latch of the lock table and the memory holds of the
// keys that hash to it.
type latchShard struct {
	sync.Mutex
	mem map[string][]memHold
	// records counts the lock records live transactions hold on the
	// shard's keys: raised under the latch when one is written
	// (tryRecord, KeepLocksInStore), lowered after one is deleted
	// (uncount). While it is 0, a one-phase locker of a key of the shard
	// needs no look at the store: a record there could only be an
	// orphan's, which holds nothing.
	records int
}

// memHold is one in-memory hold of a key: as with records, one per
// strength taken, so that a strengthening is undone by removing its own
// hold.
type memHold struct {
	owner    *lockOwner
	strength mvcc.Strength
}

// conflict returns another owner than o holding key in memory in a
// strength that conflicts with strength (the latch is held).
func (sh *latchShard) conflict(o *lockOwner, key []byte, strength mvcc.Strength) *lockOwner {
	for _, h := range sh.mem[string(key)] {
		if h.owner != o && h.strength.Conflicts(strength) {
			return h.owner
		}
	}
	return nil
}

// remove drops o's hold of key at strength (the latch is held).
func (sh *latchShard) remove(o *lockOwner, key string, strength mvcc.Strength) {
	hs := sh.mem[key]
	for i, h := range hs {
		if h.owner == o && h.strength == strength {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(sh.mem, key)
	} else {
		sh.mem[key] = hs
	}
}

// tryMem adds o's memory hold of key (k: the same as a string, which the
// hold keeps) at strength under the key's latch, or returns what stops
// it: another transaction's memory hold (holder, with its channel taken
// under the latch) or a lock record or intent in the store (conflict).
func (lt *LockTable) tryMem(o *lockOwner, key []byte, k string, strength mvcc.Strength) (holder *lockOwner, ch chan struct{}, conflict *mvcc.LockConflictError, err error) {
	sh := lt.latch(key)
	sh.Lock()
	defer sh.Unlock()
	if h := sh.conflict(o, key, strength); h != nil {
		return h, h.changedChan(), nil, nil
	}
	// Records are counted under the latch they are written under
	// (latchShard.records): with none counted, any record of this key in
	// the store is an orphan, which holds nothing. (Intents, once blocks
	// write them, must be counted the same way, and must not outlive
	// their transaction in a running process: an orphan intent would sit
	// under the one-phase commit's version. Recover removes those of a
	// crash.)
	if sh.records > 0 {
		lce, err := mvcc.CheckLock(lt.eng.LocalReader(), key, strength)
		if err != nil || lce != nil {
			return nil, nil, lce, err
		}
	}
	if sh.mem == nil {
		sh.mem = map[string][]memHold{}
	}
	sh.mem[k] = append(sh.mem[k], memHold{owner: o, strength: strength})
	return nil, nil, nil, nil
}

// dropMem removes o's memory hold of key at strength.
func (lt *LockTable) dropMem(o *lockOwner, key string, strength mvcc.Strength) {
	sh := lt.latch([]byte(key))
	sh.Lock()
	sh.remove(o, key, strength)
	sh.Unlock()
}

// acquireMem takes o's memory hold of key at strength, waiting (or not:
// policy) while another transaction holds the key in a conflicting
// strength, in memory or by a record. k is key as a string, which the
// caller has made already (one allocation a lock instead of two).
func (lt *LockTable) acquireMem(ctx context.Context, o *lockOwner, key []byte, k string, strength mvcc.Strength, policy waitPolicy) error {
	for {
		holder, ch, conflict, err := lt.tryMem(o, key, k, strength)
		if err != nil {
			return err
		}
		if holder == nil && conflict == nil {
			sl := lt.foreignSpan(o.local, k)
			if sl == nil {
				return nil
			}
			// A bulk load owns the span: give the hold back and wait.
			lt.dropMem(o, k, strength)
			o.signal() // as acquireStrength does: the span's owner looks again
			if policy == waitNone {
				return errWouldBlock
			}
			if err := lt.wait(ctx, LockInfo{Key: k, Txn: o.local, PID: o.pid, Holder: sl.owner, Strength: strength}, sl.released); err != nil {
				return err
			}
			continue
		}
		if conflict != nil {
			if holder, ch, err = lt.holderOf(conflict); err != nil {
				return err
			}
			if holder == nil {
				continue // an orphan, removed: look again
			}
		}
		if policy == waitNone {
			return errWouldBlock
		}
		if err := lt.wait(ctx, LockInfo{Key: k, Txn: o.local, PID: o.pid, Holder: holder.local, Strength: strength}, ch); err != nil {
			return err
		}
	}
}

// memHeldIn finds a memory hold inside [start, end) of another
// transaction than txn (for a span lock, which waits for it).
func (lt *LockTable) memHeldIn(txn uint64, start, end string) (holder *lockOwner, ch chan struct{}, key string) {
	for i := range lt.latches {
		sh := &lt.latches[i]
		sh.Lock()
		for k, hs := range sh.mem {
			if k < start || k >= end {
				continue
			}
			for _, h := range hs {
				if h.owner.local != txn {
					holder, ch, key = h.owner, h.owner.changedChan(), k
					sh.Unlock()
					return holder, ch, key
				}
			}
		}
		sh.Unlock()
	}
	return nil, nil, ""
}

// memList appends pg_locks' rows for the memory holds: one per key and
// transaction, at its strongest.
func (lt *LockTable) memList(out []LockInfo) []LockInfo {
	for i := range lt.latches {
		sh := &lt.latches[i]
		sh.Lock()
		for k, hs := range sh.mem {
			start := len(out)
		holds:
			for _, h := range hs {
				for j := start; j < len(out); j++ {
					if out[j].Txn == h.owner.local {
						out[j].Strength = max(out[j].Strength, h.strength)
						continue holds
					}
				}
				out = append(out, LockInfo{Key: k, Txn: h.owner.local, PID: h.owner.pid, Granted: true, Strength: h.strength})
			}
		}
		sh.Unlock()
	}
	return out
}

// SetOnePhase makes t a one-phase transaction: its row locks are held in
// memory, not as lock records (see above). The caller promises that t
// runs outside a transaction block and commits its writes in one batch
// (Commit, CommitWith); call it before t's first lock. A transaction that
// becomes a block calls KeepLocksInStore.
func (t *Txn) SetOnePhase() {
	if t.owner == nil {
		t.onePhase = true
	}
}

// OnePhase reports whether t holds its locks in memory (SetOnePhase).
func (t *Txn) OnePhase() bool { return t.onePhase }

// KeepLocksInStore ends t's one-phase mode (a transaction block begins in
// it): every memory hold it has becomes a lock record, written with its
// transaction record in one batch before the holds go, and its later locks
// are records.
func (t *Txn) KeepLocksInStore() error {
	if !t.onePhase {
		return nil
	}
	t.onePhase = false
	if t.owner == nil {
		return nil
	}
	o := t.owner
	o.id = mvcc.NewTxnID()
	t.meta = mvcc.TxnMeta{ID: o.id, Anchor: []byte(t.keys[0].key)}
	rec, err := t.pendingRecord()
	if err != nil {
		return err
	}
	// Registered before the records exist, as register requires. The
	// memory holds keep the keys meanwhile, so the records are written
	// without a check (mvcc.PutLock).
	t.m.locks.adopt(o)
	if err := t.writeHeldRecords(rec); err != nil {
		// Still one-phase, with its memory holds; a record the failed
		// commit may have left is an orphan (its owner is not
		// registered), removed on sight.
		t.m.locks.unregister(o)
		t.onePhase = true
		return err
	}
	t.recorded = true
	for _, h := range t.keys {
		sh := t.m.locks.latch([]byte(h.key))
		sh.Lock()
		sh.remove(o, h.key, h.strength)
		sh.records++
		o.count(t.m.locks.latchIndex([]byte(h.key)), 1)
		sh.Unlock()
	}
	return nil
}

// uncount lowers the record count of key's latch shard, and o's part in
// it, after one of o's records was deleted.
func (lt *LockTable) uncount(o *lockOwner, key []byte) {
	i := lt.latchIndex(key)
	sh := &lt.latches[i]
	sh.Lock()
	sh.records--
	o.count(i, -1)
	sh.Unlock()
}

// writeHeldRecords writes a lock record for each hold of t.keys and the
// transaction record rec, in one unsynced batch.
func (t *Txn) writeHeldRecords(rec *mvcc.TxnRecord) error {
	b := t.m.eng.NewLocalOp()
	defer b.Close()
	for _, h := range t.keys {
		if err := mvcc.PutLock(b, []byte(h.key), &t.meta, h.strength); err != nil {
			return err
		}
	}
	if err := mvcc.PutTxnRecord(b, t.meta.Anchor, t.meta.ID, rec); err != nil {
		return err
	}
	return b.CommitNoSync()
}

// memOwner returns t's owner for memory holds: not registered under an
// mvcc id (it writes no records), its node in the wait-for graph t.id.
func (t *Txn) memOwner() *lockOwner {
	if t.owner == nil {
		t.owner = &lockOwner{local: t.id, pid: t.pid, changed: make(chan struct{})}
		if t.held == nil { // ReserveLocks may have sized it
			t.held = map[string]mvcc.Strength{}
		}
	}
	return t.owner
}

// releaseMem removes t's memory holds keys[from:] (newest first) and wakes
// its waiters.
func (t *Txn) releaseMem(from int) {
	for i := len(t.keys) - 1; i >= from; i-- {
		h := t.keys[i]
		t.m.locks.dropMem(t.owner, h.key, h.strength)
	}
	t.owner.signal()
}
