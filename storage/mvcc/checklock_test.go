package mvcc

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestCheckLockAndPutLock: CheckLock finds exactly the lock records and
// intents that conflict with the strength asked (PostgreSQL's table), and
// writes nothing; PutLock writes the record AcquireLock would have.
func TestCheckLockAndPutLock(t *testing.T) {
	db := openTestDB(t)
	k := append(storage.TablePrefix(7), 'a')
	ik := append(storage.TablePrefix(7), 'i')
	free := append(storage.TablePrefix(7), 'f')
	a := TxnMeta{ID: NewTxnID(), Anchor: k, WriteTimestamp: hlc.Timestamp{WallTime: 5}}
	b := db.NewIndexedBatch()
	if _, err := PutCommitted(b, free, hlc.Timestamp{WallTime: 3}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := PutLock(b, k, &a, Share); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteIntent(b, ik, &a, hlc.Timestamp{WallTime: 5}, []byte("x"), false, NoKeyUpdate); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	var recs []LockRecord
	if err := ScanLocks(db, storage.Span{}, func(r LockRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Strength != Share || recs[0].Txn.ID != a.ID || string(recs[0].Key) != string(k) {
		t.Fatalf("PutLock's record: %+v", recs)
	}
	for _, st := range []Strength{KeyShare, Share, NoKeyUpdate, Update} {
		for _, c := range []struct {
			key  []byte
			held Strength
		}{{k, Share}, {ik, NoKeyUpdate}, {free, 0}} {
			lce, err := CheckLock(db, c.key, st)
			if err != nil {
				t.Fatal(err)
			}
			want := c.held != 0 && c.held.Conflicts(st)
			if (lce != nil) != want {
				t.Errorf("%s at %v: conflict %v, want %v", FormatKey(c.key), st, lce, want)
			}
			if lce != nil && (lce.Txn.ID != a.ID || lce.Strength != c.held || lce.Intent != (c.held == NoKeyUpdate)) {
				t.Errorf("%s at %v: %+v", FormatKey(c.key), st, lce)
			}
		}
	}
	if _, err := CheckLock(db, nil, Update); err == nil || errors.As(err, new(*LockConflictError)) {
		t.Fatalf("empty key: %v", err)
	}
}
