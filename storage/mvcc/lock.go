package mvcc

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Strength is the strength of a row lock, as PostgreSQL names them, weakest
// first. A locking read leaves a lock record of its strength; an intent
// holds its key at FOR NO KEY UPDATE (an UPDATE that keeps the key) or FOR
// UPDATE (a DELETE, or an UPDATE of the key).
type Strength byte

const (
	// KeyShare is FOR KEY SHARE.
	KeyShare Strength = 1
	// Share is FOR SHARE.
	Share Strength = 2
	// NoKeyUpdate is FOR NO KEY UPDATE.
	NoKeyUpdate Strength = 3
	// Update is FOR UPDATE.
	Update Strength = 4
)

func (s Strength) String() string {
	switch s {
	case KeyShare:
		return "KeyShare"
	case Share:
		return "Share"
	case NoKeyUpdate:
		return "NoKeyUpdate"
	case Update:
		return "Update"
	}
	return fmt.Sprintf("Strength(%d)", byte(s))
}

func (s Strength) valid() bool { return s >= KeyShare && s <= Update }

// Conflicts reports whether locks of strengths s and o, held by two
// different transactions, conflict: PostgreSQL's table "Conflicting Row-Level
// Locks" (13.3.2).
//
//	             KeyShare  Share  NoKeyUpdate  Update
//	KeyShare                                     X
//	Share                            X           X
//	NoKeyUpdate            X         X           X
//	Update          X      X         X           X
func (s Strength) Conflicts(o Strength) bool {
	return int(s)+int(o) > int(NoKeyUpdate)+int(KeyShare)
}

// checkLockRecords returns a LockConflictError for the first lock record on
// userKey held by a transaction other than txn (nil: no transaction) in a
// strength that conflicts with strength. held is the strongest record txn
// itself holds on the key (0 if none).
func checkLockRecords(it *pebble.Iterator, userKey []byte, txn *TxnMeta, strength Strength) (held Strength, err error) {
	prefix := AppendBareKey(lockPrefix(userKey), nil)
	for ok := it.SeekPrefixGE(prefix); ok; ok = it.Next() {
		k := it.Key()
		if !bytes.HasPrefix(k, prefix) || split(k) != len(prefix) {
			break
		}
		_, st, id, err := decodeLockKey(k)
		if err != nil {
			return 0, err
		}
		if txn != nil && id == txn.ID {
			held = max(held, st)
			continue
		}
		if st.Conflicts(strength) {
			v, err := it.ValueAndErr()
			if err != nil {
				return 0, err
			}
			meta, _, err := decodeTxnMeta(v)
			if err != nil {
				return 0, err
			}
			meta.Anchor = bytes.Clone(meta.Anchor)
			return held, &LockConflictError{Key: bytes.Clone(userKey), Txn: meta, Strength: st}
		}
	}
	return held, it.Error()
}

// AcquireLock takes a lock of the given strength on userKey for txn, as a
// locking read (SELECT ... FOR UPDATE and the rest) does for each row it
// returns. It fails with a LockConflictError when another transaction holds
// a conflicting lock record or intent, and with a WriteConflictError when a
// version newer than readTS was committed: REPEATABLE READ turns that into
// 40001, READ COMMITTED re-reads the row at the newer version and locks
// again (PostgreSQL's rule).
//
// The lock is a record in the lock table (0x03 0x01 <key>), so it is data of
// the shard: it survives a restart and, later, a change of leader. Nothing
// is written when txn already holds the key at least as strongly, by a
// record or by its own intent.
func AcquireLock(rw ReadWriter, userKey []byte, txn *TxnMeta, readTS hlc.Timestamp, strength Strength) (Stats, error) {
	var ms Stats
	if len(userKey) == 0 || txn == nil || !strength.valid() {
		return ms, fmt.Errorf("mvcc: lock of %q by %v at strength %v: invalid request", userKey, txn, strength)
	}
	it, err := newPointIter(rw)
	if err != nil {
		return ms, err
	}
	defer it.Close()
	held, err := checkLockRecords(it, userKey, txn, strength)
	if err != nil {
		return ms, err
	}
	vs, err := readNewest(it, userKey)
	if err != nil {
		return ms, err
	}
	committed := vs.newest
	if vs.newest.found && vs.newest.v.isIntent() {
		in := &vs.newest
		if in.v.txn.ID != txn.ID {
			if in.v.strength.Conflicts(strength) {
				return ms, intentConflict(userKey, in)
			}
		} else if in.v.txn.Epoch == txn.Epoch && in.v.strength >= strength {
			return ms, nil // its own intent holds the key already
		}
		committed = vs.below
	}
	if committed.found && readTS.Less(committed.ts) {
		return ms, &WriteConflictError{Key: bytes.Clone(userKey), Existing: committed.ts, ReadTimestamp: readTS}
	}
	if held >= strength {
		return ms, nil
	}
	k := appendLockKey(nil, userKey, strength, txn.ID)
	v := appendTxnMeta(nil, txn)
	if err := rw.Set(k, v, nil); err != nil {
		return ms, err
	}
	ms.LockBytes += int64(len(k) + len(v))
	ms.LockCount++
	return ms, nil
}

// releaseLocks deletes every lock record of txn on userKey, found with it.
func releaseLocks(it *pebble.Iterator, w Writer, userKey []byte, id TxnID) (Stats, error) {
	var ms Stats
	prefix := AppendBareKey(lockPrefix(userKey), nil)
	var del [][]byte
	for ok := it.SeekPrefixGE(prefix); ok; ok = it.Next() {
		k := it.Key()
		if !bytes.HasPrefix(k, prefix) || split(k) != len(prefix) {
			break
		}
		_, _, owner, err := decodeLockKey(k)
		if err != nil {
			return ms, err
		}
		if owner == id {
			del = append(del, bytes.Clone(k))
			ms.LockBytes -= int64(len(k) + len(it.Value()))
			ms.LockCount--
		}
	}
	if err := it.Error(); err != nil {
		return Stats{}, err
	}
	for _, k := range del {
		if err := w.Delete(k, nil); err != nil {
			return Stats{}, err
		}
	}
	return ms, nil
}

// LockKey returns the engine key of txn's lock record on userKey at
// strength: what the layer above deletes to give back exactly one hold (a
// strengthening undone by ROLLBACK TO SAVEPOINT) or, in its commit batch,
// every hold it took.
func LockKey(userKey []byte, strength Strength, txn TxnID) []byte {
	return appendLockKey(make([]byte, 0, 2+len(userKey)+sentinelLen+lockSuffixLen), userKey, strength, txn)
}

// LockRecord is one lock record found by ScanLocks.
type LockRecord struct {
	Key      []byte // the locked user key
	Strength Strength
	Txn      TxnMeta
	// EngineKey is the record's own key (LockKey of the above).
	EngineKey []byte
}

// ScanLocks calls fn for every lock record on the user keys of span (nil
// End: up to the end of the lock table), in key order; fn's record is a
// copy. It stops at fn's first error and returns it.
func ScanLocks(r Reader, span storage.Span, fn func(rec LockRecord) error) error {
	lower, upper, err := engineSpan(LockTableSpan(span))
	if err != nil {
		return err
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		uk, st, _, err := decodeLockKey(k)
		if err != nil {
			it.Close()
			return err
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		meta, _, err := decodeTxnMeta(v)
		if err != nil {
			it.Close()
			return err
		}
		meta.Anchor = bytes.Clone(meta.Anchor)
		if err := fn(LockRecord{Key: bytes.Clone(uk), Strength: st, Txn: meta, EngineKey: bytes.Clone(k)}); err != nil {
			it.Close()
			return err
		}
	}
	return firstErr(it.Error(), it.Close())
}

// CheckLock reports the first lock record or intent on userKey that
// conflicts with a lock of the given strength taken by a transaction that
// holds nothing in the store: a one-phase (autocommit) transaction of the
// layer above, whose locks stay in memory because all of its writes land
// in one batch (sql/txn). It only reads; nil, nil when nothing conflicts.
func CheckLock(r Reader, userKey []byte, strength Strength) (*LockConflictError, error) {
	if len(userKey) == 0 || !strength.valid() {
		return nil, fmt.Errorf("mvcc: lock check of %q at strength %v: invalid request", userKey, strength)
	}
	it, err := newPointIter(r)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if _, err := checkLockRecords(it, userKey, nil, strength); err != nil {
		if lce, ok := err.(*LockConflictError); ok {
			return lce, nil
		}
		return nil, err
	}
	vs, err := readNewest(it, userKey)
	if err != nil {
		return nil, err
	}
	if in := &vs.newest; in.found && in.v.isIntent() && in.v.strength.Conflicts(strength) {
		return intentConflict(userKey, in).(*LockConflictError), nil
	}
	return nil, nil
}

// PutLock writes txn's lock record on userKey at strength without any
// check: for a holder that holds the key already by other means (an
// in-memory lock of sql/txn's one-phase transaction that becomes a
// transaction block, BEGIN after a write in one protocol cycle), so no
// other transaction can hold it in a conflicting strength.
func PutLock(w Writer, userKey []byte, txn *TxnMeta, strength Strength) error {
	if len(userKey) == 0 || txn == nil || !strength.valid() {
		return fmt.Errorf("mvcc: lock of %q by %v at strength %v: invalid request", userKey, txn, strength)
	}
	return w.Set(appendLockKey(nil, userKey, strength, txn.ID), appendTxnMeta(nil, txn), nil)
}
