package sql

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
)

// tableActivity counts, per table, the reads statements start and the
// rows they insert, update and delete, in memory since Open, for
// pg_stat_user_tables (PostgreSQL's cumulative statistics likewise count
// what statements did, committed or not).
type tableActivity struct {
	m sync.Map // table id -> *tableCounters
	// rowsRead is every table's rows read from storage together
	// (/metrics' pivotdb_rows_read_total).
	rowsRead atomic.Int64
}

type tableCounters struct {
	seqScan, idxScan, ins, upd, del atomic.Int64
	// seqTupRead counts rows read by range scans, idxTupFetch rows found
	// by point lookups and index entries read by index scans.
	seqTupRead, idxTupFetch atomic.Int64
	// VACUUM and ANALYZE runs: how many, and when the last one ended
	// (Unix microseconds; 0: never).
	vacuums, analyzes       atomic.Int64
	lastVacuum, lastAnalyze atomic.Int64
}

func (c *tableCounters) vacuumed(at time.Time) {
	c.vacuums.Add(1)
	c.lastVacuum.Store(at.UnixMicro())
}

func (c *tableCounters) analyzed(at time.Time) {
	c.analyzes.Add(1)
	c.lastAnalyze.Store(at.UnixMicro())
}

func (a *tableActivity) of(id uint64) *tableCounters {
	if c, ok := a.m.Load(id); ok {
		return c.(*tableCounters)
	}
	c, _ := a.m.LoadOrStore(id, &tableCounters{})
	return c.(*tableCounters)
}

// CountScan makes tableActivity an exec.ScanCounter.
func (a *tableActivity) CountScan(tableID uint64, index bool) {
	if index {
		a.of(tableID).idxScan.Add(1)
	} else {
		a.of(tableID).seqScan.Add(1)
	}
}

// CountRowsRead makes tableActivity an exec.ScanCounter.
func (a *tableActivity) CountRowsRead(tableID uint64, index bool, rows int64) {
	a.rowsRead.Add(rows)
	if index {
		a.of(tableID).idxTupFetch.Add(rows)
	} else {
		a.of(tableID).seqTupRead.Add(rows)
	}
}

func (a *tableActivity) countWrites(tableID uint64, ins, upd, del int64) {
	c := a.of(tableID)
	c.ins.Add(ins)
	c.upd.Add(upd)
	c.del.Add(del)
}

// tableStats is the binder's pg_stat_user_tables source: the counters and
// the live rows of the table's shards (the shard statistics sys.partitions
// shows; NULL-free once a split's counts have landed).
func (s *Session) tableStats(tableID uint64) (pgcatalog.TableStats, error) {
	c := s.e.tableActivity.of(tableID)
	st := pgcatalog.TableStats{SeqScan: c.seqScan.Load(), IdxScan: c.idxScan.Load(),
		SeqTupRead: c.seqTupRead.Load(), IdxTupFetch: c.idxTupFetch.Load(),
		Inserted: c.ins.Load(), Updated: c.upd.Load(), Deleted: c.del.Load(),
		Vacuums: c.vacuums.Load(), Analyzes: c.analyzes.Load(),
		LastVacuum: c.lastVacuum.Load(), LastAnalyze: c.lastAnalyze.Load()}
	_, shards, _, err := s.e.shards.TableStats(tableID)
	if errors.Is(err, partition.ErrTableNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	for _, sh := range shards {
		if sh.Pending {
			st.LiveRowsUnknown = true
		}
		st.LiveRows += sh.Rows
	}
	return st, nil
}

// relationSize is the binder's pg_relation_size source: the data sizes of
// the shards of a table or index (sys.partitions' data_size_bytes, keys
// plus values). While a split's base count has not landed a shard counts
// only its later writes, so the sum may lag for a moment; it is never
// negative.
func (s *Session) relationSize(id uint64) (int64, error) {
	_, shards, _, err := s.e.shards.TableStats(id)
	if errors.Is(err, partition.ErrTableNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, sh := range shards {
		n += sh.Bytes
	}
	return max(n, 0), nil
}
