package partition

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/storage"
)

// Shard statistics.
//
// Each shard has two exact, persisted counters, row_count and
// data_size_bytes. The data size is logical, as YTsaurus counts a tablet's
// data: for every row, len(key) + len(value), the full key with its table
// prefix, before compression. Both are kept in one storage counter vector per
// shard (its counter key of keys.go, 03 11 <pivot>) that only ever
// changes by deltas:
//
//   - Writers record a delta per written row in Writes (RecordPut,
//     RecordDelete) against their transaction's own view of the row, so the
//     deltas of one key add up to (final state - committed state). At commit,
//     Manager.Commit routes each key to its shard in the current map and adds
//     the summed deltas to the transaction's own batch with Batch.Merge: the
//     counts commit atomically with the rows they count, and concurrent
//     writers never conflict (addition commutes).
//   - Commit holds the table's rw lock shared from routing until its batch
//     committed, and a reshape holds it exclusively while it commits its
//     swap batch, takes a Pebble snapshot and publishes the new map. So every
//     commit is either before the swap (its rows are in the snapshot and its
//     deltas went to the old shards) or after it (rows not in the snapshot,
//     deltas to the new shards).
//   - A shard made by a split gets its base count from that snapshot: the
//     swap batch writes a "pending" marker for it, the splitter counts the
//     shard's span in the snapshot without holding any lock that writers
//     need, then one landing batch merges the count into the shard's counters
//     and deletes the marker. Deltas committed meanwhile are already in the
//     counters; the merge adds the rest. When the shards replaced were exact,
//     the last new shard of a group is not scanned: its base is the group's
//     old total (read under the exclusive lock, hence as of the snapshot)
//     minus the others' counts.
//   - A shard made by a merge gets the sum of its sources' counters, read
//     under the exclusive lock and written by the swap batch itself: no scan,
//     no pending state (unless a source was pending; then it is counted).
//   - A crash between swap and landing leaves the markers. Load recounts
//     those shards from the engine before anything writes, and replaces their
//     counters with a Set. A failed landing (an I/O error) is repaired the
//     same way by the table's next reshape, or by Recount.
//
// While a shard is pending its counters hold only the deltas since the swap;
// Stats reports Pending so that sys.partitions can say so.
//
// Reads and writes (operations served) are in-memory atomic counters per
// shard (shardRuntime), reset at restart like YDB's runtime counters.

// Writes collects one transaction's statistics deltas until Manager.Commit.
// A transaction whose writes move to intents resets it at each flush: its
// statistics are counted as the intents are resolved (intentstats.go).
// The zero value is ready to use; Reset makes it reusable. Not safe for
// concurrent use.
type Writes struct {
	entries []writeEntry
	arena   []byte // Keys, back to back.
}

type writeEntry struct {
	tableID    uint64
	keyEnd     int // The key is arena[previous entry's keyEnd:keyEnd].
	rows, size int64
}

// WritesMark is a position in a Writes (Mark), to go back to (Truncate).
type WritesMark struct{ entries, arena int }

// Mark returns the current position of the record: a savepoint's.
func (w *Writes) Mark() WritesMark { return WritesMark{len(w.entries), len(w.arena)} }

// Truncate forgets the writes recorded after mark (ROLLBACK TO SAVEPOINT).
// A mark past a Reset since (a transaction's flush of its writes to
// intents, which are counted otherwise) leaves what is there.
func (w *Writes) Truncate(mark WritesMark) {
	if mark.entries > len(w.entries) || mark.arena > len(w.arena) {
		return
	}
	w.entries, w.arena = w.entries[:mark.entries], w.arena[:mark.arena]
}

// RowSize is a row's logical size: its full key plus its value.
func RowSize(key []byte, valueLen int) int64 { return int64(len(key) + valueLen) }

// Record records a write of key in table tableID that changes the table's
// row count by rows and its logical data size by size, both relative to the
// row as the transaction saw it just before this write. Every write counts as
// one operation in the shard's writes counter, even with zero deltas.
func (w *Writes) Record(tableID uint64, key []byte, rows, size int64) {
	w.arena = append(w.arena, key...)
	w.entries = append(w.entries, writeEntry{tableID: tableID, keyEnd: len(w.arena), rows: rows, size: size})
}

// RecordPut records a Set of key to a value of newLen bytes. existed and
// oldLen describe the row the transaction saw before the write (its own
// earlier write, or the committed row, which the key lock keeps stable).
func (w *Writes) RecordPut(tableID uint64, key []byte, newLen int, existed bool, oldLen int) {
	if existed {
		w.Record(tableID, key, 0, int64(newLen-oldLen))
	} else {
		w.Record(tableID, key, 1, RowSize(key, newLen))
	}
}

// RecordDelete records a Delete of key. existed and oldLen describe the row
// the transaction saw before; deleting an absent row changes nothing but is
// still a write operation.
func (w *Writes) RecordDelete(tableID uint64, key []byte, existed bool, oldLen int) {
	if existed {
		w.Record(tableID, key, -1, -RowSize(key, oldLen))
	} else {
		w.Record(tableID, key, 0, 0)
	}
}

// Len returns the number of writes recorded.
func (w *Writes) Len() int { return len(w.entries) }

// Reset forgets every write, keeping the memory.
func (w *Writes) Reset() {
	w.entries = w.entries[:0]
	w.arena = w.arena[:0]
}

// shardDelta accumulates the deltas of one shard during Commit.
type shardDelta struct {
	shard            *Shard
	rows, size, ops  int64
	tableIdx, shardK int
}

// Commit commits b, a transaction's batch holding the writes recorded in w,
// together with their statistics deltas: it routes every key of w to its
// shard in the table's current map, adds one Merge per touched shard to b,
// and commits b, holding each touched table's commit lock shared (in table id
// order) from routing until the commit returned. A nil or empty w commits b
// as is. It fails with ErrTableNotFound, without committing, if a table of w
// has no shard map or is being dropped. After Commit, w may be Reset and
// reused.
func (m *Manager) Commit(b *storage.Batch, w *Writes) error {
	if w == nil || len(w.entries) == 0 {
		return b.Commit()
	}
	return m.commitWrites(w, b, nil, nil, false)
}

// commitWrites is Commit's work on either kind of batch: b, or lb, which
// commit commits (an intent resolution's chunk; direct calls, not
// function values, keep the counters buffer off the heap on the commit
// path). With skipGone, the writes of tables that have no shard map or are
// being dropped are left out instead of failing the commit (an intent
// resolution, past its commit point).
func (m *Manager) commitWrites(w *Writes, b *storage.Batch, lb *storage.LocalBatch, commit func() error, skipGone bool) error {
	// Distinct tables, usually one.
	var one [1]*tableState
	tables := one[:0]
	var gone []uint64
	for i := range w.entries {
		id := w.entries[i].tableID
		if len(tables) > 0 && tables[len(tables)-1].id == id {
			continue
		}
		if slices.ContainsFunc(tables, func(t *tableState) bool { return t.id == id }) || slices.Contains(gone, id) {
			continue
		}
		t := m.table(id)
		if t == nil {
			if skipGone {
				gone = append(gone, id)
				continue
			}
			return fmt.Errorf("%w: table %d", ErrTableNotFound, id)
		}
		tables = append(tables, t)
	}
	if len(tables) > 1 {
		slices.SortFunc(tables, func(a, b *tableState) int { return cmpUint64(a.id, b.id) })
	}
	for i := 0; i < len(tables); i++ {
		t := tables[i]
		t.rw.RLock()
		if t.dropped {
			if skipGone {
				t.rw.RUnlock()
				gone = append(gone, t.id)
				tables = slices.Delete(tables, i, i+1)
				i--
				continue
			}
			for _, u := range tables[:i+1] {
				u.rw.RUnlock()
			}
			return fmt.Errorf("%w: table %d", ErrTableNotFound, t.id)
		}
	}
	defer func() {
		for _, t := range tables {
			t.rw.RUnlock()
		}
	}()

	// Route. Keys of one transaction usually cluster, so the last shard is
	// tried before a binary search, and the accumulator is a short list.
	var deltasBuf [4]shardDelta
	deltas := deltasBuf[:0]
	var smaps [4]*ShardMap
	last := -1
	start := 0
	for i := range w.entries {
		e := &w.entries[i]
		key := w.arena[start:e.keyEnd]
		start = e.keyEnd
		if last >= 0 && deltas[last].shard.Span.Contains(key) && tables[deltas[last].tableIdx].id == e.tableID {
			d := &deltas[last]
			d.rows, d.size, d.ops = d.rows+e.rows, d.size+e.size, d.ops+1
			continue
		}
		ti := slices.IndexFunc(tables, func(t *tableState) bool { return t.id == e.tableID })
		if ti < 0 {
			continue // a table gone (skipGone)
		}
		var sm *ShardMap
		if ti < len(smaps) {
			if smaps[ti] == nil {
				smaps[ti] = tables[ti].cur.Load()
			}
			sm = smaps[ti]
		} else {
			sm = tables[ti].cur.Load() // Stable: reshapes need rw exclusively.
		}
		k := sm.Find(key)
		if k < 0 {
			return fmt.Errorf("%w: key %s is not in table %d", ErrInvariant, storage.FormatKey(key), e.tableID)
		}
		last = slices.IndexFunc(deltas, func(d shardDelta) bool { return d.tableIdx == ti && d.shardK == k })
		if last < 0 {
			deltas = append(deltas, shardDelta{shard: &sm.shards[k], tableIdx: ti, shardK: k})
			last = len(deltas) - 1
		}
		d := &deltas[last]
		d.rows, d.size, d.ops = d.rows+e.rows, d.size+e.size, d.ops+1
	}
	var buf [16]byte
	for _, d := range deltas {
		if d.rows == 0 && d.size == 0 {
			continue
		}
		var err error
		if b != nil {
			err = b.Merge(d.shard.statsKey, storage.AppendCounters(buf[:0], d.rows, d.size))
		} else {
			err = lb.MergeCounters(d.shard.statsKey, storage.AppendCounters(buf[:0], d.rows, d.size))
		}
		if err != nil {
			return err
		}
	}
	if m.knobs.afterRoute != nil {
		m.knobs.afterRoute()
	}
	m.observeWrites(w) // observe.go
	var err error
	if b != nil {
		err = b.Commit()
	} else {
		err = commit()
	}
	if err != nil {
		return err
	}
	for _, d := range deltas {
		d.shard.rt.writes.Add(d.ops)
	}
	return nil
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ShardStats are one shard's statistics, as sys.partitions shows them.
type ShardStats struct {
	ID ShardID
	// Rows and Bytes are row_count and data_size_bytes (logical: keys plus
	// values). They are exact unless Pending.
	Rows, Bytes int64
	// Pending is set while a split's base count has not landed yet: Rows and
	// Bytes then hold only the deltas of the writes since the split, which
	// deletes can make negative. sys.partitions should show them as
	// unknown (NULL) rather than as counts.
	Pending bool
	// Reads and Writes are the in-memory operation counters.
	Reads, Writes int64
}

// Stats returns the statistics of every shard of sm, in sm's order, read
// from one consistent view of the engine (two point reads per shard). sm is
// normally the table's current map; for a shard that a concurrent reshape
// has replaced, Rows and Bytes read as zero.
func (m *Manager) Stats(sm *ShardMap) ([]ShardStats, error) {
	snap := m.store.Snapshot()
	defer snap.Close()
	out := make([]ShardStats, len(sm.shards))
	var cs []int64
	for k, s := range sm.shards {
		st := &out[k]
		st.ID, st.Reads, st.Writes = s.ID, s.Reads(), s.Writes()
		var err error
		if cs, err = readCounters(snap, s.statsKey, cs[:0], 2); err != nil {
			return nil, err
		}
		st.Rows, st.Bytes = cs[0], cs[1]
		if _, st.Pending, err = snap.Get(pendingKey(sm.tableID, s.ID)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readCounters appends the counters stored at key to dst, padded with zeros
// to at least n (an absent key is all zeros).
func readCounters(r interface {
	Get(key []byte) ([]byte, bool, error)
}, key []byte, dst []int64, n int) ([]int64, error) {
	v, _, err := r.Get(key)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	if dst, err = storage.DecodeCounters(dst, v); err != nil {
		return dst, fmt.Errorf("%w: %s: %w", ErrCorruptRecord, storage.FormatKey(key), err)
	}
	for len(dst)-start < n {
		dst = append(dst, 0)
	}
	return dst, nil
}

// TableCounters are a table's persisted reshape counters.
type TableCounters struct {
	// Splits counts shards added by splits (a split into k shards adds
	// k-1), Merges shards removed by merges (merging k shards removes k-1),
	// and Reshards the other replacements of several shards by several.
	Splits, Merges, Reshards int64
}

// TableCounters returns the table's reshape counters.
func (m *Manager) TableCounters(tableID uint64) (TableCounters, error) {
	cs, err := readCounters(m.store, tableStatsKey(tableID), nil, 3)
	if err != nil {
		return TableCounters{}, err
	}
	return TableCounters{Splits: cs[0], Merges: cs[1], Reshards: cs[2]}, nil
}

// errCancelled stops a count whose table is being dropped.
var errCancelled = errors.New("partition: count cancelled: table dropped")

// countSpan counts the rows and logical bytes of span in r. It is a full
// scan of the span: O(rows) time, O(1) memory. cancel, if not nil, is polled
// every 1024 rows.
func countSpan(r storage.Reader, span storage.Span, cancel *atomic.Bool) (rows, size int64, err error) {
	it, err := r.NewIter(span)
	if err != nil {
		return 0, 0, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		rows++
		size += RowSize(it.Key(), len(it.Value()))
		if cancel != nil && rows%1024 == 0 && cancel.Load() {
			it.Close()
			return 0, 0, errCancelled
		}
	}
	return rows, size, errors.Join(it.Error(), it.Close())
}

// migrateLegacyStats moves, at Load, the counters of a data directory
// written before they were shard-local (keys.go: legacyStatsNS, by shard
// id) to their shard's key (by pivot), in one batch, so that a crash
// leaves either layout whole. Nothing writes yet, so the new keys hold
// nothing that the Set would overwrite; the old counters were exact (or
// their shard is pending, which repairPending then recounts). A counter
// of a shard that no longer exists is dropped.
func (m *Manager) migrateLegacyStats() error {
	b := m.store.NewBatch()
	defer b.Close()
	moved, seen := 0, 0
	if err := m.store.Scan(storage.PrefixSpan(legacyStatsNS), func(k, v []byte) error {
		table, id, err := decodeShardIDKey(legacyStatsNS, k)
		if err != nil {
			return err
		}
		seen++
		if err := b.Delete(k); err != nil {
			return err
		}
		sm := m.Map(table)
		kk := -1
		if sm != nil {
			kk = sm.IndexOf(id)
		}
		if kk < 0 {
			m.log.Warn("partition: dropping statistics of an unknown shard", "table", table, "shard", id)
			return nil
		}
		moved++
		return b.Set(sm.shards[kk].statsKey, v)
	}); err != nil {
		return err
	}
	if seen == 0 {
		return nil
	}
	if err := b.Commit(); err != nil {
		return err
	}
	m.log.Info("partition: moved shard statistics to shard-local keys", "shards", moved)
	return nil
}

// repairPending recounts, at Load, every shard left pending by a crash
// between a reshape's swap and its landing. Nothing writes yet, so the count
// of the engine's current state is exact and replaces the counters.
func (m *Manager) repairPending() error {
	type pend struct {
		table uint64
		id    ShardID
		key   []byte
	}
	var todo []pend
	if err := m.store.Scan(storage.PrefixSpan(pendingNS), func(k, _ []byte) error {
		table, id, err := decodeShardIDKey(pendingNS, k)
		todo = append(todo, pend{table, id, clone(k)})
		return err
	}); err != nil {
		return err
	}
	if len(todo) == 0 {
		return nil
	}
	b := m.store.NewBatch()
	defer b.Close()
	for _, p := range todo {
		if err := b.Delete(p.key); err != nil {
			return err
		}
		sm := m.Map(p.table)
		k := -1
		if sm != nil {
			k = sm.IndexOf(p.id)
		}
		if k < 0 {
			// A marker of a shard that no longer exists is harmless debris of
			// a bug; drop it rather than refuse to start.
			m.log.Warn("partition: dropping stats-pending marker of an unknown shard", "table", p.table, "shard", p.id)
			continue
		}
		rows, size, err := countSpan(m.eng, sm.shards[k].Span, nil)
		if err != nil {
			return err
		}
		if err := b.Set(sm.shards[k].statsKey, storage.AppendCounters(nil, rows, size)); err != nil {
			return err
		}
		m.log.Info("partition: recounted shard whose split did not finish", "table", p.table, "shard", p.id, "rows", rows, "bytes", size)
	}
	return b.Commit()
}
