package shardsm

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Several Writes in one Pebble batch (a cluster node's commit path).
//
// Dragonboat hands Apply every entry committed since the last call; under
// concurrent commits that is several Writes at a time. Applying each in a
// batch of its own costs a Pebble commit per entry and rewrites the applied
// index and the stats counter each time (memtable inserts of the same
// state keys). A run puts consecutive Writes into one unindexed batch and
// writes the state keys once, with the run's last index as the applied
// index: a crash keeps a prefix of whole runs, each with its index, so
// Open's index still matches the data.
//
// A Write reads the store before it writes (VersionStatsDelta, or the
// recount of a range deletion): the versions of the row keys it touches.
// The Writes of a run read through one iterator opened before the run's
// first read (mvcc.StatsDeltaReader): what it shows is the store before
// the run, which is what each of them would read alone.
// The run's batch is not committed yet, so a Write whose spans overlap a
// span an earlier Write of the run touched closes the run first (it is
// committed, and the Write starts the next one): a Write never reads past
// an uncommitted write of its own keys. Every other command (Batch, Init,
// Split, Serve, a malformed one) closes the run and applies alone
// (applyOne), as do Writes that touch many spans (a bulk load's).
// Results stay per entry. Replicas may be handed different slices of the
// log and so cut different runs; that does not matter: no Write of a run
// reads what another of it wrote, so each entry's outcome and writes are
// the ones it would have alone, and at the end of every Apply call the
// state keys hold what entry-by-entry application leaves.

const (
	// runMaxSpans bounds the spans one run tracks, and runWriteSpans the
	// spans of a Write that may join a run (the overlap checks are by
	// pairs).
	runMaxSpans   = 256
	runWriteSpans = 16
	// runMaxBytes closes a run whose batch grew this large.
	runMaxBytes = 4 << 20
)

// run is the open run of Apply: its batch, the replica's state as the
// run's Writes leave it, and the spans they touched.
type run struct {
	m *stateMachine
	b *pebble.Batch // nil: no run open

	desc        Descriptor
	initialized bool
	serving     Serving
	closedTS    hlc.Timestamp // Close is never in a run: it stays as opened
	stats       mvcc.Stats
	maxTS       hlc.Timestamp
	stats0      mvcc.Stats // at the start, to tell what changed
	maxTS0      hlc.Timestamp
	last        uint64 // the index of the run's last entry
	spans       []storage.Span
	entries     int
	// deltas reads the versions the run's Writes touch (their stats
	// change) through one iterator of the store as it was before the
	// run: no Write of a run reads a key another of it wrote.
	deltas *mvcc.StatsDeltaReader
	// ids are the IDs of the run's Writes applied once (writeonce.go):
	// a repeat of one closes the run first, so that it finds the record.
	ids map[CommitID]struct{}
}

// applyRuns is Apply of a store in local-lock mode: runs of Writes share
// a batch (see above); anything else is applied alone.
func (m *stateMachine) applyRuns(entries []raft.Entry) error {
	r := &run{m: m}
	defer func() {
		if r.b != nil {
			r.b.Close()
			r.deltas.Close() // the run failed: its error is the one to report
		}
	}()
	for i := range entries {
		e := &entries[i]
		cmd, err := decodeCommand(e.Cmd)
		w, isWrite := cmd.(*Write)
		var spans []storage.Span
		if err == nil && isWrite {
			spans, err = writeSpans(w)
		}
		if err != nil || !isWrite || len(spans) > runWriteSpans {
			if err := r.flush(); err != nil {
				return fmt.Errorf("shardsm: group %d: applying entries up to %d: %w", m.group, r.last, err)
			}
			if err := m.applyOne(e); err != nil {
				return fmt.Errorf("shardsm: group %d: applying entry %d: %w", m.group, e.Index, err)
			}
			continue
		}
		_, repeated := r.ids[w.ID]
		if r.b != nil && (repeated || r.overlaps(spans) || len(r.spans)+len(spans) > runMaxSpans || r.b.Len() > runMaxBytes) {
			if err := r.flush(); err != nil {
				return fmt.Errorf("shardsm: group %d: applying entries up to %d: %w", m.group, r.last, err)
			}
		}
		if r.b == nil {
			r.open()
		}
		out, delta, maxTS, err := m.applyWriteCmd(r.b, w, e.Index, r.desc, r.initialized, r.serving, r.maxTS, r.closedTS, r.deltas)
		if err != nil {
			return fmt.Errorf("shardsm: group %d: applying entry %d: %w", m.group, e.Index, err)
		}
		m.recent.note(e.Index, w)
		if out.keep && !w.ID.IsZero() {
			if r.ids == nil {
				r.ids = map[CommitID]struct{}{}
			}
			r.ids[w.ID] = struct{}{}
		}
		if out.keep {
			r.stats.Add(delta)
			r.maxTS = maxTS
			r.spans = append(r.spans, spans...)
		}
		r.last = e.Index
		r.entries++
		e.Result = out.res
	}
	if err := r.flush(); err != nil {
		return fmt.Errorf("shardsm: group %d: applying entries up to %d: %w", m.group, r.last, err)
	}
	return nil
}

// open starts a run from the replica's cached state.
func (r *run) open() {
	m := r.m
	m.mu.RLock()
	r.desc, r.initialized, r.serving, r.closedTS, r.stats, r.maxTS = m.desc, m.initialized, m.serving, m.closedTS, m.stats, m.maxTS
	m.mu.RUnlock()
	r.stats0, r.maxTS0 = r.stats, r.maxTS
	r.b = m.store.db.NewBatch()
	r.deltas = mvcc.NewStatsDeltaReader(m.store.db)
	r.spans = r.spans[:0]
	r.entries = 0
	clear(r.ids)
}

// overlaps reports whether any of spans meets a span the run touched.
func (r *run) overlaps(spans []storage.Span) bool {
	for _, a := range spans {
		for _, b := range r.spans {
			if bytes.Compare(a.Start, b.End) < 0 && bytes.Compare(b.Start, a.End) < 0 {
				return true
			}
		}
	}
	return false
}

// flush commits the open run, if any: its Writes, the stats counter and
// newest timestamp if they changed, and the applied index of its last
// entry; then the cached state follows.
func (r *run) flush() error {
	if r.b == nil {
		return nil
	}
	b, m := r.b, r.m
	r.b = nil
	defer b.Close()
	if err := r.deltas.Close(); err != nil {
		return err
	}
	if r.maxTS != r.maxTS0 {
		if err := b.Set(stateKey(m.group, stateMaxTimestamp), appendTimestamp(nil, r.maxTS), nil); err != nil {
			return err
		}
	}
	if r.stats != r.stats0 {
		if err := b.Set(stateKey(m.group, stateStats), encodeStats(r.stats), nil); err != nil {
			return err
		}
	}
	if err := b.Set(stateKey(m.group, stateApplied), binary.BigEndian.AppendUint64(nil, r.last), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	m.mu.Lock()
	m.stats, m.maxTS = r.stats, r.maxTS
	m.mu.Unlock()
	m.store.writeRuns.Add(1)
	m.store.runWrites.Add(int64(r.entries))
	if r.maxTS != r.maxTS0 {
		return m.store.observe(r.maxTS)
	}
	return nil
}

// writeSpans returns the row-key spans c's mutations touch (what
// applyWrite reads and checks against the shard), merged.
func writeSpans(c *Write) ([]storage.Span, error) {
	spans := make([]storage.Span, 0, len(c.Mutations))
	for _, mu := range c.Mutations {
		if mu.Kind == storage.MutationDeleteRange {
			sp, err := routeRange(mu.Key, mu.Value)
			if err != nil {
				return nil, err
			}
			spans = append(spans, sp)
			continue
		}
		k, err := RouteKey(mu.Key)
		if err != nil {
			return nil, err
		}
		spans = append(spans, storage.Span{Start: k, End: append(k[:len(k):len(k)], 0)})
	}
	return mergeSpans(spans), nil
}
