package storage

import (
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Closed timestamps (issue 18 item 6, cluster/shardrepl/closedts.go): the
// node that commits promises its replicas that no commit will ever take a
// timestamp at or below T, so that a replica that applied the log up to
// the entry carrying T holds every commit at or below it and can serve
// reads there by itself.
//
// ClosableTimestamp picks T under the commit tracker's mutex, the one
// begin takes its timestamp under: every commit registered before the
// call is in flight or ended (its writes handed to the replicator and
// applied), and every commit that begins after it takes a timestamp from
// the clock above the clock's now read here, which is above T. So T is
// the clock's now less lag, lowered to just below the oldest commit still
// in flight: such a commit's writes may not be in the log yet.

// ClosableTimestamp returns a timestamp at or below now − lag that no
// commit in flight or to come is at or below. Callers publish it after
// the call returns: the commits ended before it are in the log ahead of
// whatever they propose next. It never decreases across calls with the
// same lag, unless the clock is wound back (it is not: hlc).
//
// While the recovery hold is on (see below: SetReplicator,
// EndRecoveryHold) it returns the zero timestamp: nothing may be closed
// yet.
func (e *Engine) ClosableTimestamp(lag time.Duration) (hlc.Timestamp, error) {
	if e.recoveryHold.Load() {
		return hlc.Timestamp{}, nil
	}
	t := e.commits
	t.mu.Lock()
	defer t.mu.Unlock()
	now, err := t.clock.Now()
	if err != nil {
		return hlc.Timestamp{}, err
	}
	closed := hlc.Timestamp{WallTime: now.WallTime - int64(lag)}
	if lag <= 0 {
		closed = now.Prev()
	}
	for _, c := range t.stamps {
		if c.LessEq(closed) {
			closed = c.Prev()
		}
	}
	return closed, nil
}

// SetCommitRefusal makes every commit that would write to Pebble fail with
// err while the engine has no replicator: a cluster node that does not
// serve opens a read-only SQL engine over its replica's engine for
// follower reads (sql.FollowerReads), and nothing but the replicas' state
// machines may write that store. SetReplicator lifts it (commits then go
// through the replicator). nil removes it.
func (e *Engine) SetCommitRefusal(err error) {
	if err == nil {
		e.refuse.Store(nil)
		return
	}
	e.refuse.Store(&err)
}

// The recovery hold. A node that takes over serving may find in the store
// a transaction whose record is COMMITTED but whose intents the node that
// served before did not all resolve (storage/intents.go): that node kept
// the commit in flight, so it closed nothing at or above the commit's
// timestamp, and the resolution that recovery (sql/txn's Manager.Recover)
// runs writes versions at that timestamp. Were the new node to close a
// later timestamp first, a follower read there would miss them and the
// replicas would refuse the resolution (shardsm's closed-timestamp
// fence). So SetReplicator puts the hold on when the store holds any
// transaction record, and the recovery, once every record is settled,
// takes it off (EndRecoveryHold); a store without records (every shard
// test's) closes at once.

// holdClosingIfRecords puts the recovery hold on if the store holds a
// transaction record.
func (e *Engine) holdClosingIfRecords() error {
	// 0x03: the shard-local area (keys.go).
	lower, upper := engineBounds(Span{Start: []byte{0x03, LocalTxnRecord}, End: []byte{0x03, LocalTxnRecord + 1}})
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	if it.First() {
		e.recoveryHold.Store(true)
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return err
}

// EndRecoveryHold lets ClosableTimestamp close timestamps again: the
// transaction records found at SetReplicator are settled.
func (e *Engine) EndRecoveryHold() { e.recoveryHold.Store(false) }
