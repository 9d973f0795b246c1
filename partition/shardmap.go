package partition

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/storage"
)

// ShardID identifies a shard for its whole life. Ids are allocated from one
// engine-wide sequence and never reused: a split or merge retires the ids of
// the shards it replaces and gives the new shards fresh ones, so a stale id
// (held by a planner or the balancer across a split) is detected, never
// confused with another shard.
type ShardID uint64

// Shard is one key range of a table: the rows in Span = [pivot_k,
// pivot_{k+1}), the last shard ending at the end of the table's key space.
type Shard struct {
	ID   ShardID
	Span storage.Span

	// rt holds the in-memory counters. It is shared by every ShardMap value
	// in which the shard appears, so counters survive the splits and merges
	// of its neighbours.
	rt *shardRuntime
	// statsKey is the persisted counters' key (keys.go: addressed by the
	// pivot), built once per shard so that the commit path does not
	// allocate it.
	statsKey []byte
}

// shardRuntime holds a shard's operation counters. They are not persisted:
// like YDB's runtime partition counters they restart at zero with the
// process.
type shardRuntime struct {
	reads  atomic.Int64
	writes atomic.Int64
	// ttlLastRun is when the TTL runner last finished the shard (Unix
	// microseconds; 0: never), ttlErased the rows it erased (ttl.go).
	ttlLastRun atomic.Int64
	ttlErased  atomic.Int64
}

// Reads returns the rows read from the shard since it was created
// or the process started.
func (s Shard) Reads() int64 { return s.rt.reads.Load() }

// Writes returns the row writes committed to the shard since it was created
// or the process started (Manager.Commit counts them).
func (s Shard) Writes() int64 { return s.rt.writes.Load() }

// AddReads counts n rows read from the shard (YDB's RowReads): the SQL
// layer adds the rows each scan of the shard visited, so that pruning shows
// in the counter. A zero Shard (a read without a shard map) counts nothing.
func (s Shard) AddReads(n int64) {
	if s.rt != nil {
		s.rt.reads.Add(n)
	}
}

// ShardMap is the partitioning of one table into shards at a moment in time.
//
// A ShardMap is immutable: splits and merges build a new one and publish it
// atomically (copy-on-write), so readers take the current map with
// Manager.Map and use it without locks for as long as they like. A map that
// is no longer current still describes a valid partitioning of the key space,
// which is all a scan needs: shards only decide where a read is cut, never
// which rows exist.
//
// Pivots are full keys: pivot 0 is storage.TablePrefix(table), the empty key
// tuple; every other pivot is the table prefix followed by one or more
// encoded key columns. Pivots strictly ascend, and shard k holds [pivot_k,
// pivot_{k+1}), the last one ending at storage.PrefixEnd(table prefix). The
// shards therefore cover the table's span exactly, without overlap
// (CheckInvariants).
type ShardMap struct {
	tableID uint64
	version uint64
	pivots  [][]byte // pivots[k] == shards[k].Span.Start; kept apart for a compact binary search.
	shards  []Shard
}

// newShardMap builds a map from its pivots and ids. keep, if not nil, holds
// for each position the shard it continues from the previous map (a zero
// Shard for a new one), whose counters and stats key are reused.
func newShardMap(tableID, version uint64, pivots [][]byte, ids []ShardID, keep []Shard) *ShardMap {
	end := storage.TableSpan(tableID).End
	m := &ShardMap{tableID: tableID, version: version, pivots: pivots, shards: make([]Shard, len(pivots))}
	for k := range pivots {
		s := &m.shards[k]
		s.ID = ids[k]
		s.Span.Start = pivots[k]
		if k+1 < len(pivots) {
			s.Span.End = pivots[k+1]
		} else {
			s.Span.End = end
		}
		if keep != nil && keep[k].rt != nil {
			s.rt, s.statsKey = keep[k].rt, keep[k].statsKey
		} else {
			s.rt, s.statsKey = &shardRuntime{}, statsKey(s.Span.Start)
		}
	}
	return m
}

// TableID returns the table the map partitions.
func (m *ShardMap) TableID() uint64 { return m.tableID }

// Version counts the changes of the table's map since Load: every split,
// merge, reshard or recount installs a map with a higher version. Caches of
// derived data (pruned shard lists) can key on it.
func (m *ShardMap) Version() uint64 { return m.version }

// Len returns the number of shards.
func (m *ShardMap) Len() int { return len(m.shards) }

// Shard returns shard k, 0 <= k < Len.
func (m *ShardMap) Shard(k int) Shard { return m.shards[k] }

// Shards returns the shards in key order. The slice is a copy; the spans'
// bytes are shared and must not be modified.
func (m *ShardMap) Shards() []Shard { return append([]Shard(nil), m.shards...) }

// Pivots returns the pivots, pivot 0 (the table prefix) first. The slice is
// a copy; the keys are shared and must not be modified.
func (m *ShardMap) Pivots() [][]byte { return append([][]byte(nil), m.pivots...) }

// Splits returns the pivots after pivot 0: the boundaries that SHOW CREATE
// TABLE prints as PARTITION_AT_KEYS and that Reshard or Create take.
func (m *ShardMap) Splits() [][]byte { return append([][]byte(nil), m.pivots[1:]...) }

// IndexOf returns the position of the shard with the given id, or -1 if the
// map has no such shard.
func (m *ShardMap) IndexOf(id ShardID) int {
	for k := range m.shards {
		if m.shards[k].ID == id {
			return k
		}
	}
	return -1
}

// Find returns the index of the shard holding key, or -1 if key lies outside
// the table's span. It is a binary search over the pivots: O(log Len)
// comparisons and no allocation.
func (m *ShardMap) Find(key []byte) int {
	// The last pivot <= key. pivots[0] is the table prefix, so a key of the
	// table always finds one.
	lo, hi := 0, len(m.pivots) // Invariant: pivots[<lo] <= key < pivots[>=hi].
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(m.pivots[mid], key) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	k := lo - 1
	if k < 0 || (k == len(m.shards)-1 && !m.shards[k].Span.Contains(key)) {
		return -1
	}
	return k
}

// OverlappingRange returns the shards that hold some key of span as the
// index range [lo, hi); lo == hi when none does. A nil span.End is
// unbounded.
func (m *ShardMap) OverlappingRange(span storage.Span) (lo, hi int) {
	table := storage.Span{Start: m.pivots[0], End: m.shards[len(m.shards)-1].Span.End}
	span = span.Intersect(table)
	if span.Empty() {
		return 0, 0
	}
	lo = m.Find(span.Start)
	// hi is the number of pivots < span.End: shard k overlaps iff
	// pivot_k < End (and its own end > Start, which k >= lo ensures).
	l, h := lo+1, len(m.pivots)
	for l < h {
		mid := int(uint(l+h) >> 1)
		if bytes.Compare(m.pivots[mid], span.End) < 0 {
			l = mid + 1
		} else {
			h = mid
		}
	}
	return lo, l
}

// Overlapping returns the indexes of the shards that hold some key of span,
// in key order: the shards a read of span must visit (shard pruning).
func (m *ShardMap) Overlapping(span storage.Span) []int {
	lo, hi := m.OverlappingRange(span)
	if lo == hi {
		return nil
	}
	out := make([]int, 0, hi-lo)
	for k := lo; k < hi; k++ {
		out = append(out, k)
	}
	return out
}

// CheckInvariants verifies the map's structure: pivot 0 is the table prefix;
// every other pivot is the table prefix followed by at least one encoded key
// column (it starts with a NULL or value tag); pivots strictly ascend; shard
// k's span is [pivot_k, pivot_{k+1}), the last ending at the table's end;
// ids are non-zero and distinct. Together these mean that the shards cover
// the table's span exactly, without overlap. Manager.CheckInvariants adds the
// checks that need the key schema and the persisted state.
func (m *ShardMap) CheckInvariants() error {
	prefix := storage.TablePrefix(m.tableID)
	table := storage.TableSpan(m.tableID)
	if len(m.pivots) == 0 || len(m.pivots) != len(m.shards) {
		return fmt.Errorf("%w: table %d: %d pivots, %d shards", ErrInvariant, m.tableID, len(m.pivots), len(m.shards))
	}
	if !bytes.Equal(m.pivots[0], prefix) {
		return fmt.Errorf("%w: table %d: pivot 0 is %s, not the table prefix", ErrInvariant, m.tableID, storage.FormatKey(m.pivots[0]))
	}
	ids := make(map[ShardID]bool, len(m.shards))
	for k, s := range m.shards {
		if k > 0 {
			if err := checkPivotShape(m.tableID, m.pivots[k]); err != nil {
				return fmt.Errorf("%w: table %d: pivot %d: %w", ErrInvariant, m.tableID, k, err)
			}
			if bytes.Compare(m.pivots[k-1], m.pivots[k]) >= 0 {
				return fmt.Errorf("%w: table %d: pivots %d and %d do not ascend: %s, %s", ErrInvariant,
					m.tableID, k-1, k, storage.FormatKey(m.pivots[k-1]), storage.FormatKey(m.pivots[k]))
			}
		}
		want := storage.Span{Start: m.pivots[k], End: table.End}
		if k+1 < len(m.pivots) {
			want.End = m.pivots[k+1]
		}
		if !s.Span.Equal(want) {
			return fmt.Errorf("%w: table %d: shard %d spans %s, want %s", ErrInvariant, m.tableID, k, s.Span, want)
		}
		if s.ID == 0 || ids[s.ID] {
			return fmt.Errorf("%w: table %d: shard %d has id %d, zero or repeated", ErrInvariant, m.tableID, k, s.ID)
		}
		ids[s.ID] = true
		if s.rt == nil || !bytes.Equal(s.statsKey, statsKey(s.Span.Start)) {
			return fmt.Errorf("%w: table %d: shard %d is not initialised", ErrInvariant, m.tableID, k)
		}
	}
	return nil
}

// checkPivotShape checks what can be checked of a pivot other than pivot 0
// without the key schema: it lies in the table's span, strictly after the
// table prefix, and its first column starts with a NULL or value tag (a
// <Max> marker is a bound, not a key prefix).
func checkPivotShape(tableID uint64, pivot []byte) error {
	prefix := storage.TablePrefix(tableID)
	if !bytes.HasPrefix(pivot, prefix) {
		return fmt.Errorf("%w: %s is not a key of table %d", ErrInvalidPivot, storage.FormatKey(pivot), tableID)
	}
	if len(pivot) == len(prefix) {
		return fmt.Errorf("%w: the empty key is pivot 0, not a split point", ErrInvalidPivot)
	}
	if t := storage.Tag(pivot[len(prefix)]); t != storage.TagNull && t != storage.TagValue {
		return fmt.Errorf("%w: %s does not start with a key column", ErrInvalidPivot, storage.FormatKey(pivot))
	}
	return nil
}

// String renders the map one shard a line, for tests and debugging:
//
//	table 7 v3
//	  0 #1 [/Table/7/ .. /Table/7/0180000000000000000a)
//	  1 #4 [/Table/7/0180000000000000000a .. 0x0300000000000000080)
func (m *ShardMap) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "table %d v%d\n", m.tableID, m.version)
	for k, s := range m.shards {
		fmt.Fprintf(&sb, "  %d #%d %s\n", k, s.ID, s.Span)
	}
	return sb.String()
}
