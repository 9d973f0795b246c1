package sql

import (
	"context"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/storage"
)

// The TTL runner (partition/ttl.go) runs in the background of an open
// Engine when Options.TTLInterval is positive (the server's
// --ttl-run-interval, one minute by default), started after the balancer
// and stopped before it. At every run it asks for the tables that have a
// TTL in the current catalog snapshot, and for each of their shards calls
// eraseExpired.
//
// eraseExpired works in bounded batches: it scans committed data from
// where the previous batch stopped, collects up to ttlBatchRows keys whose
// rows have expired (scanning at most ttlScanRows rows), and deletes them in
// one transaction through the normal write path: each key is locked, read
// again and re-checked against the clock under its lock, so that a row that
// a concurrent UPDATE, UPSERT or INSERT renewed meanwhile survives; a key
// whose lock a writer holds is left for a later run. The
// deletes commit with their shard statistics deltas (Txn.DeleteRow), so
// erased rows leave row_count and data_size_bytes, and the balancer can
// merge shards that TTL emptied.
//
// Readers do not wait for the runner: scans and the existence checks of
// writes already treat expired rows as absent (package ttl).

const (
	// ttlBatchRows bounds the rows one erasing transaction deletes (and
	// the key locks it holds at once).
	ttlBatchRows = 1000
	// ttlScanRows bounds the rows one batch scans looking for expired
	// ones, so that a shard of mostly live rows is also visited in pieces
	// and a Stop is noticed quickly.
	ttlScanRows = 64 * ttlBatchRows
)

// ttlTables is the runner's partition.TTLTablesFunc: every table of every
// database that has a TTL now.
func (e *Engine) ttlTables() []uint64 {
	snap := e.catalog.Snapshot()
	var ids []uint64
	for _, db := range snap.Databases() {
		for _, t := range snap.Tables(db.ID) {
			if t.Settings.TTL != nil {
				ids = append(ids, t.ID)
			}
		}
	}
	return ids
}

// eraseExpired is the runner's partition.EraseFunc: it deletes the expired
// rows of table in span, batch by batch, and returns how many it deleted.
func (e *Engine) eraseExpired(ctx context.Context, tableID uint64, span storage.Span) (int64, error) {
	var erased int64
	for start := span.Start; ; {
		if err := ctx.Err(); err != nil {
			return erased, err
		}
		// The table is looked up again for every batch: an ALTER ... RESET
		// (TTL) or a DROP TABLE stops the erasure at the next batch.
		t, ok := e.catalog.Snapshot().TableByID(tableID)
		if !ok {
			return erased, partition.ErrTableNotFound
		}
		x := ttl.At(t, e.opts.Now())
		if x == nil {
			return erased, nil
		}
		keys, next, err := e.collectExpired(t, x, storage.Span{Start: start, End: span.End})
		if err != nil {
			return erased, err
		}
		if len(keys) > 0 {
			n, err := e.deleteExpired(ctx, t, keys)
			erased += n
			e.ttlErased.Add(n)
			if err != nil {
				return erased, err
			}
		}
		if next == nil {
			return erased, nil
		}
		start = next
	}
}

// collectExpired scans committed rows of span and returns the keys of up to
// ttlBatchRows expired ones, and where the next batch starts (nil at the
// end of span).
func (e *Engine) collectExpired(t *catalog.Table, x *ttl.Expiry, span storage.Span) (keys [][]byte, next []byte, err error) {
	it, err := e.storage.NewIter(span)
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	scanned := 0
	for ok := it.First(); ok; ok = it.Next() {
		row, err := rowenc.DecodeRow(t, it.Key(), it.Value())
		if err != nil {
			return nil, nil, err
		}
		scanned++
		if x.Expired(row) {
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
		if len(keys) == ttlBatchRows || scanned == ttlScanRows {
			// The smallest key after this one.
			next = append(append([]byte(nil), it.Key()...), 0)
			return keys, next, it.Error()
		}
	}
	return keys, nil, it.Error()
}

// deleteExpired deletes, in one transaction, those of keys whose rows are
// still expired when locked and read again.
func (e *Engine) deleteExpired(ctx context.Context, t *catalog.Table, keys [][]byte) (int64, error) {
	tx := e.txns.Begin()
	// One batch commits it all: its locks need not be records.
	tx.SetOnePhase()
	defer tx.Rollback()
	var n int64
	// The runner never waits for a lock: a key that a writer holds is
	// left for a later run. So the runner cannot take part in a deadlock
	// (no writer fails because of it) and never stalls behind a
	// transaction that stays open; writers wait for it at most one batch.
	locked := keys[:0:0]
	for _, key := range keys {
		if tx.TryLock(key) {
			locked = append(locked, key)
		}
	}
	keys = locked
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// The clock is read after every lock is held: a writer that renewed a
	// row before the lock was granted committed a value judged here, and
	// none can commit one after.
	x := ttl.At(t, e.opts.Now())
	if x == nil {
		return 0, nil
	}
	// Index entries go with their rows, in the same batch.
	indexes := newIndexMaintainer(ctx, tx, t, x)
	for _, key := range keys {
		val, ok, err := tx.Get(key)
		if err != nil {
			return 0, err
		}
		if !ok {
			continue // deleted meanwhile
		}
		row, err := rowenc.DecodeRow(t, key, val)
		if err != nil {
			return 0, err
		}
		if !x.Expired(row) {
			continue // renewed meanwhile
		}
		if err := indexes.update(row, nil); err != nil {
			return 0, err
		}
		if err := tx.DeleteRow(t.ID, key, len(val)); err != nil {
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return n, nil
}

// startTTL starts the TTL runner if the options ask for one.
func (e *Engine) startTTL() {
	if e.opts.TTLInterval <= 0 {
		return
	}
	e.ttlRunner = partition.NewTTLRunner(e.shards, e.ttlTables, e.eraseExpired,
		partition.TTLOptions{Interval: e.opts.TTLInterval, Now: e.opts.Now, Logger: e.opts.Events})
	e.ttlRunner.Start()
}

// stopTTL stops the TTL runner, waiting for the batch in progress.
func (e *Engine) stopTTL() {
	if e.ttlRunner != nil {
		e.ttlRunner.Stop()
	}
}

// RunTTL runs the TTL runner once now, as its next tick would, and returns
// the rows it erased (tests and benchmarks; without a configured runner it
// makes a one-off one).
func (e *Engine) RunTTL() int64 {
	if e.ttlRunner != nil {
		return e.ttlRunner.Run()
	}
	r := partition.NewTTLRunner(e.shards, e.ttlTables, e.eraseExpired,
		partition.TTLOptions{Now: e.opts.Now, Logger: e.opts.Events})
	defer r.Stop()
	return r.Run()
}
