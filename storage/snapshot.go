package storage

import "github.com/cockroachdb/pebble/v2"

// Snapshot is a consistent, unchanging view of the engine as of NewSnapshot:
// commits made afterwards are invisible to it. It is safe for concurrent
// reads. Close it promptly: until then compactions must keep every version it
// can see.
type Snapshot struct {
	s       *pebble.Snapshot // nil once closed.
	filters *keyFilterTables // tables with a key bloom filter (keyfilter.go)
}

// Get returns a copy of the value at key as of the snapshot.
func (s *Snapshot) Get(key []byte) (value []byte, found bool, err error) {
	if s.s == nil {
		return nil, false, ErrClosed
	}
	return get(s.s, MaxTimestamp, key)
}

// NewIter returns an iterator over span as of the snapshot.
func (s *Snapshot) NewIter(span Span) (*Iterator, error) {
	if s.s == nil {
		return nil, ErrClosed
	}
	return newIterator(s.s, MaxTimestamp, span)
}

// Close releases the snapshot. Close the iterators made from it first.
// Closing twice is harmless.
func (s *Snapshot) Close() error {
	if s.s == nil {
		return nil
	}
	err := s.s.Close()
	s.s = nil
	return err
}
