package sql

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// What a rewrite (ALTER COLUMN TYPE, ADD PRIMARY KEY; altertable.go)
// keeps between its two phases, without a heap object per row: a rewrite
// of a million rows that kept a million small objects made the garbage
// collector mark them over and over while it ran, which slowed the
// rewrite threefold and the table's writers with it.
//
//   - rewriteTracker: the keys of the table that commits wrote since the
//     rewrite's snapshot (partition.Manager.Observe), so that the second
//     phase converts only those rows again instead of reading the table.
//   - rewriteLog: what the first phase wrote for each old row (its new
//     key and index entries), to delete them when the row changed since.
//   - keySet: the new keys and unique values seen so far (23505).

// trackLimit bounds the bytes of keys a rewriteTracker keeps: beyond it
// (a bulk load, a mass UPDATE), the second phase compares the whole table
// with the snapshot instead.
var trackLimit = 64 << 20

// rewriteTracker collects the keys of one table that commits wrote while
// a rewrite of it runs. Commits call note concurrently.
type rewriteTracker struct {
	// writes counts the keys noted, overflow or not (pacing, rewritePace).
	writes atomic.Int64
	mu     sync.Mutex
	arena  []byte // keys back to back
	ends   []int  // end of each key in arena
	// overflow: too many keys, or a write that was not observed key by
	// key (COPY's bulk ingestion, bulkWrote): the keys are dropped and the
	// second phase reads the whole table.
	overflow bool
}

func (t *rewriteTracker) note(key []byte) {
	t.writes.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.overflow {
		return
	}
	if len(t.arena)+len(key) > trackLimit {
		t.overflowLocked()
		return
	}
	t.arena = append(t.arena, key...)
	t.ends = append(t.ends, len(t.arena))
}

func (t *rewriteTracker) setOverflow() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.overflowLocked()
}

func (t *rewriteTracker) overflowLocked() {
	t.overflow = true
	t.arena, t.ends = nil, nil
}

// keys returns the keys noted, sorted and without duplicates, or overflow.
// The caller holds the commits off (the transaction gate).
func (t *rewriteTracker) keys() (keys [][]byte, overflow bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.overflow {
		return nil, true
	}
	keys = make([][]byte, len(t.ends))
	start := 0
	for i, end := range t.ends {
		keys[i] = t.arena[start:end:end]
		start = end
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal), false
}

// bulkWrote tells a rewrite of table id that runs now that a commit wrote
// rows it did not observe one by one (COPY's bulk ingestion). It is called
// under the transaction gate, as the tracker is installed under it.
func (e *Engine) bulkWrote(id uint64) {
	if v, ok := e.rewrites.Load(id); ok {
		v.(*rewriteTracker).setOverflow()
	}
}

// rewriteLog records, in old key order, what phase 1 of a rewrite wrote
// for each row of the old table: its new key and its index entries, each
// with the length of its unique value prefix (0: not a unique index, or a
// NULL in the value). Records are encoded back to back in one arena.
type rewriteLog struct {
	arena []byte
	offs  []int // start of each record
}

func (l *rewriteLog) add(oldKey, newKey []byte, ents [][]byte, plens []int) {
	l.offs = append(l.offs, len(l.arena))
	l.arena = appendLenBytes(l.arena, oldKey)
	l.arena = appendLenBytes(l.arena, newKey)
	for i, k := range ents {
		l.arena = binary.AppendUvarint(l.arena, uint64(plens[i]))
		l.arena = appendLenBytes(l.arena, k)
	}
}

// find returns the record of oldKey.
func (l *rewriteLog) find(oldKey []byte) (int, bool) {
	return slices.BinarySearchFunc(l.offs, oldKey, func(off int, k []byte) int {
		old, _ := readLenBytes(l.arena[off:])
		return bytes.Compare(old, k)
	})
}

// record decodes record i, of n entries, into ents and plens (resized);
// the slices point into the arena.
func (l *rewriteLog) record(i, n int, ents [][]byte, plens []int) (newKey []byte, _ [][]byte, _ []int) {
	b := l.arena[l.offs[i]:]
	_, b = readLenBytes(b)
	newKey, b = readLenBytes(b)
	ents, plens = ents[:0], plens[:0]
	for range n {
		p, w := binary.Uvarint(b)
		var k []byte
		k, b = readLenBytes(b[w:])
		ents, plens = append(ents, k), append(plens, int(p))
	}
	return newKey, ents, plens
}

func appendLenBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

func readLenBytes(b []byte) (v, rest []byte) {
	n, w := binary.Uvarint(b)
	end := w + int(n)
	return b[w:end:end], b[end:]
}

// keySet is a set of byte strings kept in one arena and found by open
// addressing on their hashes (no object per key). Removed keys leave
// their bytes in the arena until the set is dropped.
type keySet struct {
	seed  maphash.Seed
	arena []byte
	// slots holds arena offset+1 of a length-prefixed key; 0 is empty,
	// tombstone a removed key.
	slots      []uint64
	live, used int // keys; slots not empty (keys and tombstones)
}

const tombstone = math.MaxUint64

// add inserts k and reports whether it was not there yet.
func (s *keySet) add(k []byte) bool {
	if (s.used+1)*4 >= len(s.slots)*3 {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	free := -1
	for i := maphash.Bytes(s.seed, k) & mask; ; i = (i + 1) & mask {
		switch sl := s.slots[i]; {
		case sl == 0:
			if free < 0 {
				free = int(i)
				s.used++
			}
			s.slots[free] = uint64(len(s.arena)) + 1
			s.arena = appendLenBytes(s.arena, k)
			s.live++
			return true
		case sl == tombstone:
			if free < 0 {
				free = int(i)
			}
		case bytes.Equal(s.key(sl), k):
			return false
		}
	}
}

// remove deletes k if it is there.
func (s *keySet) remove(k []byte) {
	if len(s.slots) == 0 {
		return
	}
	mask := uint64(len(s.slots) - 1)
	for i := maphash.Bytes(s.seed, k) & mask; ; i = (i + 1) & mask {
		switch sl := s.slots[i]; {
		case sl == 0:
			return
		case sl == tombstone:
		case bytes.Equal(s.key(sl), k):
			s.slots[i] = tombstone
			s.live--
			return
		}
	}
}

func (s *keySet) key(slot uint64) []byte {
	k, _ := readLenBytes(s.arena[slot-1:])
	return k
}

// grow rehashes the keys into a table at most half full.
func (s *keySet) grow() {
	if s.slots == nil {
		s.seed = maphash.MakeSeed()
	}
	n := 16
	for n < 2*(s.live+1) {
		n *= 2
	}
	old := s.slots
	s.slots = make([]uint64, n)
	mask := uint64(n - 1)
	for _, sl := range old {
		if sl == 0 || sl == tombstone {
			continue
		}
		i := maphash.Bytes(s.seed, s.key(sl)) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
	}
	s.used = s.live
}

// rewritePace paces phase 1 of a rewrite while commits write its table:
// after each slice of paceRows rows during which the tracker saw a write,
// it sleeps paceYield times as long as the slice took, so the conversion
// takes at most a third of the time and the table's writers keep most of
// their rate on a machine without a core to spare (the conversion is
// CPU-bound, like them). On a table nobody writes it runs flat out. While
// writers are busy the rewrite takes up to three times as long; it holds
// no lock they need meanwhile. With a yield of 1 the writer of
// BenchmarkAlterTable1M kept 0.24× and 0.50× of its quiet rate on the
// shared 2-core machine (load average 14-20); with 2, 0.82× and 0.63×.
type rewritePace struct {
	tracker *rewriteTracker
	start   time.Time
	seen    int64
}

const (
	paceRows  = 256
	paceYield = 2
)

func newRewritePace(t *rewriteTracker) *rewritePace {
	return &rewritePace{tracker: t, start: time.Now(), seen: t.writes.Load()}
}

// row is called once per row converted.
func (p *rewritePace) row(n int) {
	if n%paceRows != 0 {
		return
	}
	if w := p.tracker.writes.Load(); w != p.seen {
		p.seen = w
		time.Sleep(paceYield * time.Since(p.start))
	}
	p.start = time.Now()
}
