package mvcc

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Engine keys. Every key in a store run with Comparer is one of these (see
// doc.go for the picture):
//
//	bare key:       user key | 0x00
//	versioned key:  user key | 0x00 | wall (8, BE) | logical (4, BE) | 0x0D
//	lock record:    0x03 0x01 | user key | 0x00 | strength (1) | txn id (16) | 0x12
//
// The last byte is the length of the suffix that follows the 0x00 sentinel,
// itself included (0 for a bare key), so Split finds the user key from the
// end without parsing it. The prefix Split returns is "user key | 0x00",
// the same for a bare key and all of its versions.

const (
	// sentinelLen is the 0x00 byte that ends every user key part.
	sentinelLen = enginekey.SentinelLen
	// timestampSuffixLen is a version suffix: wall, logical, length byte.
	timestampSuffixLen = enginekey.TimestampSuffixLen
	// lockSuffixLen is a lock record's suffix: strength, txn id, length byte.
	lockSuffixLen = 1 + TxnIDLen + 1
)

// LocalPrefix starts the keys that belong to a shard without being rows:
// lock records, transaction records and the shard's own state. Each is
// addressed by a row key after a kind byte, so the shard owning the row key
// owns them too and a split, which only moves a pivot, moves them along.
//
//	0x03 0x01 <row key>        lock records (locks of locking reads)
//	0x03 0x02 <anchor><txn id> transaction records
//	0x03 0x03 <span start>     shard state (the GC threshold)
const LocalPrefix byte = 0x03

const (
	localLock      byte = 0x01
	localTxnRecord byte = 0x02
	localGCState   byte = 0x03
)

// storage names the transaction records' kind too (storage.LocalTxnRecord):
// this fails to compile if the two differ.
var _ = [1]struct{}{}[localTxnRecord^storage.LocalTxnRecord]

// Sentinel errors of the package; classify them with errors.Is.
var (
	// ErrCorruptKey reports an engine key that does not follow the layout.
	ErrCorruptKey = enginekey.ErrCorruptKey
	// ErrInvalidTimestamp reports a version timestamp that is empty or
	// before the epoch: such a version could not be ordered.
	ErrInvalidTimestamp = errors.New("mvcc: invalid timestamp")
)

// AppendBareKey appends the bare engine key of userKey (no version): the
// form of keys that are not versioned, and of span bounds.
func AppendBareKey(buf, userKey []byte) []byte { return enginekey.AppendBareKey(buf, userKey) }

// AppendVersionKey appends the engine key of the version of userKey at ts.
// ts must be valid (checkTimestamp); the operations check it at their entry.
func AppendVersionKey(buf, userKey []byte, ts hlc.Timestamp) []byte {
	return enginekey.AppendVersionKey(buf, userKey, ts)
}

// checkTimestamp rejects timestamps that cannot name a version.
func checkTimestamp(ts hlc.Timestamp) error {
	if ts.IsEmpty() || ts.WallTime < 0 || ts.Logical < 0 {
		return fmt.Errorf("%w: %s", ErrInvalidTimestamp, ts)
	}
	return nil
}

// DecodeKey splits an engine key into its user key and, for a versioned key,
// its timestamp; versioned is false for a bare key. A lock record or any
// other suffix is ErrCorruptKey here: it is not a data key.
func DecodeKey(key []byte) (userKey []byte, ts hlc.Timestamp, versioned bool, err error) {
	return enginekey.DecodeKey(key)
}

// decodeVersion is DecodeKey for the scan loop: it trusts the layout of a
// data key and only tells a versioned key from anything else.
func decodeVersion(key []byte) (userKey []byte, ts hlc.Timestamp, ok bool) {
	return enginekey.DecodeVersion(key)
}

// engineSpan turns a span of user keys into the bounds of an iterator over
// every version of every key in it: [start|0x00, end|0x00). Appending the
// 0x00 sentinel keeps byte order, and a bare key sorts before every version
// of its user key, so the bounds hold exactly the keys of the span. A nil
// End stays unbounded. An inverted span is storage.ErrInvertedSpan, as
// everywhere in storage.
func engineSpan(s storage.Span) (lower, upper []byte, err error) {
	if s.End != nil && bytes.Compare(s.Start, s.End) > 0 {
		return nil, nil, fmt.Errorf("%w: %s", storage.ErrInvertedSpan, s)
	}
	lower = AppendBareKey(nil, s.Start)
	if s.End != nil {
		upper = AppendBareKey(nil, s.End)
	}
	return lower, upper, nil
}

// lockPrefix returns the user key part of the lock records of userKey.
func lockPrefix(userKey []byte) []byte {
	return append([]byte{LocalPrefix, localLock}, userKey...)
}

// LockTableSpan returns the span of lock-record user keys that belong to the
// rows in s: the lock table part of a shard.
func LockTableSpan(s storage.Span) storage.Span {
	out := storage.Span{Start: lockPrefix(s.Start)}
	if s.End != nil {
		out.End = lockPrefix(s.End)
	} else {
		out.End = []byte{LocalPrefix, localLock + 1}
	}
	return out
}

// appendLockKey appends the engine key of the lock record of txn on userKey.
func appendLockKey(buf, userKey []byte, strength Strength, txn TxnID) []byte {
	buf = append(buf, LocalPrefix, localLock)
	buf = append(append(buf, userKey...), 0)
	buf = append(buf, byte(strength))
	buf = append(buf, txn[:]...)
	return append(buf, lockSuffixLen)
}

// decodeLockKey inverts appendLockKey.
func decodeLockKey(key []byte) (userKey []byte, strength Strength, txn TxnID, err error) {
	n := len(key)
	if n < 2+sentinelLen+lockSuffixLen || key[0] != LocalPrefix || key[1] != localLock ||
		key[n-1] != lockSuffixLen || key[n-lockSuffixLen-1] != 0 {
		return nil, 0, txn, fmt.Errorf("%w: not a lock record key: %x", ErrCorruptKey, key)
	}
	s := key[n-lockSuffixLen:]
	copy(txn[:], s[1:1+TxnIDLen])
	return key[2 : n-lockSuffixLen-1], Strength(s[0]), txn, nil
}

// FormatKey renders an engine key for logs and tests: the user key as
// storage.FormatKey shows it, then "@wall,logical" for a version or the lock
// strength and transaction for a lock record.
func FormatKey(key []byte) string {
	if uk, ts, ok := decodeVersion(key); ok {
		return formatUserKey(uk) + "@" + ts.String()
	}
	if uk, st, id, err := decodeLockKey(key); err == nil {
		return "/Lock" + formatUserKey(uk) + "/" + st.String() + "/" + id.String()
	}
	if len(key) > 0 && key[len(key)-1] == 0 {
		return formatUserKey(key[:len(key)-1])
	}
	return "0x" + hex.EncodeToString(key)
}

func formatUserKey(k []byte) string {
	if len(k) >= 2 && k[0] == LocalPrefix {
		switch k[1] {
		case localTxnRecord:
			return "/Local/Txn/" + hex.EncodeToString(k[2:])
		case localGCState:
			return "/Local/GC" + storage.FormatKey(k[2:])
		}
	}
	return storage.FormatKey(k)
}
