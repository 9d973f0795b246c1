package sql

import (
	"context"
	"github.com/pivotdb/pivotdb/panics"

	"github.com/pivotdb/pivotdb/sql/catalog"
)

// KEY_BLOOM_FILTER (design §9). The setting lives in the catalog; the
// storage engine keeps the set of tables with it on, which its filter policy
// reads when Pebble writes an sstable (storage/keyfilter.go). The set is
// rebuilt from the catalog when the engine opens and after every schema
// change, so CREATE TABLE ... WITH (KEY_BLOOM_FILTER = ENABLED) and ALTER
// take effect for the next flush, which writes to such a table bring
// within about a second (storage/keyfilterflush.go). Sstables written
// before keep what they were written with, which never makes a lookup miss
// a row: each one records the tables its filter covers.
//
// An ALTER that switches the setting also starts a background compaction of
// the table (storage.CompactTable), so that older data gets (or drops) its
// filter soon rather than whenever Pebble would next rewrite it; design §9
// says older data follows "after compaction".

// syncKeyFilters hands the storage engine the tables with KEY_BLOOM_FILTER on.
func (e *Engine) syncKeyFilters() {
	snap := e.catalog.Snapshot()
	var ids []uint64
	for _, db := range snap.Databases() {
		for _, t := range snap.Tables(db.ID) {
			if t.Settings.BloomFilter() {
				ids = append(ids, t.ID)
			}
		}
	}
	e.storage.SetKeyFilterTables(ids)
}

// keyFilterChanged is called after an ALTER committed: when it switched the
// table's KEY_BLOOM_FILTER, the table's data is rewritten in the background.
func (e *Engine) keyFilterChanged(old, cur *catalog.Table) {
	if old.Settings.BloomFilter() == cur.Settings.BloomFilter() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if e.bgCtx == nil {
		e.bgCtx, e.bgCancel = context.WithCancel(context.Background())
	}
	ctx := e.bgCtx
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		// A panic fails this rewrite only (logged and counted): a
		// compaction changes how data is stored, never what it is.
		err := func() (err error) {
			defer panics.Recover("sql: key filter rewrite", &err)
			panics.Inject("sql.keyfilter.compact")
			return e.storage.CompactTable(ctx, cur.ID)
		}()
		if err != nil && ctx.Err() == nil && e.opts.Events != nil {
			e.opts.Events.Error("key filter compaction failed", "table", cur.Name, "err", err)
		}
	}()
}

// stopBackground cancels the background compactions and waits for them.
func (e *Engine) stopBackground() {
	e.mu.Lock()
	cancel := e.bgCancel
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	e.bg.Wait()
}

// KeyFilterBytes returns the bytes of key bloom filter per table id
// (storage.Engine.KeyFilterBytes), for sys views and tests.
func (e *Engine) KeyFilterBytes() (map[uint64]uint64, error) {
	return e.storage.KeyFilterBytes()
}
