package storage

import "testing"

// TestCommitUnsyncedThenSyncWAL checks that an unsynced commit followed by
// SyncWAL is readable and survives a reopen, on a synced engine.
func TestCommitUnsyncedThenSyncWAL(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := e.NewBatch()
	if err := b.Set([]byte{TableDataPrefix, 1}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.CommitUnsynced(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := e.SyncWAL(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if v, ok, err := e.Get([]byte{TableDataPrefix, 1}); err != nil || !ok || string(v) != "v" {
		t.Fatalf("after reopen: %q %v %v", v, ok, err)
	}
}
