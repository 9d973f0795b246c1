package kvsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// stateMachine is one replica's raft.StateMachine: group g's span of the
// store.
type stateMachine struct {
	store   *Store
	group   raft.GroupID
	replica raft.ReplicaID
	applied []byte // appliedKey(group)
	closed  atomic.Bool
}

var _ raft.StateMachine = (*stateMachine)(nil)

// errClosed answers lookups on a replica that has been closed.
var errClosed = errors.New("kvsm: replica closed")

func (m *stateMachine) Open(stop <-chan struct{}) (uint64, error) {
	return readApplied(m.store.db, m.applied)
}

func readApplied(r pebble.Reader, key []byte) (uint64, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("kvsm: reading the applied index: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("kvsm: applied index of %d bytes", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Apply writes the effects of entries and the index of the last one in one
// Pebble batch, committed without fsync: the Raft log is the durable copy.
// Pebble's WAL is written in order, so after a crash the store holds a
// prefix of the batches it committed, each with its own index: Open returns
// an index that matches the data, and the engine reapplies what is missing.
func (m *stateMachine) Apply(entries []raft.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	cmds := make([]Command, len(entries))
	indexed := false
	for i := range entries {
		c, err := decodeCommand(entries[i].Cmd)
		if err != nil {
			// Deterministic on every replica: the command is skipped and the
			// proposer told why.
			entries[i].Result = raft.Result{Value: ResultMalformed, Data: []byte(err.Error())}
			continue
		}
		cmds[i] = c
		for _, op := range c.Ops {
			indexed = indexed || op.Kind == OpAdd
		}
	}
	var b *pebble.Batch
	if indexed {
		// OpAdd reads what earlier ops of the same batch wrote.
		b = m.store.db.NewIndexedBatch()
	} else {
		b = m.store.db.NewBatch()
	}
	defer b.Close()
	for i := range entries {
		if entries[i].Result.Value == ResultMalformed {
			continue
		}
		var out []byte
		for _, op := range cmds[i].Ops {
			k := dataKey(m.group, op.Key)
			var err error
			switch op.Kind {
			case OpPut:
				err = b.Set(k, op.Value, nil)
			case OpDelete:
				err = b.Delete(k, nil)
			case OpAdd:
				var n int64
				n, err = addCounter(b, k, op.Delta)
				out = binary.BigEndian.AppendUint64(out, uint64(n))
			}
			if err != nil {
				return fmt.Errorf("kvsm: group %d: applying entry %d: %w", m.group, entries[i].Index, err)
			}
		}
		entries[i].Result = raft.Result{Value: ResultApplied, Data: out}
	}
	var idx [8]byte
	binary.BigEndian.PutUint64(idx[:], entries[len(entries)-1].Index)
	if err := b.Set(m.applied, idx[:], nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("kvsm: group %d: commit: %w", m.group, err)
	}
	return nil
}

// addCounter adds delta to the counter at k in b and returns the sum. A
// counter that does not hold 8 bytes counts as 0: a Put of other bytes under
// the same key is the writer's mistake, and applying must stay deterministic.
func addCounter(b *pebble.Batch, k []byte, delta int64) (int64, error) {
	var cur int64
	v, closer, err := b.Get(k)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return 0, err
	default:
		if len(v) == 8 {
			cur = int64(binary.BigEndian.Uint64(v))
		}
		closer.Close()
	}
	cur += delta
	var nb [8]byte
	binary.BigEndian.PutUint64(nb[:], uint64(cur))
	return cur, b.Set(k, nb[:], nil)
}

// Sync makes every applied batch durable: one fsync of Pebble's WAL, which
// holds them all.
func (m *stateMachine) Sync() error {
	return m.store.db.LogData(nil, pebble.Sync)
}

func (m *stateMachine) Close() error {
	m.closed.Store(true)
	return nil
}
