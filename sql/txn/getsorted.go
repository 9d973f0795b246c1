package txn

import (
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// GetSorted reads keys as Get reads each of them (the newest committed
// value or the transaction's own write; 40001 at REPEATABLE READ and
// SERIALIZABLE for a version newer than the snapshot; a SERIALIZABLE read
// recorded), with one storage point reader for all of them instead of one
// per key: the existence checks of a multi-row INSERT (sql/write.go). keys
// must be in ascending order (the reader then seeks forward) and the caller
// must hold every key's lock, as for Get. got is called with each key's
// index and value; the value is the caller's.
//
// The reader's view of the transaction's writes is fixed when it is made:
// a key written after GetSorted returned must be read again with Get.
func (t *Txn) GetSorted(keys [][]byte, got func(i int, value []byte, found bool)) error {
	if t.isolation == Serializable {
		for _, k := range keys {
			t.reads.addKey(k)
		}
	}
	if t.SnapshotFixed() {
		for _, k := range keys {
			ts, ok, err := t.batch.LatestVersion(k)
			if err != nil {
				return err
			}
			if ok && t.batch.ReadTimestamp().Less(ts) {
				return sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update")
			}
		}
	}
	pr, err := t.batch.At(storage.MaxTimestamp).NewPointReader()
	if err != nil {
		return err
	}
	defer pr.Close()
	for i, k := range keys {
		v, ok, err := pr.Get(k)
		if err != nil {
			return err
		}
		got(i, v, ok)
	}
	return nil
}
