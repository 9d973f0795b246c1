// Package catalog holds PivotDB's schema descriptors — databases, tables,
// columns and their settings, views, users — and persists them as JSON
// records in the metadata store (package meta, namespace meta.Catalog),
// whose batches ride on the data batch of a schema change, so that the
// change and the data it affects commit atomically.
//
// Layout of catalog records (see storage/keys.go for the prefixes):
//
//	<SystemPrefix> "cat/seq"            next object id (decimal text)
//	<SystemPrefix> "cat/db/"  <id BE8>  Database JSON
//	<SystemPrefix> "cat/tbl/" <id BE8>  Table JSON
//	<SystemPrefix> "cat/user/" <name>   User JSON (name, SCRAM verifier,
//	                                    attributes, memberships)
//	<SystemPrefix> "cat/seqdesc/" <id BE8>  Sequence JSON (options; where
//	                                    it stands is in meta.Sequence)
//	<SystemPrefix> "cat/view/" <id BE8> View JSON (definition text, and
//	                                    the sql_dialect it is written in)
//	<SystemPrefix> "cat/enum/" <id BE8> EnumType JSON (CREATE TYPE ... AS
//	                                    ENUM: name, labels with their sort
//	                                    positions; enum.go). Columns of the
//	                                    type hold a copy of the definition
//	                                    in their types.Type, which ALTER
//	                                    TYPE rewrites in the same change.
//	<SystemPrefix> "cat/func/" <id BE8> Function JSON (CREATE FUNCTION ...
//	                                    LANGUAGE sql: signature, body text
//	                                    and its dialect; function.go)
//	<SystemPrefix> "cat/dbrolesetting/" <db id BE8> <role>
//	                                    RoleSetting JSON: ALTER DATABASE/
//	                                    ROLE ... SET (db 0: every database,
//	                                    role "": every role)
//	<SystemPrefix> "cat/history-start"  when the history below starts
//	                                    (12-byte HLC timestamp; history.go)
//	<TablePrefix(0)> <any record key above but "cat/seq">
//	                                    the record's versions at the commit
//	                                    timestamps of the changes that wrote
//	                                    it (a delete is a tombstone)
//
// Databases, tables and views carry their owner and ACL (Owned); Access
// answers what a role may do with them.
//
// The in-memory Catalog is a copy-on-write snapshot: readers take a
// *Snapshot (no locking on the statement path) and schema changes build a
// new Snapshot which is installed only once its batch committed. Names of
// databases, tables and columns compare case-insensitively (as unquoted
// identifiers do in PostgreSQL) and keep the spelling they were created with;
// user names are case-sensitive, as PostgreSQL's role names are.
//
// # Versions: the schema as of a snapshot
//
// Rows are versions at HLC commit timestamps (storage/mvcc); the catalog
// is versioned the same way. Every record a change writes is also written
// as a version in the catalog's history (history.go, meta/history.go: the
// table area's reserved table id 0), in the same batch, so it gets the
// batch's commit timestamp, is replicated with it on a cluster, and is
// collected by GC like rows (with the longest retention window of any
// table, sql/gc.go). The bare records stay the newest version, which Load
// reads.
//
// In memory (versions.go), every installed snapshot is a generation
// tagged with the commit timestamp of the change that made it, and it is
// installed from the batch's OnCommitted hook: after the batch is written
// but before the commit stops being in flight, so no statement can take a
// read timestamp at or above the change's before the catalog is there. A
// statement takes its read timestamp first and then binds against At(ts):
// the newest generation at or below it, or, for a ts before the
// generations kept (a long transaction, maxGenerations changes ago, a time
// before the server's start: SetHistoryStart), the history on disk at ts
// (a few such snapshots are cached). It sees a schema change's catalog and
// its rows together or neither (a CREATE TABLE with its INSERTs, a
// TRUNCATE with the rows written after it). A REPEATABLE READ transaction
// binds every statement against the catalog of its one snapshot, so a
// table created or renamed after it began is not seen until it ends
// (PostgreSQL shows the newest catalog there; issue 16 asks for the
// snapshot's). At reports a ts inexact only when the history does not
// reach it: before the history's start on a data directory written before
// it existed (its first open writes the records of then as versions and
// records their timestamp under "cat/history-start"), or below its GC
// threshold. A SELECT ... AS OF SYSTEM TIME, and every statement of a
// block AS OF SYSTEM TIME, binds against At(its time) when that is exact,
// and falls back to today's catalog with the storage schema times'
// refusals when not (sql/session_asof.go).
//
// Debugging: storage.FormatKey prints a history key as a row of table 0;
// the key after the table prefix is the catalog record's.
//
// # Transactional DDL
//
// Inside a transaction block a schema change does not install anything.
// The session keeps a Pending change (pending.go): a copy of the committed
// snapshot with the transaction's changes applied, and the records they
// wrote. The transaction's statements bind against its Snapshot; nobody
// else sees it. Each statement edits a Fork, which replaces the pending
// change only if the statement succeeds; a SAVEPOINT remembers the
// pending change and ROLLBACK TO restores it. COMMIT adds the records to
// the transaction's batch, which commits them with its rows in one
// batch, and Apply installs the change on top of the current snapshot
// from that batch's OnCommitted hook (rebase: objects the transaction
// added, replaced or removed relative to its base; background changes
// made since — temporary tables dropped at another session's end — are
// kept). ROLLBACK drops the pending change.
//
// Ordering (sql/txnddl.go). Every schema change, autocommit or in a
// block, holds one lock in the transaction lock table (ddlLockKey): an
// autocommit one while it runs, one in a block until the block ends —
// PostgreSQL's ACCESS EXCLUSIVE, but for the whole catalog rather than
// per table, so at most one transaction has uncommitted schema changes
// and two never create the same name. Waits for it are deadlock-checked
// and honour lock_timeout and statement_timeout. Object ids come from the
// catalog's counter (not a snapshot's), so a pending change and a
// background change never allocate the same id; the counter is persisted
// at once. The tables a pending change alters, drops or truncates are
// held (registered under the transaction manager's schema gate, so no
// commit is in flight then): until the transaction ends, an autocommit
// write of one of them waits for it (as PostgreSQL's ACCESS EXCLUSIVE
// lock makes it; the wait is in the lock table's wait-for graph, as it
// may hold table locks the holder's next schema change waits for) and
// then binds again; a transaction that wrote one fails at commit with
// 40001 rather than store a row checked against the definition being
// replaced (it may hold locks the holder waits for, so it does not wait).
// The holding transaction's own writes are checked once, when it takes
// the table (txn.Txn.OwnSchema), against the committed definition.
// Readers of other sessions never wait: they read the committed catalog
// and rows.
//
// Physical effects. Creations happen at once but invisibly: the shard
// maps of new tables and indexes, the records of new sequences and the id
// counter commit in a batch of the statement's own, and no committed
// descriptor names them. Index backfills and the row scans of validations
// (SET NOT NULL, CHECK, FOREIGN KEY) read through the transaction (its
// own rows included) and write index entries into its batch; a rewrite
// (ALTER COLUMN TYPE, ADD PRIMARY KEY) writes its new table's rows and
// entries there too, under the new table's ids, and REINDEX its new
// index's entries. Drops —
// DROP TABLE/INDEX/SEQUENCE's shard maps, TRUNCATE's old ones —
// wait for the commit and run after it; the rows of the tables and
// indexes a committed change dropped stay for AS OF SYSTEM TIME reads
// until the SCHEMA CHANGE GC job written with the commit removes them
// (sql/dropgc.go). At the transaction's end, the
// creations its committed catalog does not name (all of them after a
// rollback) are dropped. A kill -9 before the commit therefore leaves
// only unnamed creations, and one between the commit and its drops leaves
// unnamed data; the engine drops both at startup (sql.Engine.dropOrphans:
// shard maps and sequence records with no descriptor).
//
// ALTER SEQUENCE and TRUNCATE ... RESTART IDENTITY in a block keep the
// sequence's new position pending in the block and write it with the
// catalog at COMMIT, holding the sequence meanwhile (sql/sequence_txn.go).
// Not transactional yet, refused in a block with 0A000 "... cannot run
// inside a transaction block yet" (before anything runs): RESHARD and
// SPLIT (shard maps change in place, unversioned).
// CREATE/DROP DATABASE get PostgreSQL's 25001.
//
// A simple Query string holding several statements is an implicit block
// (sql.Session.SetScript): its schema changes commit or roll back with the
// string, as in PostgreSQL. A lone schema change outside any block commits
// on its own when it runs.
//
// Debugging: pg_locks shows the schema-change lock as a tuple lock with
// no relation; a transaction stuck on it is waiting for a transaction
// block with schema changes to end.
package catalog
