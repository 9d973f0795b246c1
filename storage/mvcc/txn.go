package mvcc

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TxnIDLen is the length of a transaction id.
const TxnIDLen = 16

// TxnID names a transaction: 16 random bytes (a version 4 UUID), unique
// without coordination between nodes.
type TxnID [TxnIDLen]byte

// NewTxnID returns a fresh random id.
func NewTxnID() TxnID {
	var id TxnID
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go 1.24+)
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// String renders the first 8 hex digits, as CockroachDB's logs do; enough
// to tell transactions apart in a test or a log line.
func (id TxnID) String() string { return hex.EncodeToString(id[:4]) }

// TxnMeta is what an intent or a lock record says about its transaction:
// enough for a reader or writer that meets it to find the transaction record
// (Anchor, ID) and to tell its own writes from others'.
type TxnMeta struct {
	ID TxnID
	// Anchor is the user key of the transaction's record: the key of its
	// first write (Percolator, CockroachDB), so the record lives in the
	// shard of that key (design §12).
	Anchor []byte
	// Epoch counts restarts of the transaction under the same id; intents
	// of an older epoch are not its writes any more (they are replaced or
	// aborted, never committed).
	Epoch uint32
	// WriteTimestamp is the provisional commit timestamp: intents are
	// written at it. It only moves forward.
	WriteTimestamp hlc.Timestamp
	// Seq numbers the transaction's writes and locks within an epoch; the
	// layer above increases it for every statement (or write). A savepoint
	// is a sequence number: ROLLBACK TO SAVEPOINT undoes every write and
	// lock with a larger one (RollbackToSeq).
	Seq int32
}

// isOwn reports whether an intent or lock of meta belongs to txn's current
// epoch.
func (txn *TxnMeta) isOwn(meta *TxnMeta) bool {
	return txn != nil && txn.ID == meta.ID && txn.Epoch == meta.Epoch
}

// appendTxnMeta appends the encoding of m:
//
//	id (16) | epoch (4) | seq (4) | wall (8) | logical (4) | uvarint len(anchor) | anchor
func appendTxnMeta(buf []byte, m *TxnMeta) []byte {
	buf = append(buf, m.ID[:]...)
	buf = binary.BigEndian.AppendUint32(buf, m.Epoch)
	buf = binary.BigEndian.AppendUint32(buf, uint32(m.Seq))
	buf = binary.BigEndian.AppendUint64(buf, uint64(m.WriteTimestamp.WallTime))
	buf = binary.BigEndian.AppendUint32(buf, uint32(m.WriteTimestamp.Logical))
	buf = binary.AppendUvarint(buf, uint64(len(m.Anchor)))
	return append(buf, m.Anchor...)
}

// decodeTxnMeta inverts appendTxnMeta and returns what follows it. Anchor
// aliases b.
func decodeTxnMeta(b []byte) (m TxnMeta, rest []byte, err error) {
	const fixed = TxnIDLen + 4 + 4 + 8 + 4
	if len(b) < fixed {
		return m, nil, fmt.Errorf("%w: transaction meta of %d bytes", ErrCorruptValue, len(b))
	}
	copy(m.ID[:], b)
	m.Epoch = binary.BigEndian.Uint32(b[16:])
	m.Seq = int32(binary.BigEndian.Uint32(b[20:]))
	m.WriteTimestamp = decodeTimestamp(b[24:])
	n, k := binary.Uvarint(b[fixed:])
	if k <= 0 || uint64(len(b)-fixed-k) < n {
		return m, nil, fmt.Errorf("%w: transaction anchor", ErrCorruptValue)
	}
	start := fixed + k
	m.Anchor = b[start : start+int(n) : start+int(n)]
	return m, b[start+int(n):], nil
}

// TxnStatus is the state of a transaction record.
type TxnStatus byte

const (
	// Pending: running; its intents are provisional.
	Pending TxnStatus = 1
	// Committed: its intents are values at the record's WriteTimestamp,
	// whether or not they are resolved yet.
	Committed TxnStatus = 2
	// Aborted: its intents are garbage, whether or not they are removed yet.
	Aborted TxnStatus = 3
)

func (s TxnStatus) String() string {
	switch s {
	case Pending:
		return "PENDING"
	case Committed:
		return "COMMITTED"
	case Aborted:
		return "ABORTED"
	}
	return fmt.Sprintf("TxnStatus(%d)", byte(s))
}

// TxnRecord is the durable state of a transaction, stored at
// TxnRecordKey(anchor, id). A transaction commits by writing its record
// COMMITTED (design §11: "commit marks the transaction record, then
// resolves intents"); resolution then turns intents into values, and the
// record can be deleted once none is left. A reader that meets an intent
// reads the record to learn its fate.
type TxnRecord struct {
	Status TxnStatus
	Epoch  uint32
	// WriteTimestamp is the commit timestamp once Committed.
	WriteTimestamp hlc.Timestamp
	// Heartbeat is when the coordinator last showed it is alive; a record
	// PENDING long after it may be aborted by whoever is blocked on it.
	Heartbeat hlc.Timestamp
	// LockSpans cover every key that may hold an intent or a lock record
	// of the transaction: what resolution must visit.
	LockSpans []storage.Span
}

// txnRecordVersion is the first byte of an encoded record.
const txnRecordVersion = 1

// TxnRecordKey returns the engine key of a transaction's record. It is a
// bare key in the local area under the anchor, so the anchor's shard owns
// it.
func TxnRecordKey(anchor []byte, id TxnID) []byte {
	k := make([]byte, 0, 2+len(anchor)+TxnIDLen+1)
	k = append(k, LocalPrefix, localTxnRecord)
	k = append(k, anchor...)
	k = append(k, id[:]...)
	return AppendBareKey(k[:len(k):len(k)], nil)
}

// PutTxnRecord writes the record of the transaction (anchor, id).
func PutTxnRecord(w Writer, anchor []byte, id TxnID, rec *TxnRecord) error {
	return w.Set(TxnRecordKey(anchor, id), encodeTxnRecord(rec), nil)
}

// DeleteTxnRecord removes a record whose intents are all resolved.
func DeleteTxnRecord(w Writer, anchor []byte, id TxnID) error {
	return w.Delete(TxnRecordKey(anchor, id), nil)
}

// GetTxnRecord reads the record; found is false if there is none (never
// written, or deleted after resolution).
func GetTxnRecord(r Reader, anchor []byte, id TxnID) (rec TxnRecord, found bool, err error) {
	v, ok, err := getRaw(r, TxnRecordKey(anchor, id))
	if err != nil || !ok {
		return rec, false, err
	}
	rec, err = decodeTxnRecord(v)
	return rec, err == nil, err
}

// encodeTxnRecord:
//
//	version (1) | status (1) | epoch (4) | write ts (12) | heartbeat (12) |
//	uvarint n | n × (uvarint len, start, uvarint len+1 or 0 for nil, end)
func encodeTxnRecord(rec *TxnRecord) []byte {
	b := []byte{txnRecordVersion, byte(rec.Status)}
	b = binary.BigEndian.AppendUint32(b, rec.Epoch)
	b = appendTimestamp(b, rec.WriteTimestamp)
	b = appendTimestamp(b, rec.Heartbeat)
	b = binary.AppendUvarint(b, uint64(len(rec.LockSpans)))
	for _, s := range rec.LockSpans {
		b = binary.AppendUvarint(b, uint64(len(s.Start)))
		b = append(b, s.Start...)
		if s.End == nil {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(s.End))+1)
		b = append(b, s.End...)
	}
	return b
}

func decodeTxnRecord(b []byte) (rec TxnRecord, err error) {
	bad := func(what string) (TxnRecord, error) {
		return TxnRecord{}, fmt.Errorf("%w: transaction record: %s", ErrCorruptValue, what)
	}
	if len(b) < 2+4+12+12 || b[0] != txnRecordVersion {
		return bad("header")
	}
	rec.Status = TxnStatus(b[1])
	if rec.Status < Pending || rec.Status > Aborted {
		return bad("status")
	}
	rec.Epoch = binary.BigEndian.Uint32(b[2:])
	rec.WriteTimestamp = decodeTimestamp(b[6:])
	rec.Heartbeat = decodeTimestamp(b[18:])
	b = b[30:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return bad("span count")
	}
	b = b[k:]
	take := func(l uint64) ([]byte, bool) {
		if l > uint64(len(b)) {
			return nil, false
		}
		out := append([]byte{}, b[:l]...)
		b = b[l:]
		return out, true
	}
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 {
			return bad("span start")
		}
		b = b[k:]
		var s storage.Span
		var ok bool
		if s.Start, ok = take(l); !ok {
			return bad("span start")
		}
		l, k = binary.Uvarint(b)
		if k <= 0 {
			return bad("span end")
		}
		b = b[k:]
		if l > 0 {
			if s.End, ok = take(l - 1); !ok {
				return bad("span end")
			}
		}
		rec.LockSpans = append(rec.LockSpans, s)
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	return rec, nil
}

func appendTimestamp(b []byte, ts hlc.Timestamp) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(ts.WallTime))
	return binary.BigEndian.AppendUint32(b, uint32(ts.Logical))
}

func decodeTimestamp(b []byte) hlc.Timestamp {
	return hlc.Timestamp{WallTime: int64(binary.BigEndian.Uint64(b)), Logical: int32(binary.BigEndian.Uint32(b[8:]))}
}

// ScanTxnRecords calls fn for every transaction record in the store, in
// key order: recovery looks for the records of transactions that did not
// end. It stops at fn's first error and returns it.
func ScanTxnRecords(r Reader, fn func(anchor []byte, id TxnID, rec TxnRecord) error) error {
	lower := []byte{LocalPrefix, localTxnRecord}
	upper := []byte{LocalPrefix, localTxnRecord + 1}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		// 03 02 <anchor> <id (16)> 00: a bare key.
		if len(k) < 2+TxnIDLen+sentinelLen || k[len(k)-1] != 0 {
			it.Close()
			return fmt.Errorf("%w: not a transaction record key: %x", ErrCorruptKey, k)
		}
		body := k[2 : len(k)-sentinelLen]
		var id TxnID
		copy(id[:], body[len(body)-TxnIDLen:])
		anchor := bytes.Clone(body[:len(body)-TxnIDLen])
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		rec, err := decodeTxnRecord(v)
		if err != nil {
			it.Close()
			return err
		}
		if err := fn(anchor, id, rec); err != nil {
			it.Close()
			return err
		}
	}
	return firstErr(it.Error(), it.Close())
}
