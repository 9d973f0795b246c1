package storage

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
)

// PointReader looks up whole keys one at a time, for reads by full primary
// key (SELECT with the key fixed, IN lists of keys). It exists so that a
// statement reading many keys pays for one Pebble iterator at most, not one
// per key, and so that keys of tables with a key bloom filter (keyfilter.go)
// go through the filters:
//
//   - A key of a table without a filter is read with Pebble's Get, the
//     cheapest path for one key.
//   - A key of a table with a filter is read with SeekPrefixGE on one
//     iterator, created at the first such key and reused, that consults the
//     filters of every level including the bottom one (Pebble's Get and
//     default iterators skip bottom-level filters, where most data lives).
//
// The iterator's view of the data is fixed when it is created; do not write
// to a Batch while a PointReader made from it is in use if the lookups must
// see those writes. Lookups in ascending key order are cheapest (Pebble then
// seeks forward from the previous position). A PointReader is not safe for
// concurrent use; Close it.
type PointReader struct {
	r       pebbleReader
	filters *keyFilterTables
	it      *pebble.Iterator
	closed  bool
}

// NewPointReader returns a PointReader over the latest committed state.
func (e *Engine) NewPointReader() (*PointReader, error) {
	return &PointReader{r: e.db, filters: e.filters}, nil
}

// NewPointReader returns a PointReader over the batch's view.
func (b *Batch) NewPointReader() (*PointReader, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	return &PointReader{r: b.b, filters: b.filters}, nil
}

// NewPointReader returns a PointReader over the snapshot.
func (s *Snapshot) NewPointReader() (*PointReader, error) {
	if s.s == nil {
		return nil, ErrClosed
	}
	return &PointReader{r: s.s, filters: s.filters}, nil
}

// Get returns a copy of the value at key; found is false if there is none.
func (p *PointReader) Get(key []byte) (value []byte, found bool, err error) {
	if p.closed {
		return nil, false, ErrClosed
	}
	if !p.filters.coversKey(key) {
		return get(p.r, nil, key)
	}
	if len(key) == 0 {
		return nil, false, ErrEmptyKey
	}
	if p.it == nil {
		it, err := p.r.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return nil, false, err
		}
		p.it = it
	}
	// With the default Comparer.Split the prefix is the whole key, so the
	// seek lands on key itself or reports nothing.
	if !p.it.SeekPrefixGE(key) {
		return nil, false, p.it.Error()
	}
	if !bytes.Equal(p.it.Key(), key) {
		return nil, false, nil
	}
	v, err := p.it.ValueAndErr()
	if err != nil {
		return nil, false, err
	}
	value = make([]byte, len(v))
	copy(value, v)
	return value, true, nil
}

// Close releases the iterator, if one was made. Closing twice is harmless.
func (p *PointReader) Close() error {
	p.closed = true
	if p.it == nil {
		return nil
	}
	err := p.it.Close()
	p.it = nil
	return err
}
