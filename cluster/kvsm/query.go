package kvsm

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Queries a replica answers through raft.Host.Read and StaleRead.
type (
	// Get reads one key; the answer is a GetResult.
	Get struct{ Key []byte }
	// Scan reads the keys of [Start, End) in order (a nil End: to the end of
	// the group), at most Limit of them when Limit > 0; the answer is a
	// []KV.
	Scan struct {
		Start, End []byte
		Limit      int
	}
	// Applied asks for the replica's applied index; the answer is a uint64.
	Applied struct{}
)

// GetResult answers Get.
type GetResult struct {
	Value []byte
	Found bool
}

// KV is one key and its value.
type KV struct {
	Key, Value []byte
}

func (m *stateMachine) Lookup(q any) (any, error) {
	if m.closed.Load() {
		return nil, errClosed
	}
	db := m.store.db
	switch q := q.(type) {
	case Get:
		v, closer, err := db.Get(dataKey(m.group, q.Key))
		if err == pebble.ErrNotFound {
			return GetResult{}, nil
		}
		if err != nil {
			return nil, err
		}
		defer closer.Close()
		return GetResult{Value: append([]byte(nil), v...), Found: true}, nil
	case Scan:
		lo, hi := dataSpan(m.group, q.Start, q.End)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return nil, err
		}
		var out []KV
		for ok := it.First(); ok && (q.Limit <= 0 || len(out) < q.Limit); ok = it.Next() {
			out = append(out, KV{
				Key:   append([]byte(nil), it.Key()[groupPrefixLen+1:]...),
				Value: append([]byte(nil), it.Value()...),
			})
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
		return out, nil
	case Applied:
		return readApplied(db, m.applied)
	}
	return nil, fmt.Errorf("kvsm: unknown query %T", q)
}
