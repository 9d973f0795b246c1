package txn

import (
	"context"

	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Write holds (issue 16 item 9, the cost of big blocks).
//
// A block's lock is a lock record, written by a Pebble commit of its own
// under the key's latch and deleted again when the key's write moves to
// an intent (dropIntentLocks): for a COPY of millions of rows inside
// BEGIN ... COMMIT that is two store writes and a commit per row that
// the intent makes useless. With write holds on (SetWriteHolds; COPY's
// block path, sql/copy.go, and a block's INSERT of more than one row,
// INSERT ... SELECT included, sql/write.go: BenchmarkInsertSelectBlock
// shows 1,000 rows go from 72-120M to 2.5-2.6M cpu-ns), the FOR UPDATE lock a write takes on a key the
// transaction does not hold yet is a hold in memory, in the key's latch
// shard, as a one-phase transaction's (memlocks.go): writers and lockers
// of every kind meet it there under the latch and wait for it in the same
// wait-for graph. The next flush of the block's writes (FlushIntents)
// turns every hold into data: the key's intent when the flush wrote the
// key after the newest savepoint (the intent is the lock), else a lock
// record written in the flush's batch; the memory hold goes once that
// batch has landed (heldKey.mem, memDrop). Until then a hold guards a
// write that is itself only in the block's batch, in memory: a crash
// loses both, and nothing of the block is committed. ROLLBACK TO
// SAVEPOINT gives holds back like records (by position in keys); the end
// of the transaction drops those left, after its commit is applied.
//
// The transaction's first lock is always a record (it writes the
// transaction record with it, which a flush needs).

// SetWriteHolds turns write holds on or off for the transaction's next
// locks (see above). It has no effect on a one-phase transaction, whose
// locks are all in memory.
func (t *Txn) SetWriteHolds(on bool) { t.writeHolds = on }

// writeHold takes key's FOR UPDATE lock as a memory hold of t's owner,
// waiting (or not: policy) while another transaction holds the key in
// memory or in the store. t holds nothing on key (Txn.held). A key that
// holds t's own intent (its lock record was dropped for it) is held
// already: no hold is added, and held reports false.
func (t *Txn) writeHold(ctx context.Context, key []byte, policy waitPolicy) (held bool, err error) {
	lt, o := t.m.locks, t.owner
	for {
		holder, ch, conflict, own, err := lt.tryWriteHold(o, key)
		if err != nil {
			return false, err
		}
		if own {
			return false, nil
		}
		if holder == nil && conflict == nil {
			sl := lt.foreignSpan(o.local, string(key))
			if sl == nil {
				return true, nil
			}
			// A bulk load owns the span: give the hold back and wait
			// (as acquireMem does).
			lt.dropMem(o, string(key), mvcc.Update)
			o.signal()
			if policy == waitNone {
				return false, errWouldBlock
			}
			if err := lt.wait(ctx, LockInfo{Key: string(key), Txn: o.local, PID: o.pid, Holder: sl.owner, Strength: mvcc.Update}, sl.released); err != nil {
				return false, err
			}
			continue
		}
		if conflict != nil {
			if holder, ch, err = lt.holderOf(conflict); err != nil {
				return false, err
			}
			if holder == nil {
				continue // an orphan, removed: look again
			}
		}
		if policy == waitNone {
			return false, errWouldBlock
		}
		if err := lt.wait(ctx, LockInfo{Key: string(key), Txn: o.local, PID: o.pid, Holder: holder.local, Strength: mvcc.Update}, ch); err != nil {
			return false, err
		}
	}
}

// tryWriteHold is tryMem for a transaction that also holds records and
// intents (o is registered under its mvcc id): the store's answer is
// looked at whenever the latch shard counts records, and a conflict that
// is o's own intent means o holds the key already (own).
func (lt *LockTable) tryWriteHold(o *lockOwner, key []byte) (holder *lockOwner, ch chan struct{}, conflict *mvcc.LockConflictError, own bool, err error) {
	i := lt.latchIndex(key)
	sh := &lt.latches[i]
	sh.Lock()
	defer sh.Unlock()
	if h := sh.conflict(o, key, mvcc.Update); h != nil {
		return h, h.changedChan(), nil, false, nil
	}
	// Only other transactions' records and intents can stop o; when the
	// shard counts none, a record or intent of another transaction on the
	// key is an orphan's, which holds nothing (as tryMem reasons). o's
	// own intent on the key (a key written again) then goes unseen: the
	// hold is taken, and given back like any other (held, not held, the
	// key is o's either way).
	if sh.records > o.countedIn(i) {
		lce, err := mvcc.CheckLock(lt.eng.LocalReader(), key, mvcc.Update)
		if err != nil {
			return nil, nil, nil, false, err
		}
		if lce != nil {
			if lce.Txn.ID == o.id {
				return nil, nil, nil, true, nil
			}
			return nil, nil, lce, false, nil
		}
	}
	if sh.mem == nil {
		sh.mem = map[string][]memHold{}
	}
	k := string(key)
	sh.mem[k] = append(sh.mem[k], memHold{owner: o, strength: mvcc.Update})
	return nil, nil, nil, false, nil
}

// holdToData is the flush's part for the write holds (called from
// dropIntentLocks with the flush's batch w): a hold of a key the flush
// wrote after the newest savepoint becomes that intent (intent; drop: the
// entry goes); any other hold becomes a lock record, through put. Either way the
// latch shard counts it from now on, and the memory hold is queued in
// memDrop, to go once w has landed.
func (t *Txn) holdToData(h *heldKey, intent bool, put func(key []byte) error) (drop bool, err error) {
	i := t.m.locks.latchIndex([]byte(h.key))
	sh := &t.m.locks.latches[i]
	if !intent {
		if err := put([]byte(h.key)); err != nil {
			return false, err
		}
	}
	sh.Lock()
	sh.records++
	t.owner.count(i, 1)
	sh.Unlock()
	t.memDrop = append(t.memDrop, h.key)
	h.mem = false
	if intent {
		if t.intentLocks == nil {
			t.intentLocks = new([lockShards]int)
		}
		t.intentLocks[t.m.locks.latchIndex([]byte(h.key))]++
		return true, nil
	}
	return false, nil
}

// dropLandedHolds removes the memory holds whose keys a landed flush
// turned into data (memDrop).
func (t *Txn) dropLandedHolds() {
	if len(t.memDrop) == 0 {
		return
	}
	for _, k := range t.memDrop {
		t.m.locks.dropMem(t.owner, k, mvcc.Update)
	}
	clear(t.memDrop)
	t.memDrop = t.memDrop[:0]
	if cap(t.memDrop) > 1<<16 {
		t.memDrop = nil
	}
}
