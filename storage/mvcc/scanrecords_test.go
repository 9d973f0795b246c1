package mvcc

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestScanLocksAndTxnRecords: ScanLocks and ScanTxnRecords find what
// AcquireLock and PutTxnRecord wrote, decoded, and nothing else (versions
// of the same keys stay out); LockKey names a record ScanLocks returned.
func TestScanLocksAndTxnRecords(t *testing.T) {
	db := openTestDB(t)
	b := db.NewIndexedBatch()
	k1 := append(storage.TablePrefix(7), 'a')
	k2 := append(storage.TablePrefix(7), 'b')
	if _, err := PutCommitted(b, k1, hlc.Timestamp{WallTime: 5}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	a := TxnMeta{ID: NewTxnID(), Anchor: k1}
	c := TxnMeta{ID: NewTxnID(), Anchor: k2}
	for _, l := range []struct {
		k  []byte
		m  *TxnMeta
		st Strength
	}{{k1, &a, Share}, {k1, &c, KeyShare}, {k2, &c, Update}} {
		if _, err := AcquireLock(b, l.k, l.m, hlc.MaxTimestamp, l.st); err != nil {
			t.Fatal(err)
		}
	}
	if err := PutTxnRecord(b, a.Anchor, a.ID, &TxnRecord{Status: Pending, Heartbeat: hlc.Timestamp{WallTime: 9}}); err != nil {
		t.Fatal(err)
	}
	if err := PutTxnRecord(b, c.Anchor, c.ID, &TxnRecord{Status: Committed, WriteTimestamp: hlc.Timestamp{WallTime: 11}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	var locks []LockRecord
	if err := ScanLocks(db, storage.Span{}, func(r LockRecord) error { locks = append(locks, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(locks) != 3 {
		t.Fatalf("%d lock records, want 3", len(locks))
	}
	for _, r := range locks {
		if !bytes.Equal(r.EngineKey, LockKey(r.Key, r.Strength, r.Txn.ID)) {
			t.Errorf("record %s: LockKey gives another key", FormatKey(r.EngineKey))
		}
	}
	if l := locks[2]; !bytes.Equal(l.Key, k2) || l.Strength != Update || l.Txn.ID != c.ID || !bytes.Equal(l.Txn.Anchor, k2) {
		t.Errorf("last record %+v", l)
	}
	var only []LockRecord
	if err := ScanLocks(db, storage.Span{Start: k2, End: append(k2, 0)}, func(r LockRecord) error { only = append(only, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(only) != 1 || only[0].Txn.ID != c.ID {
		t.Errorf("records in [k2, k2+0): %+v", only)
	}
	got := map[TxnID]TxnStatus{}
	if err := ScanTxnRecords(db, func(anchor []byte, id TxnID, rec TxnRecord) error {
		want := a.Anchor
		if id == c.ID {
			want = c.Anchor
		}
		if !bytes.Equal(anchor, want) {
			t.Errorf("record of %s anchored at %x, want %x", id, anchor, want)
		}
		got[id] = rec.Status
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[a.ID] != Pending || got[c.ID] != Committed {
		t.Fatalf("records %v", got)
	}
}
