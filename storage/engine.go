package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Default sizes, chosen for a server process that owns the machine's memory
// budget for one data directory.
const (
	// DefaultCacheSizeBytes is the block cache size when Options leave it 0.
	DefaultCacheSizeBytes = 64 << 20
	// DefaultMemTableSizeBytes is the memtable size when Options leave it 0.
	// Larger than Pebble's 4 MB default (CockroachDB uses 64 MB) so that bulk
	// UPSERTs and pre-split loads flush fewer, larger L0 files.
	DefaultMemTableSizeBytes = 64 << 20
)

// Options configure Open. The zero value is a durable engine on the OS
// filesystem with default sizes.
type Options struct {
	// NoSync makes Commit return once the batch is written to the WAL without
	// waiting for fsync. Committed writes then survive a crash of the process
	// but not of the machine. It is the server's --unsafe-no-sync; every other
	// configuration syncs, as design §4 requires.
	NoSync bool
	// CacheSizeBytes is the size of the block cache of uncompressed sstable
	// blocks; 0 means DefaultCacheSizeBytes. Pebble's cache also holds the
	// memtables, which come on top (see pebbleOptions).
	CacheSizeBytes int64
	// MemTableSizeBytes is the size of one memtable; 0 means
	// DefaultMemTableSizeBytes, scaled down on disks smaller than 2 GiB
	// (defaultMemTableSize in diskspace.go).
	MemTableSizeBytes uint64
	// DiskReserveBytes is the free disk space commits must leave (the
	// server's --disk-reserve); below it Batch.Commit fails with ErrDiskFull
	// (diskspace.go). 0 means DefaultDiskReserve of the disk's size.
	DiskReserveBytes int64
	// DiskBallastBytes is the size of the emergency ballast file; 0 means
	// DefaultDiskBallast of the disk's size.
	DiskBallastBytes int64
	// FS is the filesystem holding the data directory; nil means the OS's.
	// Tests use NewMemFS, which survives Close/Open but not the process.
	FS FS
	// Logger receives Pebble's log lines; nil means Pebble's default, the Go
	// standard logger.
	Logger Logger
	// KeyFilterFlushDelay bounds how long committed rows of a table with a
	// key bloom filter stay in the memtables, where they have no filter
	// (keyfilterflush.go); 0 means DefaultKeyFilterFlushDelay. Tests make
	// it short.
	KeyFilterFlushDelay time.Duration
	// GCTTL is how long versions a newer version replaced are kept (the
	// server's --gc-ttl, gc.go); 0 means DefaultGCTTL, negative keeps
	// them all (no GC).
	GCTTL time.Duration
	// GCInterval is the time between GC passes over a shard; 0 means a
	// quarter of the shard's table's window (GC_TTL, else GCTTL), at least
	// a second (gc.go). Tests set it to pass over every shard at a fixed
	// rate.
	GCInterval time.Duration
	// Replica marks the store of a Raft replica (cluster/shardrepl's
	// OpenEngine): its GC loop runs passes only while a replicator is
	// set (the node serves), and they go through it (replication.go).
	Replica bool
	// GCWaitsForPolicy: no GC pass runs before SetGCPolicy. The SQL
	// layer's engines set it (sql.Open, a cluster node's engine): without
	// the policy a pass collects the whole table area, the catalog's
	// history included, with GCTTL, not each table's GC_TTL. A cluster
	// node that took over serving ran such a pass before its SQL layer
	// opened and lost the catalog's history of a table kept for an hour
	// (TestClusterGC: "AS OF SYSTEM TIME ... before the last change of
	// the columns", after a takeover, under load).
	GCWaitsForPolicy bool
	// IdleFlushTick is how often the engine looks whether its memtables
	// stopped receiving writes, to flush them (idleflush.go); 0 means
	// every second, negative never.
	IdleFlushTick time.Duration
	// Physical is the wall clock the HLC reads (ns since the Unix epoch);
	// nil means the system's. A cluster node passes its own (cluster/node's
	// clock-shift testing knob moves it).
	Physical func() int64
}

// FS is the filesystem interface Pebble runs on. It is an alias so that tests
// of other packages can use an in-memory engine without importing Pebble.
type FS = vfs.FS

// NewMemFS returns an empty in-memory filesystem for Options.FS.
func NewMemFS() FS { return vfs.NewMem() }

// Logger is the logging interface Pebble needs (pebble.Logger's method set).
type Logger interface {
	Infof(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Engine is the one Pebble instance of a data directory. Every table, the
// catalog and the shard maps live in it (see keys.go for the layout).
//
// An Engine is safe for concurrent use. Batches and iterators made from it
// are not, and they and snapshots must all be closed before the Engine is.
// Using an Engine after Close panics (Pebble's behaviour): it is a bug in the
// caller's shutdown order, not a condition to handle.
type Engine struct {
	db        *pebble.DB
	writeOpts *pebble.WriteOptions
	// filters is the set of tables with a key bloom filter (keyfilter.go),
	// shared with the filter policy Pebble writes sstables with.
	filters *keyFilterTables
	// flusher flushes soon after commits of rows of those tables
	// (keyfilterflush.go).
	flusher *filterFlusher
	// idle flushes memtables that stopped receiving writes (idleflush.go);
	// nil when off.
	idle *idleFlusher
	// space is the disk guard (diskspace.go); nil when the filesystem
	// cannot report its usage.
	space *diskGuard

	// clock is the server's hybrid logical clock; commits takes commit
	// timestamps from it and orders reads after commits (versions.go).
	clock   *hlc.Clock
	commits *commitTracker
	gc      *gcLoop // nil: no GC
	// gcs holds the shards' GC thresholds and the read holds
	// (gcthreshold.go).
	gcs *gcState
	// schema holds the tables' schema times (schematime.go).
	schema *schemaTimes
	// repl takes the commits when set (replication.go); nil: Pebble.
	repl Replicator
	// replica is Options.Replica; replOn is set once repl is (read by
	// the GC loop, which runs before SetReplicator).
	replica bool
	// gcWaitsForPolicy: Options.GCWaitsForPolicy.
	gcWaitsForPolicy bool
	replOn           atomic.Bool
	// recoveryHold keeps ClosableTimestamp from closing anything while a
	// replicated store holds transaction records its recovery has not
	// settled yet (closedts.go).
	recoveryHold atomic.Bool
	// refuse, when set, is the error of every commit while no replicator
	// is set (SetCommitRefusal: a follower's read-only SQL engine).
	refuse atomic.Pointer[error]

	// popts, dir and fs are what Open opened the store with; bulk
	// ingestion (ingest.go) writes sstables with popts' writer options
	// into a directory under dir on fs.
	popts *pebble.Options
	dir   string
	fs    vfs.FS

	// points keeps point reads' iterators for reuse (pointiter.go).
	points *pointIters

	mu     sync.Mutex // Serialises Close.
	closed bool
}

// Reader is the read side shared by Engine (the latest committed state),
// Batch (its own writes over the latest state) and Snapshot (a fixed past
// state), so that read paths are written once.
type Reader interface {
	// Get returns a copy of the value stored at key; found is false if there
	// is none.
	Get(key []byte) (value []byte, found bool, err error)
	// NewIter returns an unpositioned iterator over the keys in span.
	NewIter(span Span) (*Iterator, error)
	// NewPointReader returns a reader of single whole keys (point.go).
	NewPointReader() (*PointReader, error)
}

var (
	_ Reader = (*Engine)(nil)
	_ Reader = (*Batch)(nil)
	_ Reader = (*Snapshot)(nil)
)

// Open opens the engine in dir, creating it if it does not exist.
func Open(dir string, opts Options) (*Engine, error) {
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	space, err := newDiskGuard(fs, dir, opts)
	if err != nil {
		return nil, err
	}
	filters := &keyFilterTables{}
	if space != nil && opts.MemTableSizeBytes == 0 {
		opts.MemTableSizeBytes = defaultMemTableSize(space.total)
	}
	po := opts.pebbleOptions(filters)
	points := newPointIters()
	points.watch(po.EventListener)
	if space != nil {
		// A write of Pebble's that hits ENOSPC deletes the ballast and is
		// retried once (diskspace.go).
		po.FS = vfs.OnDiskFull(po.FS, space.onDiskFull)
	}
	// The clock's high-water mark must outlive every timestamp written, so
	// it is loaded (and, if need be, moved) before any commit.
	clock, err := hlc.NewClock(hlc.Config{Physical: opts.Physical, Store: vfsHighWater{fs: po.FS, dir: dir, name: highWaterFile}})
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		clock.Close()
		if strings.Contains(err.Error(), "comparer name from file") {
			return nil, fmt.Errorf("storage: open %s: %w: the data directory was written by a PivotDB without "+
				"versioned storage (before issue 16); dump it with that version and load it into a new one (%v)",
				dir, ErrOldFormat, err)
		}
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	removeBulkDirs(fs, dir) // under Pebble's lock of dir
	e := &Engine{db: db, writeOpts: pebble.Sync, filters: filters, space: space, clock: clock,
		commits: newCommitTracker(clock), popts: po, dir: dir, fs: po.FS, gcs: newGCState(), schema: &schemaTimes{},
		replica: opts.Replica, gcWaitsForPolicy: opts.GCWaitsForPolicy, points: points}
	if err := errors.Join(e.gcs.load(db), e.schema.load(db)); err != nil {
		db.Close()
		clock.Close()
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	e.flusher = &filterFlusher{db: db, delay: opts.KeyFilterFlushDelay, log: opts.Logger}
	if e.flusher.delay <= 0 {
		e.flusher.delay = DefaultKeyFilterFlushDelay
	}
	if opts.NoSync {
		e.writeOpts = pebble.NoSync
	}
	startGC(e, opts.GCTTL, opts.GCInterval, opts.events()) // sets e.gc
	e.idle = startIdleFlusher(db, opts.Logger, opts.IdleFlushTick)
	go points.sweep()
	return e, nil
}

// pebbleOptions translates Options into Pebble's configuration; filters is
// the engine's set of tables with a key bloom filter.
func (o Options) pebbleOptions(filters *keyFilterTables) *pebble.Options {
	p := &pebble.Options{
		CacheSize:    o.CacheSizeBytes,
		MemTableSize: o.MemTableSizeBytes,
		FS:           o.FS,
		// New stores get the newest on-disk format; existing ones are
		// ratcheted up to it on open. PivotDB has no older binaries that
		// would need to read its directories.
		FormatMajorVersion: pebble.FormatNewest,
		// Pebble's default of one compaction at a time falls behind under
		// sustained writes on a multi-core server; allow up to four when
		// there is a backlog.
		CompactionConcurrencyRange: func() (int, int) {
			return 1, min(4, max(1, runtime.GOMAXPROCS(0)))
		},
	}
	if p.MemTableSize == 0 {
		p.MemTableSize = DefaultMemTableSizeBytes
	}
	p.CacheSize = o.cacheSize(p.MemTableSize)
	if o.Logger != nil {
		p.Logger = o.Logger
	}
	// Failed flushes and compactions are logged and retried by Pebble; they
	// never end the process (a full disk makes them fail for a while).
	// DataCorruption keeps Pebble's default, which is fatal: serving from a
	// store known to be corrupt could hand out or build on wrong data.
	// Space under a range deletion (DROP TABLE) is reclaimed only after
	// the memtable holding it is flushed; without a delay that could wait
	// for the memtable to fill, which on a full disk never happens.
	p.FlushDelayDeleteRange = flushDelayDeleteRange
	bg := &backgroundErrorLog{log: o.events(), interval: 10 * time.Second}
	p.EventListener = &pebble.EventListener{
		BackgroundError: bg.report,
		LowDiskSpace: func(info pebble.LowDiskSpaceInfo) {
			o.events().Warn("storage: low disk space", "info", info.String())
		},
	}
	// Counter keys (counters.go) are updated with Batch.Merge.
	p.Merger = counterMerger
	// Keys are engine keys (versions.go): user keys, whose byte order is
	// SQL order (encoding.go), with a version suffix that the comparer
	// orders newest first and Split cuts off for prefix seeks and filters.
	enginekey.ConfigureOptions(p)
	//
	// Bloom filters are per table (KEY_BLOOM_FILTER, design §9), but Pebble
	// configures them per level: every level gets the policy of
	// keyfilter.go, which filters only the keys of the tables that have the
	// setting on and answers "may contain" for every other key.
	policy := keyFilterPolicy{tables: filters}
	for i := range p.Levels {
		p.Levels[i].FilterPolicy = policy
	}
	p.BlockPropertyCollectors = append(p.BlockPropertyCollectors, newKeyFilterCollector(filters))
	// Blocks holding intents are marked, so that resolution skips the
	// others (intentblocks.go).
	p.BlockPropertyCollectors = append(p.BlockPropertyCollectors, newIntentCollector)
	p.EnsureDefaults()
	return p
}

// cacheSize is the block cache size for memtables of memTableSize.
//
// Pebble reserves the memory of live memtables inside the block cache
// (Cache.Reserve). With a cache no larger than a memtable nothing would be
// cached at all (blocks, bloom filters, index blocks all re-read from the
// files on every access), so CacheSizeBytes is the room for blocks and the
// cache is made larger by two memtables (the mutable one and one being
// flushed).
func (o Options) cacheSize(memTableSize uint64) int64 {
	c := o.CacheSizeBytes
	if c == 0 {
		c = DefaultCacheSizeBytes
	}
	return c + 2*int64(memTableSize)
}

// Close flushes the memtables to sstables, so that the next Open need not
// replay the WAL, and closes the engine. Closing twice is harmless: the second
// call does nothing and returns nil. Pebble reports (as an error) iterators
// and snapshots that were left open.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.gc.stop()
	e.flusher.stop()
	e.idle.stop()
	e.points.close()
	var flushErr error
	if err := e.db.Flush(); err != nil {
		flushErr = fmt.Errorf("storage: flush on close: %w", err)
	}
	err := e.db.Close()
	e.clock.Close()
	if err != nil {
		return errors.Join(flushErr, fmt.Errorf("storage: close: %w", err))
	}
	return flushErr
}

// Get returns a copy of the latest committed value at key.
func (e *Engine) Get(key []byte) (value []byte, found bool, err error) {
	return getPoint(PointReader{r: e.db, ts: MaxTimestamp, pool: e.points, db: e.db}, key)
}

// NewIter returns an iterator over the latest committed state of span. The
// iterator reads a consistent view as of its creation: later commits are not
// visible to it.
func (e *Engine) NewIter(span Span) (*Iterator, error) {
	return newIterator(e.db, MaxTimestamp, span)
}

// NewBatch returns an empty indexed batch: writes made to it are visible to
// its own Get and NewIter, merged over the latest committed state, until
// Commit applies them atomically.
func (e *Engine) NewBatch() *Batch {
	return &Batch{b: e.db.NewIndexedBatch(), e: e, ts: MaxTimestamp, writeOpts: e.writeOpts, filters: e.filters,
		flusher: e.flusher, space: e.space}
}

// NewSnapshot returns a consistent, unchanging view of the current committed
// state. Close it promptly: it keeps compactions from dropping the versions it
// can see.
func (e *Engine) NewSnapshot() *Snapshot {
	return &Snapshot{s: e.db.NewSnapshot(), filters: e.filters}
}

// Flush writes the memtables to sstables. It is not needed for durability
// (the WAL gives that); tests use it to make size estimates and compactions
// see the data.
func (e *Engine) Flush() error {
	return e.db.Flush()
}

// EstimateDiskUsage estimates the bytes the sstables of span take on disk.
// Data still in the memtables is not counted, so the estimate lags writes
// until a flush. An unbounded End is resolved to the last key in the engine.
func (e *Engine) EstimateDiskUsage(span Span) (uint64, error) {
	start, end, ok, err := e.resolveSpan(span)
	if err != nil || !ok {
		return 0, err
	}
	return e.db.EstimateDiskUsage(start, end)
}

// Compact compacts span down to the bottom level of the LSM, dropping deleted
// and overwritten data. It blocks until done; cancel ctx to give up. An
// unbounded End is resolved to the last key in the engine, so Compact(ctx,
// Span{}) compacts everything.
func (e *Engine) Compact(ctx context.Context, span Span) error {
	start, end, ok, err := e.resolveSpan(span)
	if err != nil || !ok {
		return err
	}
	return e.db.Compact(ctx, start, end, true /* parallelize */)
}

// Metrics returns Pebble's metrics: LSM shape, compactions, block cache hits
// and misses, and so on. The sys views and the benchmarks read it.
func (e *Engine) Metrics() *pebble.Metrics {
	return e.db.Metrics()
}

// resolveSpan turns span into the explicit [start, end) of engine keys that
// Pebble's range operations need: an empty Start becomes rangeStart's 0x00 and a nil
// End the successor of the last key at or after Start. ok is false when there
// is nothing to operate on.
func (e *Engine) resolveSpan(span Span) (start, end []byte, ok bool, err error) {
	if err := span.validate(); err != nil {
		return nil, nil, false, err
	}
	start, end = rangeStart(span.Start), span.End
	if end == nil {
		it, err := newIterator(e.db, MaxTimestamp, Span{Start: start})
		if err != nil {
			return nil, nil, false, err
		}
		if it.Last() {
			// The immediate successor of the last key: the smallest key
			// that is greater, so [start, end) covers exactly up to it.
			end = append(bytes.Clone(it.Key()), 0)
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return nil, nil, false, err
		}
		if end == nil {
			return nil, nil, false, nil
		}
	}
	if bytes.Compare(start, end) >= 0 {
		return nil, nil, false, nil
	}
	// Engine keys: the bare key of a user key sorts before all its versions.
	return bareKey(start), bareKey(end), true, nil
}

// pebbleReader is the read side of pebble's DB, Batch and Snapshot.
type pebbleReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// get implements Reader.Get over any pebbleReader: a versioned key as of
// ts, through a PointReader (a prefix seek that consults the key bloom
// filters of every level, which Pebble's own Get skips at the bottom level,
// where most data lives), a bare key with Pebble's Get.
func get(r pebbleReader, ts hlc.Timestamp, key []byte) (value []byte, found bool, err error) {
	return getPoint(PointReader{r: r, ts: ts}, key)
}

// getPoint is get through pr, a PointReader not yet used: a versioned key
// is read through it (with an iterator the engine may lend, pointiter.go),
// a bare key with Pebble's Get from pr.r.
func getPoint(pr PointReader, key []byte) (value []byte, found bool, err error) {
	if len(key) == 0 {
		return nil, false, ErrEmptyKey
	}
	if isVersioned(key) {
		defer pr.Close()
		return pr.Get(key)
	}
	return getBare(pr.r, key)
}

// getBare reads a bare key with Pebble's Get. Pebble's value is only valid
// until its closer is closed, so it is copied out; an empty value comes back
// as a non-nil empty slice.
func getBare(r pebbleReader, key []byte) (value []byte, found bool, err error) {
	v, closer, err := r.Get(bareKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	value = make([]byte, len(v))
	copy(value, v)
	if err := closer.Close(); err != nil {
		return nil, false, err
	}
	return value, true, nil
}

// rangeStart returns the start key to hand to a Pebble range operation
// (DeleteRange, Compact, EstimateDiskUsage) for a span starting at start.
//
// An empty start becomes 0x00, which covers the same keys because the empty
// key cannot be written (ErrEmptyKey). The reason is a Pebble pitfall: some
// of its range-tombstone code copies a span's Start and then reads a nil
// Start as "no span", so a tombstone starting at the empty key can be lost
// and the keys it deleted come back. Pebble v2.1.7 does this in invariant
// builds (which -race turns on); TestEngineRandomized found it.
func rangeStart(start []byte) []byte {
	if len(start) == 0 {
		return []byte{0x00}
	}
	return start
}
