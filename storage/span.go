package storage

import (
	"bytes"
	"fmt"
)

// Span is the half-open key range [Start, End).
//
// A nil Start is the smallest key (the empty key); a nil End means the span has
// no upper bound. PivotDB's own keys always start with a layout prefix (see
// keys.go), so unbounded spans are rare outside of tests and whole-engine
// maintenance such as Compact(Span{}).
type Span struct {
	Start, End []byte
}

// PrefixSpan returns the span holding exactly the keys that begin with prefix.
func PrefixSpan(prefix []byte) Span {
	return Span{Start: prefix, End: PrefixEnd(prefix)}
}

// Contains reports whether key lies in [s.Start, s.End).
func (s Span) Contains(key []byte) bool {
	return bytes.Compare(key, s.Start) >= 0 && (s.End == nil || bytes.Compare(key, s.End) < 0)
}

// Empty reports whether no key lies in the span, that is Start >= End for a
// bounded span.
func (s Span) Empty() bool {
	return s.End != nil && bytes.Compare(s.Start, s.End) >= 0
}

// Overlaps reports whether some key lies in both s and o.
func (s Span) Overlaps(o Span) bool {
	return !s.Intersect(o).Empty()
}

// Intersect returns the span of keys that lie in both s and o. The result may
// be Empty.
func (s Span) Intersect(o Span) Span {
	r := s
	if bytes.Compare(o.Start, r.Start) > 0 {
		r.Start = o.Start
	}
	if r.End == nil || (o.End != nil && bytes.Compare(o.End, r.End) < 0) {
		r.End = o.End
	}
	return r
}

// Equal reports whether s and o denote the same bounds. An empty Start and a
// nil Start are the same bound; an empty and a nil End are not (the former is
// the empty span's end, the latter is unbounded).
func (s Span) Equal(o Span) bool {
	return bytes.Equal(s.Start, o.Start) && (s.End == nil) == (o.End == nil) && bytes.Equal(s.End, o.End)
}

// String renders the span as "[start .. end)" with keys shown by FormatKey,
// and an unbounded end as "<End>".
func (s Span) String() string {
	end := "<End>"
	if s.End != nil {
		end = FormatKey(s.End)
	}
	return fmt.Sprintf("[%s .. %s)", FormatKey(s.Start), end)
}

// validate rejects inverted spans. Start > End is always a caller bug (an
// empty span is written Start == End), so it is reported rather than
// silently read as empty.
func (s Span) validate() error {
	if s.End != nil && bytes.Compare(s.Start, s.End) > 0 {
		return fmt.Errorf("%w: %s", ErrInvertedSpan, s)
	}
	return nil
}
