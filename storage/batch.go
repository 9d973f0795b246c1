package storage

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
)

// Batch collects writes and applies them atomically on Commit. It is indexed:
// its Get and NewIter see the batch's own writes merged over the latest
// committed state (read-your-writes), which is what a SQL statement that reads
// rows it has just written needs.
//
// Reads through a batch are not a snapshot: the committed state underneath
// may change between two reads. Take a Snapshot for repeatable reads.
//
// A Batch is not safe for concurrent use. Close it in every case, committed or
// not (defer b.Close()); Close after Commit releases its memory. After Commit
// only Close, Empty, Len and Count may be called; other methods return
// ErrBatchCommitted.
type Batch struct {
	b         *pebble.Batch // nil once closed.
	writeOpts *pebble.WriteOptions
	filters   *keyFilterTables // tables with a key bloom filter (keyfilter.go)
	flusher   *filterFlusher   // told when a commit holds keys of those tables
	// filtered is set when the batch writes a key of a table with a key
	// bloom filter (keyfilterflush.go).
	filtered  bool
	space     *diskGuard // admission of commits (diskspace.go); may be nil
	rangeDels bool       // DeleteRange was called (a drop, for admission)
	committed bool
}

// check returns the error for a use of a closed or committed batch.
func (b *Batch) check() error {
	switch {
	case b.b == nil:
		return ErrClosed
	case b.committed:
		return ErrBatchCommitted
	}
	return nil
}

// Set writes value at key. The batch copies both, so the caller may reuse
// them once Set returns. The empty key is not a valid key (ErrEmptyKey).
func (b *Batch) Set(key, value []byte) error {
	if err := b.check(); err != nil {
		return err
	}
	if len(key) == 0 {
		return ErrEmptyKey
	}
	b.filtered = b.filtered || b.filters.coversKey(key)
	return b.b.Set(key, value, nil)
}

// Delete removes key. Deleting a key that does not exist is not an error; the
// empty key is never valid (ErrEmptyKey).
func (b *Batch) Delete(key []byte) error {
	if err := b.check(); err != nil {
		return err
	}
	if len(key) == 0 {
		return ErrEmptyKey
	}
	// A tombstone of such a table is flushed as promptly as its rows.
	b.filtered = b.filtered || b.filters.coversKey(key)
	return b.b.Delete(key, nil)
}

// DeleteRange removes every key in span, as one range tombstone however many
// keys it covers. span.End must not be nil: "everything after Start" would
// also delete keys committed by others between now and Commit, which no
// caller means. An empty span deletes nothing.
func (b *Batch) DeleteRange(span Span) error {
	if err := b.check(); err != nil {
		return err
	}
	if err := span.validate(); err != nil {
		return err
	}
	if span.End == nil {
		return ErrUnboundedSpan
	}
	start := rangeStart(span.Start)
	if bytes.Compare(start, span.End) >= 0 {
		return nil // Empty, or [empty key, 0x00), which holds no valid key.
	}
	b.rangeDels = true
	return b.b.DeleteRange(start, span.End, nil)
}

// Get returns a copy of the value at key as the batch sees it: its own write
// if it has one (a Delete or DeleteRange hides the key), else the latest
// committed value.
func (b *Batch) Get(key []byte) (value []byte, found bool, err error) {
	if err := b.check(); err != nil {
		return nil, false, err
	}
	return get(b.b, b.filters, key)
}

// NewIter returns an iterator over span as the batch sees it. The iterator
// sees the batch's writes made before NewIter, and not later ones; the
// committed state underneath is read as of NewIter too.
func (b *Batch) NewIter(span Span) (*Iterator, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	return newIterator(b.b, span)
}

// Commit applies the batch atomically. Unless the engine was opened with
// NoSync, Commit returns only after the WAL is synced, so a committed batch
// survives a crash. When the disk has too little free space left
// (diskspace.go) it writes nothing and returns a *DiskFullError
// (ErrDiskFull); the batch stays uncommitted and may be retried.
func (b *Batch) Commit() error {
	if err := b.check(); err != nil {
		return err
	}
	if b.space != nil && !b.b.Empty() {
		done, err := b.space.admit(b.b.Len(), b.rangeDels)
		if err != nil {
			return err
		}
		defer done()
	}
	if err := b.b.Commit(b.writeOpts); err != nil {
		return err
	}
	b.committed = true
	if b.filtered {
		b.flusher.noted()
	}
	return nil
}

// Close releases the batch, discarding its writes if it was not committed.
// Close the iterators made from the batch first: they read its memory.
// Closing twice is harmless.
func (b *Batch) Close() error {
	if b.b == nil {
		return nil
	}
	err := b.b.Close()
	b.b = nil
	return err
}

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool {
	return b.b == nil || b.b.Empty()
}

// Len returns the size in bytes of the batch's encoded writes, what Commit
// will write to the WAL. Bulk loaders commit when it passes a threshold.
func (b *Batch) Len() int {
	if b.b == nil {
		return 0
	}
	return b.b.Len()
}

// Count returns the number of writes (Set, Delete, DeleteRange) in the batch.
func (b *Batch) Count() int {
	if b.b == nil {
		return 0
	}
	return int(b.b.Count())
}

// NewBatchCopy returns a new indexed batch holding b's writes so far: a read
// view of a transaction as of now, which b's later writes do not change
// (the committed state underneath is read as it is at each read, as through
// b). A statement that writes while it evaluates subqueries reads through
// such a view, so the subqueries do not see the statement's own writes.
// Close it like any batch; never commit it.
func (e *Engine) NewBatchCopy(b *Batch) (*Batch, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	nb := e.NewBatch()
	if !b.b.Empty() {
		if err := nb.b.Apply(b.b, nil); err != nil {
			nb.Close()
			return nil, err
		}
	}
	return nb, nil
}
