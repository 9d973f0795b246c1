package storage

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Iterator walks the keys of one span in order, forwards or backwards. It
// never returns a key outside [span.Start, span.End): seeks outside the span
// are clamped to it.
//
// Key and Value return slices that are valid only until the next call that
// moves the iterator (First, Last, Next, Prev, SeekGE, SeekLT) or Close, and
// that must not be modified; copy them to keep them. This avoids a copy per
// row on scans that only filter or re-encode.
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
	// err is a sticky error from Value: Pebble forgets a value error on the
	// next seek, but a scan that lost a row must not look successful.
	err error

	// span and last serve the invariant checks only (see invariants_on.go):
	// span is a private copy of the bounds, last the key at the previous
	// position, if any.
	span    Span
	last    []byte
	hasLast bool
}

// newIterator opens an iterator over span on any of Pebble's readers.
func newIterator(r pebbleReader, span Span) (*Iterator, error) {
	if err := span.validate(); err != nil {
		return nil, err
	}
	// An empty Start is the same bound as none, and Pebble's invariant
	// builds (on under -race) trip over a non-nil empty LowerBound.
	if len(span.Start) == 0 {
		span.Start = nil
	}
	// Pebble copies the bounds, so the caller may reuse span's bytes once
	// NewIter returns.
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: span.Start, UpperBound: span.End})
	if err != nil {
		return nil, err
	}
	i := &Iterator{it: it}
	if invariantsEnabled {
		i.span = Span{Start: bytes.Clone(span.Start), End: bytes.Clone(span.End)}
	}
	return i, nil
}

// First moves to the first key of the span.
func (i *Iterator) First() bool {
	return i.moved(i.it.First(), 0, nil)
}

// Last moves to the last key of the span.
func (i *Iterator) Last() bool {
	return i.moved(i.it.Last(), 0, nil)
}

// Next moves to the following key.
func (i *Iterator) Next() bool {
	return i.moved(i.it.Next(), +1, nil)
}

// Prev moves to the preceding key.
func (i *Iterator) Prev() bool {
	return i.moved(i.it.Prev(), -1, nil)
}

// SeekGE moves to the first key >= key (and >= span.Start).
func (i *Iterator) SeekGE(key []byte) bool {
	return i.moved(i.it.SeekGE(key), +1, key)
}

// SeekLT moves to the last key < key (and < span.End). With Prev it scans a
// span backwards from a bound.
func (i *Iterator) SeekLT(key []byte) bool {
	return i.moved(i.it.SeekLT(key), -1, key)
}

// Valid reports whether the iterator is at a key.
func (i *Iterator) Valid() bool {
	return i.it.Valid()
}

// Key returns the current key; see the type comment for its lifetime.
func (i *Iterator) Key() []byte {
	return i.it.Key()
}

// Value returns the current value; see the type comment for its lifetime. If
// the value cannot be read (an I/O error or corruption), Value returns nil and
// Error reports why.
func (i *Iterator) Value() []byte {
	v, err := i.it.ValueAndErr()
	if err != nil {
		i.err = err
		return nil
	}
	return v
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
	key := i.it.Key()
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
