package storage

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
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
	e         *Engine
	ts        hlc.Timestamp // read timestamp of versioned keys
	versioned bool          // holds writes of versioned keys
	writeOpts *pebble.WriteOptions
	filters   *keyFilterTables // tables with a key bloom filter (keyfilter.go)
	flusher   *filterFlusher   // told when a commit holds keys of those tables
	// filtered is set when the batch writes a key of a table with a key
	// bloom filter (keyfilterflush.go).
	filtered  bool
	space     *diskGuard // admission of commits (diskspace.go); may be nil
	rangeDels bool       // DeleteRange was called (a drop, for admission)
	committed bool
	// commitCheck runs inside commit with the commit timestamp
	// (SetCommitCheck, refresh.go); nil: none.
	commitCheck func(commitTS hlc.Timestamp, inflight InFlight) error
	// onCommitted runs once the batch is written, before the commit stops
	// being in flight (OnCommitted).
	onCommitted func(ts hlc.Timestamp)
	// intents: the writes moved to the store as intents (intents.go); nil
	// if none. own is what the batch's reads show of them; seq the
	// sequence number of the next flush (a read view or savepoint made by
	// NewBatchCopy moves it on). finishIntents is the caller's part of an
	// intent commit (SetIntentCommit).
	intents       *intentState
	own           *ownIntents
	seq           int32
	finishIntents IntentCommit
}

// OnCommitted sets a function that Commit calls once the batch is written
// and before any read at or above its commit timestamp can start
// (ReadTimestamp waits for it): what it installs in memory — a schema
// change's catalog — is seen by every statement that sees the batch's
// writes. ts is the commit timestamp of versioned writes; a batch without
// any gets the clock's current time.
func (b *Batch) OnCommitted(fn func(ts hlc.Timestamp)) { b.onCommitted = fn }

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
	if isVersioned(key) {
		b.versioned = true
		return b.setTagged(key, tagValue, value)
	}
	return b.b.Set(bareKey(key), value, nil)
}

// setTagged writes a versioned key's own write: its bare key with a tagged
// value (versions.go), made a version at the commit timestamp by Commit.
func (b *Batch) setTagged(key []byte, tag byte, value []byte) error {
	op := b.b.SetDeferred(len(key)+1, len(value)+1)
	op.Key[copy(op.Key, key)] = 0
	op.Value[0] = tag
	copy(op.Value[1:], value)
	return op.Finish()
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
	if isVersioned(key) {
		// A tombstone version, not a Pebble delete: older versions stay
		// for reads at earlier timestamps.
		b.versioned = true
		return b.setTagged(key, tagTombstone, nil)
	}
	return b.b.Delete(bareKey(key), nil)
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
	// Every version of every key in the span goes, physically: a range
	// deletion is for data no reader may see again (a dropped table).
	return b.b.DeleteRange(bareKey(start), bareKey(span.End), nil)
}

// Get returns a copy of the value at key as the batch sees it: its own write
// if it has one (a Delete or DeleteRange hides the key), else the committed
// value as of the batch's read timestamp (SetReadTimestamp; the latest by
// default).
func (b *Batch) Get(key []byte) (value []byte, found bool, err error) {
	if err := b.check(); err != nil {
		return nil, false, err
	}
	if err := b.e.checkGCKey(b.ts, key); err != nil {
		return nil, false, err
	}
	return getPoint(PointReader{r: b.b, ts: b.ts, own: b.own, pool: b.e.points, db: b.e.db, batch: b.b}, key)
}

// SetReadTimestamp sets the timestamp as of which the batch's reads see
// committed versions (its own writes are always on top). A transaction sets
// it at the start of each statement (Engine.ReadTimestamp).
func (b *Batch) SetReadTimestamp(ts hlc.Timestamp) { b.ts = ts }

// ReadTimestamp returns the batch's read timestamp.
func (b *Batch) ReadTimestamp() hlc.Timestamp { return b.ts }

// NewIter returns an iterator over span as the batch sees it. The iterator
// sees the batch's writes made before NewIter, and not later ones; the
// committed state underneath is read as of NewIter too.
func (b *Batch) NewIter(span Span) (*Iterator, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := b.e.checkGC(b.ts, span); err != nil {
		return nil, err
	}
	it, err := newIterator(b.b, b.ts, span)
	if it != nil {
		it.own = b.own
	}
	return it, err
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
		n := b.b.Len()
		if err := b.space.admit(n, b.rangeDels); err != nil {
			return err
		}
		defer b.space.release(n)
	}
	if err := b.commit(b.writeOpts); err != nil {
		return err
	}
	if b.filtered {
		b.flusher.noted()
	}
	return nil
}

// commit writes the batch. Versioned writes get the commit timestamp: the
// batch is copied with them rewritten as versions at it, and the commit is
// registered as in flight until the copy is visible (versions.go), so that
// no read at or above the timestamp opens its view before it lands. A
// commit check (SetCommitCheck) runs between taking the timestamp and
// writing, with the keys of the commits below it still in flight.
func (b *Batch) commit(opts *pebble.WriteOptions) error {
	if b.intents != nil {
		return b.commitIntents(opts)
	}
	if !b.versioned && b.commitCheck == nil {
		if err := b.e.apply(b.b, hlc.Timestamp{}, opts); err != nil {
			return err
		}
		b.committed = true
		if b.onCommitted != nil {
			// Published: every read timestamp taken after this commit
			// is at or above it (committracker.go).
			ts, err := b.e.commits.publish()
			if err != nil {
				// Written, so the hook must still run: at the read
				// timestamp no later than any read that sees the write.
				ts = hlc.Timestamp{}
			}
			b.onCommitted(ts)
		}
		return nil
	}
	var keys *inflightKeys
	if !b.versioned {
		keys = &inflightKeys{} // a check's commit of system keys only
	} else if b.e.commits.refreshers.Load() > 0 {
		// A transaction that may refresh is open: say what this commit
		// writes, so that its check need not wait for it (refresh.go).
		var err error
		if keys, err = collectKeys(b.b); err != nil {
			return err
		}
	}
	ts, id, err := b.e.commits.beginWith(keys)
	if err != nil {
		return err
	}
	defer b.e.commits.end(id)
	if b.commitCheck != nil {
		if err := b.commitCheck(ts, b.e.commits.inFlightBelow(id)); err != nil {
			return err
		}
	}
	nb := b.e.db.NewBatchWithSize(b.b.Len())
	defer nb.Close()
	if err := rewriteVersioned(nb, b.b, ts); err != nil {
		return err
	}
	if err := b.e.apply(nb, ts, opts); err != nil {
		return err
	}
	b.committed = true
	if b.onCommitted != nil {
		b.onCommitted(ts)
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

// Empty reports whether the batch holds no writes (none moved to intents
// either).
func (b *Batch) Empty() bool {
	return b.intents == nil && (b.b == nil || b.b.Empty())
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
	nb.ts, nb.versioned = b.ts, b.versioned
	// The copy sees the intents flushed so far and none flushed later
	// (intents.go): later flushes get a higher sequence number.
	b.seq++
	nb.seq = b.seq
	if b.intents != nil {
		nb.own = &ownIntents{id: b.intents.owner.ID, below: b.seq}
	}
	if !b.b.Empty() {
		if err := nb.b.Apply(b.b, nil); err != nil {
			nb.Close()
			return nil, err
		}
	}
	return nb, nil
}

// At returns a view of the batch that reads committed versions as of ts
// instead of the batch's read timestamp, with the batch's own writes on top
// as always. A transaction reads the newest committed row through
// At(MaxTimestamp) once it holds the row's lock (READ COMMITTED's re-read of
// a row changed after the statement's snapshot).
func (b *Batch) At(ts hlc.Timestamp) Reader { return batchAt{b: b, ts: ts} }

// batchAt is the Reader of Batch.At.
type batchAt struct {
	b  *Batch
	ts hlc.Timestamp
}

func (v batchAt) Get(key []byte) ([]byte, bool, error) {
	if err := v.b.check(); err != nil {
		return nil, false, err
	}
	if err := v.b.e.checkGCKey(v.ts, key); err != nil {
		return nil, false, err
	}
	return getPoint(PointReader{r: v.b.b, ts: v.ts, own: v.b.own, pool: v.b.e.points, db: v.b.e.db, batch: v.b.b}, key)
}

func (v batchAt) NewIter(span Span) (*Iterator, error) {
	if err := v.b.check(); err != nil {
		return nil, err
	}
	if err := v.b.e.checkGC(v.ts, span); err != nil {
		return nil, err
	}
	it, err := newIterator(v.b.b, v.ts, span)
	if it != nil {
		it.own = v.b.own
	}
	return it, err
}

func (v batchAt) NewPointReader() (*PointReader, error) {
	if err := v.b.check(); err != nil {
		return nil, err
	}
	return &PointReader{r: v.b.b, ts: v.ts, own: v.b.own, gc: v.b.e, pool: v.b.e.points, db: v.b.e.db, batch: v.b.b}, nil
}

// LatestVersion returns the timestamp of the newest committed version of a
// versioned key (a tombstone included), ignoring the batch's own writes;
// found is false when the key has none. REPEATABLE READ compares it with
// the transaction's snapshot: a newer version is a concurrent update.
func (b *Batch) LatestVersion(key []byte) (ts hlc.Timestamp, found bool, err error) {
	if err := b.check(); err != nil {
		return hlc.Timestamp{}, false, err
	}
	if !isVersioned(key) {
		return hlc.Timestamp{}, false, nil
	}
	it, err := b.e.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return hlc.Timestamp{}, false, err
	}
	defer it.Close()
	pk := bareKey(key)
	for valid := it.SeekPrefixGE(pk); valid; valid = it.Next() {
		k := it.Key()
		if enginekey.Split(k) != len(pk) || !bytes.HasPrefix(k, pk) {
			break
		}
		if _, ts, ok := enginekey.DecodeVersion(k); ok && !isIntentTimestamp(ts) {
			return ts, true, nil
		}
	}
	return hlc.Timestamp{}, false, it.Error()
}
