package partition

import (
	"fmt"

	"github.com/pivotdb/pivotdb/storage"
)

// Choosing pivots from data.
//
// Both SplitBySize (a table into n shards of about equal logical size) and
// MedianSplitKey (a shard in two halves, issue 5's automatic split) walk the
// rows in key order, adding up their logical sizes, and choose cuts between
// neighbouring rows. A cut between rows prev and next is the pivot
//
//	next[:end of the first key column in which prev and next differ]
//
// the shortest whole-column prefix of next that sorts after prev. Every key
// below it is <= prev and every key from next on is >= it, so the pivot
// splits the data exactly where the cut is, and no shorter column prefix
// does. Example, key (a Int64, b Utf8):
//
//	prev (1, "zz")  next (2, "aa")   pivot (2)           1 column
//	prev (1, "ab")  next (1, "b")    pivot (1, "b")      2 columns
//
// Each cut has a target (the ideal number of bytes before it) and a window
// of acceptable positions around the target. Among the gaps between rows
// whose bytes-before fall in the window, the chooser takes the one with the
// fewest pivot columns, and among those the one nearest the target; a
// target whose window holds no gap (one row larger than the window) gets no
// cut. For MedianSplitKey the target is half the shard and the window keeps
// at least 25% on each side (YDB); with skewed data (most rows sharing a
// first column value) the first-column boundaries fall outside the window and
// the chooser settles for a longer prefix inside the big group. For
// SplitBySize target i of n is i/n of the table and its window reaches half
// a fair share (1/(2n)) to either side, so that the windows tile the table
// without overlapping and the pivots strictly ascend; for n = 2 that is the
// median's 25% rule.
//
// Without Options.KeyColumns every pivot is a whole key (next itself), which
// is still a valid pivot, and the nearest gap wins.

// cutTarget is one cut to choose: ideal bytes before it, and the window
// [lo, hi] of acceptable bytes before it.
type cutTarget struct{ want, lo, hi int64 }

// cutChooser chooses cuts from rows fed in key order.
type cutChooser struct {
	tableID uint64
	cols    KeyColumnsFunc
	targets []cutTarget
	i       int // The target being chosen.

	prev     []byte
	havePrev bool
	left     int64 // Bytes of the rows before the current gap.

	best      []byte
	bestDepth int
	bestDist  int64
	haveBest  bool

	ends []int
	out  [][]byte
}

// add feeds the next row. done reports that every target is decided, so the
// caller can stop reading.
func (c *cutChooser) add(key []byte, size int64) (done bool, err error) {
	if c.havePrev {
		for c.i < len(c.targets) && c.left > c.targets[c.i].hi {
			c.decide()
		}
		if c.i == len(c.targets) {
			return true, nil
		}
		if t := c.targets[c.i]; c.left >= t.lo {
			if err := c.consider(key, t); err != nil {
				return false, err
			}
		}
	}
	c.prev = append(c.prev[:0], key...)
	c.havePrev = true
	c.left += size
	return false, nil
}

// consider weighs the gap between c.prev and key for target t.
func (c *cutChooser) consider(key []byte, t cutTarget) error {
	dist := c.left - t.want
	if dist < 0 {
		dist = -dist
	}
	if c.cols == nil {
		if !c.haveBest || dist < c.bestDist {
			c.keep(key, 0, dist)
		}
		return nil
	}
	lcp := 0
	for lcp < len(key) && lcp < len(c.prev) && key[lcp] == c.prev[lcp] {
		lcp++
	}
	ends, err := c.cols(c.tableID, key, c.ends[:0])
	c.ends = ends
	if err != nil {
		return fmt.Errorf("partition: key %s: %w", storage.FormatKey(key), err)
	}
	for d, e := range ends {
		if e > lcp {
			depth := d + 1
			if !c.haveBest || depth < c.bestDepth || (depth == c.bestDepth && dist < c.bestDist) {
				c.keep(key[:e], depth, dist)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: keys %s and %s are not ascending whole keys", ErrInvariant,
		storage.FormatKey(c.prev), storage.FormatKey(key))
}

func (c *cutChooser) keep(pivot []byte, depth int, dist int64) {
	c.best = append(c.best[:0], pivot...)
	c.bestDepth, c.bestDist, c.haveBest = depth, dist, true
}

// decide closes the current target.
func (c *cutChooser) decide() {
	if c.haveBest {
		c.out = append(c.out, clone(c.best))
		c.haveBest = false
	}
	c.i++
}

// finish closes the remaining targets and returns the chosen pivots, in
// ascending order.
func (c *cutChooser) finish() [][]byte {
	for c.i < len(c.targets) {
		c.decide()
	}
	return c.out
}

// chooseCuts feeds the rows of span in r to a chooser for targets.
func (m *Manager) chooseCuts(r storage.Reader, tableID uint64, span storage.Span, targets []cutTarget) ([][]byte, error) {
	c := &cutChooser{tableID: tableID, cols: m.opts.KeyColumns, targets: targets}
	it, err := r.NewIter(span)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		done, err := c.add(it.Key(), RowSize(it.Key(), len(it.Value())))
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	return c.finish(), nil
}

// medianTarget is the cut of MedianSplitKey for a shard of total bytes:
// half, with at least a quarter on each side.
func medianTarget(total int64) cutTarget {
	return cutTarget{want: total / 2, lo: (total + 3) / 4, hi: total - (total+3)/4}
}

// sizeTargets are the n-1 cuts of SplitBySize for total bytes: cut i aims
// at i/n of the bytes and accepts anything from (i-1/2)/n up to, excluding,
// (i+1/2)/n. The windows tile the range without overlap, so every gap belongs
// to at most one cut and the cuts ascend.
func sizeTargets(total int64, n int) []cutTarget {
	// at(j) = j·total/(2n), without overflow.
	d := 2 * int64(n)
	at := func(j int64) int64 { return (total/d)*j + (total%d)*j/d }
	ts := make([]cutTarget, 0, n-1)
	for i := int64(1); i < int64(n); i++ {
		ts = append(ts, cutTarget{want: at(2 * i), lo: at(2*i - 1), hi: at(2*i+1) - 1})
	}
	return ts
}

// MedianSplitKey returns the key at which issue 5's balancer splits a
// shard: the median of the shard's rows by logical bytes, moved within the
// window that leaves each half at least 25% of the bytes to the gap with the
// shortest separating key prefix (see the top of this file). ok is false when
// no gap qualifies: the shard is empty, holds one row, or one row holds more
// than half of its bytes.
//
// Cost: the shard's total comes from its statistics (a count when they are
// pending); its rows are read from a snapshot up to the end of the window,
// that is about 3/4 of the shard: O(shard rows) time, O(key length) memory.
func (m *Manager) MedianSplitKey(tableID uint64, id ShardID) (key []byte, ok bool, err error) {
	sm, snap, err := m.view(tableID)
	if err != nil {
		return nil, false, err
	}
	defer snap.Close()
	k := sm.IndexOf(id)
	if k < 0 {
		return nil, false, fmt.Errorf("%w: shard %d of table %d", ErrShardNotFound, id, tableID)
	}
	total, err := shardBytes(snap, sm, []int{k})
	if err != nil || total == 0 {
		return nil, false, err
	}
	cuts, err := m.chooseCuts(snap, tableID, sm.shards[k].Span, []cutTarget{medianTarget(total)})
	if err != nil || len(cuts) == 0 {
		return nil, false, err
	}
	return cuts[0], true, nil
}

// view returns the table's current map and a snapshot of the engine that
// matches it (see viewWith).
func (m *Manager) view(tableID uint64) (*ShardMap, *storage.Snapshot, error) {
	return viewWith(m, tableID, m.eng.NewSnapshot)
}

// viewWith returns the table's current map and a snapshot open takes that
// matches it: taken under the table's commit lock, so no swap lies between
// them and the snapshot holds exactly the map's shard records and
// statistics. open is the engine's snapshot where rows are read too, the
// metadata store's where only records are.
func viewWith[S any](m *Manager, tableID uint64, open func() S) (*ShardMap, S, error) {
	var none S
	t := m.table(tableID)
	if t == nil {
		return nil, none, fmt.Errorf("%w: table %d", ErrTableNotFound, tableID)
	}
	t.rw.RLock()
	defer t.rw.RUnlock()
	if t.dropped {
		return nil, none, fmt.Errorf("%w: table %d", ErrTableNotFound, tableID)
	}
	return t.cur.Load(), open(), nil
}

// shardBytes returns the logical bytes of the shards ks of sm as of snap,
// which must match sm (see view): from their statistics, or by counting a
// shard whose statistics are pending.
func shardBytes(snap *storage.Snapshot, sm *ShardMap, ks []int) (int64, error) {
	var total int64
	var cs []int64
	for _, k := range ks {
		s := &sm.shards[k]
		_, pending, err := snap.Get(pendingKey(sm.tableID, s.ID))
		if err != nil {
			return 0, err
		}
		if pending {
			_, size, err := countSpan(snap, s.Span, nil)
			if err != nil {
				return 0, err
			}
			total += size
			continue
		}
		if cs, err = readCounters(snap, s.statsKey, cs[:0], 2); err != nil {
			return 0, err
		}
		total += cs[1]
	}
	return total, nil
}

// SplitBySize returns up to n-1 pivots that cut the table's rows into n
// shards of about equal logical size (each cut within half a fair share of
// its ideal position, pivots as short as possible; see the top of this
// file), for
// Reshard. It returns fewer pivots when the data does not allow n shards (an
// empty table, fewer rows than shards, huge rows); the sql layer may then
// fall back to uniform pivots.
//
// Cost: the total is the sum of the shards' statistics in a snapshot (plus
// a count of any pending shard); then one pass over the table's rows in the
// snapshot: O(rows) time, O(n · key length) memory. The
// KeyColumns function runs only for gaps inside a window, about half of them.
func (m *Manager) SplitBySize(tableID uint64, n int) ([][]byte, error) {
	sm, snap, err := m.view(tableID)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	if n <= 1 {
		return nil, nil
	}
	ks := make([]int, sm.Len())
	for k := range ks {
		ks[k] = k
	}
	total, err := shardBytes(snap, sm, ks)
	if err != nil || total == 0 {
		return nil, err
	}
	return m.chooseCuts(snap, tableID, storage.TableSpan(tableID), sizeTargets(total, n))
}
