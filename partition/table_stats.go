package partition

// TableStats returns the table's current map together with the statistics
// of its shards and the table's reshape counters, read from a snapshot that
// matches the map: taken under the table's commit lock, so no split or
// merge lies between them.
//
// Stats(Map(id)) can straddle a concurrent reshape: the shards it replaced
// then read as zero, and a table's row counts stop adding up for one read.
// With the balancer splitting and merging in the background that is no
// longer rare, so sys.partitions reads through TableStats: every row it
// shows belongs to one map, and the counts add up to the table's rows at
// one moment (shards whose split has not landed its counts yet report
// Pending).
func (m *Manager) TableStats(tableID uint64) (*ShardMap, []ShardStats, TableCounters, error) {
	var tc TableCounters
	sm, snap, err := viewWith(m, tableID, m.store.Snapshot)
	if err != nil {
		return nil, nil, tc, err
	}
	defer snap.Close()
	out := make([]ShardStats, len(sm.shards))
	var cs []int64
	for k, s := range sm.shards {
		st := &out[k]
		st.ID, st.Reads, st.Writes = s.ID, s.Reads(), s.Writes()
		if cs, err = readCounters(snap, s.statsKey, cs[:0], 2); err != nil {
			return nil, nil, tc, err
		}
		st.Rows, st.Bytes = cs[0], cs[1]
		if _, st.Pending, err = snap.Get(pendingKey(tableID, s.ID)); err != nil {
			return nil, nil, tc, err
		}
	}
	if cs, err = readCounters(snap, tableStatsKey(tableID), cs[:0], 3); err != nil {
		return nil, nil, tc, err
	}
	tc = TableCounters{Splits: cs[0], Merges: cs[1], Reshards: cs[2]}
	return sm, out, tc, nil
}
