package mvcc

import (
	"errors"
	"fmt"
)

// Version values. The first byte of the value of a versioned key says what
// the version is:
//
//	committed value:  0x01 | row value
//	tombstone:        0x02
//	intent:           0x03 | strength (1) | txn meta (txn.go) | row value
//	intent delete:    0x04 | strength (1) | txn meta
//
// An intent is a provisional version at its transaction's WriteTimestamp
// and, at the same time, the transaction's exclusive lock on the key (with
// the strength of the statement that wrote it: FOR UPDATE or FOR NO KEY
// UPDATE in PostgreSQL's terms). Resolution rewrites it as a committed value
// or tombstone, or deletes it.
type valueKind byte

const (
	kindValue        valueKind = 0x01
	kindTombstone    valueKind = 0x02
	kindIntent       valueKind = 0x03
	kindIntentDelete valueKind = 0x04
)

// ErrCorruptValue reports a stored value that does not follow the layout.
var ErrCorruptValue = errors.New("mvcc: corrupt value")

// version is a decoded version value. Its slices alias the stored bytes.
type version struct {
	kind     valueKind
	strength Strength // intents only
	txn      TxnMeta  // intents only
	value    []byte   // the row value (values and intents)
}

func (v *version) isIntent() bool { return v.kind == kindIntent || v.kind == kindIntentDelete }

func (v *version) isDelete() bool { return v.kind == kindTombstone || v.kind == kindIntentDelete }

func appendCommitted(buf, value []byte) []byte {
	return append(append(buf, byte(kindValue)), value...)
}

func appendTombstone(buf []byte) []byte { return append(buf, byte(kindTombstone)) }

func appendIntent(buf []byte, txn *TxnMeta, strength Strength, value []byte, isDelete bool) []byte {
	kind := kindIntent
	if isDelete {
		kind = kindIntentDelete
	}
	buf = append(buf, byte(kind), byte(strength))
	buf = appendTxnMeta(buf, txn)
	if !isDelete {
		buf = append(buf, value...)
	}
	return buf
}

// decodeVersionValue parses a version value.
func decodeVersionValue(b []byte) (v version, err error) {
	if len(b) == 0 {
		return v, fmt.Errorf("%w: empty version value", ErrCorruptValue)
	}
	v.kind = valueKind(b[0])
	switch v.kind {
	case kindValue:
		v.value = b[1:]
	case kindTombstone:
		if len(b) != 1 {
			return v, fmt.Errorf("%w: tombstone with a value", ErrCorruptValue)
		}
	case kindIntent, kindIntentDelete:
		if len(b) < 2 {
			return v, fmt.Errorf("%w: short intent", ErrCorruptValue)
		}
		v.strength = Strength(b[1])
		var rest []byte
		if v.txn, rest, err = decodeTxnMeta(b[2:]); err != nil {
			return v, err
		}
		if v.kind == kindIntentDelete && len(rest) != 0 {
			return v, fmt.Errorf("%w: intent delete with a value", ErrCorruptValue)
		}
		v.value = rest
	default:
		return v, fmt.Errorf("%w: version kind %#x", ErrCorruptValue, b[0])
	}
	return v, nil
}
