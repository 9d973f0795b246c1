package mvcc

import (
	"bytes"
	"errors"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Reader is the read side of a Pebble store opened with Comparer:
// *pebble.DB, *pebble.Snapshot and an indexed *pebble.Batch (which sees its
// own writes) all implement it.
type Reader interface {
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
	Get(key []byte) ([]byte, io.Closer, error)
}

// Writer is the write side: a *pebble.Batch. Writes of one operation land in
// one batch with the rest of the statement or transaction step, so they
// commit atomically with it.
type Writer interface {
	Set(key, value []byte, o *pebble.WriteOptions) error
	Delete(key []byte, o *pebble.WriteOptions) error
}

// ReadWriter is an indexed batch: operations read what they are about to
// change through it, including the batch's earlier writes.
type ReadWriter interface {
	Reader
	Writer
}

// getRaw reads a bare key's value (a copy).
func getRaw(r Reader, key []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	return out, true, closer.Close()
}

// versionAt is one version of a key, copied out of an iterator.
type versionAt struct {
	found  bool
	ts     hlc.Timestamp
	keyLen int
	raw    []byte // the stored value
	v      version
}

// size is the version's logical size: engine key plus stored value.
func (va *versionAt) size() int64 { return int64(va.keyLen + len(va.raw)) }

// newestTwo holds a key's newest version and the one just below it, which
// is what a write, a lock or a resolution has to look at.
type newestTwo struct {
	newest, below versionAt
}

// newPointIter returns an iterator for the prefix seeks of one operation
// on one key (its lock records, then its versions): one iterator per
// operation, since creating one costs more than a seek. UseL6Filters: the
// key bloom filters of the bottom level are consulted too.
func newPointIter(r Reader) (*pebble.Iterator, error) {
	return r.NewIter(&pebble.IterOptions{UseL6Filters: true})
}

// readNewest reads the two newest versions of userKey with one prefix seek.
func readNewest(it *pebble.Iterator, userKey []byte) (out newestTwo, err error) {
	prefix := AppendBareKey(nil, userKey)
	slots := []*versionAt{&out.newest, &out.below}
	i := 0
	for ok := it.SeekPrefixGE(prefix); ok && i < len(slots); ok = it.Next() {
		k := it.Key()
		if split(k) != len(prefix) || !bytes.HasPrefix(k, prefix) {
			break
		}
		_, ts, versioned, err := DecodeKey(k)
		if err != nil {
			return out, err
		}
		if !versioned {
			continue // a bare key of the same user key is not a version
		}
		raw, err := it.ValueAndErr()
		if err != nil {
			return out, err
		}
		s := slots[i]
		s.found, s.ts, s.keyLen, s.raw = true, ts, len(k), bytes.Clone(raw)
		if s.v, err = decodeVersionValue(s.raw); err != nil {
			return out, err
		}
		i++
	}
	return out, it.Error()
}

// newestStats is the contribution of a version to Stats given whether it is
// its key's newest version (see stats.go).
func newestStats(size int64, v *version, newest bool) Stats {
	var s Stats
	if newest && !v.isDelete() {
		s.LiveBytes, s.LiveCount = size, 1
	} else {
		s.OldBytes, s.OldCount = size, 1
	}
	if v.isIntent() {
		s.IntentBytes, s.IntentCount = size, 1
	}
	return s
}
