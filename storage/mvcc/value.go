package mvcc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version values. The first byte of the value of a versioned key says what
// the version is:
//
//	committed value:  0x01 | row value
//	tombstone:        0x02
//	intent:           0x03 | strength (1) | txn meta (txn.go) | history | row value
//	intent delete:    0x04 | strength (1) | txn meta | history
//	history:          uvarint n | n × (seq (4) | 0x01 value or 0x02 delete | uvarint len | value)
//
// The intent's own write is the one at txn meta's Seq. The history holds the
// transaction's earlier writes of the key in the same epoch, oldest first,
// so that ROLLBACK TO SAVEPOINT can bring back the one it rolls back to
// (RollbackToSeq); commit and reads use only the intent's own write.
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
	strength Strength   // intents only
	txn      TxnMeta    // intents only
	history  []seqWrite // intents only: earlier writes, oldest first
	value    []byte     // the row value (values and intents)
}

// seqWrite is one write of a transaction to a key: a value or a delete at a
// sequence number.
type seqWrite struct {
	seq      int32
	isDelete bool
	value    []byte
}

func (v *version) isIntent() bool { return v.kind == kindIntent || v.kind == kindIntentDelete }

func (v *version) isDelete() bool { return v.kind == kindTombstone || v.kind == kindIntentDelete }

func appendCommitted(buf, value []byte) []byte {
	return append(append(buf, byte(kindValue)), value...)
}

func appendTombstone(buf []byte) []byte { return append(buf, byte(kindTombstone)) }

func appendIntent(buf []byte, txn *TxnMeta, strength Strength, history []seqWrite, value []byte, isDelete bool) []byte {
	kind := kindIntent
	if isDelete {
		kind = kindIntentDelete
	}
	buf = append(buf, byte(kind), byte(strength))
	buf = appendTxnMeta(buf, txn)
	buf = binary.AppendUvarint(buf, uint64(len(history)))
	for _, h := range history {
		buf = binary.BigEndian.AppendUint32(buf, uint32(h.seq))
		if h.isDelete {
			buf = append(buf, byte(kindTombstone))
			buf = binary.AppendUvarint(buf, 0)
			continue
		}
		buf = append(buf, byte(kindValue))
		buf = binary.AppendUvarint(buf, uint64(len(h.value)))
		buf = append(buf, h.value...)
	}
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
		if v.history, rest, err = decodeHistory(rest); err != nil {
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

// decodeHistory parses an intent's history and returns what follows it.
func decodeHistory(b []byte) ([]seqWrite, []byte, error) {
	bad := fmt.Errorf("%w: intent history", ErrCorruptValue)
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, bad
	}
	b = b[k:]
	if n == 0 {
		return nil, b, nil
	}
	out := make([]seqWrite, 0, n)
	for range n {
		if len(b) < 5 {
			return nil, nil, bad
		}
		w := seqWrite{seq: int32(binary.BigEndian.Uint32(b))}
		switch valueKind(b[4]) {
		case kindValue:
		case kindTombstone:
			w.isDelete = true
		default:
			return nil, nil, bad
		}
		b = b[5:]
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) || (w.isDelete && l != 0) {
			return nil, nil, bad
		}
		w.value = b[k : k+int(l) : k+int(l)]
		b = b[k+int(l):]
		out = append(out, w)
	}
	return out, b, nil
}

// writeAsOf returns the intent's newest write with a sequence number up to
// seq: its own write, or one from its history.
func (v *version) writeAsOf(seq int32) (seqWrite, bool) {
	if v.txn.Seq <= seq {
		return seqWrite{seq: v.txn.Seq, isDelete: v.isDelete(), value: v.value}, true
	}
	for i := len(v.history) - 1; i >= 0; i-- {
		if v.history[i].seq <= seq {
			return v.history[i], true
		}
	}
	return seqWrite{}, false
}
