package sql

import (
	"errors"

	"github.com/pivotdb/pivotdb/partition"
)

// EngineStats are the engine's figures that metrics export and the
// console charts: counted over every table and index of every database.
type EngineStats struct {
	// Tables counts the tables and indexes that have shards; Shards their
	// shards.
	Tables, Shards int
	// Splits, Merges and Reshards are the tables' reshape counters
	// (sys.partitions' splits and merges, summed): shards added by splits,
	// removed by merges, and other replacements. A dropped table's go with
	// it.
	Splits, Merges, Reshards int64
	// TTLRowsErased counts the rows the TTL runner erased since Open.
	TTLRowsErased int64
	// RowsRead counts the rows statements read from storage since Open
	// (pg_stat_user_tables' seq_tup_read plus idx_tup_fetch over all tables).
	RowsRead int64
}

// Stats reads the engine's figures. Each table's map and counters are read
// together (partition.Manager.TableStats); tables dropped meanwhile are
// skipped.
func (e *Engine) Stats() (EngineStats, error) {
	st := EngineStats{TTLRowsErased: e.ttlErased.Load(), RowsRead: e.tableActivity.rowsRead.Load()}
	for _, id := range e.shards.Tables() {
		sm := e.shards.Map(id)
		if sm == nil {
			continue
		}
		tc, err := e.shards.TableCounters(id)
		if errors.Is(err, partition.ErrTableNotFound) {
			continue
		}
		if err != nil {
			return st, err
		}
		st.Tables++
		st.Shards += sm.Len()
		st.Splits += tc.Splits
		st.Merges += tc.Merges
		st.Reshards += tc.Reshards
	}
	return st, nil
}
