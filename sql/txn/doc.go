// Package txn provides transactions over the storage engine: a write buffer
// (an indexed Pebble batch, so a transaction reads its own writes), and
// per-key locks held until commit or rollback.
//
// Locks live in the data (issue 16 item 9, locks.go, rowlock.go): every
// key lock is a lock record in the store (storage/mvcc.AcquireLock, key
// 0x03 0x01 <key> <strength> <txn id>), written under the key's latch by
// an unsynced commit of its own, one record per strength taken (a
// strengthening adds a record; ROLLBACK TO SAVEPOINT deletes the ones
// written after the savepoint). Commit deletes the records in its own
// batch (no extra fsync); Rollback in an unsynced one. A transaction gets
// an mvcc identity (Txn.meta: random id, anchored at its first locked key)
// and registers in the lock table (lockOwner) at its first lock; the
// in-memory LockTable keeps only what is not data: the latches, the
// registry of live owners, the waiters with their wait-for graph, and span
// locks. A record whose transaction is not registered is an orphan (its
// process died, or its release failed): the first transaction that meets
// it deletes it, and Manager.Recover deletes them all at startup. Txn.held
// caches the strength a transaction holds per key, so a key locked again
// costs no store access. A transaction that locks has a transaction record
// (PENDING, at its first locked key, written with its first lock record);
// it ends by settling (settle.go): one resolveShard call per shard that
// holds its records, then the record's deletion — on one node all in one
// batch, the commit's (Recover also removes the records of dead
// transactions). Owners delete their own records with SingleDelete, so
// compactions drop the pairs.
//
// Writes as intents (intents.go, storage/intents.go; item 9, step 2): a
// block's writes stay in its batch up to IntentFlushBytes (4 MB; the
// one-batch commit is the cheapest for small transactions); past it, the
// row writes move to the store as intents — versions at wall time
// MaxInt64 and the transaction's sequence number, above every read, shown
// only to the transaction's own reads (the batch, its read views below
// their number) — and the batch starts empty again. An intent is its key's
// exclusive lock, so the flush also drops the lock records of the keys it
// wrote (not while a savepoint is open); the record lists the spans that
// hold intents. Commit: the record turns COMMITTED with the commit
// timestamp in the synced commit batch (the commit point), then the
// intents are resolved into versions in unsynced chunks while the commit
// is in flight (reads at or above it wait), and the lock records and the
// record go with the last chunk. The shard statistics of such a block are
// not kept per write (its Writes is reset at each flush): each resolution
// chunk counts the keys it resolves against the committed version below
// (partition.IntentStats), recovery's too, so the block's memory does not
// grow with the rows it writes. With savepoints open, a flush still drops
// the records of the keys locked after the newest one (a rollback to any
// open savepoint gives back those locks and removes those intents
// together). Write holds (writeholds.go, SetWriteHolds; COPY's block
// path and a block's multi-row INSERT, INSERT ... SELECT included): a
// write's lock on a new key is a memory hold in the latch shard
// until the next flush makes it the key's intent (or a record), instead
// of a lock record written and deleted per row. Rollback removes the intents; ROLLBACK TO
// SAVEPOINT those with a sequence number at or above the savepoint's.
// Manager.Recover finishes the intents of a COMMITTED record and removes
// those of a PENDING one. To debug: PIVOTDB_INTENT_FLUSH_BYTES=0 runs
// every block through intents (go test ./sql and ./tests pass so, except
// the tests that count lock records); pg_locks lists intent-held keys.
//
// One-phase transactions (memlocks.go; CockroachDB's 1PC): a transaction
// outside a block (an autocommit statement, one protocol cycle, the TTL
// runner's batch; SetOnePhase) commits all of its writes in one batch, so
// a crash leaves nothing of it half done, and its locks are holds in
// memory in the key's latch shard instead of records: no lock record, no
// transaction record, no store write before the commit. Both kinds meet
// under the key's latch (a record writer looks at the memory holds first;
// a one-phase locker looks at the memory holds, then, while live
// transactions hold records on keys of the latch shard (latchShard.records),
// at the store with mvcc.CheckLock), and waiters of either kind share the wait-for graph and
// pg_locks. BEGIN after a write in one protocol cycle turns the holds into
// records (KeepLocksInStore). To debug: pg_locks lists both kinds;
// mvcc.ScanLocks shows only records.
//
// Lock strengths: each key lock is held in one of PostgreSQL's four row
// lock strengths (storage/mvcc.Strength; its Conflicts is PostgreSQL's
// conflict table): Lock takes FOR UPDATE, which every write path takes on
// the keys it writes or checks; LockStrength any strength (an UPDATE that
// keeps its row's key and unique columns takes FOR NO KEY UPDATE, a
// locking read its clause's); TryLockStrength never waits (NOWAIT, SKIP
// LOCKED). Several transactions may hold a key in strengths that do not
// conflict; a transaction's own holds never conflict, and a stronger
// request strengthens its hold. Txn.keys records each hold taken or
// strengthened with the strength held before, so ROLLBACK TO SAVEPOINT
// gives back exactly what was taken after the savepoint (newest first).
// ChangedSince tells a locking read whether the row it locked has a version
// committed after its snapshot.
//
// Isolation is READ COMMITTED with write locks: a statement reads the
// committed data of its snapshot (storage.Engine.ReadTimestamp, taken by the
// session when the statement starts and set with SetReadTimestamp) plus its
// own transaction's writes, on every shard and index alike (Reader); once it
// holds a row's lock it re-reads the row's newest version (Get,
// LatestReader) and re-checks it, as PostgreSQL does; every key a transaction
// writes (or checks for existence before an INSERT) is locked first, so two
// transactions never both insert the same key and a read-modify-write of a
// row (UPSERT of some columns, UPDATE) sees the row as the last committer
// left it. Readers never wait.
//
// REPEATABLE READ (SetIsolation) keeps the snapshot of the transaction's
// first statement (StartStatement) for all of them, and Get, the locked
// re-read every write path makes, fails with 40001 when the key has a
// version committed after that snapshot (storage.Batch.LatestVersion):
// PostgreSQL's first-updater-wins, which the row locks make exact — the
// second writer waits for the first and then sees its version.
//
// SERIALIZABLE (readspans.go) is REPEATABLE READ plus CockroachDB's read
// refresh: every read of the transaction is recorded as a key or a span
// (through Reader, LatestReader, Get, NewReadView and CleanView; coalesced,
// condensed past maxReadSpanBytes), and its commit checks, atomically with
// respect to every commit below its commit timestamp
// (storage.Batch.SetCommitCheck: the store plus the keys of the commits
// below still in flight, which record them while a SERIALIZABLE
// transaction is open, storage.Engine.Refreshing), that no version landed
// in those spans between its read timestamp and its commit timestamp:
// 40001 "could not serialize access due to read/write dependencies among
// transactions" otherwise. A transaction with nothing to commit is serialized at its
// read timestamp and never fails. To debug a refresh failure, the error's
// detail names the key; Txn.ReadSpans lists what a transaction recorded.
//
// Lock waits form a wait-for graph; a wait that would close a cycle fails at
// once with 40P01 (deadlock detected) rather than hanging, and waits honour
// the statement's context (cancel, statement_timeout) and lock_timeout
// (WithLockTimeout, 55P03). A waiter meets one conflicting record at a time
// (mvcc's LockConflictError names its transaction), waits for that holder
// (its one edge in the graph) on the holder's channel, which closes whenever
// the holder deletes records (ROLLBACK TO, its end), and then tries again,
// so a cycle through any holder is found at the latest when it waits for
// that one. To debug a wait: pg_locks lists the records of live owners (one
// row per key and transaction, at its strongest) and the waiters;
// mvcc.ScanLocks lists every record in the store, orphans included.
// TryLock takes a lock
// only if it is free and never waits (the TTL runner's background deletes).
// Manager.WaitFor puts a wait for something else in the graph (waitfor.go:
// an autocommit write waiting for the transaction block that changes its
// table's schema, sql/txnddl.go), under a key of the caller's choosing.
//
// Seeing locks: each lock records its transaction's session (Txn.SetPID),
// and a waiting transaction is listed with the lock it waits for, so
// Manager.Locks gives pg_locks its rows; a wait also marks the session's
// activity.Backend (from the statement's context) as waiting on Lock.
//
// Table locks (tablelocks.go, TableLocks) are separate from the key
// locks: PostgreSQL's eight relation lock modes with its conflict table,
// held by an owner (a transaction ID, or Manager.NewOwner for a statement
// outside one) until Release or ReleaseTo (a savepoint's mark); Weaken
// lowers an owner's later explicit locks in place (a block's schema change
// keeps EXCLUSIVE for its ACCESS EXCLUSIVE, tablelocks_keep.go). Waiters
// queue first come, first served, and wait through the key locks' wait
// (LockTable.wait) on a channel that closes whenever the table's locks
// change, so they share its wait-for graph, lock_timeout and activity
// marking; before each wait every conflicting holder is checked for a
// cycle, since the graph keeps one edge per waiter, and a waiter looks
// again every deadlockRecheck (100 ms) for a cycle closed later through a
// holder its edge does not name (lock_timeout runs from its first wait). A request marked DDL
// ignores the holders' implicit (read/write) locks (see LockRequest). The
// table lock waiters also sit in the key locks' waiting list under a key
// no table has (relKey); pg_locks lists them as relation locks
// (RelFromKey), not as key waits.
// Every statement locks its tables and releases them at its end, so the
// state of a table nobody locks any more and an owner's emptied list of
// grants are kept for reuse (spareRels, spareHeld), as are released
// owners' grants on a table (spareGrants), and the channel is replaced
// only when someone waits on it: a statement's ACCESS SHARE allocates
// nothing once a grant was released (BenchmarkTableLockStatement; it was
// eight, then one).
//
// Commit writes the batch with one synced Pebble commit: all of a
// transaction's writes, across every table and shard, become visible and
// durable together or not at all, as versions at one commit timestamp, so
// a snapshot sees all of them or none.
//
// Schema changes: writers record each table's schema version (UseSchema)
// and the manager's schema check fails a commit whose tables changed; a
// transaction that changes a table's schema itself (transactional DDL)
// takes it out of that check with OwnSchema after checking it once.
//
// Bulk loads (COPY's bulk path, sql/copybulk.go) write outside the batch:
// Txn.LockSpan makes a transaction the only writer of a key span (it waits
// for the holders of key locks inside it; other transactions' Lock of a
// key inside waits meanwhile and TryLock fails; waits on spans take part
// in deadlock detection), and Txn.CommitWith runs the ingestion under the
// commit gate after the schema check, like a commit.
package txn
