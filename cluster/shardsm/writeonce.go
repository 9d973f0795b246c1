package shardsm

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Writes applied at most once (shardsm command 22, group state kind 0x14).
//
// A proposal whose answer is lost (forwarded to a leader that then lost
// its leadership or dropped it while handing over; an attempt that timed
// out) may or may not be in the log: repeating a plain Write could apply
// it twice, and a Write holds counter merges, which are not idempotent.
// A Write with an ID (cmdWriteOnce) can be repeated: the replica that
// applies it records
//
//	03 04 | group id (8 BE) | 14 | commit timestamp (12) | id (16)   → empty
//
// in the same batch as its mutations, and a Write whose record is there
// is answered as applied and changes nothing. The check comes before
// every other (epoch, closed timestamp, generation), so a repeat that
// arrives after a takeover or a split still learns that its first copy
// applied.
//
// The records are deleted by the Raft Close that closes their timestamp
// (applyClose's caller): a copy of a Write arriving after that is refused
// by the closed timestamp (closedFence) before it could apply again, so
// the record is no longer needed. The proposer's own closer never closes
// a commit it is still repeating (the commit stays in flight in the
// storage engine until Replicate returns, and ClosableTimestamp stays
// below it), so a repeat by the node that proposed finds the record.
// Writes without a commit timestamp pass the closed fence and so cannot
// carry an ID (EncodeWrite refuses it).
//
// Records sort by timestamp, so a Close deletes a prefix of them; the
// replica remembers where the last deletion ended (stateMachine.onceFrom,
// not replicated: it only saves the iterator the tombstones below it).
const (
	cmdWriteOnce byte = 22
	stateOnce    byte = 0x14
)

// IsZero reports whether id is the zero id (no id).
func (id CommitID) IsZero() bool { return id == CommitID{} }

// onceKey returns the engine key of g's record of the Write at ts with id.
func onceKey(g raft.GroupID, ts hlc.Timestamp, id CommitID) []byte {
	k := append(groupStatePrefix(g), stateOnce)
	k = appendTimestamp(k, ts)
	return mvcc.AppendBareKey(nil, append(k, id[:]...))
}

// onceBound returns the engine key below which g's records of Writes at
// timestamps below ts lie.
func onceBound(g raft.GroupID, ts hlc.Timestamp) []byte {
	k := append(groupStatePrefix(g), stateOnce)
	return mvcc.AppendBareKey(nil, appendTimestamp(k, ts))
}

// appliedBefore reports whether the Write c, which carries an ID, was
// applied already in this group.
func (m *stateMachine) appliedBefore(c *Write) (bool, error) {
	_, ok, err := get(m.store.db, onceKey(m.group, c.Timestamp, c.ID))
	return ok, err
}

// recordOnce writes c's record into b (c carries an ID and applies).
func (m *stateMachine) recordOnce(b *pebble.Batch, c *Write) error {
	return b.Set(onceKey(m.group, c.Timestamp, c.ID), nil, nil)
}

// duplicateWrite is the outcome of a Write applied before: applied, and
// nothing written but the index.
func duplicateWrite() outcome {
	return outcome{res: raft.Result{Value: ResultApplied}}
}

// forgetOnce deletes into b the records of Writes at or below closed.
func (m *stateMachine) forgetOnce(b *pebble.Batch, closed hlc.Timestamp) error {
	from := m.onceFrom
	if from == nil {
		from = onceBound(m.group, hlc.Timestamp{})
	}
	to := onceBound(m.group, closed.Next())
	it, err := m.store.db.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: to})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := b.Delete(it.Key(), nil); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	m.nextOnceFrom = to
	return nil
}
