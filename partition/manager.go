package partition

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
)

// KeyColumnsFunc tells the partition package where the encoded key columns
// of a table's keys end. The partition package works on key bytes only and
// cannot delimit columns by itself: storage's encodings are self-delimiting
// only given the type (an Int64 is 8 payload bytes, a Utf8 runs to its
// terminator), and the types are the catalog's.
//
// key is a row key or a pivot of table tableID, table prefix included, with
// any number of whole key columns from zero to all of them. The function
// appends to ends the offset in key just past each column, in order, and
// returns it; the last offset equals len(key). It returns an error if key is
// not the table prefix followed by whole encoded key columns of the table's
// key types. The sql layer implements it by decoding the columns with
// rowenc's decoders (or skipping them without allocating).
type KeyColumnsFunc func(tableID uint64, key []byte, ends []int) ([]int, error)

// Options configure a Manager.
type Options struct {
	// KeyColumns delimits key columns; see KeyColumnsFunc. With it, pivots
	// are validated as whole-column prefixes and SplitBySize and
	// MedianSplitKey shorten their pivots to the shortest separating column
	// prefix. Without it (tests of other packages), pivots are checked only
	// for their shape and computed pivots are whole keys.
	KeyColumns KeyColumnsFunc
	// Logger receives the manager's events (repairs at Load, splits and
	// merges at debug level). Nil discards them.
	Logger *slog.Logger
	// Meta is the metadata store that keeps the shard maps and their
	// records; nil means the one kept in the engine Load is given (tests of
	// this package).
	Meta *meta.Store
	// ReadOnly is for a manager over a store another node writes (a
	// follower's, whose commits are refused): Load then leaves counters of
	// the old layout (keys.go) where they are, for the writer's Load to
	// move; until that move reaches the store, such shards read as empty.
	ReadOnly bool
}

// Manager owns the shard maps of every table of one storage engine.
//
// Concurrency. Readers call Map and use the immutable ShardMap without
// locks. Each table has three locks, always taken in this order:
//
//	op    serialises the table's reshapes (Split, Merge, Reshard,
//	      Recount); held for the whole operation, counting included;
//	meta  (Manager-wide) serialises every metadata batch that allocates
//	      shard ids or adds or removes tables; a Change holds it from
//	      Begin to Install or Abort, a reshape only around its swap;
//	rw    a table's commit lock: Commit holds it shared while it routes a
//	      transaction's writes and commits its batch; a reshape holds it
//	      exclusively only to commit its swap batch, take a snapshot and
//	      publish the new map, so writers pause for one small synced batch.
//
// The sql layer takes catalog locks before meta (Begin) and never the other
// way round.
type Manager struct {
	eng *storage.Engine
	// store holds the shard maps' records (package meta); eng the rows
	// they route, which statistics count.
	store *meta.Store
	opts  Options
	log   *slog.Logger

	meta struct {
		sync.Mutex
		nextID ShardID // The next shard id to allocate; persisted at seqKey.
	}
	// tables maps table id to state. It is replaced (copy-on-write) under
	// meta, and read without locks.
	tables atomic.Pointer[map[uint64]*tableState]

	// bg counts the background counts of SplitInBackground.
	bg sync.WaitGroup

	knobs testingKnobs
}

// testingKnobs let tests stop an operation at a chosen point.
type testingKnobs struct {
	// beforeLanding runs after a reshape's swap batch committed and before
	// its counts are taken and landed; an error abandons the reshape there,
	// as a crash would.
	beforeLanding func(tableID uint64) error
	// beforeSyncWAL runs after a reshape's swap committed (unsynced) and
	// its map is published, before the WAL sync.
	beforeSyncWAL func()
	// afterRoute runs in Commit after the deltas are routed and added to
	// the batch, before the batch commits.
	afterRoute func()
}

// tableState is one table's live state.
type tableState struct {
	id uint64
	op sync.Mutex
	rw sync.RWMutex
	// dropped is set (under rw) by Change.Drop; commits and landings see it
	// and give up. Change.Abort clears it.
	dropped bool
	// cancel asks a running count to stop (set by Drop, read without lock).
	cancel atomic.Bool
	cur    atomic.Pointer[ShardMap]
	// pending holds the shards whose stats-pending marker is persisted: the
	// ones a reshape's landing has not yet cleared. Guarded by op.
	pending map[ShardID]bool
}

// Load reads every shard map from the engine, repairs the statistics of
// shards whose base counts never landed (a crash during a split; see
// stats.go) by recounting them, and returns the manager. Call it at startup,
// after the catalog is loaded and before any write.
func Load(eng *storage.Engine, opts Options) (*Manager, error) {
	m := &Manager{eng: eng, store: opts.Meta, opts: opts, log: opts.Logger}
	if m.store == nil {
		m.store = meta.Open(eng)
	}
	if m.log == nil {
		m.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m.meta.nextID = 1
	if v, ok, err := m.store.Get(seqKey); err != nil {
		return nil, err
	} else if ok {
		u, _, err := storage.DecodeUint64(v)
		if err != nil {
			return nil, fmt.Errorf("%w: shard id sequence: %w", ErrCorruptRecord, err)
		}
		m.meta.nextID = ShardID(u)
	}

	type building struct {
		pivots [][]byte
		ids    []ShardID
	}
	byTable := map[uint64]*building{}
	var order []uint64
	if err := m.store.Scan(allShardsSpan, func(k, v []byte) error {
		tableID, pivot, id, err := decodeShardRecord(k, v)
		if err != nil {
			return err
		}
		b := byTable[tableID]
		if b == nil {
			b = &building{}
			byTable[tableID] = b
			order = append(order, tableID)
		}
		b.pivots = append(b.pivots, clone(pivot))
		b.ids = append(b.ids, id)
		return nil
	}); err != nil {
		return nil, err
	}

	tables := make(map[uint64]*tableState, len(byTable))
	seen := map[ShardID]uint64{}
	for _, tableID := range order {
		b := byTable[tableID]
		sm := newShardMap(tableID, 1, b.pivots, b.ids, nil)
		if err := sm.CheckInvariants(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorruptRecord, err)
		}
		for _, id := range b.ids {
			if other, dup := seen[id]; dup {
				return nil, fmt.Errorf("%w: shard id %d in tables %d and %d", ErrCorruptRecord, id, other, tableID)
			}
			seen[id] = tableID
			if id >= m.meta.nextID {
				return nil, fmt.Errorf("%w: shard id %d is not below the sequence %d", ErrCorruptRecord, id, m.meta.nextID)
			}
		}
		t := &tableState{id: tableID}
		t.cur.Store(sm)
		tables[tableID] = t
	}
	m.tables.Store(&tables)

	if !opts.ReadOnly {
		if err := m.migrateLegacyStats(); err != nil {
			return nil, err
		}
	}
	if err := m.repairPending(); err != nil {
		return nil, err
	}
	return m, nil
}

// table returns the state of a table, or nil.
func (m *Manager) table(tableID uint64) *tableState {
	return (*m.tables.Load())[tableID]
}

// Map returns the table's current shard map, or nil if it has none. The
// result is immutable and may be used without locks; call Map again to see
// later splits and merges.
func (m *Manager) Map(tableID uint64) *ShardMap {
	if t := m.table(tableID); t != nil {
		return t.cur.Load()
	}
	return nil
}

// ReadMap is Map for a manager that only reads (a follower engine's,
// sql.OpenFollower) over a store another writer changes (the node's
// replicas apply the serving node's commits under it): a table the
// manager has no map of is looked up in the store, whose records may be
// newer than Load's, and its map kept from then on. nil: the store has no
// shard map of the table either (never created, or dropped). Maps already
// in memory are not read again (their later splits stay unseen, as
// before). A manager that writes must not use it: its maps are the ones
// its own changes install.
func (m *Manager) ReadMap(tableID uint64) (*ShardMap, error) {
	if sm := m.Map(tableID); sm != nil {
		return sm, nil
	}
	m.meta.Lock()
	defer m.meta.Unlock()
	if sm := m.Map(tableID); sm != nil {
		return sm, nil
	}
	var pivots [][]byte
	var ids []ShardID
	if err := m.store.Scan(storage.PrefixSpan(tableKeyPrefix(shardNS, tableID)), func(k, v []byte) error {
		id, pivot, shard, err := decodeShardRecord(k, v)
		if err != nil {
			return err
		}
		if id != tableID {
			return fmt.Errorf("%w: shard record %s in the span of table %d", ErrCorruptRecord, storage.FormatKey(k), tableID)
		}
		pivots, ids = append(pivots, clone(pivot)), append(ids, shard)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	sm := newShardMap(tableID, 1, pivots, ids, nil)
	if err := sm.CheckInvariants(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptRecord, err)
	}
	t := &tableState{id: tableID}
	t.cur.Store(sm)
	tables := maps.Clone(*m.tables.Load())
	tables[tableID] = t
	m.tables.Store(&tables)
	return sm, nil
}

// Tables returns the ids of the tables that have a shard map, ascending.
func (m *Manager) Tables() []uint64 {
	return slices.Sorted(maps.Keys(*m.tables.Load()))
}

// Change adds and removes tables' shard maps together with a schema change:
// its records go into the caller's batch, so that the catalog and the shard
// maps commit atomically, and the in-memory maps change at Install, after the
// batch committed. A Change holds the manager's metadata lock from Begin
// until Install or Abort, exactly one of which must be called.
//
//	ch := m.Begin()
//	err := ch.Create(b, tableID, splits)  // and/or ch.Drop(b, otherID)
//	err = b.Commit()
//	ch.Install()                          // or ch.Abort() on any error
type Change struct {
	m       *Manager
	nextID  ShardID
	creates map[uint64]*tableState
	drops   map[uint64]*tableState
	done    bool
}

// Begin starts a change.
func (m *Manager) Begin() *Change {
	m.meta.Lock()
	return &Change{m: m, nextID: m.meta.nextID, creates: map[uint64]*tableState{}, drops: map[uint64]*tableState{}}
}

// Create adds to b the shard map of a new, empty table: one shard per
// interval between the given split points. splits are the pivots after
// pivot 0, strictly ascending full keys of the table (see ShardMap); a
// leading table prefix (pivot 0 itself) is accepted and ignored. No splits
// means one shard. The table must be empty (its statistics start at zero);
// for a table that already holds rows use EnsureTable.
func (c *Change) Create(b *meta.Batch, tableID uint64, splits [][]byte) error {
	if c.m.table(tableID) != nil || c.creates[tableID] != nil {
		return fmt.Errorf("%w: table %d", ErrTableExists, tableID)
	}
	pivots, err := c.m.fullPivots(tableID, splits)
	if err != nil {
		return err
	}
	ids := make([]ShardID, len(pivots))
	for k, p := range pivots {
		ids[k] = c.nextID
		c.nextID++
		if err := b.Set(shardRecordKey(tableID, p), encodeShardID(ids[k])); err != nil {
			return err
		}
	}
	if err := b.Set(seqKey, storage.AppendUint64(nil, uint64(c.nextID))); err != nil {
		return err
	}
	t := &tableState{id: tableID}
	t.cur.Store(newShardMap(tableID, 1, pivots, ids, nil))
	c.creates[tableID] = t
	return nil
}

// Drop adds to b the removal of the table's shard map, statistics and
// counters; the caller deletes the rows (storage.TableSpan) in the same
// batch. From Drop on, commits to the table fail with ErrTableNotFound, a
// running split of it stops at its next step, and a count in progress is
// cancelled; Abort undoes that.
func (c *Change) Drop(b *meta.Batch, tableID uint64) error {
	t := c.m.table(tableID)
	if t == nil || c.drops[tableID] != nil {
		return fmt.Errorf("%w: table %d", ErrTableNotFound, tableID)
	}
	for _, s := range tableMetaSpans(tableID) {
		if err := b.DeleteSpan(s); err != nil {
			return err
		}
	}
	t.cancel.Store(true)
	// Taking rw exclusively waits for the commits in flight; every later
	// commit sees dropped and fails, so no row is written into the table's
	// span after the caller's range deletion commits.
	t.rw.Lock()
	t.dropped = true
	t.rw.Unlock()
	c.drops[tableID] = t
	return nil
}

// Created lists the tables (key spaces) the change creates, ascending.
func (c *Change) Created() []uint64 {
	return slices.Sorted(maps.Keys(c.creates))
}

// Install makes the change current. Call it only after the batch holding the
// change's records committed.
func (c *Change) Install() {
	if c.done {
		return
	}
	c.done = true
	m := c.m
	tables := maps.Clone(*m.tables.Load())
	for id, t := range c.creates {
		tables[id] = t
	}
	for id := range c.drops {
		delete(tables, id)
	}
	m.tables.Store(&tables)
	m.meta.nextID = c.nextID
	m.meta.Unlock()
	for id := range c.creates {
		m.log.Debug("partition: table created", "table", id, "shards", tables[id].cur.Load().Len())
	}
	for id := range c.drops {
		m.log.Debug("partition: table dropped", "table", id)
	}
}

// Abort drops the change. The batch must not be committed. Ids allocated by
// the change are not reused (the sequence only grows), which is harmless.
func (c *Change) Abort() {
	if c.done {
		return
	}
	c.done = true
	for _, t := range c.drops {
		t.rw.Lock()
		t.dropped = false
		t.rw.Unlock()
		t.cancel.Store(false)
	}
	// Keep the ids the change handed out retired: a committed batch that the
	// caller failed to report would otherwise lead to reuse.
	c.m.meta.nextID = max(c.m.meta.nextID, c.nextID)
	c.m.meta.Unlock()
}

// fullPivots validates split points and returns the table's full pivot
// list, pivot 0 first.
func (m *Manager) fullPivots(tableID uint64, splits [][]byte) ([][]byte, error) {
	prefix := storage.TablePrefix(tableID)
	if len(splits) > 0 && bytes.Equal(splits[0], prefix) {
		splits = splits[1:]
	}
	pivots := make([][]byte, 0, len(splits)+1)
	pivots = append(pivots, prefix)
	for i, p := range splits {
		if err := m.checkPivot(tableID, p); err != nil {
			return nil, err
		}
		if i > 0 && bytes.Compare(splits[i-1], p) >= 0 {
			return nil, fmt.Errorf("%w: pivots do not strictly ascend: %s, %s", ErrInvalidPivot,
				storage.FormatKey(splits[i-1]), storage.FormatKey(p))
		}
		pivots = append(pivots, bytes.Clone(p))
	}
	return pivots, nil
}

// checkPivot validates one split point: its shape, and with KeyColumns that
// it ends on a column boundary.
func (m *Manager) checkPivot(tableID uint64, p []byte) error {
	if err := checkPivotShape(tableID, p); err != nil {
		return err
	}
	if m.opts.KeyColumns == nil {
		return nil
	}
	ends, err := m.opts.KeyColumns(tableID, p, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidPivot, storage.FormatKey(p), err)
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(p) {
		return fmt.Errorf("%w: %s is not a prefix of whole key columns", ErrInvalidPivot, storage.FormatKey(p))
	}
	return nil
}

// CheckInvariants verifies every table's map (ShardMap.CheckInvariants, and
// with KeyColumns that each pivot is whole columns), that ids are unique
// across tables and below the sequence, and that the persisted records
// match the maps in memory: shard records, and stats and pending markers
// only for live shards. It reads the engine; call it when no reshape or
// Change is running (tests call it after every step).
func (m *Manager) CheckInvariants() error {
	// Lock order: every table's op (ascending ids), then meta.
	tables := *m.tables.Load()
	for _, id := range slices.Sorted(maps.Keys(tables)) {
		tables[id].op.Lock()
		defer tables[id].op.Unlock()
	}
	m.meta.Lock()
	defer m.meta.Unlock()
	if now := *m.tables.Load(); !maps.Equal(now, tables) {
		return fmt.Errorf("partition: CheckInvariants raced with a Change")
	}
	live := map[uint64]map[ShardID]bool{}
	for _, id := range slices.Sorted(maps.Keys(tables)) {
		sm := tables[id].cur.Load()
		if err := sm.CheckInvariants(); err != nil {
			return err
		}
		ids := map[ShardID]bool{}
		for k, s := range sm.shards {
			if k > 0 {
				if err := m.checkPivot(id, s.Span.Start); err != nil {
					return fmt.Errorf("%w: table %d: pivot %d: %w", ErrInvariant, id, k, err)
				}
			}
			for other, otherIDs := range live {
				if otherIDs[s.ID] {
					return fmt.Errorf("%w: shard id %d in tables %d and %d", ErrInvariant, s.ID, other, id)
				}
			}
			if s.ID >= m.meta.nextID {
				return fmt.Errorf("%w: shard id %d is not below the sequence %d", ErrInvariant, s.ID, m.meta.nextID)
			}
			ids[s.ID] = true
		}
		live[id] = ids
	}

	snap := m.store.Snapshot()
	defer snap.Close()
	if v, ok, err := snap.Get(seqKey); err != nil {
		return err
	} else if ok {
		u, _, err := storage.DecodeUint64(v)
		if err != nil || ShardID(u) > m.meta.nextID {
			return fmt.Errorf("%w: persisted sequence %x, in memory %d", ErrInvariant, v, m.meta.nextID)
		}
		for _, ids := range live {
			for id := range ids {
				if id >= ShardID(u) {
					return fmt.Errorf("%w: shard id %d is not below the persisted sequence %d", ErrInvariant, id, u)
				}
			}
		}
	} else if len(live) > 0 {
		return fmt.Errorf("%w: no persisted sequence", ErrInvariant)
	}

	// Persisted shard records, in order, must be exactly the maps.
	type rec struct {
		table uint64
		pivot []byte
		id    ShardID
	}
	var want []rec
	for _, id := range slices.Sorted(maps.Keys(tables)) {
		for _, s := range tables[id].cur.Load().shards {
			want = append(want, rec{id, s.Span.Start, s.ID})
		}
	}
	var got []rec
	if err := snap.Scan(allShardsSpan, func(k, v []byte) error {
		table, pivot, id, err := decodeShardRecord(k, v)
		got = append(got, rec{table, pivot, id})
		return err
	}); err != nil {
		return err
	}
	if !slices.EqualFunc(got, want, func(a, b rec) bool {
		return a.table == b.table && a.id == b.id && bytes.Equal(a.pivot, b.pivot)
	}) {
		return fmt.Errorf("%w: persisted shard records %v differ from the maps %v", ErrInvariant, got, want)
	}
	pending := map[uint64]map[ShardID]bool{}
	if err := snap.Scan(storage.PrefixSpan(pendingNS), func(k, _ []byte) error {
		table, id, err := decodeShardIDKey(pendingNS, k)
		if err != nil {
			return err
		}
		if !live[table][id] {
			return fmt.Errorf("%w: record %s of shard %d of table %d, which does not exist", ErrInvariant, storage.FormatKey(k), id, table)
		}
		if pending[table] == nil {
			pending[table] = map[ShardID]bool{}
		}
		pending[table][id] = true
		return nil
	}); err != nil {
		return err
	}
	// Counters only at the pivots of live shards, none in the old layout.
	if err := snap.Scan(storage.PrefixSpan(meta.PartitionStats), func(k, _ []byte) error {
		table, pivot, err := decodeStatsKey(k)
		if err != nil {
			return err
		}
		t := tables[table]
		if t == nil {
			return fmt.Errorf("%w: counter %s of a table without a map", ErrInvariant, storage.FormatKey(k))
		}
		if sm := t.cur.Load(); sm.Find(pivot) < 0 || !bytes.Equal(sm.shards[sm.Find(pivot)].Span.Start, pivot) {
			return fmt.Errorf("%w: counter %s of no shard of table %d", ErrInvariant, storage.FormatKey(k), table)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := snap.Scan(storage.PrefixSpan(legacyStatsNS), func(k, _ []byte) error {
		return fmt.Errorf("%w: counter %s of the old layout left after Load", ErrInvariant, storage.FormatKey(k))
	}); err != nil {
		return err
	}
	for id, t := range tables {
		if !maps.Equal(t.pending, pending[id]) {
			return fmt.Errorf("%w: table %d: pending shards %v in memory, %v persisted", ErrInvariant, id, t.pending, pending[id])
		}
	}
	return nil
}
