package storage_test

import (
	"bytes"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// TestGCThresholdKeyIsMVCCs: the engine keeps a shard's GC threshold at
// storage/mvcc's key, so both layers read the same record.
func TestGCThresholdKeyIsMVCCs(t *testing.T) {
	start := storage.TablePrefix(42)
	got := enginekey.AppendBareKey(nil, storage.GCThresholdKey(start))
	if want := mvcc.GCThresholdKey(start); !bytes.Equal(got, want) {
		t.Fatalf("engine key %x, mvcc's %x", got, want)
	}
}
