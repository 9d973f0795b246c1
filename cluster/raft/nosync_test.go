package raft

import (
	"os"
	"path/filepath"
	"testing"

	gvfs "github.com/lni/vfs"
)

// The files of a NoSync host hide their descriptors, so Pebble's WAL syncs
// through Sync (which does nothing) instead of fdatasync on the descriptor,
// and their writes still reach the file.
func TestNoSyncFS(t *testing.T) {
	fs := noSyncHostFS()
	name := filepath.Join(t.TempDir(), "f")
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(interface{ Fd() uintptr }); ok {
		t.Fatal("a no-sync file shows its descriptor: Pebble would fdatasync it")
	}
	if _, err := f.Write([]byte("entry")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(name); err != nil || string(b) != "entry" {
		t.Fatalf("file holds %q (%v)", b, err)
	}
	for _, open := range []func() (gvfs.File, error){
		func() (gvfs.File, error) { return fs.Open(name) },
		func() (gvfs.File, error) { return fs.OpenForAppend(name) },
		func() (gvfs.File, error) { return fs.OpenDir(filepath.Dir(name)) },
		func() (gvfs.File, error) { return fs.ReuseForWrite(name, name+".2") },
	} {
		f, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(interface{ Fd() uintptr }); ok {
			t.Fatalf("%T shows its descriptor", f)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
