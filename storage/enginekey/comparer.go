package enginekey

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// ComparerName is recorded by Pebble in every store written with Comparer;
// a store written with another comparer (PivotDB before issue 16 used
// Pebble's default) refuses to open with this one and vice versa.
const ComparerName = "pivotdb.mvcc.v1"

// Comparer orders engine keys (key.go) by user key, then by suffix: a bare
// key first, then versions newest first, then (for lock records) by
// strength and transaction. Split returns the user key part with its 0x00
// sentinel, so Pebble's prefix seeks (SeekPrefixGE) and bloom filters work
// on user keys: a point lookup of a row finds all its versions with one
// filter probe, and the per-table filter of storage/keyfilter.go sees one
// prefix per row, as it did before versions.
//
// It follows CockroachDB's EngineComparer (pebble/v2/cockroachkvs), with a
// fixed-width timestamp so that equal keys are equal bytes.
var Comparer = &pebble.Comparer{
	Split:                Split,
	Compare:              Compare,
	Equal:                bytes.Equal,
	ComparePointSuffixes: CompareSuffixes,
	CompareRangeSuffixes: CompareSuffixes,
	AbbreviatedKey: func(k []byte) uint64 {
		return pebble.DefaultComparer.AbbreviatedKey(k[:Split(k)])
	},
	Separator: func(dst, a, b []byte) []byte {
		ak, aok := UserKeyOf(a)
		bk, bok := UserKeyOf(b)
		if !aok || !bok || len(ak) == 0 || len(bk) == 0 || bytes.Equal(ak, bk) {
			return append(dst, a...)
		}
		n := len(dst)
		dst = pebble.DefaultComparer.Separator(dst, ak, bk)
		if bytes.Equal(dst[n:], ak) {
			// No shorter separator of the user keys: a itself is one.
			return append(dst[:n], a...)
		}
		// The separator sorts after ak and before bk as a user key, so its
		// bare key sorts after every version of ak and before bk's.
		return append(dst, 0)
	},
	Successor: func(dst, a []byte) []byte {
		if len(a) == 0 {
			return append(dst, 0)
		}
		ak, ok := UserKeyOf(a)
		if !ok {
			return append(dst, a...)
		}
		n := len(dst)
		dst = pebble.DefaultComparer.Successor(dst, ak)
		if bytes.Equal(dst[n:], ak) {
			return append(dst[:n], a...)
		}
		return append(dst, 0)
	},
	// a is a prefix (user key | 0x00); the next prefix is the bare key of
	// the user key a itself, i.e. one more 0x00.
	ImmediateSuccessor: func(dst, a []byte) []byte {
		return append(append(dst, a...), 0)
	},
	FormatKey: func(k []byte) fmt.Formatter { return formattedKey(k) },
	Name:      ComparerName,
}

// Split returns the length of the key's prefix: everything up to and
// including the 0x00 sentinel. A key whose length byte does not fit (never
// written by this package) is all prefix.
func Split(k []byte) int {
	n := len(k)
	if n == 0 {
		return 0
	}
	s := int(k[n-1])
	if s >= n {
		return n
	}
	return n - s
}

// Compare is Pebble's formula (prefix bytewise, then suffix), spelled out.
func Compare(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	an, bn := Split(a), Split(b)
	if c := bytes.Compare(a[:an], b[:bn]); c != 0 {
		return c
	}
	return CompareSuffixes(a[an:], b[bn:])
}

// CompareSuffixes puts the empty suffix first and then orders suffixes by
// their bytes in reverse, so that a later timestamp (larger big-endian
// bytes) sorts first. The length byte is derived from the rest, so it never
// decides.
func CompareSuffixes(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	return bytes.Compare(b[:len(b)-1], a[:len(a)-1])
}

// UserKeyOf returns the user key of an engine key (without the sentinel).
func UserKeyOf(k []byte) ([]byte, bool) {
	n := Split(k)
	if n == 0 || k[n-1] != 0 {
		return nil, false
	}
	return k[:n-1], true
}

type formattedKey []byte

func (k formattedKey) Format(s fmt.State, _ rune) { fmt.Fprint(s, FormatKeyFunc(k)) }
