package mvcc

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
)

// Stats counts the logical size of a span of versions (engine key plus
// stored value, before compression: design §5's data size). Every write
// operation returns the change it made, which the shard adds to its counter
// key (storage/counters.go) in the same batch, so the totals never need a
// scan; ComputeStats is the scan that tests and repair tools check them
// against.
//
//   - Live: a key's newest version when it is a value, committed or
//     provisional. Live bytes are what the table holds now: splits use them
//     (issue 16: "splits use the live logical size").
//   - Old: every other version: versions under a newer one and newest
//     tombstones. GC reclaims them once they fall below the threshold;
//     sys.partitions shows them beside the live size.
//   - Intent: the provisional versions among the above (counted in Live or
//     Old as well).
//   - Lock: lock records of locking reads.
type Stats struct {
	LiveBytes, LiveCount     int64
	OldBytes, OldCount       int64
	IntentBytes, IntentCount int64
	LockBytes, LockCount     int64
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.LiveBytes += o.LiveBytes
	s.LiveCount += o.LiveCount
	s.OldBytes += o.OldBytes
	s.OldCount += o.OldCount
	s.IntentBytes += o.IntentBytes
	s.IntentCount += o.IntentCount
	s.LockBytes += o.LockBytes
	s.LockCount += o.LockCount
}

// Sub subtracts o from s.
func (s *Stats) Sub(o Stats) {
	s.Add(Stats{-o.LiveBytes, -o.LiveCount, -o.OldBytes, -o.OldCount,
		-o.IntentBytes, -o.IntentCount, -o.LockBytes, -o.LockCount})
}

// Counters returns the stats as a counter vector for storage.AppendCounters,
// in field order; the order is part of the stored format of the shard's
// counter key.
func (s Stats) Counters() []int64 {
	return []int64{s.LiveBytes, s.LiveCount, s.OldBytes, s.OldCount,
		s.IntentBytes, s.IntentCount, s.LockBytes, s.LockCount}
}

// ComputeStats scans every version in span and the lock records of its keys
// and returns their Stats.
func ComputeStats(r Reader, span storage.Span) (Stats, error) {
	var s Stats
	lower, upper, err := engineSpan(span)
	if err != nil {
		return s, err
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return s, err
	}
	var prev []byte
	if err := addVersionStats(it, &s, &prev); err != nil {
		it.Close()
		return s, err
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return s, err
	}
	lt := LockTableSpan(span)
	if lower, upper, err = engineSpan(lt); err != nil {
		return s, err
	}
	it, err = r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return s, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		s.LockBytes += int64(len(it.Key()) + len(it.Value()))
		s.LockCount++
	}
	return s, firstErr(it.Error(), it.Close())
}

// addVersionStats adds to s every version within it's bounds, a key's
// first (newest) version as its live one. prev is scratch space for the
// previous user key, kept by the caller so that several spans reuse it.
func addVersionStats(it *pebble.Iterator, s *Stats, prev *[]byte) error {
	havePrev := false // a span's first key is its own newest version
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		uk, _, versioned, err := DecodeKey(k)
		if err != nil {
			return err
		}
		if !versioned {
			continue
		}
		raw, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		v, err := decodeVersionValue(raw)
		if err != nil {
			return err
		}
		newest := !havePrev || string(*prev) != string(uk)
		s.Add(newestStats(int64(len(k)+len(raw)), &v, newest))
		*prev, havePrev = append((*prev)[:0], uk...), true
	}
	return nil
}
