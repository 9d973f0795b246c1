package catalog

import (
	"maps"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// A transaction's schema changes (transactional DDL, see doc.go): a
// Pending change is a copy of the committed snapshot the transaction's
// first schema change saw (its base), with the transaction's changes
// applied, and the records they wrote. It holds no lock: the session
// serialises schema changes with its own lock (sql/txnddl.go), and
// background changes (temporary tables dropped at session end, passwords
// set at startup) may commit meanwhile; Apply merges them.

// Pending starts a transaction's change on base, the committed snapshot.
// Its Snapshot is what the transaction's statements see.
func (c *Catalog) Pending(base *Snapshot) *Change {
	return &Change{c: c, base: base, snap: base.clone(), puts: map[string][]byte{}, deletes: map[string]bool{}}
}

// Fork copies a pending change, so that a statement changes the copy and
// the transaction keeps the original if the statement fails (and a
// savepoint keeps the original if the transaction rolls back to it).
func (ch *Change) Fork() *Change {
	if ch.base == nil {
		panic("catalog: Fork of a change that is not pending")
	}
	return &Change{c: ch.c, base: ch.base, snap: ch.snap.clone(), puts: maps.Clone(ch.puts),
		deletes: maps.Clone(ch.deletes), seq: ch.seq}
}

// Base is the committed snapshot a pending change started from.
func (ch *Change) Base() *Snapshot { return ch.base }

// Records adds a pending change's records (not the id counter: a pending
// change's ids were persisted when allocated) to the transaction's batch,
// which commits them with the transaction's rows.
func (ch *Change) Records(b *meta.Batch) error {
	return ch.records(b)
}

// Apply installs a committed pending change: its changes relative to its
// base are applied to the current snapshot (which may hold changes
// committed since the base by background work), under the change lock.
// Call it from the OnCommitted of the batch holding the change's Records
// (ts: its commit timestamp).
func (c *Catalog) Apply(p *Change, ts hlc.Timestamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.Snapshot()
	next := rebase(p.base, p.snap, cur)
	c.current.Lock()
	c.setCurrent(next, ts)
	c.current.Unlock()
}

// rebase returns cur with the differences between base and mine applied:
// objects mine added or replaced (by pointer) are set, objects it removed
// are removed. Objects are immutable once in a snapshot, so pointer
// identity says whether mine changed one.
func rebase(base, mine, cur *Snapshot) *Snapshot {
	if cur == base {
		return mine
	}
	out := &Snapshot{
		databases:    mergeMap(base.databases, mine.databases, cur.databases),
		users:        mergeMap(base.users, mine.users, cur.users),
		tables:       mergeMap(base.tables, mine.tables, cur.tables),
		byName:       mergeNested(base.byName, mine.byName, cur.byName),
		views:        mergeNested(base.views, mine.views, cur.views),
		sequences:    mergeNested(base.sequences, mine.sequences, cur.sequences),
		enums:        mergeNested(base.enums, mine.enums, cur.enums),
		functions:    mergeNested(base.functions, mine.functions, cur.functions),
		roleSettings: mergeMap(base.roleSettings, mine.roleSettings, cur.roleSettings),
		indexes:      mergeMap(base.indexes, mine.indexes, cur.indexes),
		nextID:       max(mine.nextID, cur.nextID),
	}
	return out
}

// mergeMap is cur plus what mine changed relative to base.
func mergeMap[K, V comparable](base, mine, cur map[K]V) map[K]V {
	out := maps.Clone(cur)
	if out == nil {
		out = map[K]V{}
	}
	for k, v := range mine {
		if old, ok := base[k]; !ok || old != v {
			out[k] = v
		}
	}
	for k := range base {
		if _, ok := mine[k]; !ok {
			delete(out, k)
		}
	}
	return out
}

// mergeNested is mergeMap over maps of maps (per database).
func mergeNested[K, V comparable](base, mine, cur map[uint64]map[K]V) map[uint64]map[K]V {
	out := map[uint64]map[K]V{}
	dbs := map[uint64]bool{}
	for _, m := range []map[uint64]map[K]V{base, mine, cur} {
		for db := range m {
			dbs[db] = true
		}
	}
	for db := range dbs {
		if m := mergeMap(base[db], mine[db], cur[db]); len(m) > 0 {
			out[db] = m
		}
	}
	return out
}
