package hlc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Timestamp is a point of hybrid logical time: a wall-clock reading in
// nanoseconds since the Unix epoch and a logical counter that orders events
// sharing one wall reading. Timestamps compare by WallTime, then Logical.
//
// The zero Timestamp is "no timestamp": the clock never returns it, so it
// can mean "unset" in the layers above (an MVCC key without a version, for
// example).
type Timestamp struct {
	WallTime int64
	Logical  int32
}

// MaxTimestamp sorts after every timestamp a clock returns. Reads "at the
// newest version" use it.
var MaxTimestamp = Timestamp{WallTime: math.MaxInt64, Logical: math.MaxInt32}

// IsEmpty reports whether t is the zero Timestamp.
func (t Timestamp) IsEmpty() bool { return t == Timestamp{} }

// Compare returns -1, 0 or +1 as t is before, equal to or after o.
func (t Timestamp) Compare(o Timestamp) int {
	switch {
	case t.WallTime < o.WallTime:
		return -1
	case t.WallTime > o.WallTime:
		return 1
	case t.Logical < o.Logical:
		return -1
	case t.Logical > o.Logical:
		return 1
	}
	return 0
}

// Less reports whether t is before o.
func (t Timestamp) Less(o Timestamp) bool { return t.Compare(o) < 0 }

// LessEq reports whether t is before or equal to o.
func (t Timestamp) LessEq(o Timestamp) bool { return t.Compare(o) <= 0 }

// Next returns the smallest timestamp after t. A logical counter at its
// maximum rolls over into the next nanosecond.
func (t Timestamp) Next() Timestamp {
	if t.Logical == math.MaxInt32 {
		if t.WallTime == math.MaxInt64 {
			return t // MaxTimestamp has no successor; saturate.
		}
		return Timestamp{WallTime: t.WallTime + 1}
	}
	return Timestamp{WallTime: t.WallTime, Logical: t.Logical + 1}
}

// Prev returns the largest timestamp before t; the zero timestamp has none
// and is returned unchanged.
func (t Timestamp) Prev() Timestamp {
	switch {
	case t.Logical > 0:
		return Timestamp{WallTime: t.WallTime, Logical: t.Logical - 1}
	case t.WallTime > 0:
		return Timestamp{WallTime: t.WallTime - 1, Logical: math.MaxInt32}
	}
	return t
}

// Forward returns the later of t and o.
func (t Timestamp) Forward(o Timestamp) Timestamp {
	if t.Less(o) {
		return o
	}
	return t
}

// String renders t as CockroachDB does: seconds with nine decimals, a comma,
// the logical counter ("1700000000.000000123,4"). It is the format of
// cluster_logical_timestamp() and of AS OF SYSTEM TIME's decimal form, and
// ParseTimestamp reads it back.
func (t Timestamp) String() string {
	if t.WallTime < 0 {
		// Never produced by a Clock; shown raw rather than misrendered.
		return fmt.Sprintf("%dns,%d", t.WallTime, t.Logical)
	}
	return fmt.Sprintf("%d.%09d,%d", t.WallTime/1e9, t.WallTime%1e9, t.Logical)
}

// ParseTimestamp parses the String form of a timestamp at or after the
// epoch; the ",logical" part is optional and the decimal part may have up to
// nine digits.
func ParseTimestamp(s string) (Timestamp, error) {
	bad := func() (Timestamp, error) {
		return Timestamp{}, fmt.Errorf("hlc: invalid timestamp %q", s)
	}
	wallPart, logicalPart, hasLogical := strings.Cut(s, ",")
	var ts Timestamp
	if hasLogical {
		l, err := strconv.ParseInt(logicalPart, 10, 32)
		if err != nil || l < 0 || !allDigits(logicalPart) {
			return bad()
		}
		ts.Logical = int32(l)
	}
	secPart, fracPart, _ := strings.Cut(wallPart, ".")
	if secPart == "" || len(fracPart) > 9 || !allDigits(secPart) || !allDigits(fracPart) {
		return bad()
	}
	sec, err := strconv.ParseUint(secPart, 10, 63)
	if err != nil {
		return bad()
	}
	var frac uint64
	if fracPart != "" {
		frac, err = strconv.ParseUint(fracPart+strings.Repeat("0", 9-len(fracPart)), 10, 64)
		if err != nil {
			return bad()
		}
	}
	if sec > (math.MaxInt64-frac)/1e9 {
		return bad()
	}
	ts.WallTime = int64(sec*1e9 + frac)
	return ts, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
