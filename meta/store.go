package meta

import (
	"github.com/pivotdb/pivotdb/storage"
)

// Store reads and writes metadata records. It is safe for concurrent use.
type Store struct {
	eng *storage.Engine
}

// Open returns the metadata store kept in eng.
func Open(eng *storage.Engine) *Store { return &Store{eng: eng} }

// Reader reads metadata: the Store (the latest committed records) or one
// of its Snapshots.
type Reader interface {
	// Get returns the record at key; found is false when there is none.
	Get(key []byte) (value []byte, found bool, err error)
	// Scan calls fn for every record in span, in key order.
	Scan(span storage.Span, fn func(key, value []byte) error) error
}

// Get implements Reader.
func (s *Store) Get(key []byte) ([]byte, bool, error) { return get(s.eng, key) }

// Scan implements Reader.
func (s *Store) Scan(span storage.Span, fn func(key, value []byte) error) error {
	return scan(s.eng, span, fn)
}

// Snapshot is a consistent view of the metadata as of its creation.
type Snapshot struct{ snap *storage.Snapshot }

// Snapshot returns a consistent view; Close it when done.
func (s *Store) Snapshot() *Snapshot { return &Snapshot{snap: s.eng.NewSnapshot()} }

// Get implements Reader.
func (s *Snapshot) Get(key []byte) ([]byte, bool, error) { return get(s.snap, key) }

// Scan implements Reader.
func (s *Snapshot) Scan(span storage.Span, fn func(key, value []byte) error) error {
	return scan(s.snap, span, fn)
}

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.snap.Close() }

func get(r storage.Reader, key []byte) ([]byte, bool, error) {
	if err := Check(key); err != nil {
		return nil, false, err
	}
	return r.Get(key)
}

func scan(r storage.Reader, span storage.Span, fn func(key, value []byte) error) error {
	if err := checkSpan(span); err != nil {
		return err
	}
	return storage.Scan(r, span, fn)
}

// Batch is one atomic change of metadata records. Its records commit with
// the storage batch it rides on: its own (NewBatch), or the batch of the
// data change it belongs with (With).
type Batch struct {
	b *storage.Batch
}

// NewBatch starts a change of metadata only; Commit or Close it.
func (s *Store) NewBatch() *Batch { return &Batch{b: s.eng.NewBatch()} }

// With adds metadata records to b, a batch of data changes, so that both
// commit together (a DDL statement's catalog and shard map records with the
// rows it drops or the index entries it backfills). The caller commits b.
func (s *Store) With(b *storage.Batch) *Batch { return &Batch{b: b} }

// SyncWAL makes every committed metadata change durable (after
// CommitUnsynced).
func (s *Store) SyncWAL() error { return s.eng.SyncWAL() }

// Set writes a record.
func (b *Batch) Set(key, value []byte) error {
	if err := Check(key); err != nil {
		return err
	}
	return b.b.Set(key, value)
}

// Delete removes a record.
func (b *Batch) Delete(key []byte) error {
	if err := Check(key); err != nil {
		return err
	}
	return b.b.Delete(key)
}

// DeleteSpan removes every record in span, which must lie inside one
// namespace.
func (b *Batch) DeleteSpan(span storage.Span) error {
	if err := checkSpan(span); err != nil {
		return err
	}
	return b.b.DeleteRange(span)
}

// Merge adds a counter operand to a counter record (storage counters).
func (b *Batch) Merge(key, operand []byte) error {
	if err := Check(key); err != nil {
		return err
	}
	return b.b.Merge(key, operand)
}

// Commit commits a batch started by NewBatch, durably.
func (b *Batch) Commit() error { return b.b.Commit() }

// CommitUnsynced commits a batch started by NewBatch without waiting for
// the WAL sync (see Store.SyncWAL).
func (b *Batch) CommitUnsynced() error { return b.b.CommitUnsynced() }

// Close releases a batch started by NewBatch.
func (b *Batch) Close() error { return b.b.Close() }
