package storage

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/pivotdb/pivotdb/storage/enginekey"
)

// Intent blocks: how resolution finds intents without reading every
// block of the spans it resolves (issue 16).
//
// A commit's resolution (resolveIntents) scans each span its transaction
// wrote, from the first key to the last: in a big table where a block
// wrote a few rows, that is every block of the table between them. A
// block property collector (intentMapper) marks each sstable block, index
// block and table that holds an entry at an intent timestamp, and a
// filtered iterator (intentBlockFilter) skips the rest. Entries of every
// kind are marked, tombstones included: a filtered iterator that skipped
// the tombstone of a resolved intent would show the intent it deletes in
// a lower level again. Tables written without the property (before it
// existed, or by a snapshot's writer) are read whole. Memtables are never
// filtered.
//
// The resolve loop steps its plain iterator as before, and only after
// intentSkipKeys keys in a row without an intent does it ask the filtered
// one where the next block with an intent starts and seek there: a
// transaction that wrote most keys of its spans pays nothing, one that
// wrote a few keys of a big table reads a few blocks. BenchmarkResolveSparse
// (10 keys over a compacted 200,000-row table, one commit): 2.5-2.9M
// cpu-ns against 21-29M reading every block.
//
// Debugging: the property is "pivotdb.intents.v1" in an sstable's
// properties (pebble tool sstable properties); a block holds intents when
// its interval is [1, 2).
const intentPropertyName = "pivotdb.intents.v1"

// intentSkipKeys is how many keys in a row without intents the resolve
// loop steps over before it seeks with the filtered iterator (a seek costs
// several steps). A variable so that the benchmark can turn the seeks off.
var intentSkipKeys = 16

// intentSeeks counts the seeks to blocks with intents, for tests.
var intentSeeks atomic.Int64

// intentMapper maps an entry to the interval [1, 2) when its key is at an
// intent timestamp, to the empty interval otherwise.
type intentMapper struct{}

func (intentMapper) MapPointKey(key sstable.InternalKey, _ []byte) (sstable.BlockInterval, error) {
	if _, ts, ok := enginekey.DecodeVersion(key.UserKey); ok && isIntentTimestamp(ts) {
		return sstable.BlockInterval{Lower: 1, Upper: 2}, nil
	}
	return sstable.BlockInterval{}, nil
}

func (intentMapper) MapRangeKeys(sstable.Span) (sstable.BlockInterval, error) {
	return sstable.BlockInterval{}, nil
}

// newIntentCollector is the engine's collector (Options.BlockPropertyCollectors).
func newIntentCollector() pebble.BlockPropertyCollector {
	return sstable.NewBlockIntervalCollector(intentPropertyName, intentMapper{}, nil)
}

// intentBlockFilter keeps the blocks that hold intents.
func intentBlockFilter() pebble.BlockPropertyFilter {
	return sstable.NewBlockIntervalFilter(intentPropertyName, 1, 2, nil)
}

// intentSeeker finds, for the resolve loop, the first key at or after a
// key that may have intents: a filtered iterator over one span, opened on
// first use.
type intentSeeker struct {
	e            *Engine
	lower, upper []byte
	it           *pebble.Iterator
	buf          []byte
}

// next returns the bare engine key of the first user key after uk whose
// entries may include intents; ok is false when none is left in the span.
func (s *intentSeeker) next(uk []byte) (bare []byte, ok bool, err error) {
	if s.it == nil {
		filters := make([]pebble.BlockPropertyFilter, 1, 2)
		filters[0] = intentBlockFilter()
		s.it, err = s.e.db.NewIter(&pebble.IterOptions{LowerBound: s.lower, UpperBound: s.upper, PointKeyFilters: filters})
		if err != nil {
			return nil, false, err
		}
	}
	// The bare key of uk's successor (uk + 0x00) sorts before all its
	// versions and after every version of uk.
	intentSeeks.Add(1)
	s.buf = append(append(append(s.buf[:0], uk...), 0), 0)
	if !s.it.SeekGE(s.buf) {
		return nil, false, s.it.Error()
	}
	k := s.it.Key()
	s.buf = append(s.buf[:0], k[:enginekey.Split(k)]...)
	return s.buf, true, nil
}

// reset makes the seeker one of the span [lower, upper) of engine keys.
func (s *intentSeeker) reset(lower, upper []byte) error {
	err := s.close()
	s.lower, s.upper = lower, upper
	return err
}

func (s *intentSeeker) close() error {
	if s.it == nil {
		return nil
	}
	err := s.it.Close()
	s.it = nil
	return err
}
