package meta

import (
	"testing"

	"github.com/pivotdb/pivotdb/storage"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	eng, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return Open(eng)
}

func key(ns []byte, s string) []byte { return append(append([]byte(nil), ns...), s...) }

// TestBatchWritesOnlyMetadata: a metadata batch refuses data keys and keys
// outside every namespace, and what it commits reads back.
func TestBatchWritesOnlyMetadata(t *testing.T) {
	s := openStore(t)
	b := s.NewBatch()
	defer b.Close()
	if err := b.Set(storage.TablePrefix(7), []byte("row")); err == nil {
		t.Fatal("a data key was accepted as metadata")
	}
	if err := b.Set([]byte{storage.SystemPrefix, 'x'}, nil); err == nil {
		t.Fatal("a key outside every namespace was accepted")
	}
	if err := b.DeleteSpan(storage.SystemSpan()); err == nil {
		t.Fatal("a span wider than one namespace was accepted")
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := b.Set(key(Catalog, k), []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Set(key(Partition, "x"), []byte("p")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := s.Scan(storage.PrefixSpan(Catalog), func(k, v []byte) error {
		got = append(got, string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "a" || got[2] != "c" {
		t.Fatalf("scan of the catalog namespace: %q", got)
	}
	snap := s.Snapshot()
	defer snap.Close()
	if v, ok, err := snap.Get(key(Partition, "x")); err != nil || !ok || string(v) != "p" {
		t.Fatalf("snapshot get: %q %v %v", v, ok, err)
	}
	if _, _, err := s.Get(storage.TablePrefix(7)); err == nil {
		t.Fatal("a data key was read as metadata")
	}
}

// TestWithRidesOnTheDataBatch: records added through With commit only with
// the data batch.
func TestWithRidesOnTheDataBatch(t *testing.T) {
	s := openStore(t)
	data := s.eng.NewBatch()
	defer data.Close()
	if err := data.Set(storage.TablePrefix(7), []byte("row")); err != nil {
		t.Fatal(err)
	}
	if err := s.With(data).Set(key(Catalog, "t"), []byte("7")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(key(Catalog, "t")); ok {
		t.Fatal("record visible before the data batch committed")
	}
	if err := data.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(key(Catalog, "t")); !ok {
		t.Fatal("record missing after the data batch committed")
	}
}
