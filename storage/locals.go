package storage

import (
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Shard-local keys (issue 16 item 9): lock records and transaction records
// live in the store under 0x03 (storage/mvcc's layout), written by
// storage/mvcc's operations, which work on Pebble directly. storage stays
// the only door to Pebble by handing those operations a LocalBatch: an
// indexed Pebble batch that reads through to the store (mvcc.ReadWriter)
// and commits on its own. storage cannot import storage/mvcc (mvcc imports
// storage), so it only moves bytes here.

// LocalBatch is an indexed batch of engine keys for storage/mvcc's
// operations on lock and transaction records. Its reads see the store's
// latest state plus its own writes. It is not safe for concurrent use;
// Close it in every case.
type LocalBatch struct {
	b *pebble.Batch
	e *Engine
	// indexed: reads see the batch's writes; else they read the store only.
	indexed bool
}

// NewLocalBatch returns an empty LocalBatch.
func (e *Engine) NewLocalBatch() *LocalBatch {
	return &LocalBatch{b: e.db.NewIndexedBatch(), e: e, indexed: true}
}

// NewLocalOp returns a LocalBatch whose reads go to the store and do not
// see its own writes: for a single storage/mvcc operation (it reads, then
// writes) under its key's latch, where an indexed batch's reads would only
// cost more (the lock table's AcquireLock).
func (e *Engine) NewLocalOp() *LocalBatch {
	return &LocalBatch{b: e.db.NewBatch(), e: e}
}

// NewIter opens a Pebble iterator over engine keys (mvcc.Reader).
func (b *LocalBatch) NewIter(o *pebble.IterOptions) (*pebble.Iterator, error) {
	if !b.indexed {
		return b.e.db.NewIter(o)
	}
	return b.b.NewIter(o)
}

// Get reads an engine key (mvcc.Reader).
func (b *LocalBatch) Get(key []byte) ([]byte, io.Closer, error) {
	if !b.indexed {
		return b.e.db.Get(key)
	}
	return b.b.Get(key)
}

// Set writes an engine key (mvcc.Writer).
func (b *LocalBatch) Set(key, value []byte, o *pebble.WriteOptions) error {
	return b.b.Set(key, value, o)
}

// Delete deletes an engine key (mvcc.Writer).
func (b *LocalBatch) Delete(key []byte, o *pebble.WriteOptions) error { return b.b.Delete(key, o) }

// SingleDelete deletes an engine key that was Set exactly once since it
// was last deleted (Pebble's SingleDelete): a compaction that meets the
// pair drops both at once, where a Delete's tombstone must sink to the
// bottom level first. Lock records are such keys (one Set per hold, one
// deletion by their owner), and a row locked by transaction after
// transaction would otherwise pile up tombstones under its lock prefix
// that every lock of the row seeks over (CockroachDB deletes its lock
// table keys the same way). Using it on a key Set twice is undefined.
func (b *LocalBatch) SingleDelete(key []byte) error { return b.b.SingleDelete(key, nil) }

// Empty reports whether the batch holds no writes.
func (b *LocalBatch) Empty() bool { return b.b.Empty() }

// CommitNoSync applies the batch without waiting for the WAL to reach the
// disk: for lock records, which only need to outlive their transaction's
// process as long as the transaction could still commit — a lock record
// lost in a machine crash belongs to a transaction that died with it. The
// next synced commit (any transaction's) makes it durable too, since the
// WAL is one log; until then it may sit in the process's WAL buffer, so a
// kill -9 can lose it (TestLockRecordsAfterKill).
func (b *LocalBatch) CommitNoSync() error {
	if b.b.Empty() {
		return nil
	}
	return b.e.commitPebble(b.b, pebble.NoSync)
}

// CommitShared applies the batch without fsync as shard data: on a
// replicated engine through the replicator, so that every replica holds
// the change (an intent removed, a replicated transaction record
// deleted), its lock records staying local; else as CommitNoSync. The
// lock table's cleanups of another transaction's intents and records use
// it: those keys reached every replica (intents.go).
func (b *LocalBatch) CommitShared() error {
	if b.b.Empty() {
		return nil
	}
	return b.e.commitShared(b.b, hlc.Timestamp{})
}

// Close releases the batch, discarding what was not committed.
func (b *LocalBatch) Close() {
	if b.b != nil {
		_ = b.b.Close()
		b.b = nil
	}
}

// LocalReader is the store's latest state as a storage/mvcc Reader (engine
// keys, no view timestamp): what the lock table's listings and cleanups
// read.
func (e *Engine) LocalReader() interface {
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
	Get(key []byte) ([]byte, io.Closer, error)
} {
	return e.db
}

// SingleDeleteEngineKey adds the single deletion (LocalBatch.SingleDelete)
// of an engine key (not a user key: a lock record's) to the batch, so that
// it lands with the batch's commit: a transaction releases its lock
// records in the batch that commits its writes, under the commit's one
// fsync.
func (b *Batch) SingleDeleteEngineKey(engineKey []byte) error {
	if err := b.check(); err != nil {
		return err
	}
	if len(engineKey) == 0 {
		return ErrEmptyKey
	}
	return b.b.SingleDelete(engineKey, nil)
}

// MergeCounters adds the counter vector operand (AppendCounters) to the
// counters stored at the bare key key, as Batch.Merge does: the shard
// statistics that an intent resolution batch carries (IntentStats).
func (b *LocalBatch) MergeCounters(key, operand []byte) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	return b.b.Merge(bareKey(key), operand, nil)
}
