package mvcc

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
)

// ComputeStatsOfSpans is the sum of ComputeStats over spans, which must be
// sorted and disjoint, with two iterators in all instead of two per span:
// a replica recounts every row key a write touched (cluster/shardsm), and
// a write of a bulk load touches thousands.
func ComputeStatsOfSpans(r Reader, spans []storage.Span) (Stats, error) {
	var s Stats
	if len(spans) == 0 {
		return s, nil
	}
	first, last := spans[0], spans[len(spans)-1]
	lower, _, err := engineSpan(first)
	if err != nil {
		return s, err
	}
	_, upper, err := engineSpan(last)
	if err != nil {
		return s, err
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return s, err
	}
	var prev []byte
	for _, sp := range spans {
		lo, hi, err := engineSpan(sp)
		if err != nil {
			it.Close()
			return s, err
		}
		// Bounds, not a byte comparison: engine keys sort by the MVCC
		// comparer (a version's suffix after its user key).
		it.SetBounds(lo, hi)
		if err := addVersionStats(it, &s, &prev); err != nil {
			it.Close()
			return s, err
		}
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return s, err
	}
	lower, _, err = engineSpan(LockTableSpan(first))
	if err != nil {
		return s, err
	}
	_, upper, err = engineSpan(LockTableSpan(last))
	if err != nil {
		return s, err
	}
	if it, err = r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper}); err != nil {
		return s, err
	}
	for _, sp := range spans {
		lo, hi, err := engineSpan(LockTableSpan(sp))
		if err != nil {
			it.Close()
			return s, err
		}
		it.SetBounds(lo, hi)
		for ok := it.First(); ok; ok = it.Next() {
			s.LockBytes += int64(len(it.Key()) + len(it.Value()))
			s.LockCount++
		}
	}
	return s, firstErr(it.Error(), it.Close())
}
