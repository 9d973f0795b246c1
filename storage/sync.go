package storage

import "github.com/cockroachdb/pebble/v2"

// CommitUnsynced commits the batch without waiting for the WAL to reach
// disk, even on a synced engine. The caller must call Engine.SyncWAL before
// it tells anyone the change happened. It exists for short critical sections
// (a shard map swap under a table's commit lock): every synced commit that
// follows in the same WAL makes this one durable too, because a WAL sync
// covers everything written before it.
func (b *Batch) CommitUnsynced() error {
	if err := b.check(); err != nil {
		return err
	}
	return b.commit(pebble.NoSync)
}

// SyncWAL makes every commit so far durable. It does nothing on an engine
// opened with NoSync, whose commits are not durable anyway.
func (e *Engine) SyncWAL() error {
	if e.writeOpts != pebble.Sync {
		return nil
	}
	return e.db.LogData(nil, pebble.Sync)
}
