// Package sql is PivotDB's SQL layer: the Engine (storage, catalog, shard
// manager, transactions) and the Sessions that run statements on it.
//
// Layers, top to bottom (imports point down only):
//
//	Session.Prepare / PrepareScript   parse (sql/parser), then bind (sql/bind):
//	                                  a bound statement is data, built against
//	                                  one catalog snapshot, with $n types inferred
//	Session.Execute → Session.run     re-bind if the catalog changed, then the
//	                                  one switch that runs bound statements:
//	                                  queries become exec iterators (sql/exec
//	                                  over planner nodes), writes go through
//	                                  the row writer into a txn.Txn, schema
//	                                  changes through ddl
//	Result                            rows streamed to the wire layer, then a
//	                                  command tag
//
// Beside them: sql/sessionvars (settings), sql/pgcatalog (pg_catalog,
// information_schema and the functions that read them), and the Engine's
// background work (balancer.go, ttl_runner.go, keyfilter.go). Each kind
// of statement runs in the file named after it: ddl.go, altertable.go,
// write.go (with foreignkey.go for foreign keys and their actions,
// onconflict.go for INSERT ... ON CONFLICT, and insertbatch.go: a
// multi-row INSERT reads the keys of each chunk of rows as one sorted
// batch under their locks before writing the rows in order, and each
// write takes its row's key, lock and value from that batch; RETURNING
// rows are collected while the transaction writes and sent after it;
// a single-row VALUES of constants and parameters, the commonest source,
// is evaluated without building an executor: exec.OneValuesRow),
// truncate.go, vacuum.go
// (VACUUM: GC of old versions and compaction of a table's spans; ANALYZE:
// a recount of its shard statistics),
// indexmaint.go, sequence_ddl.go, explain.go, partitions.go, users.go,
// grants.go, session_statements.go, cursor.go (DECLARE/FETCH/MOVE/CLOSE:
// a cursor holds its query's iterator across statements, under a context
// of its own; the block's end closes or materializes it), createas.go
// (CREATE TABLE AS, SELECT INTO), temptables.go (temporary tables:
// session-private, their ON COMMIT actions, dropped at session end and at
// startup), with_dml.go (WITH x AS (INSERT ... RETURNING ...) main: the
// WITH queries run first, once, in the statement's transaction; a main
// SELECT reads the tables as of the statement's start), copy.go (COPY FROM
// STDIN / TO STDOUT: the server drives the Result through CopyOf; formats
// in sql/pgcopy; FROM writes through rowWriter in a block, else through
// the bulk path of copybulk.go: sorted runs, merged with the duplicate and
// unique checks under a span lock, ingested as sstables; copyfast.go
// holds its per-row shortcuts: integer and text fields parsed from the
// bytes, no cast call for values of the column's type, one reused row). Sequences (sequences.go) keep where they stand in the
// metadata store, outside transactions: a range of values is recorded
// there before any value of it is handed out. A transaction block that
// changes a sequence (ALTER SEQUENCE, TRUNCATE ... RESTART IDENTITY)
// keeps its new position pending and holds the sequence until it ends
// (sequence_txn.go); other sessions' nextval waits for it.
//
// Privileges (sql/acl, catalog.Access): queries and writes are checked
// while they are bound (sql/bind/privileges.go), so a GRANT or REVOKE, which
// changes the catalog, makes every prepared statement be checked again;
// schema changes, GRANT and role statements check ownership and attributes
// when they run (privileges.go, grants.go, users.go), against the catalog
// change they make. Logins (LOGIN, CONNECT) are checked by NewSession.
//
// Transactions. A session is outside a block, in an implicit transaction
// (the protocol cycle bracketed by BeginImplicit/Sync: a simple-query string
// or an extended-protocol pipeline commits at Sync), or in an explicit block
// (BEGIN ... COMMIT). Writes take per-key locks (sql/txn) and commit in one
// Pebble batch through the shard manager, which adds the per-shard statistics
// deltas to the same batch. Outside a block the transaction is one-phase
// (beginTxn: its locks stay in memory, since its one batch cannot be left
// half done); BEGIN makes its locks lock records (blockTxn). Any error in a block fails it (25P02 until it
// ends). A simple-query string of several statements is PostgreSQL's
// implicit transaction block (Session.SetScript, inTxnBlock): its schema
// changes are the transaction's as in a block, and what cannot run in a
// block is refused. Outside a block schema changes commit on their own (ddl.go:
// catalog records and shard maps through the metadata store, package
// meta, in one batch with the data they drop or backfill); inside one they
// are the transaction's (txnddl.go: a pending catalog change committed in
// the transaction's batch, creations made invisibly at once, drops after
// the commit, orphans dropped at startup; design in sql/catalog/doc.go).
// Rows a schema change writes in a block go into the transaction's batch:
// index backfills (fillIndex) and a rewrite's new table (alterRewrite:
// in a block one pass under the schema gate converts the rows read
// through the transaction and puts them into it; outside a block phase 1
// converts a snapshot while writers go on and phase 2 converts again only
// the keys commits wrote since, which partition.Manager.Observe reports:
// altertrack.go), so they commit, roll back and roll back to a savepoint
// with it. What cannot be transactional is refused by txnBlockDDL (0A000
// naming it, with the reason in the DETAIL).
// Every schema change holds the schema-change lock (a key of the
// transaction lock table), a block until it ends. A statement takes its
// read timestamp before binding, and binds against the catalog as of it
// (catalog.Catalog.At; Session.catalogSnap is what a statement sees).
// A transaction's characteristics (isolation level, READ ONLY, DEFERRABLE)
// are the session's transaction_* settings (session_txnmode.go):
// Session.txnMode is the one value the transaction core reads; run refuses
// writes in a read-only transaction (25006) before any statement runs, and
// marks the transaction's first query, after which the level is fixed
// (25001). At REPEATABLE READ and SERIALIZABLE an implicit transaction
// begins at the cycle's first query, not its first write, so that the
// whole cycle reads one snapshot and SERIALIZABLE records every read
// (session_retry.go, beginReadingCycle). At READ COMMITTED a statement
// that began its transaction and fails with 40001 (a concurrent schema
// change, an ON CONFLICT row that kept vanishing) is run again before its
// result is returned, and Sync runs a cycle's lone such statement again
// when its commit meets a schema change, if the tag comes out the same
// (session_retry.go; debug with the conflict's message, which names the
// cause).
//
// Row-locking reads (SELECT ... FOR UPDATE, bind.Select.Locking)
// run in selectlock.go: a planner.LockRows node below the query's LIMIT
// locks the rows of the locked tables, whose key columns the plan carries
// up to it as hidden columns, in the transaction's lock table at the
// clause's strength; a locked row changed after the snapshot runs a READ
// COMMITTED statement again on a new snapshot (its rows are collected
// first) and fails a REPEATABLE READ one with 40001. An UPDATE or DELETE
// locks each row at PostgreSQL's strength (FOR NO KEY UPDATE when no key
// or unique column changes); it collects the matching keys before it
// writes, up to modifyKeysLimit (64k), and past that streams them from a
// read view of the statement's start (write.go, streamKeys), so its memory
// does not grow with the rows it changes. A COPY inside a block, and a
// block's INSERT of more than one row (INSERT ... SELECT), take their
// rows' locks as write holds (sql/txn's writeholds.go). AS OF SYSTEM TIME (session_asof.go) sets the
// statement's or the block's snapshot to its time; a statement binds
// against the catalog of its time when the catalog knows it exactly
// (asOfCatalog), else against today's with a historical storage.View that
// refuses tables changed since; sessions hold their read timestamps against GC until the
// statement or transaction ends; TTL is judged at the snapshot's time
// (expr.Context.ReadTime). GC's per-shard policy (GC_TTL) is gc.go's.
// Follower reads (follower.go): the stale read-only mode (stale_read_only)
// takes every snapshot at follower_read_timestamp() (staleSnapshot) and
// makes the session read-only; OpenFollower opens a read-only engine over
// a cluster node's replica that writes nothing (the storage engine refuses
// commits) and makes every read wait for the replica's closed timestamp
// (waitReadable, 55000 past FollowerReads.Wait); a statement without AS OF
// falls back to the closed timestamp while it is within the session's
// follower_read_max_staleness (its default FollowerReads.MaxStaleness,
// serve's --follower-read-max-staleness); SET, SHOW and RESET take their
// snapshot at the closed timestamp, so a session past its bound can change
// it (Session.settingOnly). On an engine that serves, FollowerReads.LocalClosed
// (the node's replicas' closed timestamp) lets a read AS OF SYSTEM TIME at
// or below it skip the read gate (a cluster node's read lease): such a
// statement, or BEGIN ... AS OF SYSTEM TIME, outside a transaction binds
// at the closed timestamp (closedBindSnapshot) and waits only for the
// commits in flight (storage.Engine.WaitClosed), so follower_read_timestamp()
// reads answer while the serving node has lost its quorum; every other
// read still waits for the lease (57P01). Debug a follower read by
// comparing the read's timestamp in the 55000 error with the replica's
// closed timestamp (the higher of shardsm.StateResult.Closed and the
// side channel's, cluster/shardrepl's closedside.go).
// A schema change that drops a table or index (DROP, TRUNCATE, rewrites)
// drops its shard map but keeps its rows for reads AS OF SYSTEM TIME
// before it, under a SCHEMA CHANGE GC job written in the change's batch
// that removes them once GC_TTL has passed (dropgc.go; resumed at Open).
//
// Table locks (tablelocks.go): Execute takes each statement's table locks
// after binding and before its snapshot — the binder reports the tables a
// statement reads and writes (bind.Env.UseTable), DDL's targets are found
// by name, LOCK TABLE names its own — and binds again when the catalog
// changed while it waited. They are held by the transaction (txn ID) or,
// outside one, by the statement, and released at the transaction's end
// (endTransaction), at ROLLBACK TO SAVEPOINT (back to the savepoint's
// mark) and, for DDL outside a block, at its statement's end (inside one
// they last to its end, ACCESS EXCLUSIVE weakened to EXCLUSIVE so that
// plain reads go on: txn.TableLocks.Weaken). ALTER TABLE, the index
// changes, DROP TABLE and TRUNCATE take SHARE before their own mode (a new
// foreign key on the table it references), which waits for the implicit
// ROW EXCLUSIVE of the transactions that wrote the table (relLock.writers),
// so those commit instead of failing with 40001 (a rewrite gives it back
// at once, relLock.barrier, and converts under SHARE UPDATE EXCLUSIVE,
// taking ACCESS EXCLUSIVE only for its swap: writes go on while it
// converts); a write that took its
// lock without waiting binds again when its table's committed definition
// moved past the one it was bound to (writtenTableChanged). An autocommit
// write of a table a block is changing waits for the block (waitHold) in
// the wait-for graph too (txn.Manager.WaitFor: pg_locks shows it awaiting
// the schema-change lock), so a cycle through it is a 40P01, not a hang.
// COPY FREEZE's rule
// (copyfreeze.go) reads the tables the transaction created or truncated.
//
// Limits: statement_timeout (a context deadline per statement, 57014),
// Options.MaxQueryMemory (exec.Context.MemLimit: rows held by sorts,
// grouping, DISTINCT and INSERT sources, 53200); the memory budget
// (sql/memory): the account a statement's context carries, which the
// binder's expression builder (IN lists, long constants) and the executor
// (the same rows MemLimit counts) reserve in, opened and closed by the
// server;
// idle_in_transaction_session_timeout is enforced by the server, which sees
// the client idle.
//
// Dialect: the sql_dialect setting (yql | postgresql) decides how text
// parses ("..."), so a Prepared remembers the dialect it was parsed in
// and Execute parses it again under another; the binder reads it for
// division by zero (expr.Builder.StrictDivision) and the default place of
// NULLs in ORDER BY (planner.NullsDefault). Settings stored by ALTER
// DATABASE/ROLE ... SET (rolesettings.go, catalog.RoleSetting) become a
// new session's defaults (newSession); the startup packet's settings
// override them (SetStartupParameter). TimeZone reaches expressions as
// expr.Context.Zone, and timestamptz values leave in it (sessionResult).
//
// Seeing what runs: the server gives each session its entry in the
// registry of live sessions (activity.go, package activity), which
// pg_stat_activity and the signalling functions read; table_activity.go
// counts scans, rows read and row writes per table for pg_stat_user_tables;
// stats.go sums shards, splits, merges, TTL erasures and rows read for
// metrics and the console. Long statements run as jobs (jobs.go, package
// jobs: sys.jobs, SHOW JOBS, CANCEL JOB): runJob registers the job, and the
// loops deep in the statement (fillIndex, the rewrite's conversion,
// validation scans) report progress through the jobWork on the context.
// On a cluster node (Options.Cluster, cluster.go) sys.nodes lists the
// nodes and ALTER CLUSTER DECOMMISSION NODE runs as a DECOMMISSION job
// (the serving node's own returns once it handed serving over, with a
// NOTICE); ALTER CLUSTER RECOMMISSION NODE is a plain statement; the
// cluster's replica and leadership moves are jobs of the same registry
// (AttachJobs).
//
// Debugging: EXPLAIN shows the plan with each table read's key ranges and the
// shards they touch (for a read through an index, the index and its ranges);
// EXPLAIN ANALYZE runs the statement and adds each operator's rows, loops and
// time and each read's rows per shard (explain.go, sql/exec/analyze.go);
// sys.partitions shows every shard's counters, index shards as
// "table/index", and on a cluster the shard group holding the shard with
// its leader's and replicas' nodes (shardgroups.go: Options.Cluster as a
// ShardGroupLister; ShardBoundaries is what the serving node splits its
// groups at). Tests call checkIndexes (index_test.go), which compares
// every index with the entries its table's rows give.
package sql
