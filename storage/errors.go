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
	// ErrClosed reports a use of a Batch, Snapshot or Iterator after Close.
	ErrClosed = errors.New("storage: use after close")
)
