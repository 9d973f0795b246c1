package sql

import (
	"time"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
)

// Garbage collection of old row versions (issue 16, item 7): the storage
// engine runs the passes (storage/gc.go, storage/gcthreshold.go); the SQL
// layer tells it the shards to collect and each table's retention window,
// GC_TTL (tablesettings), or the server's --gc-ttl when a table has none.
// Index entries are kept as long as their table's rows: AS OF SYSTEM TIME
// reads a table and its indexes at one timestamp.

// startGC hands the engine's GC its policy.
func (e *Engine) startGC() {
	e.storage.SetGCPolicy(storage.GCPolicy{Targets: e.gcTargets, TTL: e.gcTTL})
}

// gcTTL returns the retention window of a table or index by id; ok is
// false when it has no GC_TTL (or is unknown), and the default applies.
func (e *Engine) gcTTL(id uint64) (time.Duration, bool) {
	snap := e.catalog.Snapshot()
	if t, _, ok := snap.IndexByID(id); ok {
		return t.Settings.GCTTLDuration()
	}
	if t, ok := snap.TableByID(id); ok {
		return t.Settings.GCTTLDuration()
	}
	return 0, false
}

// gcTargets lists every shard of every table and index with its window,
// and the catalog's history (meta.CatalogHistorySpan) with the longest
// window of all: a table whose rows a historical read can still see has
// its schema of then (sql/catalog/history.go).
func (e *Engine) gcTargets() []storage.GCTarget {
	var out []storage.GCTarget
	longest, _ := e.storage.DefaultTTL()
	for _, id := range e.shards.Tables() {
		ttl, ok := e.gcTTL(id)
		if ok {
			longest = max(longest, ttl)
		}
		for _, span := range e.shardSpans(id) {
			out = append(out, storage.GCTarget{Span: span, TTL: ttl})
		}
	}
	if longest > 0 {
		out = append(out, storage.GCTarget{Span: meta.CatalogHistorySpan(), TTL: longest})
	}
	return out
}

// shardSpans returns the spans of a table's (or index's) current shards;
// none for a table without a map.
func (e *Engine) shardSpans(id uint64) []storage.Span {
	m := e.shards.Map(id)
	if m == nil {
		return nil
	}
	out := make([]storage.Span, 0, m.Len())
	for _, sh := range m.Shards() {
		out = append(out, sh.Span)
	}
	return out
}
