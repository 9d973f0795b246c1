package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Bulk ingestion (COPY FROM's bulk path, sql/copybulk.go): the caller
// writes its sorted keys into sstables with SSTWriter, then Ingest adds
// them to the store in one atomic step, as CockroachDB's AddSSTable does.
// The sstables are written with the engine's own writer options (the
// per-table key filters of keyfilter.go, the block property collectors,
// the table format), so an ingested table is indistinguishable from one
// Pebble flushed. Keys are stored as given: SSTWriter.Set is the one place
// a bulk-loaded key reaches the store, so a change of the key layout
// (versioned keys) changes it there.

// bulkSeq numbers bulk directories within the process.
var bulkSeq atomic.Uint64

// BulkDir is a scratch directory for one bulk load, on the store's
// filesystem (Ingest moves files, so they must be on it). Close removes
// it; after a crash, the next Open removes what is left (bulk-* under the
// data directory).
type BulkDir struct {
	fs   vfs.FS
	path string
	n    int
}

// NewBulkDir creates a scratch directory for a bulk load.
func (e *Engine) NewBulkDir() (*BulkDir, error) {
	path := filepath.Join(e.dir, fmt.Sprintf("bulk-%d-%d", os.Getpid(), bulkSeq.Add(1)))
	if err := e.fs.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("storage: bulk directory: %w", err)
	}
	return &BulkDir{fs: e.fs, path: path}, nil
}

// Create creates a new file in the directory and returns it with its path.
func (d *BulkDir) Create(suffix string) (vfs.File, string, error) {
	d.n++
	path := filepath.Join(d.path, strconv.Itoa(d.n)+suffix)
	f, err := d.fs.Create(path, vfs.WriteCategoryUnspecified)
	return f, path, err
}

// removeBulkDirs removes the scratch directories of bulk loads that a
// crash interrupted: Open holds the store's lock, so none is in use.
func removeBulkDirs(fs vfs.FS, dir string) {
	names, err := fs.List(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, "bulk-") {
			fs.RemoveAll(filepath.Join(dir, n))
		}
	}
}

// Open opens a file of the directory for reading.
func (d *BulkDir) Open(path string) (vfs.File, error) { return d.fs.Open(path) }

// Remove deletes a file of the directory.
func (d *BulkDir) Remove(path string) error { return d.fs.Remove(path) }

// Close removes the directory and what is left in it.
func (d *BulkDir) Close() error { return d.fs.RemoveAll(d.path) }

// SSTWriter writes one sstable for Ingest. Keys must be added in strictly
// ascending order.
type SSTWriter struct {
	w    *sstable.Writer
	Path string
	n    int
}

// NewSSTWriter creates an sstable in d written with the engine's writer
// options.
func (e *Engine) NewSSTWriter(d *BulkDir) (*SSTWriter, error) {
	f, path, err := d.Create(".sst")
	if err != nil {
		return nil, err
	}
	// Level 0's options: the filter policy and block settings are the same
	// at every level here (engine.go); Ingest picks the level.
	opts := e.popts.MakeWriterOptions(0, e.db.TableFormat())
	return &SSTWriter{w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), opts), Path: path}, nil
}

// Set adds key → value.
func (w *SSTWriter) Set(key, value []byte) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	w.n++
	return w.w.Set(key, value)
}

// Count is the number of keys added.
func (w *SSTWriter) Count() int { return w.n }

// EstimatedSize is the size of the sstable so far.
func (w *SSTWriter) EstimatedSize() uint64 { return w.w.Raw().EstimatedSize() }

// Close finishes the sstable (and syncs it).
func (w *SSTWriter) Close() error { return w.w.Close() }

// Ingest adds the sstables at paths, which must not overlap one another,
// to the store atomically: all their keys become visible at once, above
// every earlier write. The files are moved into the store.
func (e *Engine) Ingest(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if e.space != nil {
		var size int64
		for _, p := range paths {
			if st, err := e.fs.Stat(p); err == nil {
				size += st.Size()
			}
		}
		done, err := e.space.admit(int(min(size, 1<<40)), false)
		if err != nil {
			return err
		}
		defer done()
	}
	if err := e.db.Ingest(ctx, paths); err != nil {
		return fmt.Errorf("storage: ingest: %w", err)
	}
	return nil
}
