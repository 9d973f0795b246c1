package mvcc

import (
	"bytes"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// FuzzDecode: the decoders of stored keys and values are total — any input
// gives a value or an error wrapping ErrCorruptKey / ErrCorruptValue, never
// a panic — and what the encoders write decodes back.
func FuzzDecode(f *testing.F) {
	txn := &TxnMeta{ID: TxnID{1, 2}, Anchor: []byte("anchor"), Epoch: 3, Seq: 4, WriteTimestamp: hlc.Timestamp{WallTime: 5, Logical: 6}}
	f.Add(AppendVersionKey(nil, []byte("k"), hlc.Timestamp{WallTime: 1}))
	f.Add(appendLockKey(nil, []byte("k"), Share, txn.ID))
	f.Add(appendIntent(nil, txn, Update, []seqWrite{{seq: 1, value: []byte("v1")}, {seq: 2, isDelete: true}}, []byte("v"), false))
	f.Add(appendCommitted(nil, []byte("v")))
	f.Add(encodeTxnRecord(&TxnRecord{Status: Committed, LockSpans: []storage.Span{{Start: []byte("a")}, {Start: []byte("b"), End: []byte("c")}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _, _ = DecodeKey(b)
		_, _, _, _ = decodeLockKey(b)
		_ = FormatKey(b)
		_ = split(b)
		if v, err := decodeVersionValue(b); err == nil && v.isIntent() {
			again := appendIntent(nil, &v.txn, v.strength, v.history, v.value, v.isDelete())
			if !bytes.Equal(again, b) {
				t.Fatalf("intent %x re-encodes as %x", b, again)
			}
		}
		if rec, err := decodeTxnRecord(b); err == nil {
			if again := encodeTxnRecord(&rec); !bytes.Equal(again, b) {
				t.Fatalf("record %x re-encodes as %x", b, again)
			}
		}
	})
}
