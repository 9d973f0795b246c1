package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// vacuum runs VACUUM and ANALYZE.
//
// VACUUM [FULL] first removes, in each table's key span and those of its
// indexes, the row versions no read can need any more — what the
// background GC pass would remove next (storage.GCVersions): versions
// older than the retention window (--gc-ttl) that a newer one shadows, and
// tombstones past it — then compacts the spans down to the bottom level of
// the LSM (storage.CompactTable), which drops what was deleted and gives
// the space back: what VACUUM FULL does for a heap. Plain VACUUM does the
// same, since a partial compaction would leave some of it. FREEZE has
// nothing more to do (no transaction ids wrap around). Versions inside
// the window stay: historical reads (AS OF SYSTEM TIME) may need them.
//
// ANALYZE recounts the statistics PivotDB keeps, the row and byte counts
// of every shard of the table and its indexes (partition.Manager.Recount):
// they drive pg_stat_user_tables.n_live_tup, the object sizes, and the
// balancer's splits and merges. They stay exact as writes commit, so this
// repairs what a crash in the middle of a split's count or a bug left
// behind, and counts a table whose split counts are still pending.
//
// As in PostgreSQL, VACUUM cannot run inside a transaction block (25001);
// tables the user does not own are skipped with a WARNING; without a list
// every table of the database the user owns is processed.
func (s *Session) vacuum(ctx context.Context, p *bind.Vacuum) (Result, error) {
	tag := "ANALYZE"
	if p.Vacuum.Vacuum {
		tag = "VACUUM"
		if s.inTxnBlock() {
			return nil, sqlerr.New(sqlerr.ActiveSQLTransaction, "VACUUM cannot run inside a transaction block")
		}
	}
	snap := s.catalogSnap()
	acc := s.access(snap)
	var tables []*catalog.Table
	if len(p.Tables) == 0 {
		for _, t := range snap.Tables(s.db.ID) {
			if strings.HasPrefix(t.Name, bind.TempNamePrefix) && (s.tempPrefix == "" || !strings.HasPrefix(t.Name, s.tempPrefix)) {
				continue // another session's temporary table
			}
			if acc.Owns(&t.Owned) {
				tables = append(tables, t)
			}
		}
	}
	for _, parts := range p.Tables {
		name := parts[len(parts)-1]
		if len(parts) == 2 && !strings.EqualFold(parts[0], "pg_temp") && !strings.EqualFold(parts[0], s.db.Name) && !strings.EqualFold(parts[0], "public") {
			return nil, sqlerr.NotSupported("%s of a table of another database (%s)", tag, parts[0])
		}
		t, ok := s.truncateTarget(snap, parts)
		if !ok {
			if _, isView := snap.View(s.db.ID, name); isView {
				// PostgreSQL skips a view with this warning.
				s.notice("WARNING", sqlerr.WrongObjectType, "skipping %q --- cannot %s non-tables or special system tables", name, strings.ToLower(tag))
				continue
			}
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		}
		if !acc.Owns(&t.Owned) {
			s.notice("WARNING", sqlerr.InsufficientPrivilege, "permission denied to %s %q, skipping it", strings.ToLower(tag), name)
			continue
		}
		tables = append(tables, t)
	}
	for _, t := range tables {
		if err := s.vacuumTable(ctx, p.Vacuum, t); err != nil {
			return nil, err
		}
	}
	return &tagResult{tag: tag}, nil
}

// vacuumTable vacuums and/or analyzes one table and its indexes.
func (s *Session) vacuumTable(ctx context.Context, p *parser.Vacuum, t *catalog.Table) error {
	name := strings.TrimPrefix(t.Name, s.tempPrefix)
	ids := []uint64{t.ID}
	for _, ix := range t.Indexes {
		ids = append(ids, ix.ID)
	}
	c := s.e.tableActivity.of(t.ID)
	if p.Vacuum {
		start := time.Now()
		// First the versions no read can need any more (those the GC
		// loop would remove on its next pass: older than --gc-ttl and
		// shadowed by a newer version, or a tombstone), then the
		// compaction that gives their space back.
		var gc storage.GCStats
		for _, id := range ids {
			// Shard by shard, as the GC loop does: each shard's threshold
			// rises to its table's GC_TTL window, never above an open read.
			st, err := s.e.storage.CollectAndCompact(ctx, s.e.shardSpans(id), func() error {
				return s.e.storage.CompactTable(ctx, id)
			})
			if err != nil {
				return s.mapError(ctx, fmt.Errorf("vacuum %s: %w", name, err))
			}
			gc.Versions += st.Versions
			gc.Deleted += st.Deleted
		}
		c.vacuumed(time.Now())
		if p.Verbose {
			s.notice("INFO", sqlerr.SuccessfulCompletion, "vacuuming \"%s.public.%s\": removed %d of %d row versions, compacted the table and %d index(es) in %s",
				s.db.Name, name, gc.Deleted, gc.Versions, len(t.Indexes), time.Since(start).Round(time.Millisecond))
		}
	}
	if p.Analyze {
		var rows int64
		for k, id := range ids {
			if _, err := s.e.shards.Recount(id); err != nil && !errors.Is(err, partition.ErrTableNotFound) {
				return fmt.Errorf("analyze %s: %w", name, err)
			}
			if k == 0 {
				st, err := s.tableStats(id)
				if err != nil {
					return err
				}
				rows = st.LiveRows
			}
		}
		c.analyzed(time.Now())
		if p.Verbose {
			s.notice("INFO", sqlerr.SuccessfulCompletion, "analyzing \"public.%s\": %d live rows counted in its shards", name, rows)
		}
	}
	return nil
}
