package mvcc

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
)

// TestStorageOpensVersioned: the server's engine (storage.Open) writes the
// store this package reads: a store it made opens with Comparer.
func TestStorageOpensVersioned(t *testing.T) {
	fs := storage.NewMemFS()
	e, err := storage.Open("data", storage.Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	o := testOptions(fs)
	o.Merger = &pebble.Merger{Name: storage.CounterMergerName, Merge: pebble.DefaultMerger.Merge}
	db, err := pebble.Open("data", o)
	if err != nil {
		t.Fatalf("a store of storage.Open does not open with Comparer: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
