package txn

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Writes as intents (issue 16 item 9, step 2; storage/intents.go).
//
// A transaction block buffers its writes in its batch while they are
// small: a commit of one batch is the cheapest there is. Once the batch
// passes IntentFlushBytes, the transaction moves its row writes into the
// store as intents (storage.Batch.FlushIntents), between two writes, and
// goes on with an empty batch; its reads see its intents, nobody else's
// do. So a block's memory for its writes stays about IntentFlushBytes
// whatever it writes (COPY of millions of rows inside BEGIN ... COMMIT).
//
// The transaction record (settle.go) lists the spans that hold the
// intents, rewritten with each flush in the flush's batch. The commit
// (storage's commitIntents) writes the record COMMITTED with the commit
// timestamp under the commit's one fsync, then resolves the intents into
// versions at that timestamp, and the lock records and the record go with
// the last resolution batch; reads at or above the commit timestamp wait
// meanwhile. A rollback removes the intents, then settles; ROLLBACK TO
// SAVEPOINT removes those flushed after the savepoint
// (storage.Engine.RollbackTo). After kill -9, Manager.Recover resolves the
// intents of a COMMITTED record and removes those of a PENDING one.
//
// Only transactions that hold lock records flush (every write locks its
// key first, so a writing block does): their record exists and their id
// is known to the lock table, so that another transaction meeting one of
// their intents waits for them. One-phase transactions never flush (they
// commit in one batch by definition).
//
// On a replicated engine (a cluster) the same code runs: storage sends the
// flushes, resolutions and removals through the replicator
// (storage/intents.go, "On a replicated engine"), the record rewritten by
// each flush goes with its intents to the anchor's shard group, and the
// lock table's removals of a dead transaction's intent or record go
// through it too (LocalBatch.CommitShared; deleteSharedRecords for
// records that list intents, the only ones a flush replicated). A node
// that takes over serving runs Recover before SQL serves; it settles
// every record it finds, then ends storage's recovery hold on closed
// timestamps.

// IntentFlushBytes is the size of a block's batch past which its writes
// move to the store as intents. A variable for tests, which set it low to
// run every transaction through intents.
var IntentFlushBytes = 4 << 20

// PIVOTDB_INTENT_FLUSH_BYTES sets IntentFlushBytes, for tests that run a
// whole server or corpus with every block's writes as intents (0: flush
// after every write).
func init() {
	if v, ok := os.LookupEnv("PIVOTDB_INTENT_FLUSH_BYTES"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			panic(fmt.Sprintf("PIVOTDB_INTENT_FLUSH_BYTES=%q: want a byte count", v))
		}
		IntentFlushBytes = n
	}
}

// maybeFlush moves the batch's writes to intents when it grew by
// IntentFlushBytes since the last flush: what a flush leaves (system keys:
// catalog records of DDL in the block) does not make every later write
// flush.
func (t *Txn) maybeFlush() error {
	if t.batch.Len() < t.flushFloor+IntentFlushBytes {
		return nil
	}
	return t.FlushIntents()
}

// FlushIntents moves the transaction's buffered row writes into the store
// as intents, if it can (see above); otherwise it does nothing.
func (t *Txn) FlushIntents() error {
	if t.onePhase || t.owner == nil || !t.recorded || t.done || !t.batch.CanFlushIntents() {
		return nil
	}
	if !t.batch.HasIntents() {
		t.batch.SetIntentCommit(storage.IntentCommit{
			Flush:     t.putPendingRecord,
			Committed: t.putCommittedRecord,
			Last:      t.settleIntents,
			Stats:     t.m.intentStats(),
		})
	}
	if err := t.batch.FlushIntents(storage.IntentOwner{ID: t.meta.ID, Anchor: t.meta.Anchor}, t.putPendingRecord); err != nil {
		return err
	}
	t.dropLandedHolds()
	t.flushFloor = t.batch.Len()
	// The shard statistics of a transaction with intents are counted as
	// its commit resolves them (partition.IntentStats), not from its
	// Writes: forgetting them here keeps the block's memory flat.
	t.writes.Reset()
	return nil
}

// intentStats returns the counter of a resolution's shard statistics
// (nil without a shard manager: a test's bare engine).
func (m *Manager) intentStats() storage.IntentStats {
	if m.shards == nil {
		return nil
	}
	return m.shards.IntentStats()
}

// HasIntents reports whether the transaction moved writes to intents.
func (t *Txn) HasIntents() bool { return t.batch.HasIntents() }

// putPendingRecord rewrites the transaction's record PENDING with the
// spans of its intents, and lets the intents just flushed be the locks of
// their keys (dropIntentLocks).
func (t *Txn) putPendingRecord(w *storage.LocalBatch, spans []storage.Span, flushed [][]byte) error {
	rec, err := t.pendingRecord()
	if err != nil {
		return err
	}
	rec.LockSpans = spans
	if err := mvcc.PutTxnRecord(w, t.meta.Anchor, t.meta.ID, rec); err != nil {
		return err
	}
	return t.dropIntentLocks(w, flushed)
}

// dropIntentLocks deletes, into w (the flush's batch), the lock records of
// the keys that now hold the transaction's intents, and forgets them in
// memory: an intent is an exclusive lock of its key (mvcc.AcquireLock and
// CheckLock stop at another transaction's intent, and the lock table
// waits for its owner as for a record's). So a block's memory for its
// locks does not grow with the rows it writes either.
//
// The latch shards keep counting them (intentLocks), so that one-phase
// lockers of those shards keep looking at the store (memlocks.go) until
// the transaction ends.
//
// With savepoints open, only the records taken after the newest one go:
// ROLLBACK TO SAVEPOINT gives back the locks taken after its savepoint by
// their position in keys, and removes the intents flushed after it. A
// record taken after the newest savepoint was taken after every open one,
// and its key's intent (flushed now, at a sequence number above every
// savepoint's) goes with any rollback that would give the record back, so
// the record can go now. Positions before the newest savepoint do not
// move. A record taken before it stays: a rollback to the newest
// savepoint removes the intent but must leave that lock. (psql's
// ON_ERROR_ROLLBACK puts a savepoint before each statement: a COPY of
// millions of rows in such a block stays flat too.)
func (t *Txn) dropIntentLocks(w *storage.LocalBatch, flushed [][]byte) error {
	from := 0
	if n := len(t.savepoints); n > 0 {
		from = t.savepoints[n-1].keys
	}
	if len(flushed) == 0 {
		return nil
	}
	putLock := func(key []byte) error { return mvcc.PutLock(w, key, &t.meta, mvcc.Update) }
	// Write holds before the newest savepoint become records in place.
	for i := range t.keys[:from] {
		if h := &t.keys[i]; h.mem {
			if _, err := t.holdToData(h, false, putLock); err != nil {
				return err
			}
		}
	}
	if len(t.keys) <= from {
		return nil
	}
	set := make(map[string]struct{}, len(flushed))
	for _, k := range flushed {
		set[string(k)] = struct{}{}
	}
	// before is the strength a key was held at before its first dropped
	// record (0: none; with a savepoint open, a record taken before it).
	var before map[string]mvcc.Strength
	kept := t.keys[:from]
	for _, h := range t.keys[from:] {
		_, ok := set[h.key]
		if h.mem {
			// A write hold becomes the intent, or a record.
			drop, err := t.holdToData(&h, ok, putLock)
			if err != nil {
				return err
			}
			if !drop {
				kept = append(kept, h)
				continue
			}
			delete(t.held, h.key)
			continue
		}
		if !ok {
			kept = append(kept, h)
			continue
		}
		if err := w.SingleDelete(mvcc.LockKey([]byte(h.key), h.strength, t.meta.ID)); err != nil {
			return err
		}
		if from > 0 {
			if before == nil {
				before = map[string]mvcc.Strength{}
			}
			if _, seen := before[h.key]; !seen {
				before[h.key] = h.prev
			}
		}
		delete(t.held, h.key)
		if t.intentLocks == nil {
			t.intentLocks = new([lockShards]int)
		}
		t.intentLocks[t.m.locks.latchIndex([]byte(h.key))]++
	}
	for k, st := range before {
		if st != 0 {
			t.held[k] = st
		}
	}
	clear(t.keys[len(kept):])
	t.keys = kept
	if cap(t.keys) > 4*len(t.keys)+64 {
		t.keys = append([]heldKey(nil), t.keys...) // give the memory back
	}
	return nil
}

// uncountIntentLocks ends the latch shards' count of the transaction's
// intents (dropIntentLocks), once they are resolved or removed.
func (t *Txn) uncountIntentLocks() {
	if t.intentLocks == nil {
		return
	}
	for i, n := range t.intentLocks {
		if n == 0 {
			continue
		}
		sh := &t.m.locks.latches[i]
		sh.Lock()
		sh.records -= n
		t.owner.count(i, -int32(n))
		sh.Unlock()
		t.intentLocks[i] = 0
	}
}

// putCommittedRecord writes the record COMMITTED at ts: the commit point.
func (t *Txn) putCommittedRecord(w *storage.LocalBatch, ts hlc.Timestamp, spans []storage.Span) error {
	return mvcc.PutTxnRecord(w, t.meta.Anchor, t.meta.ID, &mvcc.TxnRecord{
		Status: mvcc.Committed, WriteTimestamp: ts, Heartbeat: ts, LockSpans: spans,
	})
}

// settleIntents deletes the lock records and the record into w (the last
// resolution or removal batch). The record was written more than once, so
// it goes with a Delete; each lock record was Set once.
func (t *Txn) settleIntents(w *storage.LocalBatch) error {
	recKey := string(mvcc.TxnRecordKey(t.meta.Anchor, t.meta.ID))
	return t.settle(func(k []byte) error {
		if string(k) == recKey {
			return w.Delete(k, nil)
		}
		return w.SingleDelete(k)
	})
}

// errIntentResolve is the error of a commit whose record is COMMITTED but
// whose intents could not all be resolved: PostgreSQL's "transaction
// resolution unknown" (the restart's recovery finishes it).
func errIntentResolve(err error) error {
	return &sqlerr.Error{Code: "08007", Message: "transaction resolution unknown: " + err.Error(),
		Hint: "The transaction is committed; its writes show once the server restarts."}
}

// recoverIntents finishes (COMMITTED) or undoes (PENDING, ABORTED) the
// intents of a transaction that did not end before its process did.
func (lt *LockTable) recoverIntents(id mvcc.TxnID, rec mvcc.TxnRecord) error {
	if len(rec.LockSpans) == 0 {
		return nil
	}
	var stats storage.IntentStats
	if lt.intentStats != nil {
		stats = lt.intentStats()
	}
	// On a replicated engine a chunk's proposal can be refused with
	// nothing written (40001: no leader yet, or the group too busy, as
	// at a takeover, while its groups elect): the resolution is
	// idempotent, so it runs again, for a bounded time, rather than fail
	// the node's recovery (and with it its SQL) at once. Only a definite
	// refusal is retried: a chunk whose outcome is unknown may still
	// apply, and running it again could count its statistics twice.
	deadline := time.Now().Add(recoverRetryFor)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		_, err := lt.eng.ResolveIntents(id, rec.LockSpans, rec.WriteTimestamp, rec.Status == mvcc.Committed, stats, nil)
		if err == nil || !lt.eng.Replicated() || sqlerr.Code(err) != sqlerr.SerializationFailure || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

// recoverRetryFor bounds recoverIntents's retries of a refused proposal.
const recoverRetryFor = 30 * time.Second

// intentList adds to pg_locks' rows the keys that live transactions hold
// by their intents (dropIntentLocks gave up their lock records), FOR
// UPDATE, found through their records' spans. A key a transaction also
// holds by a record is listed once, at the stronger.
func (lt *LockTable) intentList(out []LockInfo) ([]LockInfo, error) {
	type held struct {
		key string
		txn uint64
	}
	var seen map[held]int
	err := mvcc.ScanTxnRecords(lt.eng.LocalReader(), func(_ []byte, id mvcc.TxnID, rec mvcc.TxnRecord) error {
		o := lt.owner(id)
		if o == nil || len(rec.LockSpans) == 0 {
			return nil
		}
		if seen == nil {
			seen = make(map[held]int, len(out))
			for i, l := range out {
				seen[held{l.Key, l.Txn}] = i
			}
		}
		return lt.eng.Intents(id, rec.LockSpans, func(k []byte) error {
			if i, ok := seen[held{string(k), o.local}]; ok {
				out[i].Strength = mvcc.Update
				return nil
			}
			seen[held{string(k), o.local}] = len(out)
			out = append(out, LockInfo{Key: string(k), Txn: o.local, PID: o.pid, Granted: true, Strength: mvcc.Update})
			return nil
		})
	})
	return out, err
}

// finishCommitted resolves the intents of the dead transaction whose
// intent c met when its record is COMMITTED, and deletes the record; done
// is false when the record is not COMMITTED (the intent is to go).
func (lt *LockTable) finishCommitted(c *mvcc.LockConflictError) (done bool, err error) {
	rec, found, err := mvcc.GetTxnRecord(lt.eng.LocalReader(), c.Txn.Anchor, c.Txn.ID)
	if err != nil || !found || rec.Status != mvcc.Committed {
		return false, err
	}
	if err := lt.recoverIntents(c.Txn.ID, rec); err != nil {
		return false, err
	}
	return true, lt.deleteSharedRecords(mvcc.TxnRecordKey(c.Txn.Anchor, c.Txn.ID))
}
