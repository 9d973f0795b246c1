package txn

import (
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Transaction records and settlement (issue 16 item 9).
//
// A transaction that takes a lock gets a transaction record
// (mvcc.TxnRecord, PENDING) at its anchor, the first key it locked, written
// in the same batch as its first lock record: from then on the data says
// that it exists and where its status lives. A transaction ends by
// settling: its part in each shard (today its lock records there; with
// step 2 its intents too) is resolved by one call per shard
// (resolveShard), and then its record goes. That is the shape issue 17
// spreads over nodes — there the record turns COMMITTED (or ABORTED) by
// its own durable write on the anchor's shard first, then each shard's
// leader gets its part, and the record is deleted last. On one node every
// shard is local, so the whole settlement is one batch: the commit's own,
// under its one fsync (no COMMITTED state is ever visible, since the
// record and the commit land together), or an unsynced one at rollback.
// A record whose transaction is gone (kill -9) stays PENDING; startup
// recovery (Manager.Recover) deletes it with the lock records, and a
// transaction meeting such a lock record deletes that (holderOf).

// shardPart is what the transaction holds in one shard: the engine keys
// of its lock records on the shard's keys.
type shardPart struct {
	span storage.Span // the shard's span; all keys for keys of no table
	recs [][]byte
}

// parts groups the transaction's lock records by the shard (in the
// current shard maps) that owns their key.
func (t *Txn) parts() []shardPart {
	var out []shardPart
	type shardKey struct {
		table uint64
		shard partition.ShardID
		ok    bool
	}
	index := map[shardKey]int{}
	var maps map[uint64]*partition.ShardMap
	for _, h := range t.keys {
		if h.mem {
			continue // a write hold: nothing in the store (writeholds.go)
		}
		key := []byte(h.key)
		sk, span := shardKey{}, storage.Span{}
		if id, _, err := storage.DecodeTablePrefix(key); err == nil && t.m.shards != nil {
			if maps == nil {
				maps = map[uint64]*partition.ShardMap{}
			}
			sm, seen := maps[id]
			if !seen {
				sm = t.m.shards.Map(id)
				maps[id] = sm
			}
			if sm != nil {
				if i := sm.Find(key); i >= 0 {
					s := sm.Shard(i)
					sk, span = shardKey{table: id, shard: s.ID, ok: true}, s.Span
				}
			}
		}
		i, seen := index[sk]
		if !seen {
			i = len(out)
			index[sk] = i
			out = append(out, shardPart{span: span})
		}
		out[i].recs = append(out[i].recs, mvcc.LockKey(key, h.strength, t.meta.ID))
	}
	return out
}

// resolveShard settles the transaction's part in one shard through del,
// which deletes an engine key the transaction wrote once (a SingleDelete
// into the settlement's batch): its lock records go.
func resolveShard(del func(engineKey []byte) error, p shardPart) error {
	for _, k := range p.recs {
		if err := del(k); err != nil {
			return err
		}
	}
	return nil
}

// settle releases everything the transaction holds in the data, shard by
// shard, then deletes its record, all through del (one batch).
func (t *Txn) settle(del func(engineKey []byte) error) error {
	if t.owner == nil {
		return nil
	}
	for _, p := range t.parts() {
		if err := resolveShard(del, p); err != nil {
			return err
		}
	}
	if t.recorded {
		return del(mvcc.TxnRecordKey(t.meta.Anchor, t.meta.ID))
	}
	return nil
}

// settleAlone settles the transaction in an unsynced batch of its own
// (rollback, or a commit that wrote nothing).
func (t *Txn) settleAlone() error {
	b := t.m.eng.NewLocalOp()
	defer b.Close()
	if err := t.settle(b.SingleDelete); err != nil {
		return err
	}
	return b.CommitNoSync()
}

// pendingRecord returns the record a transaction writes with its first
// lock: PENDING, its heartbeat now.
func (t *Txn) pendingRecord() (*mvcc.TxnRecord, error) {
	now, err := t.m.eng.Clock().Now()
	if err != nil {
		return nil, err
	}
	return &mvcc.TxnRecord{Status: mvcc.Pending, Heartbeat: now}, nil
}

// clearDeadRecords deletes the transaction records of transactions this
// process does not run (at startup: all of them; on one node none
// outlives its process).
func (lt *LockTable) clearDeadRecords() (int, error) {
	var dead, shared [][]byte
	err := mvcc.ScanTxnRecords(lt.eng.LocalReader(), func(anchor []byte, id mvcc.TxnID, rec mvcc.TxnRecord) error {
		if lt.owner(id) == nil {
			// Its intents first (intents.go): the record is what says
			// where they are and whether they count.
			if err := lt.recoverIntents(id, rec); err != nil {
				return err
			}
			if len(rec.LockSpans) > 0 {
				shared = append(shared, mvcc.TxnRecordKey(anchor, id))
			} else {
				dead = append(dead, mvcc.TxnRecordKey(anchor, id))
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := lt.deleteSharedRecords(shared...); err != nil {
		return 0, err
	}
	return len(dead) + len(shared), lt.deleteRecords(dead...)
}
