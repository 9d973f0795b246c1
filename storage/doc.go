// Package storage is PivotDB's only door to Pebble: one engine per data
// directory holding every table, and the byte layout of the keys stored in it.
//
// # Layers
//
// Bottom up:
//
//   - Key encoding (encoding.go, decimal.go). Append* functions turn column
//     values into bytes whose bytes.Compare order is the SQL order of the
//     values, NULL first; a tuple of them compares like the tuple, column by
//     column. Decode* functions invert them. The <Max> marker (AppendMax) is a
//     bound sorting after every value at its position, so the planner's
//     ranges such as [(20, 3, <Max>) .. (20, <Max>)) are plain byte spans.
//   - Key layout (keys.go). The first byte of a key says what it is: 0x01 the
//     system area (catalog, shard maps, settings), 0x02 table rows, as
//     0x02 <table id, 8 bytes big-endian> <encoded primary key>. Row values
//     are opaque here: the sql package encodes them.
//   - Spans (span.go). Every range is a half-open Span [Start, End); a nil End
//     is unbounded.
//   - Engine (engine.go, batch.go, snapshot.go, iterator.go). Engine wraps one
//     *pebble.DB. Reads go through the Reader interface, which Engine (latest
//     committed state), View (the committed state at a timestamp), Batch
//     (its own writes over the state at its read timestamp) and Snapshot (a
//     fixed past state) share; writes go through a Batch and become visible
//     atomically on Commit.
//   - Versions (versions.go, issue 16). Pebble holds engine keys
//     (storage/enginekey): a user key, a 0x00 sentinel and a suffix, ordered
//     by the MVCC comparer. Table keys (0x02: rows and index entries) are
//     versioned: Commit writes each as a version at the commit's timestamp
//     from the engine's hybrid logical clock (storage/hlc; its high-water
//     mark is the data directory's HLC_HIGH_WATER file), and Delete writes a
//     tombstone version. System keys (0x01) stay bare, overwritten in place.
//     Every read of a versioned key returns the newest version at or below
//     the reader's timestamp (Engine, Snapshot: the latest). Callers see
//     user keys only. ReadTimestamp gives a statement its timestamp; At(ts)
//     the View of it, which every shard and index read of the statement
//     uses, so that none sees part of a transaction.
//   - Intents (intents.go, issue 16 item 9 step 2). Batch.FlushIntents moves
//     a transaction's versioned writes into the store as versions at wall
//     time MaxInt64 (MaxTimestamp is one wall nanosecond below, so every
//     read skips them) with the sequence number as logical part, in
//     storage/mvcc's intent value layout; the batch's readers (and its
//     NewBatchCopy views, below their number) show their own transaction's
//     newest intent (ownIntents: Iterator both ways, PointReader, get;
//     LatestVersion ignores intents). Commit of such a batch
//     (commitIntents): last flush, commit timestamp, the batch with the
//     caller's COMMITTED record synced, ResolveIntents in unsynced chunks
//     with the caller's last writes, all while registered in flight with
//     unknown keys. Each chunk carries the shard statistics of the keys it
//     resolves (IntentStats, partition's: each intent against the
//     committed version below it), so they count exactly once, recovery
//     included. RollbackIntents, Engine.RollbackTo (savepoints),
//     ResolveIntents (recovery) and Intents (pg_locks) work from the
//     intents' spans. On a replicated engine the flushes, resolutions
//     and removals go through the replicator (commitShared), so every
//     replica holds the intents; a takeover's recovery settles them
//     before any timestamp is closed (the recovery hold, closedts.go).
//     A block property (intentblocks.go) marks the sstable blocks that
//     hold intents: resolution seeks past the others once it has met
//     intentSkipKeys keys in a row without one, and Intents reads only
//     the marked blocks.
//   - Shard-local records (locals.go, issue 16 item 9). Lock records and
//     transaction records are written by storage/mvcc's
//     operations on engine keys; storage hands them a LocalBatch (indexed,
//     or NewLocalOp: one operation reading the store directly) and
//     LocalReader, and Batch.DeleteEngineKey lets a commit batch delete
//     lock records with the commit. storage never interprets those keys.
//   - Read refresh (refresh.go, SERIALIZABLE in sql/txn). CheckRefresh
//     reports a version committed in (from, to] inside a span
//     (RefreshConflictError); Batch.SetCommitCheck runs a check inside
//     Commit with the commit timestamp, after every commit registered
//     before it is visible and before the batch lands, so the check and
//     the commit are atomic with respect to every commit below it.
//   - Garbage collection (gc.go, gcthreshold.go, schematime.go). Versions
//     older than a table's retention window (GC_TTL, else Options.GCTTL)
//     that a newer one shadows are removed shard by shard (GCSpan; the SQL
//     layer lists shards and windows through SetGCPolicy). Each shard's GC
//     threshold is a bare key 0x03 0x03 <shard start> (storage/mvcc's
//     layout), loaded at Open and kept in memory; reads below it fail with
//     BelowGCThresholdError. Sessions hold their read timestamps
//     (HoldReads, whose zero timestamp takes and holds a read timestamp in
//     one pick), and no threshold passes the oldest hold. Schema times
//     (0x03 0x10 <table prefix>) let a historical View (AS OF SYSTEM TIME)
//     refuse tables whose definition changed after it (SchemaChangedError)
//     when the SQL layer's catalog does not know the schema of its time;
//     View.CheckingTables lets it vet tables dropped since. The keys of a
//     dropped table stay (for reads before the drop) until the SQL
//     layer's GC job calls CollectDropped, which removes them, with their
//     threshold keys, once the window has passed the drop and no read
//     holds an earlier time (gc.go). VersionBytes counts old versions for
//     sys.partitions.
//   - Point reads and key filters (point.go, keyfilter.go). PointReader
//     looks up whole keys without an iterator per key (Get copies the
//     value; GetNoCopy, for callers that decode it at once, does not):
//     versioned keys by prefix seeks on one iterator, in ascending order
//     (an IN list's cost is Pebble's seeks; point.go, BenchmarkInList),
//     which for tables with KEY_BLOOM_FILTER (SetKeyFilter) consult
//     per-table bloom filters on every level. One filter policy serves all
//     levels and filters only the keys of the tables in the engine's set;
//     each sstable's filter block lists the tables it covers, so a lookup
//     never depends on the current setting (no false negatives). Commits
//     of such tables' keys make the engine flush its memtables a moment
//     later (keyfilterflush.go), so their rows get filters promptly.
//     Closed PointReaders over the latest state (View, Engine, a Batch
//     without writes) give their Pebble iterator back to the engine, which
//     lends it to the next reader only while every write into Pebble
//     begun so far had landed before it was made, and no flush,
//     compaction or ingestion ended since (pointiter.go): Pebble v2 cannot
//     refresh a DB iterator's view, so a kept one is reused only while its
//     view is the latest. Not on an engine whose Pebble others write into
//     (PebbleForReplication).
//   - Memtables that stop receiving writes are flushed (idleflush.go): a
//     read costs much more in the memtable than in sstables (no bloom
//     filter; a row's old versions stepped over one by one or by a
//     skiplist seek instead of a block's prefix bitmap), and Pebble flushes
//     only full memtables. A forward Iterator leaves a row with older
//     versions by one NextPrefix (skip.go); BenchmarkEngineScanVersions
//     measures a scan over 10 old versions per row in each layout, and
//     BenchmarkEngineScanVersionsRatio its ratio to the scan without (the
//     issue's 1.3x; about 2x compacted) beside Pebble's own (about 2.3x:
//     the floor of this key layout, skip.go).
//     Versions above the read timestamp are stepped over up to eight at a
//     time, then sought past (skipnewer.go; BenchmarkEngineScanNewer).
//   - Bulk ingestion (ingest.go). A bulk load writes sorted keys into
//     sstables with the engine's own writer options (so the per-table key
//     filters and block properties are those of a flushed sstable), in a
//     scratch directory under the data directory (BulkDir; leftovers of a
//     crash are removed by Open), and Ingest adds them to the store in one
//     atomic step. SSTWriter.Set and Batch.Set are the only places keys
//     reach Pebble.
//   - Replication (replication.go, issue 17). An engine with a Replicator
//     (SetReplicator) hands each commit's engine-key writes, rows already
//     versioned at the commit timestamp, to it instead of Pebble
//     (Engine.apply is the one place Batch.commit writes); the replicator
//     (cluster/shardrepl) proposes them to the shards' Raft groups, whose
//     state machines write into this engine's Pebble
//     (PebbleForReplication), and returns once they are applied here.
//     Without one, a commit is one Pebble batch as before. GC passes and
//     bulk ingestion go through the replicator too, never to one replica
//     only: GC's threshold keys and deletions as writes without a
//     timestamp (commitGC), a bulk load as bounded writes at its commit
//     timestamp under a pending record that RollBackBulkLoads undoes
//     (replbulk.go). A replica's engine (Options.Replica) runs GC passes
//     only while it has a replicator; any other engine must run with GC
//     off to take one. Closed timestamps (closedts.go):
//     ClosableTimestamp picks, under the commit tracker's mutex, a time
//     below every commit in flight or to come, which cluster/shardrepl
//     publishes to the replicas; SetCommitRefusal makes a replica's engine
//     without a replicator refuse commits (a follower's read-only SQL).
//   - Disk space (diskspace.go). A full disk would make Pebble end the
//     process, so every Batch.Commit first checks (statfs) that the disk
//     keeps Options.DiskReserveBytes free after it, and fails with
//     ErrDiskFull otherwise; an EMERGENCY_BALLAST file is deleted when a
//     write of Pebble's hits ENOSPC anyway and recreated when space returns.
//     More than 64 MiB above the reserve a statfs reading is reused for up
//     to 10 ms or 16 MiB of commits (less what they admitted); nearer,
//     every commit reads statfs. DiskSpace() always reads it.
//     Pebble's background errors are logged, never fatal; its fatal paths
//     (a failed WAL or MANIFEST write, data corruption) stay fatal.
//
// # Lifecycle
//
// Open → NewBatch / NewSnapshot / NewIter … Close each … → Engine.Close.
// Iterators must be closed before the batch or snapshot they came from, and
// everything before the engine (Pebble reports leaks from Engine.Close).
// Batch, Snapshot, Iterator and Engine Close are all safe to call twice.
//
// # Invariants
//
//   - Byte order is SQL order: for values a, b of one type,
//     sign(bytes.Compare(enc(a), enc(b))) = sign(compare(a, b)), and decoding
//     enc(a) yields a and consumes exactly enc(a). No encoding is a proper
//     prefix of another of the same type, which is what makes tuple order
//     column-major. The randomized tests in encoding_test.go check both for
//     every type; testdata/encoding pins the exact bytes, because they are the
//     on-disk format: changing them breaks every existing data directory.
//   - Decoders are total: on any input they return a value or an error
//     wrapping ErrCorruptEncoding, never panic (FuzzDecode), and accept only
//     canonical encodings, so decode followed by encode is the identity.
//   - Iterators return keys strictly ascending (Next) or descending (Prev),
//     always inside their span. In race and invariants builds every step is
//     checked and a violation panics (invariants_on.go).
//   - Commit is durable once it returns (WAL fsync) unless Options.NoSync.
//     It is one Pebble batch (one fsync) however many keys it versions.
//   - Versions of a key are written at increasing timestamps as long as
//     writers of a key serialise (sql/txn's row locks): a commit takes its
//     timestamp when it is applied, after the previous writer's commit.
//   - ReadTimestamp returns a timestamp at or above every commit that
//     returned before it was called, and only once every commit at or
//     below it is visible: commits register from taking their timestamp
//     until their batch lands (commitTracker), and reads wait for those at
//     or below theirs. A read timestamp may be below commits still in
//     flight (no client saw them acknowledged), so reads wait only for
//     the few in flight below the newest commit that ended, not for every
//     WAL sync or Raft round under way (committracker.go). Timestamps that
//     reads must cover and that do not come from a registered commit are
//     published (a schema change of system keys only). So a View never
//     changes, however late its reads run (until a range deletion drops a
//     table). Batch.OnCommitted runs inside that window:
//     what it installs in memory (a schema change's catalog) is there
//     before any read at the commit's timestamp starts.
//   - Every write storage makes into Pebble goes through
//     Engine.commitPebble or is counted like it (ingest): begun before it
//     can land, finished after. Point reads reuse an iterator only while
//     no write began since the writes finished before it was made
//     (TestEveryPebbleWriteCounted looks for writes that bypass it).
//   - A shard's GC threshold only rises and is at most the oldest read
//     hold: a pass writes it (under the mutex the holds share) before it
//     deletes any version, so a read that registered its hold, or that
//     checks the threshold when its iterator opens, never misses a version.
//     A threshold key covers its table's keys up to the next one, so a
//     split's halves keep it and a merge takes the higher (metadata-only
//     splits need no GC step).
//   - A data directory written before versions (Pebble's default comparer)
//     is refused at Open with ErrOldFormat.
//   - The empty key is never written (ErrEmptyKey), so range operations on a
//     span from the start of the key space begin at 0x00; Pebble can lose
//     range tombstones that start at the empty key (see rangeStart).
//
// # Debugging
//
// FormatKey renders a key as /System/<hex> or /Table/<id>/<hex of the
// primary key>; Span.String uses it. Engine keys (what Pebble's tools show)
// render with storage/mvcc's FormatKey, "@wall,logical" for a version;
// versions_test.go shows how a view at each timestamp reads them.
// GCThresholdOf and OldestReadHold show why a read was refused or a version
// kept; sys.partitions shows each shard's gc_threshold and old_bytes; the
// GC loop logs each pass that removed versions. Engine.Metrics exposes Pebble's LSM,
// compaction and block-cache counters. Pebble's own log lines go to
// Options.Logger. A data directory can be inspected offline with Pebble's
// tool (github.com/cockroachdb/pebble/v2/cmd/pebble: "db scan", "lsm").
package storage
