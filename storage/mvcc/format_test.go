package mvcc

import (
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
)

// TestRefusesUnversionedStore: a data directory written by today's engine
// (Pebble's default comparer) does not open with Comparer, and the other
// way round — the refusal that issue 16 asks for, which the engine only has
// to word (doc.go, "Adopting this in the engine", step 2).
func TestRefusesUnversionedStore(t *testing.T) {
	fs := storage.NewMemFS()
	e, err := storage.Open("data", storage.Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	b := e.NewBatch()
	if err := b.Set([]byte("\x02row"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = pebble.Open("data", testOptions(fs))
	if err == nil || !strings.Contains(err.Error(), ComparerName) {
		t.Fatalf("opening an unversioned store with Comparer: %v, want a comparer mismatch naming %s", err, ComparerName)
	}

	// And a versioned store does not open as an unversioned engine.
	fs2 := storage.NewMemFS()
	db, err := pebble.Open("data", testOptions(fs2))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Open("data", storage.Options{FS: fs2, Logger: quietLogger{}}); err == nil {
		t.Fatal("today's engine opened a versioned store")
	}
}
