package storage

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestNewBatchCopyIsolatesLaterWrites(t *testing.T) {
	e := openMem(t, vfs.NewMem(), Options{})
	defer e.Close()
	b := e.NewBatch()
	defer b.Close()
	if err := b.Set([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	view, err := e.NewBatchCopy(b)
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	if err := b.Set([]byte("a"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	if err := b.Set([]byte("b"), []byte("3")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := view.Get([]byte("a")); err != nil || !ok || string(v) != "1" {
		t.Fatalf("view sees a=%q %v %v, want the write made before the copy", v, ok, err)
	}
	if _, ok, err := view.Get([]byte("b")); err != nil || ok {
		t.Fatalf("view sees a later write of b: %v %v", ok, err)
	}
	if v, _, _ := b.Get([]byte("a")); string(v) != "2" {
		t.Fatalf("batch lost its own write: %q", v)
	}
}
