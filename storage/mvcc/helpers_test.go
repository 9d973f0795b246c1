package mvcc

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// newRand returns the randomness of one randomized test; its seed is
// printed if the test fails, for replaying it with -seed.
func newRand(t testing.TB) *rand.Rand { return storagetest.NewRand(t, "./storage/mvcc/") }

// quietLogger keeps Pebble's informational lines out of the tests' output.
type quietLogger = storagetest.QuietLogger

// testOptions are the Pebble options a versioned store runs with: Comparer,
// and the per-table key filters of storage/keyfilter.go on every level for
// filterTables.
func testOptions(fs vfs.FS, filterTables ...uint64) *pebble.Options {
	o := &pebble.Options{
		FS:                 fs,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             quietLogger{},
	}
	ConfigureOptions(o)
	policy := storage.NewKeyFilterPolicy(filterTables...)
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = policy
	}
	o.EnsureDefaults()
	return o
}

// openTestDB opens an in-memory versioned store, closed with the test.
func openTestDB(t testing.TB, filterTables ...uint64) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("", testOptions(vfs.NewMem(), filterTables...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// benchOptions are testOptions with the engine's default sizes
// (storage.DefaultCacheSizeBytes, storage.DefaultMemTableSizeBytes, and the
// cache grown by two memtables as storage.Open does), so that benchmarks
// compare like with like. The caller unrefs the cache after closing the DB.
func benchOptions() (*pebble.Options, *pebble.Cache) {
	o := testOptions(vfs.NewMem())
	o.MemTableSize = storage.DefaultMemTableSizeBytes
	cache := pebble.NewCache(storage.DefaultCacheSizeBytes + 2*storage.DefaultMemTableSizeBytes)
	o.Cache = cache
	return o, cache
}
