package partition

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/pivotdb/pivotdb/panics"
	"slices"

	"github.com/pivotdb/pivotdb/storage"
)

// Resharding: Split, Merge, Reshard and Recount all replace a table's pivot
// list by another and share one implementation, reshape. It changes only
// metadata, in one atomic batch (the swap), and never moves a row: a shard is
// just a key range of the one Pebble instance.
//
// The old and new pivot lists are cut into groups at the pivots they share.
// A group whose one old shard equals its one new shard is unchanged: the
// shard keeps its id, counters and statistics. In any other group every new
// shard gets a fresh id, and its statistics come from the old shards (a
// merge: their sum) or from a count of a snapshot (a split; see stats.go).
//
//	old  |#3      |#4           |#5    |#6          |
//	new  |#3      |#9   |#10    |#11                |
//	      unchanged  split #4    merge #5 and #6
//
// Steps, with the table's op lock held throughout:
//
//  1. plan: compute and validate the new pivots from the current map;
//  2. swap: take meta and the table's rw lock exclusively (waiting for the
//     commits in flight), read the old shards' counters, commit one batch
//     that rewrites the shard records, pending markers and counters, take a
//     snapshot, publish the new map, release the locks;
//  3. count the pending shards in the snapshot (no lock writers need);
//  4. land: commit one batch merging the counts and deleting the markers.
//
// An error in steps 3 or 4 comes back together with the new map: the swap
// has committed and the new shards serve, but their statistics stay pending
// until the table's next reshape, a Recount or the next Load repairs them.
// A reshape of a table waits for the previous one's count to finish; nothing
// else does.

// Split adds pivots at the given keys: each shard that contains one or more
// of them is replaced by the shards between them, with fresh ids. Keys may
// come in any order; duplicates and keys that already are pivots are
// ignored. Each key must be a valid pivot (see ShardMap): the table prefix
// followed by whole key columns. Split returns the new map once the new
// shards' statistics are exact.
func (m *Manager) Split(tableID uint64, at [][]byte) (*ShardMap, error) {
	return m.reshape(tableID, "split", false, false, m.splitPlan(tableID, at))
}

// SplitInBackground is Split, but returns as soon as the swap has committed
// and the new map is published: the new shards serve at once, marked
// pending, and their rows are counted by a goroutine that then lands the
// counts. So its cost does not grow with the shard's size (a 1 GB shard
// splits as fast as a 1 MB one), while the count, which reads about half
// the shard, happens off the caller's path. The table's next reshape, and
// CheckInvariants, wait for the count; WaitBackground waits for every
// count. A count that fails (the table dropped, an I/O error) is logged and
// leaves the shards pending until the table's next reshape or Load.
func (m *Manager) SplitInBackground(tableID uint64, at [][]byte) (*ShardMap, error) {
	return m.reshape(tableID, "split", false, true, m.splitPlan(tableID, at))
}

// WaitBackground waits for the counts SplitInBackground started. Call it
// before closing the engine.
func (m *Manager) WaitBackground() { m.bg.Wait() }

func (m *Manager) splitPlan(tableID uint64, at [][]byte) func(cur *ShardMap) ([][]byte, error) {
	return func(cur *ShardMap) ([][]byte, error) {
		pivots := slices.Clone(cur.pivots)
		for _, p := range at {
			if bytes.Equal(p, cur.pivots[0]) {
				continue // Pivot 0 is always there.
			}
			if err := m.checkPivot(tableID, p); err != nil {
				return nil, err
			}
			pivots = append(pivots, bytes.Clone(p))
		}
		slices.SortFunc(pivots, bytes.Compare)
		return slices.CompactFunc(pivots, bytes.Equal), nil
	}
}

// Merge replaces count adjacent shards, starting with the shard first, by
// one shard with a fresh id whose statistics are the sum of theirs. count 1
// changes nothing. It fails with ErrShardNotFound if first is not in the
// current map or fewer than count shards start there.
func (m *Manager) Merge(tableID uint64, first ShardID, count int) (*ShardMap, error) {
	return m.reshape(tableID, "merge", false, false, func(cur *ShardMap) ([][]byte, error) {
		k := cur.IndexOf(first)
		if k < 0 {
			return nil, fmt.Errorf("%w: shard %d of table %d", ErrShardNotFound, first, tableID)
		}
		if count < 1 || k+count > cur.Len() {
			return nil, fmt.Errorf("%w: cannot merge %d shards from shard %d (index %d of %d)", ErrShardNotFound, count, first, k, cur.Len())
		}
		return slices.Delete(slices.Clone(cur.pivots), k+1, k+count), nil
	})
}

// Reshard replaces every pivot: splits are the new pivots after pivot 0,
// strictly ascending, as for Change.Create. Shards whose span does not change
// keep their id and statistics.
func (m *Manager) Reshard(tableID uint64, splits [][]byte) (*ShardMap, error) {
	return m.reshape(tableID, "reshard", false, false, func(cur *ShardMap) ([][]byte, error) {
		return m.fullPivots(tableID, splits)
	})
}

// Recount rebuilds the statistics of every shard of the table from a count
// of its rows, keeping the pivots and ids. Writers are paused only for the
// swap. It is a repair tool: statistics stay exact without it as long as
// every write goes through Commit.
func (m *Manager) Recount(tableID uint64) (*ShardMap, error) {
	return m.reshape(tableID, "recount", true, false, func(cur *ShardMap) ([][]byte, error) {
		return cur.pivots, nil
	})
}

// EnsureTable gives a table that may already hold rows a one-shard map, if
// it has none, and counts its rows. The sql layer calls it at startup for
// every table of the catalog, which adopts tables created before shard maps
// existed; for a table with a map it does nothing.
func (m *Manager) EnsureTable(tableID uint64) error {
	if m.table(tableID) != nil {
		return nil
	}
	ch := m.Begin()
	b := m.store.NewBatch()
	defer b.Close()
	err := ch.Create(b, tableID, nil)
	if err == nil {
		// Pending until counted, so that a crash before the count is
		// repaired by Load.
		t := ch.creates[tableID]
		id := t.cur.Load().shards[0].ID
		t.pending = map[ShardID]bool{id: true}
		err = b.Set(pendingKey(tableID, id), nil)
	}
	if err == nil {
		err = b.Commit()
	}
	if err != nil {
		ch.Abort()
		if errors.Is(err, ErrTableExists) {
			return nil // Adopted concurrently.
		}
		return err
	}
	ch.Install()
	_, err = m.Recount(tableID)
	return err
}

// group is a run of old shards [oldLo, oldHi) covering the same keys as a
// run of new shards [newLo, newHi).
type group struct{ oldLo, oldHi, newLo, newHi int }

// diffPivots cuts two pivot lists (both starting with the table prefix) into
// groups at the pivots they share.
func diffPivots(old, new [][]byte) []group {
	gs := make([]group, 0, min(len(old), len(new)))
	i, j := 0, 0
	for i < len(old) {
		g := group{oldLo: i, newLo: j}
		i, j = i+1, j+1
		for i < len(old) || j < len(new) {
			if i < len(old) && j < len(new) {
				c := bytes.Compare(old[i], new[j])
				if c == 0 {
					break
				}
				if c < 0 {
					i++
				} else {
					j++
				}
			} else if i < len(old) {
				i++
			} else {
				j++
			}
		}
		g.oldHi, g.newHi = i, j
		gs = append(gs, g)
	}
	return gs
}

// countJob is a new shard whose base count the reshape lands after the
// swap: counted from the snapshot, or (remainder) derived as its group's old
// total minus the counts of the group's other new shards.
type countJob struct {
	k          int // Index in the new map.
	remainder  bool
	total      [2]int64 // For a remainder: the group's old rows and bytes.
	groupFirst int      // For a remainder: the group's first new shard.
	rows, size int64
}

// reshape replaces the table's pivots by those plan returns; see the comment
// at the top of the file. With recountAll every shard is recounted, changed
// or not. With async the count and landing (steps 3 and 4) run in a
// goroutine that keeps the table's op lock until it has landed.
func (m *Manager) reshape(tableID uint64, what string, recountAll, async bool, plan func(cur *ShardMap) ([][]byte, error)) (*ShardMap, error) {
	t := m.table(tableID)
	if t == nil {
		return nil, fmt.Errorf("%w: table %d", ErrTableNotFound, tableID)
	}
	t.op.Lock()
	unlock := true // False once a background count owns the op lock.
	defer func() {
		if unlock {
			t.op.Unlock()
		}
	}()
	if t.cancel.Load() {
		return nil, fmt.Errorf("%w: table %d is being dropped", ErrTableNotFound, tableID)
	}
	cur := t.cur.Load()
	pivots, err := plan(cur)
	if err != nil {
		return nil, err
	}

	// Swap. A panic in here would leave the locks held and the new map
	// perhaps committed but not installed (writes then land in shards the
	// disk no longer has): not recoverable, so it ends the process, and
	// the restart loads the committed map (panics.Crash).
	var next *ShardMap
	var jobs []countJob
	var snap *storage.Snapshot
	func() {
		defer panics.Crash("partition: shard map swap")
		m.meta.Lock()
		t.rw.Lock()
		next, jobs, err = m.swap(t, cur, pivots, recountAll)
		if err == nil && len(jobs) > 0 {
			snap = m.eng.NewSnapshot()
		}
		if next != nil {
			t.cur.Store(next)
		}
		t.rw.Unlock()
		m.meta.Unlock()
	}()
	if err != nil {
		return nil, err
	}
	if next == nil {
		return cur, nil // Nothing to change.
	}
	if m.knobs.beforeSyncWAL != nil {
		m.knobs.beforeSyncWAL()
	}
	if err := m.store.SyncWAL(); err != nil {
		if snap != nil {
			snap.Close()
		}
		return next, err
	}
	if snap == nil {
		m.log.Debug("partition: "+what, "table", tableID, "shards", next.Len(), "version", next.version)
		return next, nil
	}
	if async {
		unlock = false
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			defer t.op.Unlock()
			// A panic while counting is recovered and handled like an
			// error: the new shards stay pending, which Load repairs.
			err := func() (err error) {
				defer panics.Recover("partition: background count of a "+what, &err)
				panics.Inject("partition.land")
				return m.land(t, what, next, jobs, snap)
			}()
			if err != nil {
				m.log.Warn("partition: background count of a "+what+" failed; the shards stay pending", "table", tableID, "err", err)
			}
		}()
		return next, nil
	}
	return next, m.land(t, what, next, jobs, snap)
}

// land counts the pending shards of a reshape's new map in snap (closing
// it), derives the remainders and commits the landing batch; steps 3 and 4
// at the top of the file. The caller holds t.op.
func (m *Manager) land(t *tableState, what string, next *ShardMap, jobs []countJob, snap *storage.Snapshot) error {
	defer snap.Close()
	tableID := t.id
	var err error
	if m.knobs.beforeLanding != nil {
		if err := m.knobs.beforeLanding(tableID); err != nil {
			return err
		}
	}

	// Count.
	for i := range jobs {
		j := &jobs[i]
		if j.remainder {
			continue
		}
		if j.rows, j.size, err = countSpan(snap, next.shards[j.k].Span, &t.cancel); err != nil {
			if errors.Is(err, errCancelled) {
				err = fmt.Errorf("%w: table %d was dropped during %s", ErrTableNotFound, tableID, what)
			}
			return err
		}
	}
	for i := range jobs {
		j := &jobs[i]
		if !j.remainder {
			continue
		}
		j.rows, j.size = j.total[0], j.total[1]
		for _, o := range jobs {
			if !o.remainder && o.k >= j.groupFirst && o.k < j.k {
				j.rows -= o.rows
				j.size -= o.size
			}
		}
		if j.rows < 0 || j.size < 0 || (j.rows == 0) != (j.size == 0) {
			return fmt.Errorf("%w: table %d: shard %d's derived count is %d rows, %d bytes",
				ErrInvariant, tableID, next.shards[j.k].ID, j.rows, j.size)
		}
	}

	// Land.
	t.rw.RLock()
	defer t.rw.RUnlock()
	if t.dropped {
		return fmt.Errorf("%w: table %d was dropped during %s", ErrTableNotFound, tableID, what)
	}
	b := m.store.NewBatch()
	defer b.Close()
	for _, j := range jobs {
		s := &next.shards[j.k]
		if j.rows != 0 || j.size != 0 {
			if err := b.Merge(s.statsKey, storage.AppendCounters(nil, j.rows, j.size)); err != nil {
				return err
			}
		}
		if err := b.Delete(pendingKey(tableID, s.ID)); err != nil {
			return err
		}
	}
	if err := b.Commit(); err != nil {
		return err
	}
	t.pending = nil
	m.log.Debug("partition: "+what, "table", tableID, "shards", next.Len(), "version", next.version, "counted", len(jobs))
	return nil
}

// swap builds and commits the swap batch and returns the new map (nil if
// nothing changes) and the counts to land. The caller holds meta and the
// table's rw lock exclusively.
func (m *Manager) swap(t *tableState, cur *ShardMap, pivots [][]byte, recountAll bool) (*ShardMap, []countJob, error) {
	tableID := t.id
	if t.dropped {
		return nil, nil, fmt.Errorf("%w: table %d", ErrTableNotFound, tableID)
	}
	pending := t.pending
	groups := diffPivots(cur.pivots, pivots)
	changed := recountAll || len(pending) > 0
	for _, g := range groups {
		if g.oldHi-g.oldLo != 1 || g.newHi-g.newLo != 1 {
			changed = true
		}
	}
	if !changed {
		return nil, nil, nil
	}

	b := m.store.NewBatch()
	defer b.Close()
	nextID := m.meta.nextID
	ids := make([]ShardID, len(pivots))
	keep := make([]Shard, len(pivots))
	var jobs []countJob
	var splits, merges, reshards int64
	markPending := func(id ShardID) error {
		return b.Set(pendingKey(tableID, id), nil)
	}
	for _, g := range groups {
		if g.oldHi-g.oldLo == 1 && g.newHi-g.newLo == 1 {
			old := cur.shards[g.oldLo]
			ids[g.newLo], keep[g.newLo] = old.ID, old
			if recountAll || pending[old.ID] {
				// Recount in place: reset the counters now, under the
				// exclusive lock, so the count of the snapshot plus the
				// deltas merged after it is the exact total.
				if err := b.Delete(old.statsKey); err != nil {
					return nil, nil, err
				}
				if err := markPending(old.ID); err != nil {
					return nil, nil, err
				}
				jobs = append(jobs, countJob{k: g.newLo})
			}
			continue
		}
		exact := true
		var total [2]int64
		var cs []int64
		for k := g.oldLo; k < g.oldHi; k++ {
			old := cur.shards[k]
			if pending[old.ID] {
				exact = false
			}
			var err error
			if cs, err = readCounters(m.store, old.statsKey, cs[:0], 2); err != nil {
				return nil, nil, err
			}
			total[0] += cs[0]
			total[1] += cs[1]
			for _, key := range [][]byte{old.statsKey, pendingKey(tableID, old.ID), shardRecordKey(tableID, old.Span.Start)} {
				if err := b.Delete(key); err != nil {
					return nil, nil, err
				}
			}
		}
		for k := g.newLo; k < g.newHi; k++ {
			ids[k] = nextID
			nextID++
			if err := b.Set(shardRecordKey(tableID, pivots[k]), encodeShardID(ids[k])); err != nil {
				return nil, nil, err
			}
		}
		nNew := g.newHi - g.newLo
		switch {
		case nNew == 1 && exact:
			// The key is the first old shard's (same pivot), deleted above:
			// the Set, later in the batch, replaces it.
			if err := b.Set(statsKey(pivots[g.newLo]), storage.AppendCounters(nil, total[0], total[1])); err != nil {
				return nil, nil, err
			}
		default:
			for k := g.newLo; k < g.newHi; k++ {
				if err := markPending(ids[k]); err != nil {
					return nil, nil, err
				}
				j := countJob{k: k}
				if k == g.newHi-1 && nNew > 1 && exact {
					j = countJob{k: k, remainder: true, total: total, groupFirst: g.newLo}
				}
				jobs = append(jobs, j)
			}
		}
		switch oldN := g.oldHi - g.oldLo; {
		case oldN == 1:
			splits += int64(nNew - 1)
		case nNew == 1:
			merges += int64(oldN - 1)
		default:
			reshards++
		}
	}
	if splits+merges+reshards > 0 {
		if err := b.Merge(tableStatsKey(tableID), storage.AppendCounters(nil, splits, merges, reshards)); err != nil {
			return nil, nil, err
		}
	}
	if nextID != m.meta.nextID {
		if err := b.Set(seqKey, storage.AppendUint64(nil, uint64(nextID))); err != nil {
			return nil, nil, err
		}
	}
	// Ids handed out are retired even if the commit fails.
	m.meta.nextID = nextID
	// The swap commits without fsync while writers wait on t.rw; reshape
	// syncs the WAL after releasing the lock and before it returns. A
	// writer that commits in between uses a synced commit, which makes
	// this earlier record durable too, so no acknowledged write can survive
	// a crash without the shard map it was routed by.
	if err := b.CommitUnsynced(); err != nil {
		return nil, nil, err
	}
	t.pending = map[ShardID]bool{}
	for _, j := range jobs {
		t.pending[ids[j.k]] = true
	}
	return newShardMap(tableID, cur.version+1, slices.Clone(pivots), ids, keep), jobs, nil
}
