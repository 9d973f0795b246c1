package mvcc

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/storage"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized tests (0: time-based)")

// newRand returns the randomness of one randomized test and prints its seed
// if the test fails, so that the failure can be replayed with -seed.
func newRand(t testing.TB) *rand.Rand {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay with: go test -run '^%s$' -seed %d ./storage/mvcc/", t.Name(), seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

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
