package storage

import (
	"bytes"
	"fmt"
)

// TablePrefixLen is the length of TablePrefix(id), the bytes before a row
// key's first column.
const TablePrefixLen = tablePrefixLen

// SkipBytes returns b after its first value, a Bytes value (AppendBytes,
// AppendString), without copying it: what a reader that needs a later key
// column steps over.
func SkipBytes(b []byte) (rest []byte, err error) {
	if _, rest, ok := splitUnescaped(b); ok {
		return rest, nil
	}
	p, err := decodeValueTag(b)
	if err != nil {
		return b, err
	}
	for {
		i := bytes.IndexByte(p, 0)
		if i < 0 || i+1 >= len(p) {
			return b, fmt.Errorf("%w: unterminated Bytes", ErrCorruptEncoding)
		}
		switch p[i+1] {
		case bytesTerminator:
			return p[i+2:], nil
		case escapedZero:
			p = p[i+2:]
		default:
			return b, fmt.Errorf("%w: bad escape 00 %02x in Bytes", ErrCorruptEncoding, p[i+1])
		}
	}
}

// AppendDecodedBytes appends the bytes of the Bytes value at the start of
// b to dst, unescaped, without an allocation of its own: DecodeBytes for
// a caller with a buffer (the server's output).
func AppendDecodedBytes(dst, b []byte) (out, rest []byte, err error) {
	if v, rest, ok := splitUnescaped(b); ok {
		return append(dst, v...), rest, nil
	}
	p, err := decodeValueTag(b)
	if err != nil {
		return dst, b, err
	}
	for {
		i := bytes.IndexByte(p, 0)
		if i < 0 || i+1 >= len(p) {
			return dst, b, fmt.Errorf("%w: unterminated Bytes", ErrCorruptEncoding)
		}
		switch p[i+1] {
		case bytesTerminator:
			return append(dst, p[:i]...), p[i+2:], nil
		case escapedZero:
			dst = append(dst, p[:i+1]...) // The value's bytes and its 00.
			p = p[i+2:]
		default:
			return dst, b, fmt.Errorf("%w: bad escape 00 %02x in Bytes", ErrCorruptEncoding, p[i+1])
		}
	}
}
