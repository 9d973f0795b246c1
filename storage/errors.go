package storage

import "errors"

// Sentinel errors of the engine. They are returned wrapped with detail;
// classify them with errors.Is. ErrCorruptEncoding, the decoders' error, lives
// in encoding.go.
var (
	// ErrInvertedSpan reports a span whose Start is after its End. An empty
	// span is written with Start == End; an inverted one is a caller bug.
	ErrInvertedSpan = errors.New("storage: span start is after its end")
	// ErrUnboundedSpan reports an operation that needs a bounded span (End !=
	// nil), such as DeleteRange.
	ErrUnboundedSpan = errors.New("storage: span has no end")
	// ErrBatchCommitted reports a use of a Batch after Commit other than
	// Close, Empty, Len and Count.
	ErrBatchCommitted = errors.New("storage: batch already committed")
	// ErrEmptyKey reports a write of the empty key. Every PivotDB key starts
	// with a layout prefix (keys.go), and banning the empty key lets range
	// operations start at 0x00 rather than at the empty key, which Pebble
	// handles badly (see rangeStart).
	ErrEmptyKey = errors.New("storage: empty key")
	// ErrClosed reports a use of a Batch, Snapshot or Iterator after Close.
	ErrClosed = errors.New("storage: use after close")
	// ErrOldFormat reports a data directory written before versioned
	// storage (issue 16): its keys have no version suffixes, and reading
	// them as engine keys would misread every row.
	ErrOldFormat = errors.New("storage: data directory in an unsupported (pre-MVCC) format")
)
