package txn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Manager creates transactions on one storage engine.
type Manager struct {
	eng    *storage.Engine
	shards *partition.Manager
	locks  *LockTable
	tables *TableLocks // table locks (tablelocks.go)
	nextID atomic.Uint64
	// gate orders commits against schema changes that must see every
	// committed write of a table, such as the backfill of CREATE INDEX:
	// commits hold it shared, such a change exclusively (LockSchema).
	gate sync.RWMutex
	// schemaCheck validates, under the shared gate, the schema versions a
	// transaction wrote with (UseSchema); nil: no check.
	schemaCheck func(versions map[uint64]string) error
}

// SetSchemaCheck installs the check Commit runs on the schema versions a
// transaction recorded with UseSchema, under the gate, right before the
// batch commits. An error fails the commit.
func (m *Manager) SetSchemaCheck(fn func(versions map[uint64]string) error) { m.schemaCheck = fn }

// LockSchema waits for the commits in flight and holds every later commit
// until the returned function is called.
func (m *Manager) LockSchema() (unlock func()) {
	m.gate.Lock()
	return m.gate.Unlock
}

// NewManager returns a transaction manager for eng. Commits go through the
// shard manager, which adds each shard's statistics deltas to the commit.
func NewManager(eng *storage.Engine, shards *partition.Manager) *Manager {
	lt := NewLockTable(eng)
	m := &Manager{eng: eng, shards: shards, locks: lt, tables: newTableLocks(lt)}
	lt.intentStats = m.intentStats
	return m
}

// Engine returns the storage engine.
func (m *Manager) Engine() *storage.Engine { return m.eng }

// Txn is an open transaction. It is used by one goroutine at a time.
type Txn struct {
	m     *Manager
	id    uint64
	batch *storage.Batch
	// keys are the lock records written, in order (heldKey); held is the
	// strength held per key; owner registers the transaction in the lock
	// table from its first lock on, under the mvcc identity meta
	// (rowlock.go).
	keys  []heldKey
	held  map[string]mvcc.Strength
	owner *lockOwner
	meta  mvcc.TxnMeta
	// recorded: the transaction's record is in the store (settle.go).
	recorded bool
	// intentLocks counts, per latch shard, the keys whose lock records
	// were dropped for the intents that hold them (intents.go).
	intentLocks *[lockShards]int
	// flushFloor is the batch's size after the last flush (intents.go).
	flushFloor int
	// onePhase: the locks are held in memory, not as records
	// (memlocks.go, SetOnePhase).
	onePhase bool
	// writeHolds: a write's lock is a memory hold until the next flush
	// (writeholds.go); memDrop lists the holds a flush turned into data,
	// to drop from memory once it has landed.
	writeHolds bool
	memDrop    []string
	// writes records every row write for the per-shard statistics.
	writes partition.Writes
	done   bool
	// pid is the server process ID of the session that runs the
	// transaction (SetPID), shown with its locks in pg_locks; 0: none.
	pid uint32
	// schema is the schema version of each table written (UseSchema);
	// ownSchema holds the tables whose schema the transaction changes
	// itself (OwnSchema), which are not recorded.
	schema    map[uint64]string
	ownSchema map[uint64]bool
	// isolation is the transaction's level; started is set by its first
	// statement that reads (StartStatement), which fixes a REPEATABLE READ
	// transaction's snapshot.
	isolation Isolation
	started   bool
	// reads are the spans a SERIALIZABLE transaction read (readspans.go);
	// refreshDone ends its registration as one that may refresh.
	reads       readSpans
	refreshDone func()
	// savepoints are the open savepoints, oldest first; retired holds
	// batches replaced by ROLLBACK TO SAVEPOINT, which readers made
	// earlier (cursors) may still use until the transaction ends.
	savepoints []savepoint
	retired    []*storage.Batch
	// spanUnlocks release the span locks taken (LockSpan).
	spanUnlocks []func()
}

// savepoint is the state of the transaction when a SAVEPOINT ran: a copy
// of its writes, and how many locks and statistics records it had.
type savepoint struct {
	name   string
	batch  *storage.Batch
	keys   int
	writes partition.WritesMark
}

// Savepoint records the transaction's state under name (SAVEPOINT name);
// a name may be used again, and then the newest one counts.
func (t *Txn) Savepoint(name string) error {
	cp, err := t.m.eng.NewBatchCopy(t.batch)
	if err != nil {
		return err
	}
	t.savepoints = append(t.savepoints, savepoint{name: name, batch: cp, keys: len(t.keys), writes: t.writes.Mark()})
	return nil
}

// findSavepoint returns the index of the newest savepoint called name.
func (t *Txn) findSavepoint(name string) (int, error) {
	for i := len(t.savepoints) - 1; i >= 0; i-- {
		if t.savepoints[i].name == name {
			return i, nil
		}
	}
	return 0, sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint \"%s\" does not exist", name)
}

// RollbackToSavepoint undoes every write made and releases every lock
// taken since the savepoint name, which stays (ROLLBACK TO SAVEPOINT);
// the savepoints made after it are gone.
func (t *Txn) RollbackToSavepoint(name string) error {
	i, err := t.findSavepoint(name)
	if err != nil {
		return err
	}
	sp := t.savepoints[i]
	// The intents flushed since the savepoint go too (intents.go).
	nb, err := t.m.eng.RollbackTo(t.batch, sp.batch)
	if err != nil {
		return err
	}
	t.retired = append(t.retired, t.batch)
	t.batch = nb
	t.writes.Truncate(sp.writes)
	t.dropSavepoints(i + 1)
	return t.giveBackLocks(sp.keys)
}

// ReleaseSavepoint forgets the savepoint name and the ones made after it
// (RELEASE SAVEPOINT); their writes and locks stay the transaction's.
func (t *Txn) ReleaseSavepoint(name string) error {
	i, err := t.findSavepoint(name)
	if err != nil {
		return err
	}
	t.dropSavepoints(i)
	return nil
}

func (t *Txn) dropSavepoints(from int) {
	for _, sp := range t.savepoints[from:] {
		sp.batch.Close()
	}
	t.savepoints = t.savepoints[:from]
}

// Isolation is a transaction isolation level.
type Isolation int

const (
	// ReadCommitted: a new snapshot per statement; a row changed after it
	// is re-read under its lock (PostgreSQL's default).
	ReadCommitted Isolation = iota
	// RepeatableRead: one snapshot for the whole transaction; writing a
	// row that another transaction committed after it fails with 40001.
	RepeatableRead
	// Serializable: REPEATABLE READ's snapshot and write rule, and the
	// commit refreshes the transaction's reads (readspans.go).
	Serializable
)

// SetIsolation sets the transaction's isolation level, before its first
// statement reads.
func (t *Txn) SetIsolation(level Isolation) {
	t.isolation = level
	t.setRefreshing()
}

// Isolation returns the transaction's isolation level.
func (t *Txn) Isolation() Isolation { return t.isolation }

// StartStatement records that a statement (not transaction control) runs
// in the transaction at the current read timestamp; at REPEATABLE READ that
// timestamp becomes the snapshot of every later statement.
func (t *Txn) StartStatement() { t.started = true }

// Started reports whether a statement ran (the isolation level can no
// longer change).
func (t *Txn) Started() bool { return t.started }

// SnapshotFixed reports whether the transaction reads one snapshot from
// now on (REPEATABLE READ or SERIALIZABLE after its first statement).
func (t *Txn) SnapshotFixed() bool { return t.started && t.isolation != ReadCommitted }

// ReadTimestamp returns the snapshot the transaction reads now.
func (t *Txn) ReadTimestamp() hlc.Timestamp { return t.batch.ReadTimestamp() }

// UseSchema records that the transaction writes table id as the schema
// version describes it (for example, which indexes it maintains). Commit
// fails if the manager's schema check finds the table changed since.
func (t *Txn) UseSchema(id uint64, version string) {
	if t.ownSchema[id] {
		return
	}
	if t.schema == nil {
		t.schema = map[uint64]string{}
	}
	if _, ok := t.schema[id]; !ok {
		t.schema[id] = version
	}
}

// OwnSchema is for a transaction that changes table id's schema itself
// (transactional DDL, sql/txnddl.go): the version recorded so far (if
// any) is returned, for the caller to check against the committed one
// now, and from now on the table is neither recorded nor checked at
// commit — its committed version is the one the transaction's own commit
// installs, and the caller keeps other schema changes off the table until
// then.
func (t *Txn) OwnSchema(id uint64) (version string, recorded bool) {
	if t.ownSchema == nil {
		t.ownSchema = map[uint64]bool{}
	}
	t.ownSchema[id] = true
	version, recorded = t.schema[id]
	delete(t.schema, id)
	return version, recorded
}

// Begin starts a transaction.
func (m *Manager) Begin() *Txn { return m.BeginAs(m.nextID.Add(1)) }

// BeginAs starts a transaction under owner, an id from NewOwner that
// already holds table locks for the work the transaction continues (a
// protocol cycle's implicit transaction begins at its first write, after
// the cycle's table locks were taken). Its key locks and waits then carry
// the same id as those table locks, so the wait-for graph has one node for
// the session's transaction: with two, a cycle through a table-lock wait
// of one and a key-lock wait of the other went undetected.
func (m *Manager) BeginAs(owner uint64) *Txn {
	return &Txn{m: m, id: owner, batch: m.eng.NewBatch()}
}

// ID identifies the transaction in lock waits.
func (t *Txn) ID() uint64 { return t.id }

// SetPID records the session's process ID for pg_locks.
func (t *Txn) SetPID(pid uint32) { t.pid = pid }

// Locks lists the key locks held and awaited now (pg_locks).
func (m *Manager) Locks() ([]LockInfo, error) { return m.locks.list() }

// Recover removes the lock records and transaction records left in the
// store by transactions that did not end before the process did (kill -9,
// a crash): on one node no transaction outlives its process. Call it once
// at startup, before the first transaction; it returns how many lock
// records and transaction records it removed.
func (m *Manager) Recover() (locks, records int, err error) {
	if locks, err = m.locks.clearOrphans(); err != nil {
		return locks, 0, err
	}
	if records, err = m.locks.clearDeadRecords(); err != nil {
		return locks, records, err
	}
	// Every record found is settled: a cluster node that took over
	// serving may close timestamps again (storage's recovery hold).
	m.eng.EndRecoveryHold()
	return locks, records, nil
}

// Lock takes the exclusive lock of key (FOR UPDATE strength) for the rest
// of the transaction.
func (t *Txn) Lock(ctx context.Context, key []byte) error {
	return t.LockStrength(ctx, key, mvcc.Update)
}

// TryLock takes the exclusive lock of key if no other transaction holds
// it, and reports whether the transaction holds it now. It never waits, so
// a transaction that only try-locks cannot take part in a deadlock (the
// TTL runner uses it to leave rows that writers hold for a later run).
//
// A store error also answers false: the caller leaves the row for later
// either way, and the same error reaches the next statement that reads.
func (t *Txn) TryLock(key []byte) bool {
	return t.lockKey(context.Background(), key, mvcc.Update, waitNone) == nil
}

// SetReadTimestamp sets the snapshot the transaction's statement reads:
// committed versions at or below ts (storage.Engine.ReadTimestamp), taken
// at the start of each statement (READ COMMITTED).
func (t *Txn) SetReadTimestamp(ts hlc.Timestamp) { t.batch.SetReadTimestamp(ts) }

// Reader returns the view of the transaction's statement: committed data
// as of the statement's read timestamp (SetReadTimestamp) with the
// transaction's own writes on top. Every scan and point read of a
// statement goes through it, so all the shards and indexes it reads show
// one snapshot.
func (t *Txn) Reader() storage.Reader { return t.recording(t.batch) }

// LatestReader returns the newest committed data with the transaction's own
// writes on top: what a statement reads of rows it holds the locks of (the
// re-read of READ COMMITTED, which sees a row changed by a transaction that
// committed after the statement's snapshot), and of index entries and
// referencing rows under the lock of their value.
func (t *Txn) LatestReader() storage.Reader {
	return t.recording(t.batch.At(storage.MaxTimestamp))
}

// Get reads the newest committed value of a key, or the transaction's own
// write of it. Callers hold the key's lock (Lock), so the value cannot
// change before the transaction ends.
//
// At REPEATABLE READ and SERIALIZABLE a key with a version committed after
// the transaction's snapshot fails with 40001 instead: the transaction would
// write over (or decide on) a change it cannot see, which PostgreSQL
// refuses the same way (first updater wins).
func (t *Txn) Get(key []byte) ([]byte, bool, error) {
	if t.isolation == Serializable {
		t.reads.addKey(key)
	}
	if t.SnapshotFixed() {
		ts, ok, err := t.batch.LatestVersion(key)
		if err != nil {
			return nil, false, err
		}
		if ok && t.batch.ReadTimestamp().Less(ts) {
			return nil, false, sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update")
		}
	}
	return t.batch.At(storage.MaxTimestamp).Get(key)
}

// PutRow writes a row of a table. existed and oldLen describe the row as
// the transaction saw it before (under the key's lock), for the shard
// statistics.
func (t *Txn) PutRow(tableID uint64, key, value []byte, existed bool, oldLen int) error {
	if err := t.batch.Set(key, value); err != nil {
		return err
	}
	t.writes.RecordPut(tableID, key, len(value), existed, oldLen)
	return t.maybeFlush()
}

// DeleteRow deletes a row of a table that the transaction saw with a
// value of oldLen bytes.
func (t *Txn) DeleteRow(tableID uint64, key []byte, oldLen int) error {
	if err := t.batch.Delete(key); err != nil {
		return err
	}
	t.writes.RecordDelete(tableID, key, true, oldLen)
	return t.maybeFlush()
}

// Batch exposes the write batch for schema changes that add catalog records
// to the same atomic commit.
func (t *Txn) Batch() *storage.Batch { return t.batch }

// HasWrites reports whether the transaction wrote anything.
func (t *Txn) HasWrites() bool { return !t.batch.Empty() }

// Commit makes every write durable and visible at once, then releases locks.
func (t *Txn) Commit() error {
	if t.done {
		return nil
	}
	var err error
	inBatch := false // the commit batch released the lock records
	// A transaction that wrote nothing still checks the schema it meant
	// to write under: an UPDATE or DELETE that raced a rewrite of its
	// table (ALTER COLUMN TYPE, ADD PRIMARY KEY) may have read the old
	// table after its rows were moved and matched none; acknowledging
	// "DELETE 0" would lose that statement, so it fails with 40001 instead.
	checkOnly := t.batch.Empty() && t.m.schemaCheck != nil && len(t.schema) > 0
	if !t.batch.Empty() || checkOnly {
		t.m.gate.RLock()
		if t.m.schemaCheck != nil && len(t.schema) > 0 {
			err = t.m.schemaCheck(t.schema)
		}
		if err == nil && !checkOnly {
			t.commitCheck()
			// Written keys feed the shards' load samples (split by load).
			t.m.shards.SampleWrites(&t.writes)
			inBatch, err = t.commitBatch()
		}
		t.m.gate.RUnlock()
	}
	if e := t.finish(inBatch); err == nil {
		err = e
	}
	return err
}

// commitBatch commits the batch with the shards' statistics; settled
// reports whether the commit also settled the transaction's locks and
// record (in its batch, or with its intents' resolution), as it does
// whenever it succeeds. A commit whose intents could not all be resolved
// is settled too, in the sense that nothing may delete its record
// (Recover finishes it): it fails with 08007.
func (t *Txn) commitBatch() (settled bool, err error) {
	if t.batch.HasIntents() {
		// The lock records and the record go once the intents are
		// resolved (settleIntents), not with the commit batch: a lock
		// given back earlier would let a writer read the key before its
		// version is in place. The shard statistics go with the
		// resolution too (IntentCommit.Stats): every row write is an
		// intent by then, and t.writes holds none of them.
		err = t.batch.Commit()
		var re *storage.IntentResolveError
		if errors.As(err, &re) {
			return true, errIntentResolve(err)
		}
		return err == nil, err
	}
	if err := t.releaseInBatch(); err != nil {
		return false, err
	}
	err = t.m.shards.Commit(t.batch, &t.writes)
	return err == nil, err
}

// CheckSchema runs the check Commit runs on the schema versions the
// transaction recorded (UseSchema) without committing: nil when the tables
// it wrote still have the indexes it wrote them with. A READ COMMITTED
// statement checks it when it ends, while it can still run again.
func (t *Txn) CheckSchema() error {
	if t.m.schemaCheck == nil || len(t.schema) == 0 {
		return nil
	}
	t.m.gate.RLock()
	defer t.m.gate.RUnlock()
	return t.m.schemaCheck(t.schema)
}

// Rollback discards the writes and releases locks. A lock record it fails
// to delete is an orphan, which the first transaction to meet it removes
// (LockTable.holderOf).
func (t *Txn) Rollback() {
	if !t.done {
		_ = t.finish(false)
	}
}

// finish ends the transaction: inBatch says whether its commit batch
// deleted its lock records already.
func (t *Txn) finish(inBatch bool) error {
	t.done = true
	if t.refreshDone != nil {
		t.refreshDone()
		t.refreshDone = nil
	}
	t.dropSavepoints(0)
	t.batch.Close()
	for _, b := range t.retired {
		b.Close()
	}
	t.retired = nil
	err := t.releaseLocks(inBatch)
	for _, unlock := range t.spanUnlocks {
		unlock()
	}
	t.spanUnlocks = nil
	return err
}

// LockSpan makes t the only writer of the keys in [start, end) until
// unlock is called or t ends: it waits for the other transactions that
// hold key locks inside the span to end, and other transactions' Lock of
// a key inside it waits (TryLock fails) meanwhile. A bulk load (COPY's
// bulk path) takes it around checking its keys against the committed data
// and ingesting them, so that no concurrent writer can slip a key in
// between.
func (t *Txn) LockSpan(ctx context.Context, start, end []byte) (unlock func(), err error) {
	sl, err := t.m.locks.acquireSpan(ctx, t.id, t.pid, string(start), string(end))
	if err != nil {
		return nil, err
	}
	var once sync.Once
	unlock = func() { once.Do(func() { t.m.locks.releaseSpan(sl) }) }
	t.spanUnlocks = append(t.spanUnlocks, unlock)
	return unlock, nil
}

// CommitWith commits t with an external write: under the commit gate and
// after the schema check (the tables t recorded with UseSchema still have
// the indexes it wrote), it runs write (a bulk ingestion), then commits
// t's own batch if it has writes. An error from write fails the commit.
func (t *Txn) CommitWith(write func() error) error {
	if t.done {
		return nil
	}
	t.m.gate.RLock()
	var err error
	if t.m.schemaCheck != nil && len(t.schema) > 0 {
		err = t.m.schemaCheck(t.schema)
	}
	if err == nil {
		err = write()
	}
	inBatch := false
	if err == nil && !t.batch.Empty() {
		t.commitCheck()
		t.m.shards.SampleWrites(&t.writes)
		inBatch, err = t.commitBatch()
	}
	t.m.gate.RUnlock()
	if e := t.finish(inBatch); err == nil {
		err = e
	}
	return err
}
