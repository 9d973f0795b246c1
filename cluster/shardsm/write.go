package shardsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Write is one shard's part of a storage engine commit (storage.Replicator,
// cluster/shardrepl): engine-key mutations, rows already versioned at the
// commit timestamp, applied verbatim and all together. The storage engine
// decided them (its row locks, its commit timestamp), so the state machine
// does not judge them as it does Batch's MVCC operations; it only checks
// that every key is the shard's (else the answer is stale) and keeps the
// stats counter: the change of mvcc.ComputeStats over the row keys the
// mutations touch. Generation, when not 0, must be the shard's current one.
//
// Timestamp is the commit timestamp (zero for a commit of system keys
// only): each replica keeps the newest one in its state and tells its
// store's clock (Store.SetClock), so that a replica that later commits
// itself never takes a timestamp below a version it holds.
//
// Epoch is the serving epoch of the node that commits (serving.go): the
// write applies only while it is the group's.
//
// Stats, when set, is the stats change the write makes as the proposing
// node read it (AddStatsHint): a replica that can tell nothing else
// touched those keys since takes it instead of reading them (statshint.go).
type Write struct {
	Generation uint64
	Timestamp  hlc.Timestamp
	Epoch      uint64
	Mutations  []storage.Mutation
	Stats      *StatsHint
	// ID, when not zero, makes the Write one a replica applies at most
	// once (writeonce.go): the proposer may repeat a proposal whose
	// answer it lost. Only a Write with a commit timestamp carries one.
	ID CommitID

	// rowKeys caches rowKeyHashes.
	rowKeys      []uint64
	rowKeysPoint bool
	rowKeysDone  bool
}

// cmdWrite is a Write of epoch 0 (the encoding before serving epochs);
// cmdWriteEpoch carries the epoch after the generation.
const (
	cmdWrite      byte = 4
	cmdWriteEpoch byte = 6
)

// schemaTimeKind is the local kind 0x03 0x10 under which the storage engine
// keeps a table's schema time, addressed by the table prefix
// (storage/schematime.go): shard data like the lock records, which
// snapshots and writes route by the row key after the kind byte.
const schemaTimeKind = storage.LocalSchemaTime

// partitionStatsKind is the local kind 0x03 0x11 of partition's per-shard
// [rows, bytes] counters, addressed by the shard's pivot (partition/keys.go):
// shard data too, so that a write's counter delta commits in the group of
// its rows, and a split leaves each counter with the half holding its pivot.
const partitionStatsKind = storage.LocalPartitionStats

// RouteKey returns the row key that says which shard owns engine key k: its
// user key for a row or system key, and the row key a local key (0x03
// <kind> <row key ...>: lock records, transaction records, GC and schema
// state, partition's shard counters) is addressed by. A group's own state (0x03 0x04) is never routed.
func RouteKey(k []byte) ([]byte, error) {
	n := enginekey.Split(k)
	if n == 0 || k[n-1] != 0 {
		return nil, fmt.Errorf("shardsm: %x is not an engine key", k)
	}
	uk := k[:n-1]
	if len(uk) == 0 || uk[0] != mvcc.LocalPrefix {
		return uk, nil
	}
	if len(uk) < 3 || uk[1] == mvcc.LocalReplicaState {
		return nil, fmt.Errorf("shardsm: local key %x belongs to no shard", uk)
	}
	return uk[2:], nil
}

// routeRange returns the row-key span a range deletion [start, end) of
// engine keys covers; both ends must be of the same kind (both row keys,
// or both of one local kind).
func routeRange(start, end []byte) (storage.Span, error) {
	s, err := RouteKey(start)
	if err != nil {
		return storage.Span{}, err
	}
	e, err := RouteKey(end)
	if err != nil {
		return storage.Span{}, err
	}
	local := func(k []byte) int {
		if k[0] != mvcc.LocalPrefix {
			return -1
		}
		return int(k[1])
	}
	if local(start) != local(end) {
		return storage.Span{}, fmt.Errorf("shardsm: range deletion %x..%x crosses kinds of keys", start, end)
	}
	return storage.Span{Start: s, End: e}, nil
}

// EncodeWrite encodes w for raft.Host.Propose.
func EncodeWrite(w Write) ([]byte, error) {
	if len(w.Mutations) == 0 {
		return nil, fmt.Errorf("shardsm: a write without mutations")
	}
	size := 16
	for _, m := range w.Mutations {
		size += len(m.Key) + len(m.Value) + 11
	}
	out := make([]byte, 0, size)
	if !w.ID.IsZero() {
		if w.Timestamp.IsEmpty() {
			return nil, fmt.Errorf("shardsm: a write applied once needs a commit timestamp")
		}
		out = append(out, commandVersion, cmdWriteOnce)
		out = append(out, w.ID[:]...)
		out = binary.AppendUvarint(out, w.Generation)
		out = binary.AppendUvarint(out, w.Epoch)
	} else if w.Epoch == 0 {
		out = append(out, commandVersion, cmdWrite)
		out = binary.AppendUvarint(out, w.Generation)
	} else {
		out = append(out, commandVersion, cmdWriteEpoch)
		out = binary.AppendUvarint(out, w.Generation)
		out = binary.AppendUvarint(out, w.Epoch)
	}
	out = appendTimestamp(out, w.Timestamp)
	out = binary.AppendUvarint(out, uint64(len(w.Mutations)))
	for _, m := range w.Mutations {
		if m.Kind < storage.MutationSet || m.Kind > storage.MutationMerge || len(m.Key) == 0 {
			return nil, fmt.Errorf("shardsm: bad mutation %s of %x", m.Kind, m.Key)
		}
		out = append(out, byte(m.Kind))
		out = appendBytes(out, m.Key)
		out = appendBytes(out, m.Value)
	}
	if w.Stats != nil {
		// An optional trailer: 1, the base index, the delta's counters.
		out = append(out, 1)
		out = binary.AppendUvarint(out, w.Stats.Base)
		for _, c := range w.Stats.Delta.Counters() {
			out = binary.AppendVarint(out, c)
		}
	}
	return out, nil
}

func decodeWrite(r *reader, total int, withEpoch, withID bool) (*Write, error) {
	w := &Write{}
	if withID {
		copy(w.ID[:], r.fixed(len(w.ID)))
		if r.err == nil && w.ID.IsZero() {
			return nil, fmt.Errorf("%w: a write applied once with a zero id", errBadCommand)
		}
	}
	w.Generation = r.uvarint()
	if withEpoch {
		w.Epoch = r.uvarint()
	}
	w.Timestamp = r.timestamp()
	n := r.uvarint()
	if n == 0 || n > uint64(total) {
		return nil, fmt.Errorf("%w: %d mutations", errBadCommand, n)
	}
	w.Mutations = make([]storage.Mutation, n)
	for i := range w.Mutations {
		m := &w.Mutations[i]
		m.Kind = storage.MutationKind(r.byte())
		m.Key = r.bytes()
		m.Value = r.bytes()
		if r.err == nil && (m.Kind < storage.MutationSet || m.Kind > storage.MutationMerge || len(m.Key) == 0) {
			return nil, fmt.Errorf("%w: mutation kind %d", errBadCommand, m.Kind)
		}
	}
	if r.err == nil && withID && w.Timestamp.IsEmpty() {
		return nil, fmt.Errorf("%w: a write applied once without a commit timestamp", errBadCommand)
	}
	if r.err == nil && len(r.b) > 0 {
		if flag := r.byte(); flag != 1 {
			return nil, fmt.Errorf("%w: write trailer %d", errBadCommand, flag)
		}
		h := &StatsHint{Base: r.uvarint()}
		var c [8]int64
		for i := range c {
			c[i] = r.varint()
		}
		h.Delta = mvcc.Stats{LiveBytes: c[0], LiveCount: c[1], OldBytes: c[2], OldCount: c[3],
			IntentBytes: c[4], IntentCount: c[5], LockBytes: c[6], LockCount: c[7]}
		w.Stats = h
	}
	return w, nil
}

// applyWrite checks that every mutation of c is the shard's and writes them
// into b; the stats delta is the change of the touched row keys' stats:
// mvcc.VersionStatsDelta in local-lock mode (b need not be indexed then),
// else their recount after the writes minus before.
func (m *stateMachine) applyWrite(b *pebble.Batch, c *Write, desc Descriptor, initialized bool) (outcome, mvcc.Stats, error) {
	return m.applyWriteWith(b, c, 0, desc, initialized, nil)
}

// applyWriteWith is applyWrite of the entry at index (0: one carried in
// another command) reading the versions in local-lock mode through deltas,
// a reader of the store opened before b's writes and shared by the Writes
// of one run (applyrun.go; nil: a reader of its own) — unless c carries
// its stats change and nothing applied since it was read touched its keys
// (statshint.go).
func (m *stateMachine) applyWriteWith(b *pebble.Batch, c *Write, index uint64, desc Descriptor, initialized bool, deltas *mvcc.StatsDeltaReader) (_ outcome, delta mvcc.Stats, err error) {
	if !initialized || (c.Generation != 0 && c.Generation != desc.Generation) {
		return outcome{res: stale(desc, initialized)}, delta, nil
	}
	spans := make([]storage.Span, 0, len(c.Mutations))
	for _, mu := range c.Mutations {
		var sp storage.Span
		if mu.Kind == storage.MutationDeleteRange {
			var err error
			if sp, err = routeRange(mu.Key, mu.Value); err != nil {
				return outcome{res: rejected(err)}, delta, nil
			}
		} else {
			k, err := RouteKey(mu.Key)
			if err != nil {
				return outcome{res: rejected(err)}, delta, nil
			}
			sp = storage.Span{Start: k, End: append(k[:len(k):len(k)], 0)}
		}
		if !desc.ContainsSpan(sp) {
			return outcome{res: stale(desc, initialized)}, delta, nil
		}
		spans = append(spans, sp)
	}
	spans = mergeSpans(spans)
	if m.store.localLocks.Load() && index != 0 && m.hintHolds(c, index) {
		if err := storage.ApplyMutations(b, c.Mutations); err != nil {
			return outcome{}, delta, err
		}
		m.store.hintedWrites.Add(1)
		return outcome{res: raft.Result{Value: ResultApplied}, keep: true}, c.Stats.Delta, nil
	}
	if m.store.localLocks.Load() {
		// The lock records' share would be dropped below anyway: count the
		// versions' change with one prefix seek per row key, before the
		// writes.
		if deltas == nil {
			deltas = mvcc.NewStatsDeltaReader(m.store.db)
			defer func() {
				if cerr := deltas.Close(); err == nil {
					err = cerr
				}
			}()
		}
		d, ok, err := deltas.Delta(countedSpans(spans), c.Mutations)
		if err != nil {
			return outcome{}, delta, err
		}
		if ok {
			if err := storage.ApplyMutations(b, c.Mutations); err != nil {
				return outcome{}, delta, err
			}
			return outcome{res: raft.Result{Value: ResultApplied}, keep: true}, d, nil
		}
	}
	// Recount after the writes (a range deletion, a merge into a version):
	// from b when it is indexed (applyOne), else from an indexed copy.
	r := b
	if !b.Indexed() {
		r = m.store.db.NewIndexedBatch()
		defer r.Close()
		if err := storage.ApplyMutations(r, c.Mutations); err != nil {
			return outcome{}, delta, err
		}
	}
	before, err := statsOf(m.store.db, spans)
	if err != nil {
		return outcome{}, delta, err
	}
	if err := storage.ApplyMutations(b, c.Mutations); err != nil {
		return outcome{}, delta, err
	}
	after, err := statsOf(r, spans)
	if err != nil {
		return outcome{}, delta, err
	}
	delta = after
	delta.Sub(before)
	// Local lock records change outside commands (other transactions lock
	// while this applies): not the shard's to count.
	m.dropLocalLocks(&delta)
	return outcome{res: raft.Result{Value: ResultApplied}, keep: true}, delta, nil
}

// mergeSpans sorts spans and merges the overlapping and adjacent ones, so
// that no key is counted twice.
func mergeSpans(spans []storage.Span) []storage.Span {
	slices.SortFunc(spans, func(a, b storage.Span) int { return bytes.Compare(a.Start, b.Start) })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && bytes.Compare(s.Start, out[n-1].End) <= 0 {
			if bytes.Compare(s.End, out[n-1].End) > 0 {
				out[n-1].End = s.End
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// statsOf sums mvcc.ComputeStats over spans of row keys; spans outside the
// table area hold no versions and count nothing.
func statsOf(r mvcc.Reader, spans []storage.Span) (mvcc.Stats, error) {
	// Sorted and disjoint (mergeSpans): one pass with two iterators.
	return mvcc.ComputeStatsOfSpans(r, countedSpans(spans))
}

// countedSpans leaves out of spans those outside the table area, which
// hold no versions.
func countedSpans(spans []storage.Span) []storage.Span {
	counted := spans[:0:0]
	for _, sp := range spans {
		if len(sp.Start) > 0 && sp.Start[0] != storage.TableDataPrefix && (len(sp.End) == 0 || sp.End[0] < storage.TableDataPrefix) {
			continue
		}
		counted = append(counted, sp)
	}
	return counted
}

// varint reads a signed varint (binary.AppendVarint) for reader r.
func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("a number")
		return 0
	}
	r.b = r.b[n:]
	return v
}
