package shardsm

import (
	"encoding/binary"
	"fmt"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Closed timestamps (issue 18 item 6; CockroachDB's mechanism). The
// serving node promises that no commit will ever take a timestamp at or
// below Close.Timestamp (storage.Engine.ClosableTimestamp picks it), and
// proposes the promise through the group's log
// (cluster/shardrepl/closedts.go). A replica that applied the entry holds
// every commit at or below it, so it may serve reads there on its own
// (follower reads).
//
// Each replica keeps the newest closed timestamp in its group state
// (stateClosed: it travels in snapshots and survives restarts), moves its
// store's clock past it (so that its node, should it serve later, commits
// above it), and refuses, alike on every replica, a Write whose commit
// timestamp is at or below it (ClosedError): a commit the serving node
// proposed and gave up on (its proposal timed out) may still reach the
// log after a later Close, and must not change what a follower read
// already saw. A Close applies only under the current serving epoch: a
// node that served before a takeover cannot promise for the new one.

// Close raises the group's closed timestamp to Timestamp (never lowers
// it) when Epoch is the group's serving epoch.
type Close struct {
	Epoch     uint64
	Timestamp hlc.Timestamp
}

// cmdClose is the command number of Close (after crossgroup.go's
// cmdServeAt).
const cmdClose byte = 11

// EncodeClose encodes c for raft.Host.Propose.
func EncodeClose(c Close) ([]byte, error) {
	if c.Timestamp.IsEmpty() {
		return nil, fmt.Errorf("shardsm: a closed timestamp of zero")
	}
	out := []byte{commandVersion, cmdClose}
	out = binary.AppendUvarint(out, c.Epoch)
	return appendTimestamp(out, c.Timestamp), nil
}

func decodeClose(r *reader) *Close {
	return &Close{Epoch: r.uvarint(), Timestamp: r.timestamp()}
}

// ClosedError is the answer to a Write at or below the group's closed
// timestamp: nothing was written. The serving node never proposes one
// unless an earlier attempt of the same commit timed out.
type ClosedError struct {
	WriteTimestamp hlc.Timestamp
	Closed         hlc.Timestamp
}

func (e *ClosedError) Error() string {
	return fmt.Sprintf("shardsm: a commit at %s, at or below the closed timestamp %s", e.WriteTimestamp, e.Closed)
}

const errClosedTS byte = errFenced + 1

func encodeClosedError(e *ClosedError) []byte {
	return appendTimestamp(appendTimestamp([]byte{errClosedTS}, e.WriteTimestamp), e.Closed)
}

func decodeClosedError(r *reader) error {
	return &ClosedError{WriteTimestamp: r.timestamp(), Closed: r.timestamp()}
}

// applyClose returns the closed timestamp after c and the command's
// outcome.
func applyClose(c *Close, serving Serving, closed hlc.Timestamp) (outcome, hlc.Timestamp) {
	if c.Epoch != serving.Epoch {
		return outcome{res: rejected(&FencedError{WriteEpoch: c.Epoch, Serving: serving})}, closed
	}
	return outcome{res: raft.Result{Value: ResultApplied}, keep: true}, closed.Forward(c.Timestamp)
}

// closedFence refuses a Write whose commit timestamp is at or below the
// closed timestamp; ok is true when it may apply. Writes without a commit
// timestamp (system keys, GC, a bulk load's roll-back) version nothing and
// pass.
func closedFence(w *Write, closed hlc.Timestamp) (outcome, bool) {
	if w.Timestamp.IsEmpty() || closed.Less(w.Timestamp) {
		return outcome{}, true
	}
	return outcome{res: rejected(&ClosedError{WriteTimestamp: w.Timestamp, Closed: closed})}, false
}

func readClosed(r mvcc.Reader, g raft.GroupID) (hlc.Timestamp, error) {
	v, ok, err := get(r, stateKey(g, stateClosed))
	if err != nil || !ok {
		return hlc.Timestamp{}, err
	}
	rd := reader{b: v}
	ts := rd.timestamp()
	if err := rd.done(); err != nil {
		return hlc.Timestamp{}, fmt.Errorf("shardsm: group %d: closed timestamp: %w", g, err)
	}
	return ts, nil
}

// ClosedTimestamp reads g's closed timestamp as the store holds it: every
// commit of the group at or below it is in the store (zero: none closed).
func (s *Store) ClosedTimestamp(g raft.GroupID) (hlc.Timestamp, error) {
	return readClosed(s.db, g)
}
