// Package partition cuts every table into key-range shards defined by pivot
// keys (design §5), keeps exact per-shard statistics, and changes the shards
// online: split, merge, reshard. It works on encoded key bytes only and
// imports nothing but storage; what a key means is the sql layer's business.
//
// # Layers
//
// Bottom up:
//
//   - Layout (keys.go). Shard records, stats-pending markers, per-table
//     counters and the shard id sequence are metadata, namespace
//     meta.Partition of the metadata store (package meta), which keeps
//     them in the same Pebble instance as the rows, so that a split (a
//     metadata change) is one atomic batch, and CREATE TABLE commits its
//     catalog record and its shard map together. Each shard's statistics
//     counter is a shard-local key addressed by the shard's pivot
//     (namespace meta.PartitionStats, 0x03 0x11 <pivot>), so that on a
//     cluster it lives in the Raft group of the shard's rows and a write
//     that changes a row count commits in that one group. They are read and written
//     through meta.Store and meta.Batch, except where statistics must be
//     consistent with the rows they count in one storage batch or
//     snapshot: the deltas of a write commit, and the shard sizes cuts.go
//     reads beside the rows it counts.
//   - ShardMap (shardmap.go). One table's shards at a moment: pivots
//     (full keys, pivot 0 = storage.TablePrefix(table)), shard ids and spans.
//     Immutable; Find routes a key, Overlapping prunes a span.
//   - Manager (manager.go). The current ShardMap of every table, published
//     copy-on-write; Load at startup; Change (Begin/Create/Drop/Install) for
//     DDL, which writes into the caller's batch.
//   - Statistics (stats.go). Writes collects a transaction's row and byte
//     deltas; Manager.Commit routes them to shards and merges them into the
//     transaction's batch with a Pebble merge operator (storage/counters.go);
//     splits count their new shards from a snapshot; Stats reads them.
//     SortedWrites (sorted.go) is the same for a bulk load whose keys come
//     in order (COPY's ingestion): one delta per shard, routed without
//     locks; the tables' commit locks are held from Lock (just before the
//     rows become visible) to Commit, and a split or merge that landed
//     before Lock has the caller route the keys again.
//     IntentStats (intentstats.go) is the same for a transaction whose
//     writes went to the store as intents: it keeps no Writes of them, and
//     each batch of the intents' resolution counts the keys it resolves
//     (against the committed version below), through commitWrites under
//     the tables' commit locks.
//   - Reshaping (reshape.go). Split, Merge, Reshard, Recount: one swap batch
//     of metadata, then the landing of the new shards' base counts.
//   - Cuts (cuts.go). SplitBySize and MedianSplitKey choose pivots from the
//     data: byte-weighted, shortened to the shortest separating key prefix.
//
// # Invariants
//
//   - A table's pivots strictly ascend; pivot 0 is the table prefix; every
//     other pivot is the table prefix followed by whole encoded key columns;
//     shard k holds [pivot_k, pivot_{k+1}), the last one ending at
//     storage.PrefixEnd(table prefix). So the shards cover the table's span
//     exactly, with no overlap (ShardMap.CheckInvariants).
//   - Shard ids come from one engine-wide sequence and are never reused.
//   - The persisted shard records are exactly the maps in memory once a
//     batch that changed them has committed; statistics and pending markers
//     exist only for live shards (Manager.CheckInvariants).
//   - Every shard has at most one counter, at its pivot's key; no counter
//     is at a key that is not a live shard's pivot, and none is left in
//     the old layout after Load (Manager.CheckInvariants).
//   - A shard's row_count and data_size_bytes equal the rows in its span
//     and the sum of len(key)+len(value) over them, at every committed
//     state, unless the shard is marked pending (and then only until the
//     landing batch or the Load repair). This holds as long as every batch
//     that writes rows commits through Manager.Commit with the writes
//     recorded (or through SortedWrites.Commit after an ingestion, with
//     every ingested key Put, or through an IntentStats in the batch that
//     resolves intents).
//   - No reshape moves or copies a row.
//
// # Lifecycle
//
//	Load(engine)                         startup: maps, repair of pending stats
//	EnsureTable(id) for catalog tables   adopts tables without a map
//	ch := Begin(); ch.Create/Drop(mb)    with the catalog change (mb: meta.Batch)
//	batch.Commit(); ch.Install()         (or ch.Abort())
//	Map(id) → Find / Overlapping         every statement, lock-free
//	Writes.Record*, Commit(batch, w)     every write transaction
//	BeginSorted → Put* → Lock → Commit   COPY's ingestion (sorted keys)
//	IntentStats → Resolved* → Commit     each batch of an intent resolution
//	Observe(id, fn)                      keys commits write (a rewrite's catch-up)
//	Split / Merge / Reshard / Recount    SPLIT statements, later the balancer
//	Stats(map), TableCounters(id)        sys.partitions
//
// The engine is closed by its owner after the last use; a Manager holds no
// resource of its own.
//
// # Automatic partitioning
//
// A Balancer (balancer.go) runs every interval and, per table, takes the
// first action that applies under the table's policy (the AUTO_PARTITIONING_*
// settings, read from the SQL catalog through a PolicyFunc at every tick so
// that ALTER applies without a restart): split the largest shard that reached
// the split size at its median key (exact scan for small shards, estimated by
// bisecting EstimateDiskUsage for big ones, estimate.go); split a shard whose
// load (ops/s from its read and write counters) stayed over the threshold at
// the median of its sampled keys (load.go); merge adjacent shards whose
// combined size is at most half the split size while MIN_PARTITIONS_COUNT
// allows. Fresh shards settle for a few ticks before they may merge, and
// load-split shards merge back only after a quiet period. A table above
// MAX_PARTITIONS_COUNT (lowered by ALTER) merges its smallest adjacent pair,
// one below MIN_PARTITIONS_COUNT splits its largest shard. Shards of at
// least EstimateAbove bytes split with SplitInBackground, which returns
// after the swap and counts the halves in a goroutine (Manager.bg; the
// table's op lock is held until the landing, WaitBackground waits), so the
// split's cost does not grow with the shard. A merged shard whose sstables
// hold much more than its rows is compacted (reclaim), so a table that
// shrank after a big DELETE gives its disk space back. TableStats returns
// a table's map, statistics and split/merge counters from one snapshot.
//
// # TTL runner
//
// A TTLRunner (ttl.go) runs every interval and, for each table that has a
// TTL (a TTLTablesFunc over the SQL catalog), calls an EraseFunc per shard
// of the table's current map, one shard after another. The SQL layer's
// EraseFunc deletes expired rows in bounded transactions through
// Manager.Commit, so the statistics shrink and the balancer may merge. Each
// shard keeps in memory when the runner last finished it and the rows it
// erased (Shard.TTLLastRun, Shard.TTLRowsErased; sys.partitions shows them).
//
// # Crash safety
//
// Every change is one or two Pebble batches, each atomic and (unless the
// engine runs NoSync) synced:
//
//   - DDL: catalog and shard records in the caller's one batch.
//   - A write: rows and statistics deltas in the transaction's one batch.
//   - A reshape: the swap batch (shard records, retired stats deleted, new
//     shards' stats for merges, pending markers for splits, sequence), then
//     the landing batch (base counts merged, markers deleted). A crash
//     between the two leaves markers, and Load recounts exactly those shards
//     before anything writes. Either way the maps are valid: the swap is all
//     or nothing.
//
// # Debugging
//
// ShardMap.String prints one shard a line with its id and span
// (storage.FormatKey renders the keys). Manager.CheckInvariants compares
// the persisted records with memory and reports the first difference; tests
// call it after every step. Randomized tests print their seed on failure
// (replay with -seed N); testdata/shardmap and testdata/cuts pin routing,
// pruning and pivot choice (go test -run TestDataDriven -rewrite, then read
// the diff). Stats shows Pending for shards whose base count
// has not landed. The Logger option receives repairs at Load (Info) and
// every reshape (Debug). In a data directory, the records are under
// /System/ with the keys of keys.go, the shard counters under 0x03 0x11
// followed by the shard's pivot: "db scan" of Pebble's tool on those spans
// lists them; counters decode with storage.DecodeCounters. A data
// directory of the layout before (counters as system keys by shard id) is
// moved to the new keys by Load, logged at Info.
package partition
