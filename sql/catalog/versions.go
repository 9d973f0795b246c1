package catalog

import (
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// The catalog's versions (doc.go, "Versions"): every installed snapshot is
// a generation tagged with the commit timestamp of the schema change that
// made it, installed before any read at or above that timestamp can start
// (storage.Batch.OnCommitted). A statement reads the generation of its
// read timestamp (At), so it sees the schema and the rows of a schema
// change together or neither. The last maxGenerations generations since
// the server's start are kept in memory, a cache of the catalog's history
// on disk (history.go), which older read timestamps read.

// maxGenerations bounds the generations kept. Each shares its descriptors
// with the others; only the maps are its own.
const maxGenerations = 32

// generation is a snapshot and the timestamp from which it is current.
type generation struct {
	ts   hlc.Timestamp
	snap *Snapshot
}

// setCurrent installs snap as the current snapshot from ts on. Timestamps
// only grow: a change installed without one (background work, startup)
// counts from the previous generation's. Call with c.current locked.
func (c *Catalog) setCurrent(snap *Snapshot, ts hlc.Timestamp) {
	c.current.snap = snap
	if n := len(c.gens); n > 0 && ts.Less(c.gens[n-1].ts) {
		ts = c.gens[n-1].ts
	}
	if n := len(c.gens); n > 0 && c.gens[n-1].ts == ts {
		c.gens[n-1].snap = snap
		return
	}
	c.gens = append(c.gens, generation{ts: ts, snap: snap})
	if len(c.gens) > maxGenerations {
		c.gens = append(c.gens[:0], c.gens[len(c.gens)-maxGenerations:]...)
	}
}

// At returns the snapshot as of read timestamp ts: the newest generation
// installed at or below it, or, for a ts before the generations in memory
// (before the server's start, or more than maxGenerations schema changes
// ago), the catalog's history on disk at ts (history.go). exact is false
// when neither knows ts (a time before the history on disk starts or
// below its GC threshold): the oldest generation kept is returned then.
func (c *Catalog) At(ts hlc.Timestamp) (snap *Snapshot, exact bool) {
	c.current.RLock()
	for i := len(c.gens) - 1; i >= 0; i-- {
		if c.gens[i].ts.LessEq(ts) {
			if c.historyStart.LessEq(ts) {
				snap = c.gens[i].snap
				c.current.RUnlock()
				return snap, true
			}
			break
		}
	}
	if len(c.gens) == 0 {
		snap = c.current.snap
		c.current.RUnlock()
		return snap, true
	}
	oldest := c.gens[0].snap
	c.current.RUnlock()
	if snap, ok := c.historyAt(ts); ok {
		return snap, true
	}
	return oldest, false
}

// InstallAt is Install for a change whose batch committed at ts (call it
// from the batch's OnCommitted).
func (ch *Change) InstallAt(ts hlc.Timestamp) {
	if ch.base != nil {
		panic("catalog: Install of a transaction's pending change (use Catalog.Apply)")
	}
	ch.c.current.Lock()
	ch.c.setCurrent(ch.snap, ts)
	ch.c.current.Unlock()
	ch.c.mu.Unlock()
}

// SetHistoryStart records the time from which the generations are the
// catalog's history: the clock's time once the catalog was loaded (the
// generation loaded from the newest records is not the schema of a time
// before the start). At reads the history on disk before it.
func (c *Catalog) SetHistoryStart(ts hlc.Timestamp) {
	c.current.Lock()
	c.historyStart = ts
	c.current.Unlock()
}
