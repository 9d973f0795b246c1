package planner

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// Bound is a position in a table's key space, in the notation of design §6:
// a tuple of values for a prefix of the key columns, optionally followed by
// <Max>.
//
//	()              the start of the table (before every key)
//	(20)            before every key that starts with 20
//	(20, 3, <Max>)  after every key that starts with (20, 3)
//	(<Max>)         the end of the table
//
// A bound is a point between keys, never a key itself, so "inclusive" and
// "exclusive" are expressed by where the point sits: k >= 20 starts at (20),
// k > 20 at (20, <Max>). The encoded form (ToSpans) is the same tuple with
// storage's key encoding, <Max> being storage.AppendMax, so byte order of
// encoded bounds is the order of CompareBounds.
//
// Values are of the key column's family (integers exactly cast to it), except
// that a time column may hold a value of another time family (the key
// encoding of times is in microseconds for every family) and a Decimal column
// may hold a decimal with more digits than its scale.
type Bound struct {
	Values []types.Value
	Max    bool
}

// KeyRange is the half-open range [Lower, Upper) of a table's keys.
type KeyRange struct {
	Lower, Upper Bound
}

// Ranges is a list of key ranges that are non-empty, sorted and disjoint;
// touching or overlapping ranges are merged (CheckInvariants).
type Ranges []KeyRange

// String renders the bound as in design §6: `(20, 3, <Max>)`, values as SQL
// literals (strings quoted, NULL as NULL).
func (b Bound) String() string {
	var sb strings.Builder
	sb.WriteByte('(')
	for i, v := range b.Values {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(expr.Literal(v))
	}
	if b.Max {
		if len(b.Values) > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("<Max>")
	}
	sb.WriteByte(')')
	return sb.String()
}

// String renders the range as `[LOWER .. UPPER)`.
func (r KeyRange) String() string {
	return "[" + r.Lower.String() + " .. " + r.Upper.String() + ")"
}

// Empty reports whether no key lies in the range.
func (r KeyRange) Empty() bool { return CompareBounds(r.Lower, r.Upper) >= 0 }

// FullRange is the range of every key of a table: [() .. (<Max>)).
func FullRange() KeyRange { return KeyRange{Upper: Bound{Max: true}} }

// CompareBounds orders two bounds of the same table by their position in
// the key space. Values are compared with types.Compare (NULL first);
// where one tuple ends, a bound without <Max> sits before every extension
// and a bound with <Max> after it. A bound that differs from another only by
// trailing NULLs without <Max> sits at the same position ((20) and
// (20, NULL)), since no key lies between them.
func CompareBounds(a, b Bound) int {
	n := min(len(a.Values), len(b.Values))
	for i := 0; i < n; i++ {
		if c := types.Compare(a.Values[i], b.Values[i]); c != 0 {
			return c
		}
	}
	la, lb := len(a.Values), len(b.Values)
	switch {
	case la == lb:
		return compareBool(a.Max, b.Max)
	case la < lb:
		if a.Max {
			return 1
		}
		if !b.Max && allNull(b.Values[la:]) {
			return 0
		}
		return -1
	default:
		if b.Max {
			return -1
		}
		if !a.Max && allNull(a.Values[lb:]) {
			return 0
		}
		return 1
	}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func allNull(vs []types.Value) bool {
	for _, v := range vs {
		if !v.IsNull() {
			return false
		}
	}
	return true
}

// Contains reports whether the key tuple (values of every key column) lies
// in the range.
func (r KeyRange) Contains(key []types.Value) bool {
	k := Bound{Values: key}
	return CompareBounds(r.Lower, k) <= 0 && CompareBounds(k, r.Upper) < 0
}

// String renders the ranges one per line.
func (rs Ranges) String() string {
	var sb strings.Builder
	for i, r := range rs {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(r.String())
	}
	return sb.String()
}

// Contains reports whether some range holds the key tuple.
func (rs Ranges) Contains(key []types.Value) bool {
	k := Bound{Values: key}
	i := sort.Search(len(rs), func(i int) bool { return CompareBounds(k, rs[i].Upper) < 0 })
	return i < len(rs) && CompareBounds(rs[i].Lower, k) <= 0
}

// CheckInvariants reports a broken invariant: an empty range, or two ranges
// out of order, overlapping or touching (they should have been merged).
func (rs Ranges) CheckInvariants() error {
	for i, r := range rs {
		if r.Empty() {
			return fmt.Errorf("planner: range %d %s is empty", i, r)
		}
		if i > 0 && CompareBounds(rs[i-1].Upper, r.Lower) >= 0 {
			return fmt.Errorf("planner: range %d %s does not start after range %d %s", i, r, i-1, rs[i-1])
		}
	}
	return nil
}

// normalizeRanges sorts ranges, drops empty ones and merges those that
// overlap or touch. It reuses rs.
func normalizeRanges(rs []KeyRange) Ranges {
	slices.SortFunc(rs, func(a, b KeyRange) int { return CompareBounds(a.Lower, b.Lower) })
	return mergeRanges(rs)
}

// mergeRanges drops the empty ranges of rs (sorted by Lower) and merges
// those that overlap or touch. It reuses rs.
func mergeRanges(rs []KeyRange) Ranges {
	merged := rs[:0]
	for _, r := range rs {
		if r.Empty() {
			continue
		}
		if n := len(merged); n > 0 && CompareBounds(merged[n-1].Upper, r.Lower) >= 0 {
			if CompareBounds(r.Upper, merged[n-1].Upper) > 0 {
				merged[n-1].Upper = r.Upper
			}
			continue
		}
		merged = append(merged, r)
	}
	return Ranges(merged)
}

// intersectRanges returns the ranges of keys in both a and b (both
// normalized).
func intersectRanges(a, b Ranges) Ranges {
	var out Ranges
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := a[i].Lower, a[i].Upper
		if CompareBounds(b[j].Lower, lo) > 0 {
			lo = b[j].Lower
		}
		if CompareBounds(b[j].Upper, hi) < 0 {
			hi = b[j].Upper
		}
		if CompareBounds(lo, hi) < 0 {
			out = append(out, KeyRange{Lower: lo, Upper: hi})
		}
		if CompareBounds(a[i].Upper, b[j].Upper) < 0 {
			i++
		} else {
			j++
		}
	}
	return out
}

// coarsenRanges returns at most limit ranges covering rs: first by cutting
// every bound to a shorter key prefix (YTsaurus's key shrinking), then by
// joining neighbours into their hull. The result is never narrower than rs.
func coarsenRanges(rs Ranges, limit int) Ranges {
	if len(rs) <= limit {
		return rs
	}
	width := 0
	for _, r := range rs {
		width = max(width, len(r.Lower.Values), len(r.Upper.Values))
	}
	for d := width - 1; d >= 1; d-- {
		cut := make([]KeyRange, len(rs))
		for i, r := range rs {
			cut[i] = KeyRange{Lower: truncateLower(r.Lower, d), Upper: truncateUpper(r.Upper, d)}
		}
		if out := normalizeRanges(cut); len(out) <= limit {
			return out
		}
	}
	group := (len(rs) + limit - 1) / limit
	out := make(Ranges, 0, limit)
	for i := 0; i < len(rs); i += group {
		last := min(i+group, len(rs)) - 1
		out = append(out, KeyRange{Lower: rs[i].Lower, Upper: rs[last].Upper})
	}
	return out
}

// truncateLower moves a lower bound down to at most d values.
func truncateLower(b Bound, d int) Bound {
	if len(b.Values) <= d {
		return b
	}
	return Bound{Values: b.Values[:d:d]}
}

// truncateUpper moves an upper bound up to at most d values.
func truncateUpper(b Bound, d int) Bound {
	if len(b.Values) <= d {
		return b
	}
	return Bound{Values: b.Values[:d:d], Max: true}
}

// AppendBound appends the storage encoding of a bound (without the table
// prefix): each value with rowenc.AppendKeyValue, then <Max> if set.
func AppendBound(buf []byte, b Bound) []byte {
	for _, v := range b.Values {
		buf = rowenc.AppendKeyValue(buf, v)
	}
	if b.Max {
		buf = storage.AppendMax(buf)
	}
	return buf
}

// ToSpans encodes the ranges as half-open storage spans of table t, sorted
// and disjoint. No ranges give no spans (read nothing). The keys share one
// buffer; each is capped, so appending to one never changes another.
func (rs Ranges) ToSpans(t *catalog.Table) []storage.Span {
	prefix := storage.TablePrefix(t.ID)
	out := make([]storage.Span, 0, len(rs))
	// Size the buffer from the bounds so that it rarely grows: a point
	// read by (hash, string key) would otherwise reallocate it twice.
	size := 0
	for _, r := range rs {
		size += 2*len(prefix) + boundSizeHint(r.Lower) + boundSizeHint(r.Upper)
	}
	buf := make([]byte, 0, size)
	encode := func(b Bound) []byte {
		m := len(buf)
		buf = AppendBound(append(buf, prefix...), b)
		return buf[m:len(buf):len(buf)]
	}
	for _, r := range rs {
		start, end := encode(r.Lower), encode(r.Upper)
		if bytes.Compare(start, end) >= 0 {
			continue
		}
		if n := len(out); n > 0 && bytes.Compare(out[n-1].End, start) >= 0 {
			if bytes.Compare(end, out[n-1].End) > 0 {
				out[n-1].End = end
			}
			continue
		}
		out = append(out, storage.Span{Start: start, End: end})
	}
	return out
}

// boundSizeHint estimates the encoded size of a bound's values: strings by
// their length plus escaping and terminator slack, other values by the
// widest fixed encoding. Only a capacity hint; encoding never depends on it.
func boundSizeHint(b Bound) int {
	n := 1
	for _, v := range b.Values {
		if v.Family().IsStringLike() {
			n += len(v.Str()) + 4
		} else {
			n += 10
		}
	}
	return n
}

// FullKeyPoints reports whether every range is the single full primary key
// [(v1, ..., vn) .. (v1, ..., vn, <Max>)) of table t, n being the number of
// key columns. Such a range holds at most one row, whose key is the range's
// encoded lower bound (no full key is a proper prefix of another), so the
// executor reads it with a point lookup instead of an iterator. No ranges
// gives false.
func (rs Ranges) FullKeyPoints(t *catalog.Table) bool {
	n := len(t.PrimaryKey)
	if len(rs) == 0 {
		return false
	}
	for _, r := range rs {
		if r.Lower.Max || !r.Upper.Max || len(r.Lower.Values) != n || len(r.Upper.Values) != n {
			return false
		}
		for i := range n {
			if types.Compare(r.Lower.Values[i], r.Upper.Values[i]) != 0 {
				return false
			}
		}
	}
	return true
}
