package partition

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

// Load tracking for split by load (design §5, AUTO_PARTITIONING_BY_LOAD).
//
// A shard's load is the number of operations it served per second: the
// growth of its Reads and Writes counters (shardRuntime, one atomic add per
// operation, kept by the read and write paths since issue 3) between two
// balancer ticks, divided by the time between them. That costs the hot paths
// nothing new.
//
// Choosing where to split a hot shard needs to know which keys it served. A
// key sample per shard would cost every read a lock and an allocation, so it
// is kept only for the shards the balancer finds warm (at least half the
// split threshold, of a table with AUTO_PARTITIONING_BY_LOAD enabled):
//
//	read path                       balancer tick (every Interval)
//	---------                       ------------------------------
//	Manager.SampleKey(shard, key)   ops/s of every shard from its counters
//	  registry of m? (sync.Map)     warm shard: registry.track(id)
//	  sample of shard? (sync.Map)   cool shard: registry.untrack(id)
//	  reservoir add (mostly lock-   hot for LoadSplitTicks ticks: split at
//	  free once the reservoir is    the weighted median of the sample
//	  full)
//
// When no balancer runs, or no shard is warm, SampleKey is two atomic loads.
// The sample is a reservoir (Vitter's algorithm R) of sampleSize keys: every
// key served since the shard became warm has the same chance to be in it,
// so its weighted median splits the served operations in two halves.
//
// What is sampled: the sql layer calls SampleKey from its scans, once per
// shard a statement reads, with the first key it reads there — for point
// lookups, UPDATE and DELETE by key, the key itself. A read that starts at
// the shard's first pivot (a range coming from the previous shard or a full
// scan) says nothing about where in the shard the load is and is not
// sampled. INSERT and UPSERT do not scan; SampleWrites offers their keys to
// the same sample, for a commit path that wants to call it. A hot shard
// whose sample is too small (a write-only load not fed to SampleWrites)
// splits at its median by size instead, which still halves an evenly spread
// write load and converges in a few splits for a skewed one.

// sampleSize is the number of keys a warm shard's reservoir holds.
const sampleSize = 128

// minLoadSample is the least number of sampled keys a load split is chosen
// from; with fewer, the shard splits at its median by size.
const minLoadSample = 16

// registries maps a *Manager to the loadRegistry of the balancer running on
// it. The read path only holds the Manager (exec.Context.Shards), so the
// registry is found from it.
var registries sync.Map // *Manager -> *loadRegistry

// loadRegistry holds the key samples of one manager's warm shards.
type loadRegistry struct {
	tracked atomic.Int64 // Number of entries in samples.
	samples sync.Map     // ShardID -> *keySample
}

// track starts sampling a shard, if it is not sampled yet.
func (r *loadRegistry) track(id ShardID) {
	if _, loaded := r.samples.LoadOrStore(id, &keySample{}); !loaded {
		r.tracked.Add(1)
	}
}

// untrack stops sampling a shard and forgets its sample.
func (r *loadRegistry) untrack(id ShardID) {
	if _, loaded := r.samples.LoadAndDelete(id); loaded {
		r.tracked.Add(-1)
	}
}

// sample returns the keys sampled for a shard (shared, not to be modified),
// and how many keys were offered.
func (r *loadRegistry) sample(id ShardID) (keys [][]byte, seen int64) {
	v, ok := r.samples.Load(id)
	if !ok {
		return nil, 0
	}
	return v.(*keySample).snapshot()
}

// keySample is a reservoir of the keys a shard served.
type keySample struct {
	seen atomic.Int64
	mu   sync.Mutex
	keys [sampleSize][]byte // Guarded by mu; a slot is nil until filled.
}

// add offers a key to the reservoir: the n-th key offered replaces a random
// slot with probability sampleSize/n. Once the reservoir is full most
// offers return after one atomic add and one random number.
func (s *keySample) add(key []byte) {
	n := s.seen.Add(1)
	slot := n - 1
	if n > sampleSize {
		if slot = rand.Int64N(n); slot >= sampleSize {
			return
		}
	}
	k := bytes.Clone(key)
	s.mu.Lock()
	s.keys[slot] = k
	s.mu.Unlock()
}

func (s *keySample) snapshot() ([][]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, 0, sampleSize)
	for _, k := range s.keys {
		if k != nil {
			out = append(out, k)
		}
	}
	return out, s.seen.Load()
}

// SampleKey offers a key that shard s served to the shard's load sample.
// It does nothing unless a balancer runs on m and finds the shard warm (see
// the top of this file), so it may be called on every read: then it costs two
// atomic loads. key is copied if kept. Keys outside the shard and the
// shard's own first pivot are ignored.
func (m *Manager) SampleKey(s Shard, key []byte) {
	v, ok := registries.Load(m)
	if !ok {
		return
	}
	r := v.(*loadRegistry)
	if r.tracked.Load() == 0 {
		return
	}
	ks, ok := r.samples.Load(s.ID)
	if !ok || bytes.Equal(key, s.Span.Start) || !s.Span.Contains(key) {
		return
	}
	ks.(*keySample).add(key)
}

// SampleWrites offers the keys of a transaction's recorded writes to the
// load samples of the shards that hold them in their tables' current maps.
// It is meant for the commit path (call it before Commit): two atomic loads
// when no shard is warm, one binary search per write otherwise.
func (m *Manager) SampleWrites(w *Writes) {
	v, ok := registries.Load(m)
	if !ok {
		return
	}
	if v.(*loadRegistry).tracked.Load() == 0 {
		return
	}
	var sm *ShardMap
	start := 0
	for i := range w.entries {
		e := &w.entries[i]
		key := w.arena[start:e.keyEnd]
		start = e.keyEnd
		if sm == nil || sm.tableID != e.tableID {
			if sm = m.Map(e.tableID); sm == nil {
				continue
			}
		}
		if k := sm.Find(key); k >= 0 {
			m.SampleKey(sm.shards[k], key)
		}
	}
}

// loadSplitKey chooses where to split a shard so that the load its sampled
// keys represent halves: the weighted median of the sample, moved within
// the window that leaves each side at least a quarter of the samples to the
// gap with the shortest separating key prefix — the rule MedianSplitKey
// applies to bytes (cuts.go), applied to sampled operations. ok is false
// when the sample is too small or one key holds more than half of it (a
// single hot key cannot be split).
func (m *Manager) loadSplitKey(tableID uint64, s Shard, keys [][]byte) (key []byte, ok bool, err error) {
	keep := make([][]byte, 0, len(keys))
	var ends []int
	for _, k := range keys {
		if !s.Span.Contains(k) || bytes.Equal(k, s.Span.Start) {
			continue
		}
		if m.opts.KeyColumns != nil {
			// Only whole-column prefixes can become pivots; a range read's
			// start key may be something else (a prefix successor).
			ends, err = m.opts.KeyColumns(tableID, k, ends[:0])
			if err != nil || len(ends) == 0 || ends[len(ends)-1] != len(k) {
				continue
			}
		}
		keep = append(keep, k)
	}
	if len(keep) < minLoadSample {
		return nil, false, nil
	}
	slices.SortFunc(keep, bytes.Compare)
	c := &cutChooser{tableID: tableID, cols: m.opts.KeyColumns, targets: []cutTarget{medianTarget(int64(len(keep)))}}
	for i := 0; i < len(keep); {
		j := i + 1
		for j < len(keep) && bytes.Equal(keep[j], keep[i]) {
			j++
		}
		done, err := c.add(keep[i], int64(j-i))
		if err != nil {
			return nil, false, err
		}
		if done {
			break
		}
		i = j
	}
	cuts := c.finish()
	if len(cuts) == 0 {
		return nil, false, nil
	}
	return cuts[0], true, nil
}
