// Package meta is the one place PivotDB's metadata is read and written:
// everything it keeps about itself rather than about the rows of a table —
// the catalog (databases, tables, views, users, the object id sequence;
// package sql/catalog) and the shard maps (shard records, the shard id
// sequence, reshape counters and statistics records; package partition) —
// and what later issues add (sequences, jobs, roles and privileges,
// constraints), each in a namespace of its own (namespaces.go).
//
// Today a Store is the local Pebble engine: metadata records live under
// storage.SystemPrefix beside the data, and a metadata Batch rides on the
// storage batch of the data change it belongs with, so that a schema change
// and the data it touches (a dropped table's rows, an index backfill) commit
// atomically. Moving metadata into a replicated metadata group (issue 12)
// means replacing Store's and Batch's bodies; their callers do not change.
//
// Invariants: a Batch writes and a Store reads only keys of a registered
// namespace (Check), so no metadata write bypasses this package through a
// metadata Batch and no data key is written as metadata. The statistics
// deltas of ordinary transactions are the one exception on the write side:
// they are merged into the data batch of every commit (partition/stats.go),
// because they count the rows that batch writes.
//
// Debugging: storage.FormatKey prints a metadata key as /System/...; every
// namespace's layout is documented where its records are encoded
// (sql/catalog/doc.go, partition/keys.go).
package meta
