package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Key column encoding.
//
// A key is a tuple of column values, each encoded as a tag byte followed, for a
// non-NULL value, by an order-preserving payload:
//
//	NULL        00
//	value       01 <payload>
//	<Max>       FF               (a bound, never a stored value)
//
// Two rules make bytes.Compare of whole encoded tuples equal the SQL order of
// the tuples, column after column:
//
//  1. For each type, bytes.Compare of two payloads equals the SQL order of the
//     values, and no payload is a proper prefix of another payload of the same
//     type (fixed width, or terminated). So the first differing byte of two
//     tuples falls inside the first differing column, and decides it.
//  2. The tag comes first, so NULL (00) sorts before every value (01), and the
//     <Max> marker (FF) after every value at its position. A bound such as
//     (20, 3, <Max>) therefore sorts after every key that starts with (20, 3)
//     and before (20, 4); it is how the planner turns "l > 3" into the start
//     key of a range.
//
// Payloads, per Append function:
//
//	Bool     00 | 01
//	Int64    8 bytes big-endian, sign bit flipped (so negatives sort first)
//	Uint64   8 bytes big-endian
//	Float64  8 bytes: IEEE bits, sign bit flipped for positives and all bits
//	         flipped for negatives; -0 is stored as +0 and every NaN as one
//	         NaN that sorts after +Inf (PostgreSQL's order)
//	Bytes    the bytes with each 00 escaped as 00 FF, then the terminator 00 01;
//	         the terminator sorts before any escaped or ordinary byte, so a
//	         string sorts before its extensions
//	Decimal  see decimal.go
//
// Every narrower SQL type is stored through one of these: the small integer
// types, Date (days), Datetime (seconds) and Timestamp (microseconds) through
// AppendInt64 or AppendUint64; Utf8 and String through AppendBytes or
// AppendString. Which of them a column uses is the sql package's decision and
// part of the on-disk format.
//
// The decoders are strict: they accept exactly the byte strings the encoders
// produce and report anything else as ErrCorruptEncoding, so a decoded value
// re-encodes to the very bytes it was read from. They never panic, whatever the
// input (FuzzDecode checks this).

// Tag is the first byte of every encoded column value.
type Tag byte

const (
	// TagNull is a NULL value. It is the smallest tag: NULL sorts first.
	TagNull Tag = 0x00
	// TagValue precedes the payload of a non-NULL value.
	TagValue Tag = 0x01
	// TagMax is the <Max> marker, a bound greater than every value at its
	// position. It is written by AppendMax into range bounds, never stored in
	// a row key.
	TagMax Tag = 0xFF
)

const (
	// escapedZero follows a 00 byte of a Bytes value that is part of the value.
	escapedZero byte = 0xFF
	// bytesTerminator follows the 00 that ends a Bytes value. It must be less
	// than escapedZero so that a value sorts before its extensions with a 00.
	bytesTerminator byte = 0x01
)

// ErrCorruptEncoding is returned (wrapped) by every decoder when its input is
// not something the matching encoder produces.
var ErrCorruptEncoding = errors.New("storage: corrupt key encoding")

// AppendNull appends a NULL value.
func AppendNull(buf []byte) []byte {
	return append(buf, byte(TagNull))
}

// AppendMax appends the <Max> marker: a bound that sorts after every value,
// NULL included, at its position and after everything that follows such a
// value.
func AppendMax(buf []byte) []byte {
	return append(buf, byte(TagMax))
}

// AppendBool appends a Bool value; false sorts before true.
func AppendBool(buf []byte, v bool) []byte {
	b := byte(0)
	if v {
		b = 1
	}
	return append(buf, byte(TagValue), b)
}

// AppendInt64 appends a signed integer value.
func AppendInt64(buf []byte, v int64) []byte {
	// Flipping the sign bit maps math.MinInt64..math.MaxInt64 onto
	// 0..math.MaxUint64 monotonically, so big-endian bytes sort like the values.
	return binary.BigEndian.AppendUint64(append(buf, byte(TagValue)), uint64(v)^(1<<63))
}

// AppendUint64 appends an unsigned integer value.
func AppendUint64(buf []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(append(buf, byte(TagValue)), v)
}

// canonicalNaN is the one NaN that AppendFloat64 stores; it is positive, so
// its encoding sorts after +Inf.
const canonicalNaN = 0x7FF8000000000000

// AppendFloat64 appends a floating-point value.
//
// -0 is stored as +0, since SQL compares them equal and equal values must have
// equal keys. Every NaN is stored as one NaN that sorts after +Inf, as
// PostgreSQL orders NaN after every other number and equal to itself.
func AppendFloat64(buf []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(buf, byte(TagValue)), floatKey(v))
}

func floatKey(v float64) uint64 {
	if v == 0 {
		v = 0 // Turns -0 into +0.
	}
	u := math.Float64bits(v)
	if v != v {
		u = canonicalNaN
	}
	// Positive floats already sort like their bits once the sign bit is set
	// above all negatives; negative floats sort backwards, so all their bits
	// are flipped.
	if u&(1<<63) != 0 {
		return ^u
	}
	return u | 1<<63
}

// AppendBytes appends a byte-string value (String, Utf8).
func AppendBytes(buf []byte, v []byte) []byte {
	buf = append(buf, byte(TagValue))
	for {
		i := bytes.IndexByte(v, 0)
		if i < 0 {
			break
		}
		buf = append(buf, v[:i]...)
		buf = append(buf, 0x00, escapedZero)
		v = v[i+1:]
	}
	buf = append(buf, v...)
	return append(buf, 0x00, bytesTerminator)
}

// AppendString is AppendBytes for a string, without converting it to []byte.
func AppendString(buf []byte, v string) []byte {
	buf = append(buf, byte(TagValue))
	for {
		i := strings.IndexByte(v, 0)
		if i < 0 {
			break
		}
		buf = append(buf, v[:i]...)
		buf = append(buf, 0x00, escapedZero)
		v = v[i+1:]
	}
	buf = append(buf, v...)
	return append(buf, 0x00, bytesTerminator)
}

// DecodeTag returns the tag of the next value and the input after the tag. It
// fails on empty input and on a byte that is no tag.
func DecodeTag(b []byte) (tag Tag, rest []byte, err error) {
	if len(b) == 0 {
		return 0, b, fmt.Errorf("%w: missing value tag", ErrCorruptEncoding)
	}
	switch t := Tag(b[0]); t {
	case TagNull, TagValue, TagMax:
		return t, b[1:], nil
	default:
		return 0, b, fmt.Errorf("%w: unknown value tag 0x%02x", ErrCorruptEncoding, b[0])
	}
}

// PeekNull reports whether the next value is NULL. Decoding a nullable column
// reads: if PeekNull(b) { rest, err = DecodeNull(b) } else { v, rest, err =
// DecodeInt64(b) }.
func PeekNull(b []byte) bool {
	return len(b) > 0 && Tag(b[0]) == TagNull
}

// DecodeNull consumes a NULL value.
func DecodeNull(b []byte) (rest []byte, err error) {
	if !PeekNull(b) {
		return b, tagError(b, TagNull)
	}
	return b[1:], nil
}

// DecodeMax consumes a <Max> marker.
func DecodeMax(b []byte) (rest []byte, err error) {
	if len(b) == 0 || Tag(b[0]) != TagMax {
		return b, tagError(b, TagMax)
	}
	return b[1:], nil
}

// decodeValueTag consumes the TagValue of a non-NULL value.
func decodeValueTag(b []byte) ([]byte, error) {
	if len(b) == 0 || Tag(b[0]) != TagValue {
		return b, tagError(b, TagValue)
	}
	return b[1:], nil
}

func tagError(b []byte, want Tag) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: missing value tag", ErrCorruptEncoding)
	}
	name := func(t Tag) string {
		switch t {
		case TagNull:
			return "NULL"
		case TagValue:
			return "a value"
		case TagMax:
			return "<Max>"
		default:
			return fmt.Sprintf("tag 0x%02x", byte(t))
		}
	}
	return fmt.Errorf("%w: expected %s, found %s", ErrCorruptEncoding, name(want), name(Tag(b[0])))
}

// DecodeBool decodes a value written by AppendBool.
func DecodeBool(b []byte) (v bool, rest []byte, err error) {
	p, err := decodeValueTag(b)
	if err != nil {
		return false, b, err
	}
	if len(p) == 0 || p[0] > 1 {
		return false, b, fmt.Errorf("%w: bad Bool payload", ErrCorruptEncoding)
	}
	return p[0] == 1, p[1:], nil
}

// decodeFixed64 consumes the tag and an 8-byte payload.
func decodeFixed64(b []byte, typ string) (uint64, []byte, error) {
	p, err := decodeValueTag(b)
	if err != nil {
		return 0, b, err
	}
	if len(p) < 8 {
		return 0, b, fmt.Errorf("%w: %s needs 8 bytes, have %d", ErrCorruptEncoding, typ, len(p))
	}
	return binary.BigEndian.Uint64(p), p[8:], nil
}

// DecodeInt64 decodes a value written by AppendInt64.
func DecodeInt64(b []byte) (v int64, rest []byte, err error) {
	u, rest, err := decodeFixed64(b, "Int64")
	return int64(u ^ (1 << 63)), rest, err
}

// DecodeUint64 decodes a value written by AppendUint64.
func DecodeUint64(b []byte) (v uint64, rest []byte, err error) {
	return decodeFixed64(b, "Uint64")
}

// DecodeFloat64 decodes a value written by AppendFloat64. It rejects the
// encodings of -0 and of non-canonical NaNs, which AppendFloat64 never writes.
func DecodeFloat64(b []byte) (v float64, rest []byte, err error) {
	k, rest, err := decodeFixed64(b, "Float64")
	if err != nil {
		return 0, b, err
	}
	u := ^k
	if k&(1<<63) != 0 {
		u = k &^ (1 << 63)
	}
	v = math.Float64frombits(u)
	if floatKey(v) != k {
		return 0, b, fmt.Errorf("%w: non-canonical Float64 0x%016x", ErrCorruptEncoding, k)
	}
	return v, rest, nil
}

// DecodeBytes decodes a value written by AppendBytes or AppendString. The
// returned slice is newly allocated and never aliases b.
func DecodeBytes(b []byte) (v []byte, rest []byte, err error) {
	if v, rest, ok := splitUnescaped(b); ok {
		return bytes.Clone(v), rest, nil
	}
	return decodeEscaped(b)
}

// DecodeString is DecodeBytes returning a string.
func DecodeString(b []byte) (v string, rest []byte, err error) {
	if v, rest, ok := splitUnescaped(b); ok {
		return string(v), rest, nil
	}
	raw, rest, err := decodeEscaped(b)
	return string(raw), rest, err
}

// splitUnescaped is the fast path of the Bytes decoders: a value without an
// escaped zero is one run ended by the terminator, and can be copied out in
// one allocation of the right size. ok is false if b does not start with such
// a value, including when it is malformed.
func splitUnescaped(b []byte) (v, rest []byte, ok bool) {
	if len(b) == 0 || Tag(b[0]) != TagValue {
		return nil, nil, false
	}
	p := b[1:]
	i := bytes.IndexByte(p, 0)
	if i < 0 || i+1 >= len(p) || p[i+1] != bytesTerminator {
		return nil, nil, false
	}
	return p[:i], p[i+2:], true
}

// decodeEscaped decodes a Bytes value that may contain escaped zeros.
func decodeEscaped(b []byte) (v []byte, rest []byte, err error) {
	p, err := decodeValueTag(b)
	if err != nil {
		return nil, b, err
	}
	v = []byte{}
	for {
		i := bytes.IndexByte(p, 0)
		if i < 0 || i+1 >= len(p) {
			return nil, b, fmt.Errorf("%w: unterminated Bytes", ErrCorruptEncoding)
		}
		switch p[i+1] {
		case bytesTerminator:
			return append(v, p[:i]...), p[i+2:], nil
		case escapedZero:
			v = append(v, p[:i+1]...) // The value's bytes and its 00.
			p = p[i+2:]
		default:
			return nil, b, fmt.Errorf("%w: bad escape 00 %02x in Bytes", ErrCorruptEncoding, p[i+1])
		}
	}
}
