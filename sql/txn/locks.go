package txn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// lockShards is the number of latches (LockTable.latches): writers of
// different keys rarely share one.
const lockShards = 64

// LockTable is what of the key locks is not data. The locks themselves are
// lock records in the store (storage/mvcc.AcquireLock, issue 16 item 9):
// rows of the shard that owns the key, so that after issue 17 they survive
// the shard's leader moving. This table keeps:
//
//   - latches: a key's check-and-write of a record (AcquireLock and its
//     commit) runs under the key's latch, so two transactions never both
//     pass the check (storage/mvcc's latch rule);
//   - owners: the transactions of this process that hold records, by
//     their mvcc id (lockOwner), for the wait-for graph, pg_locks, and to
//     tell a live holder from a dead one: a record whose transaction is not
//     registered belongs to a transaction that ended without removing it
//     (a crash, a failed release) and is removed on sight;
//   - the waiters and their wait-for graph (deadlock detection), and
//     pg_locks' list of them;
//   - span locks of bulk loads (Txn.LockSpan), which are not records;
//   - the locks of one-phase transactions (memlocks.go): an autocommit
//     statement commits all its writes in one batch, so nothing of it can
//     survive a crash half done, and its locks need not be data.
type LockTable struct {
	eng     *storage.Engine
	latches [lockShards]latchShard
	owners  struct {
		sync.Mutex
		m map[mvcc.TxnID]*lockOwner
	}

	// graph guards waitsFor, the wait-for edges used for deadlock detection.
	graph struct {
		sync.Mutex
		waitsFor map[uint64]uint64
		// waiting describes each waiting transaction, for pg_locks.
		waiting map[uint64]LockInfo
	}
	spans spanLocks
	// intentStats, if set, counts the shard statistics of the intents
	// recovery resolves (Manager.intentStats).
	intentStats func() storage.IntentStats
}

// lockOwner is a registered transaction that holds (or is taking) lock
// records.
type lockOwner struct {
	id    mvcc.TxnID
	local uint64 // Txn.id: its node in the wait-for graph
	pid   uint32 // its session (pg_locks)
	mu    sync.Mutex
	// changed is closed, and replaced, whenever the transaction removes
	// lock records (ROLLBACK TO SAVEPOINT, its end): a waiter then looks
	// again.
	changed chan struct{}
	// counted is the owner's part of each latch shard's records count
	// (latchShard.records), each element changed under its shard's
	// latch, only by the owner's goroutine (count): a write hold need not
	// look at the store when the shard counts nothing but the owner's own
	// (writeholds.go). Nil until the owner's first record: a one-phase
	// owner never has one.
	counted *[lockShards]int32
}

// count adds d to o's part of latch shard i's records count (under its
// latch).
func (o *lockOwner) count(i int, d int32) {
	if o.counted == nil {
		o.counted = new([lockShards]int32)
	}
	o.counted[i] += d
}

// countedIn is o's part of latch shard i's records count (under its
// latch).
func (o *lockOwner) countedIn(i int) int {
	if o.counted == nil {
		return 0
	}
	return int(o.counted[i])
}

func (o *lockOwner) changedChan() chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

func (o *lockOwner) signal() {
	o.mu.Lock()
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
}

// NewLockTable returns a lock table over the lock records of eng.
func NewLockTable(eng *storage.Engine) *LockTable {
	lt := &LockTable{eng: eng}
	lt.owners.m = map[mvcc.TxnID]*lockOwner{}
	lt.graph.waitsFor = map[uint64]uint64{}
	lt.graph.waiting = map[uint64]LockInfo{}
	return lt
}

func (lt *LockTable) latch(key []byte) *latchShard {
	return &lt.latches[lt.latchIndex(key)]
}

// latchIndex is the index of key's latch shard.
func (lt *LockTable) latchIndex(key []byte) int {
	// FNV-1a: cheap and good enough to spread keys.
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % lockShards)
}

// register makes a transaction a lock owner; call before it writes its
// first record, so that no record of a live transaction is ever taken for
// an orphan.
func (lt *LockTable) register(id mvcc.TxnID, local uint64, pid uint32) *lockOwner {
	o := &lockOwner{id: id, local: local, pid: pid, changed: make(chan struct{})}
	lt.adopt(o)
	return o
}

// adopt registers o under its mvcc id as a holder of lock records.
func (lt *LockTable) adopt(o *lockOwner) {
	lt.owners.Lock()
	lt.owners.m[o.id] = o
	lt.owners.Unlock()
}

// unregister ends o's ownership, once its records are removed (or their
// removal failed: then they are orphans, removed on sight).
func (lt *LockTable) unregister(o *lockOwner) {
	lt.owners.Lock()
	delete(lt.owners.m, o.id)
	lt.owners.Unlock()
	o.signal()
}

func (lt *LockTable) owner(id mvcc.TxnID) *lockOwner {
	lt.owners.Lock()
	defer lt.owners.Unlock()
	return lt.owners.m[id]
}

// waitPolicy is what acquireStrength does when another transaction holds
// the key in a conflicting strength.
type waitPolicy uint8

const (
	waitBlock waitPolicy = iota // wait (deadlock detection, lock_timeout)
	waitNone                    // fail at once with errWouldBlock
)

// errWouldBlock is acquireStrength's answer under waitNone when the key is
// held in a conflicting strength.
var errWouldBlock = errors.New("txn: lock held by another transaction")

// acquireStrength writes o's lock record on key at strength (meta says
// who o is), waiting, or not (policy), while other transactions hold the
// key in a conflicting strength. The caller knows o holds less than
// strength on key (Txn.held): a record is always written. Unless
// *recorded, the transaction record rec is written in the same batch, and
// *recorded set once it is.
func (lt *LockTable) acquireStrength(ctx context.Context, o *lockOwner, meta *mvcc.TxnMeta, rec *mvcc.TxnRecord, recorded *bool, key []byte, strength mvcc.Strength, policy waitPolicy) error {
	for {
		mem, memCh, conflict, err := lt.tryRecord(o, key, meta, rec, recorded, strength)
		if err != nil {
			return err
		}
		if mem != nil {
			// A one-phase transaction holds the key in memory.
			if policy == waitNone {
				return errWouldBlock
			}
			if err := lt.wait(ctx, LockInfo{Key: string(key), Txn: o.local, PID: o.pid, Holder: mem.local, Strength: strength}, memCh); err != nil {
				return err
			}
			continue
		}
		if conflict == nil {
			sl := lt.foreignSpan(o.local, string(key))
			if sl == nil {
				return nil
			}
			// A bulk load owns the span: give the record back and wait.
			err := lt.giveBack(mvcc.LockKey(key, strength, meta.ID))
			lt.uncount(o, key)
			if err != nil {
				return err
			}
			// The span's owner may have seen the record and be
			// waiting for o: it looks again now rather than at o's
			// end (o is about to wait for it, which would look like a
			// deadlock).
			o.signal()
			if policy == waitNone {
				return errWouldBlock
			}
			if err := lt.wait(ctx, LockInfo{Key: string(key), Txn: o.local, PID: o.pid, Holder: sl.owner, Strength: strength}, sl.released); err != nil {
				return err
			}
			continue
		}
		holder, ch, err := lt.holderOf(conflict)
		if err != nil {
			return err
		}
		if holder == nil {
			continue // an orphan, removed: look again
		}
		if policy == waitNone {
			return errWouldBlock
		}
		if err := lt.wait(ctx, LockInfo{Key: string(key), Txn: o.local, PID: o.pid, Holder: holder.local, Strength: strength}, ch); err != nil {
			return err
		}
	}
}

// tryRecord writes meta's (o's) record on key at strength under the key's
// latch, or returns what stops it: a one-phase transaction's lock in
// memory (mem, with the channel that tells when it changes, taken under
// the latch so that no release is missed), or the conflicting record or
// intent.
func (lt *LockTable) tryRecord(o *lockOwner, key []byte, meta *mvcc.TxnMeta, rec *mvcc.TxnRecord, recorded *bool, strength mvcc.Strength) (mem *lockOwner, memCh chan struct{}, _ *mvcc.LockConflictError, _ error) {
	sh := lt.latch(key)
	sh.Lock()
	defer sh.Unlock()
	if h := sh.conflict(o, key, strength); h != nil {
		return h, h.changedChan(), nil, nil
	}
	b := lt.eng.NewLocalOp()
	defer b.Close()
	// MaxTimestamp: no write-conflict check here; the callers compare the
	// row's newest version with their snapshot themselves
	// (Txn.ChangedSince, Txn.Get), once they hold the lock.
	if _, err := mvcc.AcquireLock(b, key, meta, storage.MaxTimestamp, strength); err != nil {
		var lce *mvcc.LockConflictError
		if errors.As(err, &lce) {
			return nil, nil, lce, nil
		}
		return nil, nil, nil, err
	}
	if !*recorded {
		if err := mvcc.PutTxnRecord(b, meta.Anchor, meta.ID, rec); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := b.CommitNoSync(); err != nil {
		return nil, nil, nil, err
	}
	sh.records++
	o.count(lt.latchIndex(key), 1)
	*recorded = true
	return nil, nil, nil, nil
}

// holderOf returns the live owner of the lock record or intent c met
// and the channel that tells when it gives records back. When the record
// or intent is gone already, or its owner is not registered (an orphan,
// which it then removes), holder is nil: the caller looks again.
func (lt *LockTable) holderOf(c *mvcc.LockConflictError) (holder *lockOwner, ch chan struct{}, err error) {
	o := lt.owner(c.Txn.ID)
	if o == nil {
		if c.Intent {
			return nil, nil, lt.abortIntent(c)
		}
		return nil, nil, lt.deleteRecords(mvcc.LockKey(c.Key, c.Strength, c.Txn.ID))
	}
	ch = o.changedChan()
	// The record may have gone between the conflict and taking ch (its
	// owner signals after removing): look at it again after taking ch.
	if c.Intent {
		// An intent is the newest version of its key, which c's
		// strength (the intent's own) conflicts with.
		again, err := mvcc.CheckLock(lt.eng.LocalReader(), c.Key, c.Strength)
		if err != nil || again == nil || !again.Intent || again.Txn.ID != c.Txn.ID {
			return nil, nil, err
		}
		return o, ch, nil
	}
	_, closer, err := lt.eng.LocalReader().Get(mvcc.LockKey(c.Key, c.Strength, c.Txn.ID))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := closer.Close(); err != nil {
		return nil, nil, err
	}
	return o, ch, nil
}

// abortIntent removes the intent c met, of a transaction that is not
// running in this process (on one node: a dead one), as its rollback
// would have: the version under it is the newest again. If the
// transaction's record says COMMITTED (its resolution failed after the
// commit point), its intents are resolved instead (intents.go).
func (lt *LockTable) abortIntent(c *mvcc.LockConflictError) error {
	if done, err := lt.finishCommitted(c); done || err != nil {
		return err
	}
	sh := lt.latch(c.Key)
	sh.Lock()
	defer sh.Unlock()
	b := lt.eng.NewLocalBatch()
	defer b.Close()
	if _, err := mvcc.ResolveIntent(b, c.Key, mvcc.Resolution{ID: c.Txn.ID, Epoch: c.Txn.Epoch, Status: mvcc.Aborted}); err != nil {
		return err
	}
	// The intent is on every replica of its shard: so is its removal.
	return b.CommitShared()
}

// giveBack removes records their owner wrote, by their engine keys, in one
// unsynced batch. Each was Set once since its last deletion (Txn.held
// keeps a transaction from writing a record it has), so a SingleDelete
// removes it (storage.LocalBatch.SingleDelete).
func (lt *LockTable) giveBack(keys ...[]byte) error {
	if len(keys) == 0 {
		return nil
	}
	b := lt.eng.NewLocalOp()
	defer b.Close()
	for _, k := range keys {
		if err := b.SingleDelete(k); err != nil {
			return err
		}
	}
	return b.CommitNoSync()
}

// deleteRecords removes lock records of transactions that are gone
// (orphans) by their engine keys, in one unsynced batch: a plain Delete,
// since nothing says how they were written.
func (lt *LockTable) deleteRecords(keys ...[]byte) error {
	return lt.deleteKeys((*storage.LocalBatch).CommitNoSync, keys)
}

// deleteSharedRecords deletes transaction records that list intents
// (LockSpans): a flush of intents wrote them, and on a replicated engine
// through the replicator, so their deletion goes to every replica of the
// anchor's shard too (LocalBatch.CommitShared). Records without intents
// are the serving node's alone (deleteRecords).
func (lt *LockTable) deleteSharedRecords(keys ...[]byte) error {
	return lt.deleteKeys((*storage.LocalBatch).CommitShared, keys)
}

// deleteKeys deletes keys in one batch that commit lands.
func (lt *LockTable) deleteKeys(commit func(*storage.LocalBatch) error, keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	b := lt.eng.NewLocalBatch()
	defer b.Close()
	for _, k := range keys {
		if err := b.Delete(k, nil); err != nil {
			return err
		}
	}
	return commit(b)
}

// clearOrphans removes every lock record whose transaction is not
// registered: at startup, every record (no transaction survives its
// process; a record's owner on another node is issue 17's to ask).
func (lt *LockTable) clearOrphans() (int, error) {
	var dead [][]byte
	err := mvcc.ScanLocks(lt.eng.LocalReader(), storage.Span{}, func(rec mvcc.LockRecord) error {
		if lt.owner(rec.Txn.ID) == nil {
			dead = append(dead, rec.EngineKey)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(dead), lt.deleteRecords(dead...)
}

func (lt *LockTable) wait(ctx context.Context, w LockInfo, released chan struct{}) error {
	txn, owner := w.Txn, w.Holder
	lt.graph.Lock()
	// Follow the chain of waits from the owner; reaching txn means a cycle.
	for cur, steps := owner, 0; steps < 1<<16; steps++ {
		if cur == txn {
			lt.graph.Unlock()
			return sqlerr.New(sqlerr.DeadlockDetected, "deadlock detected")
		}
		next, ok := lt.graph.waitsFor[cur]
		if !ok {
			break
		}
		cur = next
	}
	lt.graph.waitsFor[txn] = owner
	lt.graph.waiting[txn] = w
	lt.graph.Unlock()
	defer func() {
		lt.graph.Lock()
		delete(lt.graph.waitsFor, txn)
		delete(lt.graph.waiting, txn)
		lt.graph.Unlock()
	}()
	var timeout <-chan time.Time
	if d := lockTimeout(ctx); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	// pg_stat_activity shows the session waiting on a lock, as
	// PostgreSQL's wait_event_type Lock / wait_event transactionid does
	// for a row held by another transaction.
	defer activity.FromContext(ctx).Wait("Lock", "transactionid")()
	select {
	case <-released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		return errLockTimeout()
	}
}

// LockInfo is one key lock for pg_locks: held by transaction Txn of
// session PID (Granted), or awaited by it while Holder holds it.
type LockInfo struct {
	Key     string
	Txn     uint64
	PID     uint32
	Granted bool
	Holder  uint64 // for a waiter: the transaction it waits for
	// Strength is the row lock's strength held or asked for: FOR UPDATE
	// for every write, the locking clause's for a SELECT FOR ...
	Strength mvcc.Strength
}

// list returns the locks held (the store's lock records of registered
// transactions and the one-phase transactions' memory holds) and awaited
// now. The records and the graph are read one
// after the other, so the list is a close, not an atomic, picture.
func (lt *LockTable) list() ([]LockInfo, error) {
	var out []LockInfo
	// A transaction's records of one key (one per strength it took) are
	// adjacent; it holds the key at the strongest, one row as PostgreSQL
	// shows a tuple lock.
	keyStart := 0
	err := mvcc.ScanLocks(lt.eng.LocalReader(), storage.Span{}, func(rec mvcc.LockRecord) error {
		o := lt.owner(rec.Txn.ID)
		if o == nil {
			return nil
		}
		k := string(rec.Key)
		if keyStart < len(out) && out[keyStart].Key != k {
			keyStart = len(out)
		}
		for i := keyStart; i < len(out); i++ {
			if out[i].Txn == o.local {
				out[i].Strength = max(out[i].Strength, rec.Strength)
				return nil
			}
		}
		out = append(out, LockInfo{Key: k, Txn: o.local, PID: o.pid, Granted: true, Strength: rec.Strength})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out, err = lt.intentList(out); err != nil {
		return nil, err
	}
	out = lt.memList(out)
	lt.graph.Lock()
	for _, w := range lt.graph.waiting {
		out = append(out, w)
	}
	lt.graph.Unlock()
	return out, nil
}

// Span locks (Txn.LockSpan): a bulk load makes itself the only writer of a
// key span while it checks its keys against the committed data and
// ingests them. Key locks are taken first and the spans checked after, and
// a span is registered before the held key locks inside it are looked
// for, so a writer and a span owner always see each other: the writer
// gives its new key lock back and waits for the span, or the span owner
// waits for the writer's transaction.

type spanLock struct {
	owner      uint64
	pid        uint32
	start, end string
	released   chan struct{}
}

type spanLocks struct {
	sync.Mutex
	list []*spanLock
	n    atomic.Int32
}

// foreignSpan returns the span lock of another transaction covering key.
func (lt *LockTable) foreignSpan(txn uint64, key string) *spanLock {
	if lt.spans.n.Load() == 0 {
		return nil
	}
	lt.spans.Lock()
	defer lt.spans.Unlock()
	for _, sl := range lt.spans.list {
		if sl.owner != txn && key >= sl.start && key < sl.end {
			return sl
		}
	}
	return nil
}

// acquireSpan registers [start, end) for txn and waits for the other
// transactions holding key locks inside it to end.
func (lt *LockTable) acquireSpan(ctx context.Context, txn uint64, pid uint32, start, end string) (*spanLock, error) {
	for {
		// Two span owners over one span: the later waits for the earlier.
		if other := lt.overlappingSpan(txn, start, end); other != nil {
			if err := lt.wait(ctx, LockInfo{Key: start, Txn: txn, PID: pid, Holder: other.owner}, other.released); err != nil {
				return nil, err
			}
			continue
		}
		lt.spans.Lock()
		if lt.overlappingSpanLocked(txn, start, end) != nil {
			lt.spans.Unlock()
			continue
		}
		sl := &spanLock{owner: txn, pid: pid, start: start, end: end, released: make(chan struct{})}
		lt.spans.list = append(lt.spans.list, sl)
		lt.spans.n.Add(1)
		lt.spans.Unlock()
		for {
			holder, ch, key, err := lt.heldIn(txn, start, end)
			if err != nil {
				lt.releaseSpan(sl)
				return nil, err
			}
			if ch == nil {
				return sl, nil
			}
			if err := lt.wait(ctx, LockInfo{Key: key, Txn: txn, PID: pid, Holder: holder}, ch); err != nil {
				lt.releaseSpan(sl)
				return nil, err
			}
		}
	}
}

func (lt *LockTable) overlappingSpan(txn uint64, start, end string) *spanLock {
	lt.spans.Lock()
	defer lt.spans.Unlock()
	return lt.overlappingSpanLocked(txn, start, end)
}

func (lt *LockTable) overlappingSpanLocked(txn uint64, start, end string) *spanLock {
	for _, sl := range lt.spans.list {
		if sl.owner != txn && start < sl.end && sl.start < end {
			return sl
		}
	}
	return nil
}

// heldIn finds a lock record or memory hold (memlocks.go) inside
// [start, end) held by another transaction (orphans met on the way are
// removed).
func (lt *LockTable) heldIn(txn uint64, start, end string) (holder uint64, released chan struct{}, key string, err error) {
	errFound := errors.New("found")
	for {
		var rec mvcc.LockRecord
		err := mvcc.ScanLocks(lt.eng.LocalReader(), storage.Span{Start: []byte(start), End: []byte(end)}, func(r mvcc.LockRecord) error {
			if o := lt.owner(r.Txn.ID); o == nil || o.local != txn {
				rec = r
				return errFound
			}
			return nil
		})
		if err == nil {
			if o, ch, key := lt.memHeldIn(txn, start, end); o != nil {
				return o.local, ch, key, nil
			}
			return 0, nil, "", nil
		}
		if err != errFound {
			return 0, nil, "", err
		}
		o, ch, err := lt.holderOf(&mvcc.LockConflictError{Key: rec.Key, Txn: rec.Txn, Strength: rec.Strength})
		if err != nil {
			return 0, nil, "", err
		}
		if o != nil {
			return o.local, ch, string(rec.Key), nil
		}
	}
}

func (lt *LockTable) releaseSpan(sl *spanLock) {
	lt.spans.Lock()
	for i, x := range lt.spans.list {
		if x == sl {
			lt.spans.list = append(lt.spans.list[:i], lt.spans.list[i+1:]...)
			lt.spans.n.Add(-1)
			close(sl.released)
			break
		}
	}
	lt.spans.Unlock()
}
