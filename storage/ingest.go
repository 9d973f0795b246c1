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
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Bulk ingestion (COPY FROM's bulk path, sql/copybulk.go): the caller
// writes its sorted keys through IngestVersioned's SSTWriter, which adds
// them to the store in one atomic step, as CockroachDB's AddSSTable does.
// The sstables are written with the engine's own writer options (the MVCC
// comparer, the per-table key filters of keyfilter.go, the block property
// collectors, the table format), so an ingested table is indistinguishable
// from one Pebble flushed. SSTWriter.Set turns a user key into its engine
// key exactly as a batch's commit does (versions.go): the key layout lives
// in storage alone.

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

// SSTWriter writes the sstables of one IngestVersioned. Keys must be
// added in strictly ascending order; it starts a new sstable when one
// grows past the size given to IngestVersioned.
type SSTWriter struct {
	e     *Engine
	d     *BulkDir
	ts    hlc.Timestamp
	max   uint64
	w     *sstable.Writer
	paths []string
	n     int
	kbuf  []byte
	vbuf  []byte
	// rb, on a replicated engine, takes the keys instead of sstables
	// (replbulk.go).
	rb *replBulk
}

// Set adds userKey → value: a key of the table area as a version at the
// ingestion's commit timestamp with a committed value (versions.go), as a
// batch's commit would write it; any other key bare.
func (w *SSTWriter) Set(userKey, value []byte) error {
	if len(userKey) == 0 {
		return ErrEmptyKey
	}
	if w.rb != nil {
		w.engineKV(userKey, value)
		w.n++
		return w.rb.set(userKey, w.kbuf, w.vbuf)
	}
	if w.w == nil {
		f, path, err := w.d.Create(".sst")
		if err != nil {
			return err
		}
		// Level 0's options: the filter policy and block settings are
		// the same at every level here (engine.go); Ingest picks the level.
		opts := w.e.popts.MakeWriterOptions(0, w.e.db.TableFormat())
		w.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), opts)
		w.paths = append(w.paths, path)
	}
	w.engineKV(userKey, value)
	w.n++
	if err := w.w.Set(w.kbuf, w.vbuf); err != nil {
		return err
	}
	if w.w.Raw().EstimatedSize() >= w.max {
		return w.closeFile()
	}
	return nil
}

// engineKV sets kbuf and vbuf to the engine key and value of userKey →
// value.
func (w *SSTWriter) engineKV(userKey, value []byte) {
	if isVersioned(userKey) {
		w.kbuf = enginekey.AppendVersionKey(w.kbuf[:0], userKey, w.ts)
		w.vbuf = append(append(w.vbuf[:0], tagValue), value...)
	} else {
		w.kbuf = enginekey.AppendBareKey(w.kbuf[:0], userKey)
		w.vbuf = append(w.vbuf[:0], value...)
	}
}

// Count is the number of keys added.
func (w *SSTWriter) Count() int { return w.n }

func (w *SSTWriter) closeFile() error {
	if w.w == nil {
		return nil
	}
	err := w.w.Close()
	w.w = nil
	return err
}

// IngestVersioned loads sorted keys as one commit: it takes a commit
// timestamp, lets fill write the keys through an SSTWriter (sstables of at
// most maxFileSize bytes in d, with the engine's writer options), and
// ingests them atomically: every key becomes visible at once, as a
// version at that timestamp. Like any commit in flight, it makes reads
// that take a later timestamp wait until it is visible, so fill should
// only write what was prepared and checked before.
func (e *Engine) IngestVersioned(ctx context.Context, d *BulkDir, maxFileSize uint64, fill func(w *SSTWriter) error) error {
	ts, id, err := e.commits.begin()
	if err != nil {
		return err
	}
	defer e.commits.end(id)
	w := &SSTWriter{e: e, d: d, ts: ts, max: maxFileSize}
	if e.replOn.Load() {
		return e.ingestReplicated(ctx, w, fill) // replbulk.go
	}
	err = fill(w)
	if cerr := w.closeFile(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return e.ingest(ctx, w.paths)
}

// ingest adds the sstables at paths, which must not overlap one another,
// to the store atomically. The files are moved into the store.
func (e *Engine) ingest(ctx context.Context, paths []string) error {
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
		n := int(min(size, 1<<40))
		if err := e.space.admit(n, false); err != nil {
			return err
		}
		defer e.space.release(n)
	}
	if e.replOn.Load() {
		return &ReplicatedError{Op: "ingestion of sstables"} // IngestVersioned replicates its keys instead
	}
	e.points.writing() // pointiter.go
	err := e.db.Ingest(ctx, paths)
	e.points.wrote()
	if err != nil {
		return fmt.Errorf("storage: ingest: %w", err)
	}
	return nil
}
