package txn

import (
	"context"
	"errors"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// heldKey is one lock a transaction took, or strengthened: prev is the
// strength it held before (0: none), what ROLLBACK TO SAVEPOINT restores.
type heldKey struct {
	key  string
	prev mvcc.Strength
}

// LockStrength takes the lock of key at strength (PostgreSQL's row lock
// strengths: every write takes FOR UPDATE or FOR NO KEY UPDATE, a locking
// read its clause's) for the rest of the transaction, waiting while another
// transaction holds it in a conflicting strength. A hold the transaction
// already has is strengthened, never weakened.
func (t *Txn) LockStrength(ctx context.Context, key []byte, strength mvcc.Strength) error {
	k := string(key)
	prev, err := t.m.locks.acquireStrength(ctx, t.id, t.pid, k, strength, waitBlock)
	if err == nil && prev < strength {
		t.keys = append(t.keys, heldKey{key: k, prev: prev})
	}
	return err
}

// ErrLockNotAvailable is TryLockStrength's answer when another transaction
// holds the key in a conflicting strength.
var ErrLockNotAvailable = errors.New("txn: row lock held by another transaction")

// TryLockStrength is LockStrength without waiting: when another transaction
// holds key in a conflicting strength it fails at once with
// ErrLockNotAvailable (NOWAIT, SKIP LOCKED).
func (t *Txn) TryLockStrength(key []byte, strength mvcc.Strength) error {
	k := string(key)
	prev, err := t.m.locks.acquireStrength(context.Background(), t.id, t.pid, k, strength, waitNone)
	if errors.Is(err, errWouldBlock) {
		return ErrLockNotAvailable
	}
	if err == nil && prev < strength {
		t.keys = append(t.keys, heldKey{key: k, prev: prev})
	}
	return err
}

// giveBackLocks undoes the locks taken and strengthened after the first n
// (ROLLBACK TO SAVEPOINT), newest first, so that a key strengthened twice
// ends at the strength it had at the savepoint.
func (t *Txn) giveBackLocks(n int) {
	for i := len(t.keys) - 1; i >= n; i-- {
		t.m.locks.setStrength(t.id, t.keys[i].key, t.keys[i].prev)
	}
	t.keys = t.keys[:n]
}

// releaseLocks releases every lock of the transaction.
func (t *Txn) releaseLocks() {
	for _, h := range t.keys {
		if h.prev == 0 { // a strengthening's key is listed before it
			t.m.locks.setStrength(t.id, h.key, 0)
		}
	}
	t.keys = nil
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
