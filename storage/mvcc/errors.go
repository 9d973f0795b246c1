package mvcc

import (
	"fmt"

	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// These errors are internal to the storage layers: the transaction layer
// above decides what a client sees (waiting, pushing the other transaction,
// retrying the statement, or SQLSTATE 40001 / 55P03 / 40P01).

// LockConflictError reports a key held by another transaction: an intent
// (Intent true: a provisional version, met by a read at or above its
// timestamp, or by a write or lock) or a lock record of a conflicting
// strength. Txn names the holder, whose record is at (Txn.Anchor, Txn.ID).
type LockConflictError struct {
	Key      []byte
	Txn      TxnMeta
	Strength Strength
	Intent   bool
}

func (e *LockConflictError) Error() string {
	what := "lock (" + e.Strength.String() + ")"
	if e.Intent {
		what = "intent"
	}
	return fmt.Sprintf("mvcc: conflicting %s of transaction %s on %s", what, e.Txn.ID, storage.FormatKey(e.Key))
}

// WriteConflictError reports a write or locking read of a key whose newest
// committed version is newer than the transaction's read timestamp (or not
// older than its write timestamp): someone changed the row after the
// snapshot. REPEATABLE READ and SERIALIZABLE answer 40001 "could not
// serialize access due to concurrent update"; READ COMMITTED re-reads the
// row at Existing and re-checks its WHERE before trying again.
type WriteConflictError struct {
	Key           []byte
	Existing      hlc.Timestamp
	ReadTimestamp hlc.Timestamp
}

func (e *WriteConflictError) Error() string {
	return fmt.Sprintf("mvcc: write conflict on %s: committed version at %s, read at %s",
		storage.FormatKey(e.Key), e.Existing, e.ReadTimestamp)
}

// ReadWithinUncertaintyError reports a version committed after the read
// timestamp but within its uncertainty window (ReadOptions.UncertaintyLimit):
// the reader retries at a timestamp at or above Existing.
type ReadWithinUncertaintyError struct {
	Key           []byte
	Existing      hlc.Timestamp
	ReadTimestamp hlc.Timestamp
	Limit         hlc.Timestamp
}

func (e *ReadWithinUncertaintyError) Error() string {
	return fmt.Sprintf("mvcc: read at %s is uncertain about the version of %s at %s (uncertainty limit %s)",
		e.ReadTimestamp, storage.FormatKey(e.Key), e.Existing, e.Limit)
}

// BelowGCThresholdError reports a read at a timestamp whose versions may
// already be garbage collected.
type BelowGCThresholdError struct {
	ReadTimestamp hlc.Timestamp
	Threshold     hlc.Timestamp
}

func (e *BelowGCThresholdError) Error() string {
	return fmt.Sprintf("mvcc: read at %s is below the GC threshold %s", e.ReadTimestamp, e.Threshold)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
