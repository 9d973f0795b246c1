package storage

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Iterator walks the keys of one span in order, forwards or backwards, as
// of its read timestamp: for a versioned key (versions.go) the newest version
// at or below it, skipping keys whose version there is a tombstone; for a
// bare key its value. It returns user keys (never the engine keys' suffixes)
// and never a key outside [span.Start, span.End): seeks outside the span are
// clamped to it.
//
// Key and Value return slices that are valid only until the next call that
// moves the iterator (First, Last, Next, Prev, SeekGE, SeekLT) or Close, and
// that must not be modified; copy them to keep them. This avoids a copy per
// row on forward scans that only filter or re-encode (backward steps copy the
// row they land on: they find its visible version only after passing it).
//
// A positioning method returns false both at the end of the span and on an
// error; check Error after a loop:
//
//	for ok := it.First(); ok; ok = it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Error(); err != nil { ... }
//
// An Iterator is not safe for concurrent use; any method other than Close
// panics once it is closed.
type Iterator struct {
	it *pebble.Iterator // nil once closed.
	ts hlc.Timestamp    // read timestamp
	// own shows the reader's transaction its own intents (intents.go);
	// nil: none.
	own *ownIntents
	// err is a sticky error: Pebble forgets a value error on the next
	// seek, but a scan that lost a row must not look successful.
	err error

	// The current position: key and value (user key, row value), and the
	// direction of the last move. Moving forwards, they alias Pebble's
	// buffers and Pebble is at the entry they came from; moving backwards,
	// they are copies in kbuf and vbuf and Pebble is already on the entries
	// before the key's.
	valid      bool
	dir        int
	key, value []byte
	kbuf, vbuf []byte
	prefix     []byte // the prefix being compared (nextKey) or collected (backwards)
	seekBuf    []byte // the engine key skipNewer seeks to
	// olderRun > 0: a recent key had older versions, so nextKey skips
	// straight to the next prefix for that many more keys (skip.go).
	olderRun int

	// span and last serve the invariant checks only (see invariants_on.go):
	// span is a private copy of the bounds, last the key at the previous
	// position, if any.
	span    Span
	last    []byte
	hasLast bool
}

// newIterator opens an iterator over span on any of Pebble's readers,
// reading versions at ts.
func newIterator(r pebbleReader, ts hlc.Timestamp, span Span) (*Iterator, error) {
	if err := span.validate(); err != nil {
		return nil, err
	}
	lower, upper := engineBounds(span)
	// Pebble copies the bounds.
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	i := &Iterator{it: it, ts: ts}
	if invariantsEnabled {
		i.span = Span{Start: bytes.Clone(span.Start), End: bytes.Clone(span.End)}
	}
	return i, nil
}

// First moves to the first key of the span.
func (i *Iterator) First() bool {
	i.dir = +1
	return i.moved(i.settleForward(i.it.First()), 0, nil)
}

// Last moves to the last key of the span.
func (i *Iterator) Last() bool {
	i.dir = -1
	return i.moved(i.settleBackward(i.it.Last()), 0, nil)
}

// Next moves to the following key.
func (i *Iterator) Next() bool {
	var ok bool
	switch {
	case !i.valid:
		ok = false
	case i.dir > 0:
		ok = i.settleForward(i.nextKey())
	default:
		// Pebble is before the current key: seek past its versions.
		i.dir = +1
		ok = i.settleForward(i.it.SeekGE(append(bareKey(i.key), 0)))
	}
	return i.moved(ok, +1, nil)
}

// Prev moves to the preceding key.
func (i *Iterator) Prev() bool {
	var ok bool
	switch {
	case !i.valid:
		ok = false
	case i.dir < 0:
		// Pebble is already on the last entry before the current key.
		ok = i.settleBackward(i.it.Valid())
	default:
		i.dir = -1
		ok = i.settleBackward(i.it.SeekLT(bareKey(i.key)))
	}
	return i.moved(ok, -1, nil)
}

// SeekGE moves to the first key >= key (and >= span.Start).
func (i *Iterator) SeekGE(key []byte) bool {
	i.dir = +1
	return i.moved(i.settleForward(i.it.SeekGE(bareKey(key))), +1, key)
}

// SeekLT moves to the last key < key (and < span.End). With Prev it scans a
// span backwards from a bound.
func (i *Iterator) SeekLT(key []byte) bool {
	i.dir = -1
	return i.moved(i.settleBackward(i.it.SeekLT(bareKey(key))), -1, key)
}

// settleForward moves Pebble forward from its position (valid: it is on an
// entry) to the first entry that is a visible key and makes it current.
func (i *Iterator) settleForward(valid bool) bool {
	i.valid = false
	newer := 0
	for valid {
		k := i.it.Key()
		n := enginekey.Split(k)
		if n == 0 || k[n-1] != 0 {
			i.err = fmt.Errorf("%w: engine key %x", ErrCorruptEncoding, k)
			return false
		}
		uk := k[:n-1]
		if n < len(k) {
			// A version; one above the read timestamp is skipped for
			// the next (older) one.
			_, ts, ok := enginekey.DecodeVersion(k)
			if !ok {
				i.err = fmt.Errorf("%w: engine key %x", ErrCorruptEncoding, k)
				return false
			}
			if i.ts.Less(ts) && !i.ownIntent(ts) {
				valid = i.skipNewer(uk, &newer) // skipnewer.go
				continue
			}
		}
		v, err := i.it.ValueAndErr()
		if err != nil {
			i.err = err
			return false
		}
		if !isVersioned(uk) {
			i.key, i.value, i.valid = uk, v, true
			return true
		}
		val, deleted, err := decodeVersioned(k, v)
		if err != nil {
			i.err = err
			return false
		}
		if deleted {
			valid = i.it.NextPrefix()
			continue
		}
		i.key, i.value, i.valid = uk, val, true
		return true
	}
	return false
}

// settleBackward moves Pebble backward from its position (valid: it is on
// the last entry of a key) over the entries of each key in turn until one
// has a visible value, and makes a copy of it current. Entries of one key
// come newest first, so the visible one is the last one at or below the
// read timestamp that the backward walk passes (a bare key, a batch's own
// write, comes first of all and wins).
func (i *Iterator) settleBackward(valid bool) bool {
	i.valid = false
	for valid {
		k := i.it.Key()
		n := enginekey.Split(k)
		if n == 0 || k[n-1] != 0 {
			i.err = fmt.Errorf("%w: engine key %x", ErrCorruptEncoding, k)
			return false
		}
		i.prefix = append(i.prefix[:0], k[:n]...)
		found := false
		for valid {
			k = i.it.Key()
			if enginekey.Split(k) != len(i.prefix) || !bytes.HasPrefix(k, i.prefix) {
				break
			}
			visible := true
			if len(k) > len(i.prefix) {
				_, ts, ok := enginekey.DecodeVersion(k)
				if !ok {
					i.err = fmt.Errorf("%w: engine key %x", ErrCorruptEncoding, k)
					return false
				}
				visible = ts.LessEq(i.ts) || i.ownIntent(ts)
			}
			if visible {
				v, err := i.it.ValueAndErr()
				if err != nil {
					i.err = err
					return false
				}
				i.vbuf = append(i.vbuf[:0], v...)
				found = true
			}
			valid = i.it.Prev()
		}
		if err := i.it.Error(); err != nil {
			i.err = err
			return false
		}
		if !found {
			continue
		}
		uk := i.prefix[:len(i.prefix)-1]
		val := i.vbuf
		if isVersioned(uk) {
			var deleted bool
			var err error
			if val, deleted, err = decodeVersioned(i.prefix, i.vbuf); err != nil {
				i.err = err
				return false
			}
			if deleted {
				continue
			}
		}
		i.kbuf = append(i.kbuf[:0], uk...)
		i.key, i.value, i.valid = i.kbuf, val, true
		return true
	}
	return false
}

// ownIntent reports whether the version Pebble is on, at ts (above the
// read timestamp), is an intent of the reader's own transaction that it
// sees (intents.go). The value is read only for intent timestamps.
func (i *Iterator) ownIntent(ts hlc.Timestamp) bool {
	if i.own == nil || !isIntentTimestamp(ts) {
		return false
	}
	v, err := i.it.ValueAndErr()
	if err != nil {
		i.err = err
		return false
	}
	return i.own.sees(ts, v)
}

// Valid reports whether the iterator is at a key.
func (i *Iterator) Valid() bool {
	return i.valid
}

// Key returns the current key; see the type comment for its lifetime.
func (i *Iterator) Key() []byte {
	return i.key
}

// Value returns the current value; see the type comment for its lifetime.
// If the value could not be read (an I/O error or corruption), the iterator
// stopped and Error reports why.
func (i *Iterator) Value() []byte {
	return i.value
}

// Error returns the error that stopped the iterator, if any. Reaching the end
// of the span is not an error.
func (i *Iterator) Error() error {
	if i.err != nil {
		return i.err
	}
	return i.it.Error()
}

// Close releases the iterator and returns its error, if any. Closing twice is
// harmless.
func (i *Iterator) Close() error {
	if i.it == nil {
		return nil
	}
	err := i.it.Close()
	i.it = nil
	i.valid = false
	if i.err != nil {
		return i.err
	}
	return err
}

// moved returns valid after checking, in invariant builds, that the new
// position respects the iterator's contract: inside the span, strictly after
// (dir > 0) or before (dir < 0) the previous position for Next and Prev, and
// on the right side of the seek key for SeekGE and SeekLT.
func (i *Iterator) moved(valid bool, dir int, seekKey []byte) bool {
	if !invariantsEnabled {
		return valid
	}
	if !valid {
		i.hasLast = false
		return false
	}
	key := i.key
	if !i.span.Contains(key) {
		panic(fmt.Sprintf("storage: iterator at %s, outside its span %s", FormatKey(key), i.span))
	}
	switch {
	case seekKey != nil:
		if c := bytes.Compare(key, seekKey); (dir > 0 && c < 0) || (dir < 0 && c >= 0) {
			panic(fmt.Sprintf("storage: seek to %s landed on %s", FormatKey(seekKey), FormatKey(key)))
		}
	case dir != 0 && i.hasLast:
		if c := bytes.Compare(key, i.last); c*dir <= 0 {
			panic(fmt.Sprintf("storage: iterator moved from %s to %s, out of order", FormatKey(i.last), FormatKey(key)))
		}
	}
	i.last = append(i.last[:0], key...)
	i.hasLast = true
	return true
}

// Scan calls fn for every key and value of span in r, in key order, and
// stops at fn's first error. The slices are valid only during the call.
func Scan(r Reader, span Span, fn func(key, value []byte) error) error {
	it, err := r.NewIter(span)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Error(), it.Close())
}
