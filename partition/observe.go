package partition

import (
	"sync"
	"sync/atomic"
)

// Commit observers. A schema change that copies a table's rows while
// writers go on (ALTER TABLE's rewrite, sql/altertable.go) must learn
// which rows changed after the snapshot it copied, without reading the
// whole table again: Observe registers a function that Commit calls with
// every key of that table a commit writes.
//
//   - Keys are offered before the batch commits, so a commit that then
//     fails was observed too: an observer treats a key as "may have
//     changed" and reads its committed value itself.
//   - Ordering against the observer's snapshot is the caller's: a commit
//     that started routing before Observe returned may not be observed.
//     sql registers under its transaction gate, which every commit holds
//     shared, and takes its snapshot before letting commits go on.
//   - Every row write commits through Commit with its Writes (the shards'
//     statistics need them). A write that does not (a bulk ingestion) must
//     tell the observer itself.
//   - When no observer is registered, Commit pays one map load and one
//     atomic load.

// observerSets maps a *Manager to its observers.
var observerSets sync.Map // *Manager -> *observerSet

type observerSet struct {
	n  atomic.Int32 // registered observers, for the fast path
	mu sync.RWMutex
	by map[uint64][]*observer // by table id
}

type observer struct{ fn func(key []byte) }

// Observe makes Commit call fn with each key of table tableID that a
// commit writes, from now until stop is called. fn runs on the committing
// goroutine, concurrently with other commits, and must not keep key.
func (m *Manager) Observe(tableID uint64, fn func(key []byte)) (stop func()) {
	v, _ := observerSets.LoadOrStore(m, &observerSet{by: map[uint64][]*observer{}})
	set := v.(*observerSet)
	o := &observer{fn: fn}
	set.mu.Lock()
	set.by[tableID] = append(set.by[tableID], o)
	set.n.Add(1)
	set.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			set.mu.Lock()
			defer set.mu.Unlock()
			list := set.by[tableID]
			for i, x := range list {
				if x == o {
					list = append(list[:i:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(set.by, tableID)
			} else {
				set.by[tableID] = list
			}
			set.n.Add(-1)
		})
	}
}

// observeWrites offers the keys of w to the observers of their tables.
func (m *Manager) observeWrites(w *Writes) {
	v, ok := observerSets.Load(m)
	if !ok {
		return
	}
	set := v.(*observerSet)
	if set.n.Load() == 0 {
		return
	}
	set.mu.RLock()
	defer set.mu.RUnlock()
	start := 0
	for i := range w.entries {
		e := &w.entries[i]
		key := w.arena[start:e.keyEnd]
		start = e.keyEnd
		for _, o := range set.by[e.tableID] {
			o.fn(key)
		}
	}
}
