package partition

import "github.com/pivotdb/pivotdb/storage"

// Statistics of a transaction's intents (issue 16 item 9; storage's
// IntentStats).
//
// A transaction block whose writes went to the store as intents keeps no
// Writes of them: that record holds every written key, and its memory
// would grow with the rows the block writes (about 52 bytes a row for a
// COPY of millions). Its statistics are counted as the commit resolves
// the intents instead: each key against the committed version its intent
// goes over, which the intent (the key's lock) has kept stable since the
// write. Each resolution batch carries the counts of the keys it resolves,
// routed through the current shard maps under the tables' commit locks
// like any commit's (Commit), so a split or merge sees every key either in
// its snapshot or in its new shards' deltas, and recovery after a crash,
// which resolves only what is left, counts each key once. The observers
// (Observe) and the load samples get the keys there too.
//
// Memory: one Writes per resolution batch (resolveChunkBytes of writes),
// reset after each.

// IntentStats returns a counter for one transaction's intent resolution.
func (m *Manager) IntentStats() storage.IntentStats { return &intentStats{m: m} }

type intentStats struct {
	m *Manager
	w Writes
}

// Resolved records the key's change relative to the committed version
// below its intent. Keys of no table (none are versioned today) are not
// counted.
func (s *intentStats) Resolved(key []byte, prevLive bool, prevLen int, live bool, newLen int) {
	id, _, err := storage.DecodeTablePrefix(key)
	if err != nil {
		return
	}
	switch {
	case live:
		s.w.RecordPut(id, key, newLen, prevLive, prevLen)
	default:
		s.w.RecordDelete(id, key, prevLive, prevLen)
	}
}

// Commit routes the keys resolved since the last Commit to their shards,
// adds the deltas to w and commits it. The writes of a table dropped
// meanwhile are left out: the commit point is past, and nothing counts
// that table any more.
func (s *intentStats) Commit(w *storage.LocalBatch, commit func() error) error {
	defer s.w.Reset()
	if len(s.w.entries) == 0 {
		return commit()
	}
	s.m.SampleWrites(&s.w)
	return s.m.commitWrites(&s.w, nil, w, commit, true)
}
