package mvcc

import (
	"bytes"
	"fmt"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// PutCommitted writes value as a committed version of userKey at ts,
// outside any transaction: a one-shot write that is its own commit
// (CockroachDB's non-transactional and one-phase-commit writes), and the
// way tests lay down history. It fails with a LockConflictError if another
// transaction holds the key and with a WriteConflictError if a version at
// or after ts exists.
func PutCommitted(rw ReadWriter, userKey []byte, ts hlc.Timestamp, value []byte) (Stats, error) {
	return writeVersion(rw, userKey, nil, ts, ts.Prev(), value, false, Update)
}

// DeleteCommitted writes a committed tombstone of userKey at ts; see
// PutCommitted.
func DeleteCommitted(rw ReadWriter, userKey []byte, ts hlc.Timestamp) (Stats, error) {
	return writeVersion(rw, userKey, nil, ts, ts.Prev(), nil, true, Update)
}

// WriteIntent writes a provisional version of userKey for txn at
// txn.WriteTimestamp: value, or a delete when isDelete. The intent is also
// txn's lock on the key, at strength (NoKeyUpdate for an UPDATE that keeps
// the key, Update otherwise).
//
// readTS is the snapshot the write was decided on. If a version newer than
// it was committed meanwhile — or one not older than the write timestamp —
// WriteIntent fails with a WriteConflictError (the lost-update check:
// REPEATABLE READ reports 40001, READ COMMITTED re-reads at Existing and
// re-checks its WHERE, then writes again with that as readTS). If another
// transaction holds the key (intent or conflicting lock record) it fails
// with a LockConflictError. A previous intent of txn itself on the key, of
// any epoch, is replaced.
func WriteIntent(rw ReadWriter, userKey []byte, txn *TxnMeta, readTS hlc.Timestamp, value []byte, isDelete bool, strength Strength) (Stats, error) {
	if txn == nil {
		return Stats{}, fmt.Errorf("mvcc: intent on %q without a transaction", userKey)
	}
	if strength != Update && strength != NoKeyUpdate {
		return Stats{}, fmt.Errorf("mvcc: intent on %q at strength %v: writes hold Update or NoKeyUpdate", userKey, strength)
	}
	if txn.WriteTimestamp.Less(readTS) {
		return Stats{}, fmt.Errorf("mvcc: intent on %q: write timestamp %s before read timestamp %s", userKey, txn.WriteTimestamp, readTS)
	}
	return writeVersion(rw, userKey, txn, txn.WriteTimestamp, readTS, value, isDelete, strength)
}

// writeVersion is PutCommitted, DeleteCommitted and WriteIntent: a new
// newest version at ts, committed when txn is nil.
func writeVersion(rw ReadWriter, userKey []byte, txn *TxnMeta, ts, readTS hlc.Timestamp, value []byte, isDelete bool, strength Strength) (Stats, error) {
	var ms Stats
	if len(userKey) == 0 {
		return ms, fmt.Errorf("mvcc: write of the empty key")
	}
	if err := checkTimestamp(ts); err != nil {
		return ms, err
	}
	it, err := newPointIter(rw)
	if err != nil {
		return ms, err
	}
	defer it.Close()
	if _, err := checkLockRecords(it, userKey, txn, strength); err != nil {
		return ms, err
	}
	vs, err := readNewest(it, userKey)
	if err != nil {
		return ms, err
	}
	committed := vs.newest
	var own *versionAt // txn's own earlier intent, to replace
	if vs.newest.found && vs.newest.v.isIntent() {
		in := &vs.newest
		if txn == nil || in.v.txn.ID != txn.ID {
			return ms, intentConflict(userKey, in)
		}
		own, committed = in, vs.below
	}
	if committed.found && (readTS.Less(committed.ts) || !committed.ts.Less(ts)) {
		return ms, &WriteConflictError{Key: bytes.Clone(userKey), Existing: committed.ts, ReadTimestamp: readTS}
	}

	if own != nil {
		// The replaced intent leaves; the version under it stays old.
		ms.Sub(newestStats(own.size(), &own.v, true))
		if own.ts != ts {
			if err := rw.Delete(AppendVersionKey(nil, userKey, own.ts), nil); err != nil {
				return Stats{}, err
			}
		}
	} else if committed.found {
		// The previous newest version becomes old.
		ms.Sub(newestStats(committed.size(), &committed.v, true))
		ms.Add(newestStats(committed.size(), &committed.v, false))
	}
	k := AppendVersionKey(nil, userKey, ts)
	var v []byte
	var nv version
	switch {
	case txn != nil:
		// The transaction's earlier write of the key in this epoch, if
		// any, goes to the history for ROLLBACK TO SAVEPOINT; an older
		// epoch's writes are void.
		var history []seqWrite
		if own != nil && own.v.txn.Epoch == txn.Epoch {
			history = own.v.history
			if own.v.txn.Seq != txn.Seq { // a later write of the same statement supersedes
				history = append(history, seqWrite{seq: own.v.txn.Seq, isDelete: own.v.isDelete(), value: own.v.value})
			}
		}
		v = appendIntent(nil, txn, strength, history, value, isDelete)
		nv.kind = kindIntent
		if isDelete {
			nv.kind = kindIntentDelete
		}
	case isDelete:
		v, nv.kind = appendTombstone(nil), kindTombstone
	default:
		v, nv.kind = appendCommitted(nil, value), kindValue
	}
	if err := rw.Set(k, v, nil); err != nil {
		return Stats{}, err
	}
	ms.Add(newestStats(int64(len(k)+len(v)), &nv, true))
	return ms, nil
}

// intentConflict is the error for meeting another transaction's intent.
func intentConflict(userKey []byte, in *versionAt) error {
	meta := in.v.txn
	meta.Anchor = bytes.Clone(meta.Anchor)
	return &LockConflictError{Key: bytes.Clone(userKey), Txn: meta, Strength: in.v.strength, Intent: true}
}
