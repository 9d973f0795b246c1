package storage

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
)

// Counter merge operator.
//
// A counter key holds a vector of int64 counters that writers change by
// adding deltas with Batch.Merge instead of reading, adding and writing back.
// The deltas commit in the same batch as the writes they count, need no lock
// and no read, and concurrent writers never conflict: Pebble folds the
// operands together when the key is read or compacted. The partition package
// keeps each shard's row count and data size this way.
//
// A value (stored or operand) is n counters, each 8 bytes big-endian two's
// complement:
//
//	| counter 0 (8 bytes) | counter 1 (8 bytes) | ... | counter n-1 |
//
// Merging adds position by position; a shorter vector counts as padded with
// zeros, so a counter can be appended to a vector without rewriting the
// stored values. Addition wraps on overflow, which is harmless for counters
// that stay far below 2^63. A Set of a full vector is a valid base for later
// merges (it replaces everything before it), and a Delete resets the key.
//
// Pebble applies one merge operator to the whole engine and records its name
// in the store: CounterMergerName must never change, and data directories
// written before it was introduced (with Pebble's default "pebble.concatenate")
// cannot be opened by this version.

// CounterMergerName is the name of the merge operator, recorded by Pebble in
// every store and checked when the store is opened.
const CounterMergerName = "pivotdb.counters.add.v1"

// counterMerger adds counter vectors; see the comment above.
var counterMerger = &pebble.Merger{
	Name: CounterMergerName,
	Merge: func(key, value []byte) (pebble.ValueMerger, error) {
		m := &counterValueMerger{}
		if err := m.add(value); err != nil {
			return nil, err
		}
		return m, nil
	},
}

// counterValueMerger accumulates operands. Addition commutes, so newer and
// older operands are treated alike.
type counterValueMerger struct {
	sums []int64
}

func (m *counterValueMerger) add(v []byte) error {
	if len(v)%8 != 0 {
		return fmt.Errorf("%w: counter value of %d bytes is not a multiple of 8", ErrCorruptEncoding, len(v))
	}
	for i := 0; i*8 < len(v); i++ {
		d := int64(binary.BigEndian.Uint64(v[i*8:]))
		if i < len(m.sums) {
			m.sums[i] += d
		} else {
			m.sums = append(m.sums, d)
		}
	}
	return nil
}

func (m *counterValueMerger) MergeNewer(value []byte) error { return m.add(value) }
func (m *counterValueMerger) MergeOlder(value []byte) error { return m.add(value) }

func (m *counterValueMerger) Finish(includesBase bool) ([]byte, io.Closer, error) {
	return AppendCounters(nil, m.sums...), nil, nil
}

// AppendCounters appends the encoding of a counter vector (a stored value or
// a merge operand) to buf.
func AppendCounters(buf []byte, counters ...int64) []byte {
	for _, c := range counters {
		buf = binary.BigEndian.AppendUint64(buf, uint64(c))
	}
	return buf
}

// DecodeCounters appends the counters encoded in v to dst. An empty v is an
// empty vector.
func DecodeCounters(dst []int64, v []byte) ([]int64, error) {
	if len(v)%8 != 0 {
		return dst, fmt.Errorf("%w: counter value of %d bytes is not a multiple of 8", ErrCorruptEncoding, len(v))
	}
	for i := 0; i < len(v); i += 8 {
		dst = append(dst, int64(binary.BigEndian.Uint64(v[i:])))
	}
	return dst, nil
}

// Merge adds the counter vector operand (see AppendCounters) to the counters
// stored at key, creating them if absent. The batch copies both slices. Merge
// only counter keys: every other key is read by its users as plain bytes.
func (b *Batch) Merge(key, operand []byte) error {
	if err := b.check(); err != nil {
		return err
	}
	if len(key) == 0 {
		return ErrEmptyKey
	}
	return b.b.Merge(bareKey(key), operand, nil)
}
