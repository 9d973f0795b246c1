package catalog

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// The catalog's history on disk (issue 16, item 1; doc.go, "Versions").
//
// Every record a change writes is also written as a version in the
// history (meta.Batch.SetVersioned: the table area's reserved table id 0),
// at the commit timestamp of its batch, as rows are. At reads the
// generations in memory when they cover a timestamp and the history
// otherwise (a read before the server's start, or more schema changes ago
// than the generations kept): the schema of any time inside the retention
// window, after a restart too. GC collects the history like a table
// (sql/gc.go), with the longest retention window of any table, so a table
// whose rows can still be read at a time has its schema of then.
//
// A data directory written before the history existed starts it at its
// first open: the records of then are written as versions, and the key
// historyStartKey records their commit timestamp (diskStart). At reports
// reads before it inexact, as it did every read before the server's start.

// historyStartKey holds diskStart: 8 bytes of wall time and 4 of logical
// counter, big-endian. A bare record, never versioned.
var historyStartKey = sysKey("history-start")

// startHistory reads diskStart, writing the history's first versions on a
// data directory that has none yet (Load).
func (c *Catalog) startHistory() error {
	v, ok, err := c.store.Get(historyStartKey)
	if err != nil {
		return err
	}
	if ok {
		if len(v) != 12 {
			return fmt.Errorf("catalog: corrupt history start %x", v)
		}
		c.diskStart = hlc.Timestamp{WallTime: int64(binary.BigEndian.Uint64(v)), Logical: int32(binary.BigEndian.Uint32(v[8:]))}
		return nil
	}
	// The versions and the start are written in two batches: the start
	// is the commit timestamp of the first. A crash in between writes
	// the same versions again at the next open.
	b := c.store.NewBatch()
	defer b.Close()
	if err := c.store.Scan(storage.PrefixSpan(meta.Catalog), func(k, v []byte) error {
		if string(k) == string(seqKey) || string(k) == string(historyStartKey) {
			return nil
		}
		return b.SetVersioned(k, v)
	}); err != nil {
		return err
	}
	var at hlc.Timestamp
	b.OnCommitted(func(ts hlc.Timestamp) { at = ts })
	if err := b.Commit(); err != nil {
		return err
	}
	sb := c.store.NewBatch()
	defer sb.Close()
	enc := binary.BigEndian.AppendUint64(nil, uint64(at.WallTime))
	enc = binary.BigEndian.AppendUint32(enc, uint32(at.Logical))
	if err := sb.Set(historyStartKey, enc); err != nil {
		return err
	}
	if err := sb.Commit(); err != nil {
		return err
	}
	c.diskStart = at
	return nil
}

// records adds the change's records to b, each with its version in the
// history.
func (ch *Change) records(b *meta.Batch) error {
	for k, v := range ch.puts {
		if err := b.SetVersioned([]byte(k), v); err != nil {
			return err
		}
	}
	for k := range ch.deletes {
		if err := b.DeleteVersioned([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

// historyAt returns the snapshot of the history on disk at ts; ok is
// false when the history does not reach back to ts (before diskStart, or
// below the history's GC threshold) or cannot be read.
func (c *Catalog) historyAt(ts hlc.Timestamp) (*Snapshot, bool) {
	if c.store == nil || ts.Less(c.diskStart) || ts.Less(c.store.HistoryThreshold()) {
		return nil, false // (a cached snapshot too: GC may have passed ts since)
	}
	if snap, ok := c.past.get(ts); ok {
		return snap, true
	}
	h, err := c.store.History(ts)
	if err != nil {
		return nil, false
	}
	snap, err := loadSnapshot(h)
	if err != nil {
		return nil, false
	}
	c.past.put(ts, snap)
	return snap, true
}

// historyCacheSize bounds the snapshots historyAt keeps: a REPEATABLE
// READ transaction older than the generations in memory binds each
// statement at its one timestamp, and reads the history once.
const historyCacheSize = 8

// historyCache keeps the last snapshots read from the history by exact
// timestamp (the history at a timestamp never changes once the commits
// below it landed; historyAt checks the GC threshold before it looks).
type historyCache struct {
	mu    sync.Mutex
	ts    [historyCacheSize]hlc.Timestamp
	snaps [historyCacheSize]*Snapshot
	next  int
}

func (h *historyCache) get(ts hlc.Timestamp) (*Snapshot, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, s := range h.snaps {
		if s != nil && h.ts[i] == ts {
			return s, true
		}
	}
	return nil, false
}

func (h *historyCache) put(ts hlc.Timestamp, snap *Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ts[h.next], h.snaps[h.next] = ts, snap
	h.next = (h.next + 1) % historyCacheSize
}
