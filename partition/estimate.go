package partition

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/pivotdb/pivotdb/storage"
)

// Choosing a big shard's split key without reading it.
//
// MedianSplitKey is exact but reads the shard's rows up to the end of its
// window, about three quarters of the shard: 1 GB of rows is seconds of
// scanning each time the balancer splits one. For shards above
// BalancerOptions.EstimateAbove the balancer uses approxMedianSplitKey
// instead, which finds the quantiles of the shard by bisecting the key space
// with the storage engine's size estimates (Pebble's EstimateDiskUsage,
// which reads only sstable metadata and index blocks):
//
//	lo = first row, hi = just after the last row
//	repeat: mid = the byte string halfway between lo and hi
//	        est([shard start, mid)) < q·est(shard) ? lo = mid : hi = mid
//	until est(hi) - est(lo) <= est(shard)/128
//	quantile q = the first row at or after lo (one seek)
//
// Each step halves the key interval and costs one estimate, so the cost
// depends on the key length and the index, not on the amount of data. With
// the 25%, 50% and 75% quantiles (r25, r50, r75) the key is chosen as
// MedianSplitKey chooses it, column depth by column depth: at depth d the
// candidates are r50's first d columns (the start of r50's group, if it lies
// at or after r25) and the first d columns of the first row after that
// group (if that row is at or before r75); the first depth with a candidate
// wins, the one nearer the middle among two.
//
// Trade-offs, against the exact median:
//
//   - The estimates count compressed sstable bytes, at the granularity of
//     data blocks, and not the memtables; deleted rows count until
//     compaction drops them. So "each half keeps at least 25%" holds only as
//     far as the disk layout reflects the logical sizes, which it does for
//     big shards that have been flushed and compacted. The split's own
//     landing still counts the new shards exactly, and a shard left too big
//     by an inexact cut simply splits again at a later tick.
//   - When the estimate is useless (the shard's data is mostly in the
//     memtables, or compresses more than 16:1), or bisection finds no
//     candidate, the balancer falls back to the exact MedianSplitKey.

// maxBisectSteps bounds the estimates spent on one quantile. Keys that
// share a long prefix cost nothing (the bisection starts from the first and
// last rows, whose common prefix every midpoint keeps); each further byte
// of key that separates the rows costs up to 8 steps.
const maxBisectSteps = 512

// minDiskFraction: the estimate is used only if the shard's estimated disk
// size is at least its logical size divided by this.
const minDiskFraction = 16

// errNoEstimate reports that the engine's estimates cannot place the
// quantiles; the caller falls back to an exact scan.
var errNoEstimate = errors.New("partition: size estimate unusable")

// splitKeyBySize returns the key at which to split a shard of logicalBytes
// by size: estimated for shards of at least estimateAbove bytes (see above),
// exact otherwise or when the estimate is unusable.
func (m *Manager) splitKeyBySize(tableID uint64, id ShardID, logicalBytes, estimateAbove int64) ([]byte, bool, error) {
	if estimateAbove > 0 && logicalBytes >= estimateAbove {
		key, ok, err := m.approxMedianSplitKey(tableID, id, logicalBytes)
		switch {
		case err == nil && ok:
			return key, true, nil
		case err != nil && !errors.Is(err, errNoEstimate):
			return nil, false, err
		}
	}
	return m.MedianSplitKey(tableID, id)
}

// approxMedianSplitKey estimates MedianSplitKey for a shard of logicalBytes
// from the engine's size estimates (see the top of this file). It reads the
// live engine, not a snapshot: writes in between only move the estimates.
// ok is false when no candidate lies in the window; the error wraps
// errNoEstimate when the estimates are unusable.
func (m *Manager) approxMedianSplitKey(tableID uint64, id ShardID, logicalBytes int64) (key []byte, ok bool, err error) {
	sm := m.Map(tableID)
	if sm == nil {
		return nil, false, ErrTableNotFound
	}
	k := sm.IndexOf(id)
	if k < 0 {
		return nil, false, ErrShardNotFound
	}
	span := sm.shards[k].Span
	it, err := m.eng.NewIter(span)
	if err != nil {
		return nil, false, err
	}
	defer it.Close()
	if !it.First() {
		return nil, false, it.Error()
	}
	first := clone(it.Key())
	if !it.Last() {
		return nil, false, it.Error()
	}
	last := clone(it.Key())
	if bytes.Equal(first, last) {
		return nil, false, nil
	}

	est := func(end []byte) (int64, error) {
		if bytes.Compare(end, span.Start) <= 0 {
			return 0, nil
		}
		u, err := m.eng.EstimateDiskUsage(storage.Span{Start: span.Start, End: end})
		return int64(u), err
	}
	top := append(clone(last), 0)
	total, err := est(top)
	if err != nil {
		return nil, false, err
	}
	if total == 0 || total < logicalBytes/minDiskFraction {
		return nil, false, errNoEstimate
	}
	tol := total / 128

	// quantile returns the first row at or after the point where the
	// estimate reaches q of the total.
	quantile := func(q float64) ([]byte, error) {
		target := int64(q * float64(total))
		lo, hi := first, top
		elo, err := est(lo)
		if err != nil {
			return nil, err
		}
		ehi := total
		for step := 0; step < maxBisectSteps && ehi-elo > tol; step++ {
			mid, ok := midKey(lo, hi)
			if !ok {
				break
			}
			e, err := est(mid)
			if err != nil {
				return nil, err
			}
			if e < target {
				lo, elo = mid, e
			} else {
				hi, ehi = mid, e
			}
		}
		if !it.SeekGE(lo) {
			if err := it.Error(); err != nil {
				return nil, err
			}
			return last, nil
		}
		return clone(it.Key()), nil
	}
	r25, err := quantile(0.25)
	if err != nil {
		return nil, false, err
	}
	r50, err := quantile(0.5)
	if err != nil {
		return nil, false, err
	}
	r75, err := quantile(0.75)
	if err != nil {
		return nil, false, err
	}
	if bytes.Compare(r25, r50) > 0 || bytes.Compare(r50, r75) > 0 {
		return nil, false, errNoEstimate // Estimates not monotone: a concurrent flush.
	}

	inWindowStart := func(p []byte) bool {
		return bytes.Compare(p, r25) >= 0 && bytes.Compare(p, span.Start) > 0
	}
	// nextGroup returns the first row after every row that starts with p,
	// if it is at or before r75.
	nextGroup := func(p []byte) ([]byte, error) {
		pe := storage.PrefixEnd(p)
		if pe == nil || !it.SeekGE(pe) {
			return nil, it.Error()
		}
		if bytes.Compare(it.Key(), r75) > 0 {
			return nil, nil
		}
		return clone(it.Key()), nil
	}
	nearer := func(a, b []byte) ([]byte, error) {
		ea, err := est(a)
		if err != nil {
			return nil, err
		}
		eb, err := est(b)
		if err != nil {
			return nil, err
		}
		if abs64(eb-total/2) < abs64(ea-total/2) {
			return b, nil
		}
		return a, nil
	}

	if m.opts.KeyColumns == nil {
		if inWindowStart(r50) {
			return r50, true, nil
		}
		next, err := nextGroup(r50)
		return next, next != nil, err
	}
	ends, err := m.opts.KeyColumns(tableID, r50, nil)
	if err != nil {
		return nil, false, err
	}
	var nextEnds []int
	for depth, e := range ends {
		var cands [][]byte
		if a := r50[:e]; inWindowStart(a) {
			cands = append(cands, clone(a))
		}
		next, err := nextGroup(r50[:e])
		if err != nil {
			return nil, false, err
		}
		if next != nil {
			if nextEnds, err = m.opts.KeyColumns(tableID, next, nextEnds[:0]); err != nil {
				return nil, false, err
			}
			// The first row after r50's group differs from r50 within its
			// first depth+1 columns, so it has that many.
			if depth < len(nextEnds) {
				cands = append(cands, next[:nextEnds[depth]])
			}
		}
		switch len(cands) {
		case 1:
			return cands[0], true, nil
		case 2:
			key, err := nearer(cands[0], cands[1])
			return key, err == nil, err
		}
	}
	return nil, false, nil
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// midKey returns a byte string strictly between a and b (a < b), halfway
// between them when both are read as big-endian fractions, or false if
// there is none short enough to find (b is a followed by zero bytes).
func midKey(a, b []byte) ([]byte, bool) {
	n := max(len(a), len(b))
	for extra := 0; extra < 2; extra++ {
		A := new(big.Int).SetBytes(padRight(a, n))
		B := new(big.Int).SetBytes(padRight(b, n))
		M := new(big.Int).Add(A, B)
		M.Rsh(M, 1)
		if M.Cmp(A) > 0 {
			mid := M.FillBytes(make([]byte, n))
			if bytes.Compare(mid, a) > 0 && bytes.Compare(mid, b) < 0 {
				return mid, true
			}
			return nil, false
		}
		n++
	}
	return nil, false
}

func padRight(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out, b)
	return out
}
