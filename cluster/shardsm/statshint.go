package shardsm

import (
	"bytes"
	"fmt"
	"hash/maphash"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// A Write's stats change, carried by the Write (issue 17).
//
// In local-lock mode every replica counts a Write's stats change by
// reading the versions of the row keys it writes (mvcc.VersionStatsDelta):
// a seek of the store per key on every replica, the largest part of a
// follower's apply. The proposing node reads them anyway, so it reads
// them once for all: AddStatsHint reads, from one Pebble snapshot of its
// own store, the group's applied index (Base) and the change the Write
// would make over that state, and the Write carries both.
//
// The change is right for the entry only if the keys are as they were at
// Base when the entry applies: no entry between Base and it touched them.
// Each replica keeps the row keys of the Writes it applied lately
// (recentWrites, in memory); it takes the carried change only when it
// knows every entry after Base and none of them touched the Write's row
// keys, and reads the versions itself otherwise. An entry that may touch
// versions other than by point Writes (Batch, Init, Split, Decide,
// Resolve, a range deletion) forgets everything before it; Serve, Close,
// Stage and ServeAt touch no versions. A replica that restarted or
// installed a snapshot knows nothing before it and reads. So a replica
// either takes a change that is the one it would have read, or reads it:
// replicas agree however their histories differ, and Check's recount
// still matches (TestStatsHint).

// StatsHint is a Write's stats change as its proposer read it at the
// group's applied index Base.
type StatsHint struct {
	Base  uint64
	Delta mvcc.Stats
}

// AddStatsHint sets w.Stats to the change w makes to group g's stats as
// db, the proposing node's store (in local-lock mode, holding a replica of
// g), holds g now. It leaves w.Stats nil when the store holds nothing of g
// or the change cannot be read beforehand (a range deletion, a merge into
// a version); the replicas then read it themselves.
func AddStatsHint(db *pebble.DB, g raft.GroupID, w *Write) (err error) {
	w.Stats = nil
	spans, err := writeSpans(w)
	if err != nil {
		return nil // a bad key: the replicas refuse the Write
	}
	// One iterator reads the applied index and the versions: it shows one
	// state of the store, and the index is written in the batch of the
	// entry that moved it, so the versions are those at Base.
	it, err := db.NewIter(nil)
	if err != nil {
		return err
	}
	deltas := mvcc.NewStatsDeltaReaderOn(it)
	defer func() {
		if cerr := deltas.Close(); err == nil {
			err = cerr
		}
	}()
	key := stateKey(g, stateApplied)
	if !it.SeekPrefixGE(key) || !bytes.Equal(it.Key(), key) {
		return it.Error() // nothing of g here
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return err
	}
	if len(v) != 8 {
		return fmt.Errorf("shardsm: group %d: applied index of %d bytes", g, len(v))
	}
	base := beUint64(v)
	if base == 0 {
		return nil
	}
	if len(w.Mutations) > maxHintedKeys {
		return nil // see maxHintedKeys
	}
	delta, ok, err := deltas.Delta(countedSpans(spans), w.Mutations)
	if err != nil || !ok {
		return err
	}
	w.Stats = &StatsHint{Base: base, Delta: delta}
	return nil
}

// recentWrites records, for the entries a replica applied since it opened
// or installed a snapshot, the row keys each point Write touched (as
// hashes: two keys that collide only make a carried change unused).
type recentWrites struct {
	// floor: every entry from floor on that may touch versions is in
	// writes; 0 until the first entry is noted.
	floor  uint64
	writes []recentWrite // ascending by index
}

type recentWrite struct {
	index uint64
	keys  []uint64
}

// recentWritesKept bounds what a replica remembers: the last 256 to 512
// Writes, far more than the entries a proposal waits behind.
const recentWritesKept = 256

// maxHintedKeys bounds the mutations of a Write that carries a stats
// change, and the row keys a replica remembers of one Write: a bulk
// load's Writes (thousands of keys each, storage/replbulk.go) are
// counted by every replica itself, and a replica that applies one
// forgets the Writes before it. Without the bound the record held
// megabytes per group, and checking a bulk Write's keys against those of
// the Writes in flight before it took seconds per entry on every replica
// (a 1M-row COPY on three nodes stalled its group until the serving node
// gave up: TestClusterCopy with PIVOTDB_CLUSTER_COPY_ROWS=1000000).
const maxHintedKeys = 256

// nestedCheckMax is the most key pairs untouched compares one by one;
// above it, it looks the recent keys up in a set of the Write's keys.
const nestedCheckMax = 64

var rowKeySeed = maphash.MakeSeed()

// reset forgets everything: the replica's state came from elsewhere.
func (r *recentWrites) reset() {
	r.floor = 0
	r.writes = r.writes[:0]
}

// note records the entry at index, whose command is cmd (nil: malformed).
func (r *recentWrites) note(index uint64, cmd any) {
	if r.floor == 0 {
		r.floor = index
	}
	switch c := cmd.(type) {
	case nil, *Serve, *Close, *Stage, *ServeAt:
		// Touches no versions.
	case *Write:
		keys, point := c.rowKeyHashes()
		if !point || len(keys) > maxHintedKeys {
			r.forgetThrough(index)
			return
		}
		if len(r.writes) == 2*recentWritesKept {
			r.floor = r.writes[recentWritesKept-1].index + 1
			r.writes = r.writes[:copy(r.writes, r.writes[recentWritesKept:])]
		}
		r.writes = append(r.writes, recentWrite{index: index, keys: keys})
	default:
		r.forgetThrough(index)
	}
}

// forgetThrough forgets the entries up to index: the one at index may
// have touched any version.
func (r *recentWrites) forgetThrough(index uint64) {
	r.floor = index + 1
	r.writes = r.writes[:0]
}

// untouched reports whether the replica knows that no entry after base
// and before index touched any of keys.
func (r *recentWrites) untouched(base, index uint64, keys []uint64) bool {
	if r.floor == 0 || base+1 < r.floor || base >= index {
		return false
	}
	var set map[uint64]struct{} // keys, once a pair check would be long
	for i := len(r.writes) - 1; i >= 0 && r.writes[i].index > base; i-- {
		w := &r.writes[i]
		if w.index >= index {
			continue
		}
		if len(w.keys)*len(keys) <= nestedCheckMax {
			for _, a := range w.keys {
				for _, b := range keys {
					if a == b {
						return false
					}
				}
			}
			continue
		}
		if set == nil {
			set = make(map[uint64]struct{}, len(keys))
			for _, b := range keys {
				set[b] = struct{}{}
			}
		}
		for _, a := range w.keys {
			if _, ok := set[a]; ok {
				return false
			}
		}
	}
	return true
}

// hintHolds reports whether c, the entry at index, carries a stats change
// this replica may take (see above).
func (m *stateMachine) hintHolds(c *Write, index uint64) bool {
	if c.Stats == nil {
		return false
	}
	keys, point := c.rowKeyHashes()
	return point && len(keys) <= maxHintedKeys && m.recent.untouched(c.Stats.Base, index, keys)
}

// rowKeyHashes returns the hashes of the row keys c's versions route to;
// point is false when c holds a range deletion or a key that routes to no
// row key or does not decode.
//
// Writes of keys that are not versions are left out: a stats change
// neither reads nor counts them (mvcc.StatsDeltaReader skips them, as the
// recount does), so they cannot make a carried change wrong. Every commit
// of a partitioned table merges into its shard's statistics counter
// (partition/keys.go: a shard-local key, 0x03 0x11 <pivot>), so with them
// in, any two Writes to one shard in flight at once shared a key and under
// concurrent commits (16 clients) no replica took a carried change: each
// read the versions itself.
func (c *Write) rowKeyHashes() (keys []uint64, point bool) {
	if c.rowKeysDone {
		return c.rowKeys, c.rowKeysPoint
	}
	c.rowKeysDone = true
	keys = make([]uint64, 0, len(c.Mutations))
	for _, mu := range c.Mutations {
		if mu.Kind == storage.MutationDeleteRange {
			return nil, false
		}
		if _, _, versioned, err := mvcc.DecodeKey(mu.Key); err != nil {
			return nil, false
		} else if !versioned {
			continue
		}
		k, err := RouteKey(mu.Key)
		if err != nil {
			return nil, false
		}
		keys = append(keys, maphash.Bytes(rowKeySeed, k))
	}
	c.rowKeys, c.rowKeysPoint = keys, true
	return keys, true
}
