// Package meta is the one place PivotDB's metadata is read and written:
// everything it keeps about itself rather than about the rows of a table —
// the catalog (databases, tables, views, users, the object id sequence;
// package sql/catalog) and the shard maps (shard records, the shard id
// sequence, reshape counters and statistics records; package partition) —
// and what later issues add (sequences, the jobs registry of package jobs,
// roles and privileges, constraints), each in a namespace of its own
// (namespaces.go).
//
// Today a Store is the local Pebble engine: metadata records live under
// storage.SystemPrefix beside the data, and a metadata Batch rides on the
// storage batch of the data change it belongs with, so that a schema change
// and the data it touches (a dropped table's rows, an index backfill) commit
// atomically. Moving metadata into a replicated metadata group (issue 12)
// means replacing Store's and Batch's bodies; their callers do not change.
//
// Invariants: a Batch writes and a Store reads only keys of a registered
// namespace (Check), so no data key is written or read as metadata. Two
// uses reach the shard manager's statistics records through storage
// directly, because the records must be consistent with the rows they
// count in one storage batch or snapshot: the statistics deltas merged into
// every write transaction's batch (partition/stats.go), and the shard sizes
// that choosing split points reads from the snapshot it also counts rows in
// (partition/cuts.go). Everything else — catalog records, users, shard
// maps, the statistics sys.partitions shows, id sequences, reshape
// counters — goes through this package.
//
// The catalog's records also have a history (history.go): SetVersioned
// and DeleteVersioned write a record and its version under the table
// area's reserved table id 0, and History(ts) reads the catalog's records
// as of ts.
//
// Debugging: storage.FormatKey prints a metadata key as /System/...; every
// namespace's layout is documented where its records are encoded
// (sql/catalog/doc.go, partition/keys.go).
package meta
