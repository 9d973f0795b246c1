package partition

import (
	"fmt"
	"slices"

	"github.com/pivotdb/pivotdb/storage"
)

// SortedWrites records the statistics of a bulk load whose keys come in
// ascending order (COPY's merge of its sorted runs, sql/copybulk.go):
// consecutive keys fall in the same shard, so it keeps one delta per
// shard instead of one Writes entry (and a copy of the key) per write.
//
// The load's rows become visible (an sstable ingestion) apart from the
// batch that commits their counts, so a split or merge must not land in
// between: it would count the new rows from the data and derive the
// other shards' counts from statistics that lack them. So:
//
//  1. BeginSorted takes the tables' shard maps as they are, without
//     locks, and Put routes the keys through them during the load's
//     long pass, which holds up no split or merge;
//  2. Lock, just before the rows become visible, takes the tables'
//     commit locks shared (as Manager.Commit does); if a split or merge
//     landed since BeginSorted it drops the deltas and reports it, and
//     the caller Puts every key again (through the current maps, stable
//     now);
//  3. Commit commits the counts and releases the locks (Close releases
//     them on the error paths).
type SortedWrites struct {
	m      *Manager
	tables []*tableState // ascending ids
	maps   []*ShardMap   // the maps the deltas are routed through
	deltas []shardDelta
	last   int // index in deltas of the last key's shard, -1 before any
	locked bool
}

// BeginSorted starts recording writes to the given tables (in any order;
// duplicates allowed). It fails with ErrTableNotFound if one has no shard
// map.
func (m *Manager) BeginSorted(tableIDs []uint64) (*SortedWrites, error) {
	ids := slices.Clone(tableIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	s := &SortedWrites{m: m, last: -1}
	for _, id := range ids {
		t := m.table(id)
		if t == nil {
			return nil, fmt.Errorf("%w: table %d", ErrTableNotFound, id)
		}
		s.tables = append(s.tables, t)
		s.maps = append(s.maps, t.cur.Load())
	}
	return s, nil
}

// Put records a Set of key, a new row of the table (tableID) with a value
// of valueLen bytes, as Writes.RecordPut with existed false does. Keys of
// one table should come in ascending order for the deltas to stay few;
// any order is still counted correctly.
func (s *SortedWrites) Put(tableID uint64, key []byte, valueLen int) error {
	rows, size := int64(1), RowSize(key, valueLen)
	if s.last >= 0 {
		d := &s.deltas[s.last]
		if s.tables[d.tableIdx].id == tableID && d.shard.Span.Contains(key) {
			d.rows, d.size, d.ops = d.rows+rows, d.size+size, d.ops+1
			return nil
		}
	}
	ti := slices.IndexFunc(s.tables, func(t *tableState) bool { return t.id == tableID })
	if ti < 0 {
		return fmt.Errorf("%w: table %d was not given to BeginSorted", ErrInvariant, tableID)
	}
	sm := s.maps[ti]
	k := sm.Find(key)
	if k < 0 {
		return fmt.Errorf("%w: key %s is not in table %d", ErrInvariant, storage.FormatKey(key), tableID)
	}
	s.last = slices.IndexFunc(s.deltas, func(d shardDelta) bool { return d.tableIdx == ti && d.shardK == k })
	if s.last < 0 {
		s.deltas = append(s.deltas, shardDelta{shard: &sm.shards[k], tableIdx: ti, shardK: k})
		s.last = len(s.deltas) - 1
	}
	d := &s.deltas[s.last]
	d.rows, d.size, d.ops = d.rows+rows, d.size+size, d.ops+1
	return nil
}

// Lock takes the tables' commit locks shared, until Commit or Close: no
// split or merge of them lands meanwhile. reroute is true when one landed
// since BeginSorted: the deltas are dropped, and the caller must Put every
// key again. It fails with ErrTableNotFound, holding nothing, when a
// table is being dropped.
func (s *SortedWrites) Lock() (reroute bool, err error) {
	for i, t := range s.tables {
		t.rw.RLock()
		if t.dropped {
			for _, u := range s.tables[:i+1] {
				u.rw.RUnlock()
			}
			return false, fmt.Errorf("%w: table %d", ErrTableNotFound, t.id)
		}
	}
	s.locked = true
	for i, t := range s.tables {
		if cur := t.cur.Load(); cur != s.maps[i] {
			s.maps[i], reroute = cur, true
		}
	}
	if reroute {
		s.deltas, s.last = s.deltas[:0], -1
	}
	return reroute, nil
}

// Commit adds one Merge of the statistics counters per shard written to
// b, commits b, adds the shards' write operations, and releases the
// locks. Lock must have been called.
func (s *SortedWrites) Commit(b *storage.Batch) error {
	if !s.locked {
		return fmt.Errorf("%w: SortedWrites.Commit without Lock", ErrInvariant)
	}
	defer s.Close()
	var buf [16]byte
	for _, d := range s.deltas {
		if d.rows == 0 && d.size == 0 {
			continue
		}
		if err := b.Merge(d.shard.statsKey, storage.AppendCounters(buf[:0], d.rows, d.size)); err != nil {
			return err
		}
	}
	if err := b.Commit(); err != nil {
		return err
	}
	for _, d := range s.deltas {
		d.shard.rt.writes.Add(d.ops)
	}
	return nil
}

// Close releases the locks Lock took, if Commit has not (it may be
// called more than once).
func (s *SortedWrites) Close() {
	if !s.locked {
		return
	}
	s.locked = false
	for _, t := range s.tables {
		t.rw.RUnlock()
	}
}
