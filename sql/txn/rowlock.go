package txn

import (
	"context"
	"errors"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// heldKey is one lock record a transaction wrote: key at strength, over a
// hold of prev before (0: none), what ROLLBACK TO SAVEPOINT restores by
// deleting the record.
type heldKey struct {
	key      string
	prev     mvcc.Strength
	strength mvcc.Strength
	// mem: a write hold in memory, not a record (writeholds.go).
	mem bool
}

// LockStrength takes the lock of key at strength (PostgreSQL's row lock
// strengths: every write takes FOR UPDATE or FOR NO KEY UPDATE, a locking
// read its clause's) for the rest of the transaction, waiting while another
// transaction holds it in a conflicting strength. A hold the transaction
// already has is strengthened, never weakened.
//
// The lock is a lock record in the store (mvcc.AcquireLock; locks.go): a
// record per strength taken, so that a strengthening is undone by deleting
// its own record.
func (t *Txn) LockStrength(ctx context.Context, key []byte, strength mvcc.Strength) error {
	return t.lockKey(ctx, key, strength, waitBlock)
}

// ErrLockNotAvailable is TryLockStrength's answer when another transaction
// holds the key in a conflicting strength.
var ErrLockNotAvailable = errors.New("txn: row lock held by another transaction")

// TryLockStrength is LockStrength without waiting: when another transaction
// holds key in a conflicting strength it fails at once with
// ErrLockNotAvailable (NOWAIT, SKIP LOCKED).
func (t *Txn) TryLockStrength(key []byte, strength mvcc.Strength) error {
	err := t.lockKey(context.Background(), key, strength, waitNone)
	if errors.Is(err, errWouldBlock) {
		return ErrLockNotAvailable
	}
	return err
}

func (t *Txn) lockKey(ctx context.Context, key []byte, strength mvcc.Strength, policy waitPolicy) error {
	k := string(key)
	prev := t.held[k]
	if prev >= strength {
		return nil // no store access for a key the transaction holds
	}
	if t.onePhase {
		if err := t.m.locks.acquireMem(ctx, t.memOwner(), key, k, strength, policy); err != nil {
			return err
		}
		t.held[k] = strength
		t.keys = append(t.keys, heldKey{key: k, prev: prev, strength: strength})
		return nil
	}
	o := t.lockOwner(key)
	if t.writeHolds && strength == mvcc.Update && prev == 0 && t.recorded {
		held, err := t.writeHold(ctx, key, policy)
		if err != nil || !held {
			return err
		}
		t.held[k] = strength
		t.keys = append(t.keys, heldKey{key: k, strength: strength, mem: true})
		return nil
	}
	var rec *mvcc.TxnRecord
	if !t.recorded {
		var err error
		if rec, err = t.pendingRecord(); err != nil {
			return err
		}
	}
	if err := t.m.locks.acquireStrength(ctx, o, &t.meta, rec, &t.recorded, key, strength, policy); err != nil {
		return err
	}
	t.held[k] = strength
	t.keys = append(t.keys, heldKey{key: k, prev: prev, strength: strength})
	return nil
}

// lockOwner registers the transaction as a holder of lock records at its
// first lock, with a fresh mvcc id; the first key locked is its anchor
// (where its transaction record will live).
func (t *Txn) lockOwner(first []byte) *lockOwner {
	if t.owner == nil {
		t.meta = mvcc.TxnMeta{ID: mvcc.NewTxnID(), Anchor: append([]byte(nil), first...)}
		t.owner = t.m.locks.register(t.meta.ID, t.id, t.pid)
		if t.held == nil { // ReserveLocks may have sized it
			t.held = map[string]mvcc.Strength{}
		}
	}
	return t.owner
}

// recordKeys returns the engine keys of the lock records keys[from:].
func (t *Txn) recordKeys(from int) [][]byte {
	out := make([][]byte, 0, len(t.keys)-from)
	for _, h := range t.keys[from:] {
		if !h.mem {
			out = append(out, mvcc.LockKey([]byte(h.key), h.strength, t.meta.ID))
		}
	}
	return out
}

// giveBackLocks deletes the lock records written after the first n
// (ROLLBACK TO SAVEPOINT): a key strengthened since goes back to the
// strength it had at the savepoint, a key locked since is free again.
func (t *Txn) giveBackLocks(n int) error {
	if len(t.keys) <= n {
		return nil
	}
	if t.onePhase {
		t.releaseMem(n)
		t.forgetHolds(n)
		return nil
	}
	recs := t.recordKeys(n)
	err := t.m.locks.giveBack(recs...)
	for _, h := range t.keys[n:] {
		if h.mem {
			t.m.locks.dropMem(t.owner, h.key, h.strength)
		} else {
			t.m.locks.uncount(t.owner, []byte(h.key))
		}
	}
	t.forgetHolds(n)
	t.owner.signal()
	return err
}

// forgetHolds drops keys[n:] from the transaction's holds (held goes back
// to the strengths before them).
func (t *Txn) forgetHolds(n int) {
	for i := len(t.keys) - 1; i >= n; i-- {
		h := t.keys[i]
		if h.prev == 0 {
			delete(t.held, h.key)
		} else {
			t.held[h.key] = h.prev
		}
	}
	t.keys = t.keys[:n]
}

// releaseInBatch settles the transaction (settle.go) in its commit batch,
// so that its locks and record go with the commit, under its one fsync;
// releaseLocks then only ends the registration.
func (t *Txn) releaseInBatch() error {
	if t.onePhase {
		return nil // nothing in the store (memlocks.go)
	}
	return t.settle(t.batch.SingleDeleteEngineKey)
}

// releaseLocks deletes every lock record of the transaction (unless its
// commit batch did: inBatch) and ends its registration, which wakes its
// waiters. A failed deletion leaves orphans, which the next transaction
// to meet them removes (holderOf), so the error only tells the caller.
func (t *Txn) releaseLocks(inBatch bool) error {
	if t.owner == nil {
		return nil
	}
	var err error
	if t.onePhase {
		// Its memory holds go after its commit is applied, so a waiter
		// that gets the key reads the committed versions.
		t.releaseMem(0)
	} else {
		switch {
		case inBatch:
		case t.batch.HasIntents():
			// Not committed: the intents go, then the locks and the
			// record, with the last removal batch.
			err = t.batch.RollbackIntents(t.settleIntents)
		default:
			err = t.settleAlone()
		}
		// Deleted (or, if that failed, orphans, which hold nothing).
		// Write holds go now that the commit is applied.
		for _, h := range t.keys {
			if h.mem {
				t.m.locks.dropMem(t.owner, h.key, h.strength)
			} else {
				t.m.locks.uncount(t.owner, []byte(h.key))
			}
		}
		t.dropLandedHolds()
		t.uncountIntentLocks()
		t.m.locks.unregister(t.owner)
	}
	t.keys = nil
	t.held = nil
	t.recorded = false
	t.owner = nil
	return err
}

// ChangedSince reports whether key has a committed version newer than the
// transaction's current read timestamp: a row the statement read, then
// locked, was changed (or deleted) by a transaction that committed after
// the statement's snapshot. READ COMMITTED then reads the row again;
// REPEATABLE READ fails (ErrConcurrentUpdate).
func (t *Txn) ChangedSince(key []byte) (bool, error) {
	ts, ok, err := t.batch.LatestVersion(key)
	if err != nil || !ok {
		return false, err
	}
	return t.batch.ReadTimestamp().Less(ts), nil
}

// ErrConcurrentUpdate is REPEATABLE READ's error for a row changed after
// the transaction's snapshot (PostgreSQL's first-updater-wins).
func ErrConcurrentUpdate() error {
	return sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update")
}
