package storage

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// PointReader looks up whole keys one at a time, for reads by full primary
// key (SELECT with the key fixed, IN lists of keys). It exists so that a
// statement reading many keys pays for one Pebble iterator at most, not one
// per key, and so that keys of tables with a key bloom filter (keyfilter.go)
// go through the filters:
//
//   - A bare (system) key is read with Pebble's Get, the cheapest path for
//     one key whose exact engine key is known.
//   - A versioned key (rows, index entries) is read with SeekPrefixGE on
//     one iterator, created at the first such key and reused (the suffix of
//     the version to read is not known, so Get cannot find it). The seek
//     consults the filters of every level including the bottom one
//     (Pebble's Get and default iterators skip bottom-level filters, where
//     most data lives); for a table without KEY_BLOOM_FILTER the filter
//     answers "may contain".
//
// Performance (issue 23's IN-list row). Keys arrive in ascending order, so
// Pebble turns each SeekPrefixGE after another into a seek "using next"
// (TrySeekUsingNext: up to four steps in the current data block before an
// index seek); a lookup that steps over versions newer than the read
// timestamp (Next) loses that for the following key. In the server's
// profile of the bench's IN-list of 100 random keys of hkv at 4 clients
// (8c1f5e9), get is 54% of the CPU and Pebble's SeekPrefixGE 49%: the
// binary search inside the 32 KB data block and the key it materializes
// 18%, getting the block from the cache 7%, the four steps 3%, the index
// block 3%, the filter block 2%, the memtable's skiplist 6%; get's own
// code under 5% (most of it decodeVersioned's first read of the value's
// bytes). The keys are about 1,000 rows apart, mostly in different data
// blocks, so the four steps rarely land and every lookup is a full seek.
// BenchmarkInList is the storage part alone.
//
// The iterator's view of the data is fixed when it is created (the engine
// may lend one it kept from an earlier reader when nothing was written since,
// see pointiter.go; that view is the same); do not write
// to a Batch while a PointReader made from it is in use if the lookups must
// see those writes. Lookups in ascending key order are cheapest (Pebble then
// seeks forward from the previous position). A PointReader is not safe for
// concurrent use; Close it.
type PointReader struct {
	r    pebbleReader
	ts   hlc.Timestamp // read timestamp of versioned keys
	own  *ownIntents   // the reader's own intents (intents.go); nil: none
	gc   *Engine       // checks ts against GC thresholds; nil: no check
	hist bool          // also checks schema times (View.Historical)
	// tableCheck vets the table ids read (View.CheckingTables); nil: none.
	tableCheck func(tableID uint64) error
	it         *pebble.Iterator
	// pool, when set, lends it from the engine's kept iterators over
	// db's latest state (pointiter.go), if batch (r's indexed batch, if r
	// is one) holds no writes when the iterator is needed; it is given
	// back by Close.
	pool   *pointIters
	db     *pebble.DB
	batch  *pebble.Batch
	kept   keptIter
	kbuf   []byte
	closed bool
	// aliased: the value get returned is Pebble's (not a copy).
	aliased bool
	// onGet is told of every key looked up (ObserveGets); nil: nobody.
	onGet func(key []byte)
}

// ObserveGets makes the reader call fn with every key it is asked for,
// before looking it up: a SERIALIZABLE transaction records the keys it read
// (sql/txn). fn must not keep key.
func (p *PointReader) ObserveGets(fn func(key []byte)) { p.onGet = fn }

// NewPointReader returns a PointReader over the latest committed state.
func (e *Engine) NewPointReader() (*PointReader, error) {
	return &PointReader{r: e.db, ts: MaxTimestamp, pool: e.points, db: e.db}, nil
}

// NewPointReader returns a PointReader over the batch's view.
func (b *Batch) NewPointReader() (*PointReader, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	return &PointReader{r: b.b, ts: b.ts, own: b.own, gc: b.e, pool: b.e.points, db: b.e.db, batch: b.b}, nil
}

// NewPointReader returns a PointReader over the snapshot.
func (s *Snapshot) NewPointReader() (*PointReader, error) {
	if s.s == nil {
		return nil, ErrClosed
	}
	return &PointReader{r: s.s, ts: MaxTimestamp}, nil
}

// Get returns a copy of the value at key; found is false if there is none.
// A versioned key is read as of the reader's timestamp.
func (p *PointReader) Get(key []byte) (value []byte, found bool, err error) {
	v, found, err := p.get(key)
	if !found || err != nil || !p.aliased {
		return v, found, err
	}
	return append(make([]byte, 0, len(v)), v...), true, nil
}

// GetNoCopy is Get without the copy: the value may alias Pebble's buffers
// and is valid only until the next Get, GetNoCopy or Close; it must not be
// modified. For callers that decode the value at once (sql/exec's point
// reads), it saves an allocation per key.
func (p *PointReader) GetNoCopy(key []byte) (value []byte, found bool, err error) {
	return p.get(key)
}

func (p *PointReader) get(key []byte) (value []byte, found bool, err error) {
	p.aliased = false
	if p.closed {
		return nil, false, ErrClosed
	}
	if len(key) == 0 {
		return nil, false, ErrEmptyKey
	}
	if p.onGet != nil {
		p.onGet(key)
	}
	if !isVersioned(key) {
		return getBare(p.r, key)
	}
	if p.gc != nil {
		if err := p.gc.checkGCKey(p.ts, key); err != nil {
			return nil, false, err
		}
		if p.hist {
			if err := p.gc.checkSchema(p.ts, key); err != nil {
				return nil, false, err
			}
		}
	}
	if err := checkTable(p.tableCheck, key); err != nil {
		return nil, false, err
	}
	if p.it == nil {
		if err := p.open(); err != nil {
			return nil, false, err
		}
	}
	// The prefix of every version of key is its bare key, so the seek
	// stays among them (and consults the bloom filters on the prefix).
	p.kbuf = enginekey.AppendBareKey(p.kbuf[:0], key)
	for valid := p.it.SeekPrefixGE(p.kbuf); valid; valid = p.it.Next() {
		k := p.it.Key()
		if enginekey.Split(k) != len(p.kbuf) || !bytes.HasPrefix(k, p.kbuf) {
			break
		}
		intent := false
		if len(k) > len(p.kbuf) {
			_, ts, ok := enginekey.DecodeVersion(k)
			if !ok {
				return nil, false, fmt.Errorf("%w: engine key %x", ErrCorruptEncoding, k)
			}
			if p.ts.Less(ts) {
				if p.own == nil || !isIntentTimestamp(ts) {
					continue // newer than the read: the next version is older
				}
				intent = true
			}
		}
		v, err := p.it.ValueAndErr()
		if err != nil {
			return nil, false, err
		}
		if intent {
			// Only the reader's own intents show.
			if _, ts, _ := enginekey.DecodeVersion(k); !p.own.sees(ts, v) {
				continue
			}
		}
		val, deleted, err := decodeVersioned(k, v)
		if err != nil || deleted {
			return nil, false, err
		}
		p.aliased = true
		return val, true, nil
	}
	return nil, false, p.it.Error()
}

// open makes the reader's iterator, or borrows a kept one from the engine:
// over an indexed batch without writes, an iterator over the store's latest
// state sees the same.
func (p *PointReader) open() error {
	if p.pool != nil && (p.batch == nil || p.batch.Empty()) {
		k, err := p.pool.get(p.db)
		if err != nil {
			return err
		}
		p.kept, p.it = k, k.it
		if p.kbuf == nil {
			p.kbuf = k.kbuf
		}
		return nil
	}
	it, err := p.r.NewIter(&pointIterOptions)
	if err != nil {
		return err
	}
	p.it = it
	return nil
}

// Close releases the iterator, if one was made (a borrowed one goes back
// to the engine). Closing twice is harmless.
func (p *PointReader) Close() error {
	p.closed = true
	if p.it == nil {
		return nil
	}
	var err error
	if p.kept.it != nil {
		p.kept.kbuf = p.kbuf[:0]
		p.kbuf = nil
		err = p.pool.put(p.kept)
		p.kept = keptIter{}
	} else {
		err = p.it.Close()
	}
	p.it = nil
	return err
}
