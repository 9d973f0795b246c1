package enginekey

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

const (
	// SentinelLen is the 0x00 byte that ends every user key part.
	SentinelLen = 1
	// TimestampSuffixLen is a version suffix: wall, logical, length byte.
	TimestampSuffixLen = 8 + 4 + 1
)

// ErrCorruptKey reports an engine key that does not follow the layout.
var ErrCorruptKey = errors.New("mvcc: corrupt key")

// AppendBareKey appends the bare engine key of userKey (no version): the
// form of keys that are not versioned, and of span bounds.
func AppendBareKey(buf, userKey []byte) []byte {
	return append(append(buf, userKey...), 0)
}

// AppendVersionKey appends the engine key of the version of userKey at ts.
// ts must be valid (not empty, not negative); callers check it.
func AppendVersionKey(buf, userKey []byte, ts hlc.Timestamp) []byte {
	buf = append(append(buf, userKey...), 0)
	return AppendTimestampSuffix(buf, ts)
}

// AppendTimestampSuffix appends the suffix of a version at ts to a prefix
// (user key | 0x00).
func AppendTimestampSuffix(buf []byte, ts hlc.Timestamp) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(ts.WallTime))
	buf = binary.BigEndian.AppendUint32(buf, uint32(ts.Logical))
	return append(buf, TimestampSuffixLen)
}

// DecodeKey splits an engine key into its user key and, for a versioned key,
// its timestamp; versioned is false for a bare key. A lock record or any
// other suffix is ErrCorruptKey here: it is not a data key.
func DecodeKey(key []byte) (userKey []byte, ts hlc.Timestamp, versioned bool, err error) {
	n := len(key)
	if n == 0 {
		return nil, hlc.Timestamp{}, false, fmt.Errorf("%w: empty key", ErrCorruptKey)
	}
	switch key[n-1] {
	case 0:
		return key[:n-1], hlc.Timestamp{}, false, nil
	case TimestampSuffixLen:
		if n < SentinelLen+TimestampSuffixLen || key[n-TimestampSuffixLen-1] != 0 {
			break
		}
		s := key[n-TimestampSuffixLen:]
		ts = hlc.Timestamp{WallTime: int64(binary.BigEndian.Uint64(s)), Logical: int32(binary.BigEndian.Uint32(s[8:]))}
		return key[:n-TimestampSuffixLen-1], ts, true, nil
	}
	return nil, hlc.Timestamp{}, false, fmt.Errorf("%w: %x", ErrCorruptKey, key)
}

// DecodeVersion is DecodeKey for scan loops: it trusts the layout of a data
// key and only tells a versioned key from anything else.
func DecodeVersion(key []byte) (userKey []byte, ts hlc.Timestamp, ok bool) {
	n := len(key)
	if n < SentinelLen+TimestampSuffixLen || key[n-1] != TimestampSuffixLen {
		return nil, hlc.Timestamp{}, false
	}
	s := key[n-TimestampSuffixLen:]
	return key[:n-TimestampSuffixLen-1], hlc.Timestamp{
		WallTime: int64(binary.BigEndian.Uint64(s)),
		Logical:  int32(binary.BigEndian.Uint32(s[8:])),
	}, true
}

// FormatKeyFunc renders engine keys for Comparer.FormatKey (Pebble's logs
// and tools). storage/mvcc installs its FormatKey, which knows the user-key
// areas and lock records; until then keys are shown in hex.
var FormatKeyFunc = func(k []byte) string { return "0x" + hex.EncodeToString(k) }
