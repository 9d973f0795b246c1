package shardsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// A replica's state lives in the node's store under the engine key layout
// (storage/enginekey), in two parts:
//
//   - the shard's data, addressed by row keys: rows (versions and intents)
//     in [Start, End), and the same span of the local kinds 0x03 0x01 (lock
//     records), 0x03 0x02 (transaction records) and 0x03 0x03 (GC
//     threshold) — mvcc.ShardSpans — and of 0x03 0x10 (schema times) and
//     0x03 0x11 (partition's per-shard statistics counters);
//
//   - the group's own state, addressed by its group id, as bare keys:
//
//     03 04 | group id (8 BE) | 01    applied index (8 BE)
//     03 04 | group id (8 BE) | 02    descriptor (encodeDescriptor)
//     03 04 | group id (8 BE) | 03    stats counter (8 × int64 BE, mvcc.Stats)
//     03 04 | group id (8 BE) | 04    founding members of a split child
//     03 04 | group id (8 BE) | 05    newest commit timestamp of a Write
//     03 04 | group id (8 BE) | 06    serving epoch and node (serving.go)
//     03 04 | group id (8 BE) | 07 | commit id   a staged part (crossgroup.go)
//     03 04 | group id (8 BE) | 08 | commit id   a decision record
//     03 04 | group id (8 BE) | 09    closed timestamp (closedts.go)
//     03 04 | group id (8 BE) | 14 | commit ts | id   a Write applied once (writeonce.go)
//
// The founding members are kept so that a node that crashed between
// applying a split and starting the child can still start it (its parent
// will not replay the split).
// The applied index, descriptor and stats are written in the same batch as
// the effects of the commands that change them.
const (
	stateApplied    byte = 0x01
	stateDescriptor byte = 0x02
	stateStats      byte = 0x03
	stateMembers    byte = 0x04
	// stateMaxTimestamp: the newest commit timestamp a Write carried
	// (12 bytes: wall BE, logical BE), so that a replica that takes over
	// serving can move its clock past every version it holds.
	stateMaxTimestamp byte = 0x05
	// stateServing: the serving epoch and node (serving.go), 8 BE each.
	stateServing byte = 0x06
	// stateClosed: the closed timestamp (closedts.go), 12 bytes as
	// stateMaxTimestamp.
	stateClosed byte = 0x09
)

// groupStatePrefix returns the user key 03 04 | g.
func groupStatePrefix(g raft.GroupID) []byte {
	b := make([]byte, 0, 2+8+2)
	b = append(b, mvcc.LocalPrefix, mvcc.LocalReplicaState)
	return binary.BigEndian.AppendUint64(b, uint64(g))
}

// stateKey returns the engine key (a bare key) of one of g's state entries.
func stateKey(g raft.GroupID, kind byte) []byte {
	return mvcc.AppendBareKey(nil, append(groupStatePrefix(g), kind))
}

// groupStateSpan returns the user-key span of g's own state.
func groupStateSpan(g raft.GroupID) storage.Span {
	s := storage.Span{Start: groupStatePrefix(g)}
	if g == raft.GroupID(^uint64(0)) {
		s.End = []byte{mvcc.LocalPrefix, mvcc.LocalReplicaState + 1}
	} else {
		s.End = groupStatePrefix(g + 1)
	}
	return s
}

// Descriptor is what a replica knows of its shard: the span of row keys it
// owns and a generation that every split raises. It is replicated state
// (written by commands), so every replica of a group agrees on it at each
// applied index.
type Descriptor struct {
	Span       storage.Span
	Generation uint64
}

// rowAreaEnd bounds shard spans: row keys (0x01 system, 0x02 tables) sort
// below the local area 0x03, which the shard's local spans live in.
var rowAreaEnd = []byte{mvcc.LocalPrefix}

// validate checks a descriptor's span: both ends set, Start < End, and
// everything below the local area.
func (d Descriptor) validate() error {
	s := d.Span
	if len(s.Start) == 0 || s.End == nil {
		return errors.New("shardsm: a shard span needs a start and an end")
	}
	if bytes.Compare(s.Start, s.End) >= 0 {
		return fmt.Errorf("shardsm: empty or inverted shard span %s", s)
	}
	if bytes.Compare(s.End, rowAreaEnd) > 0 {
		return fmt.Errorf("shardsm: shard span %s reaches into the local area 0x03", s)
	}
	return nil
}

// Contains reports whether the row key k is in the shard.
func (d Descriptor) Contains(k []byte) bool {
	return bytes.Compare(k, d.Span.Start) >= 0 && bytes.Compare(k, d.Span.End) < 0
}

// ContainsSpan reports whether the row-key span s lies inside the shard; a
// nil s.End means the single key s.Start.
func (d Descriptor) ContainsSpan(s storage.Span) bool {
	if !d.Contains(s.Start) {
		return false
	}
	return s.End == nil || (bytes.Compare(s.End, d.Span.End) <= 0 && bytes.Compare(s.Start, s.End) <= 0)
}

func (d Descriptor) String() string {
	return fmt.Sprintf("%s gen %d", d.Span, d.Generation)
}

func encodeDescriptor(d Descriptor) []byte {
	var b []byte
	b = appendBytes(b, d.Span.Start)
	b = appendBytes(b, d.Span.End)
	return binary.BigEndian.AppendUint64(b, d.Generation)
}

func decodeDescriptor(b []byte) (Descriptor, error) {
	r := reader{b: b}
	d := Descriptor{Span: storage.Span{Start: r.bytes(), End: r.bytes()}, Generation: r.u64()}
	if err := r.done(); err != nil {
		return Descriptor{}, fmt.Errorf("shardsm: corrupt descriptor: %w", err)
	}
	return d, nil
}

// dataSpans returns the engine-key bounds of the spans a replica of the
// shard d owns in group g, ascending: the data spans (mvcc.ShardSpans),
// the group's own state, then the schema times the storage engine keeps
// under the shard's table prefixes (0x03 0x10, write.go) and partition's
// statistics counters of the shards starting in its span (0x03 0x11).
//
// With localLocks (Store.SetLocalLocks) the lock records are left out: they
// are then the state of the node that holds the locks, not the shard's.
func dataSpans(g raft.GroupID, d *Descriptor, localLocks bool) [][2][]byte {
	var spans []storage.Span
	if d != nil {
		for _, sp := range mvcc.ShardSpans(d.Span) {
			if localLocks && isLockSpan(sp) {
				continue
			}
			spans = append(spans, sp)
		}
	}
	spans = append(spans, groupStateSpan(g))
	if d != nil {
		for _, kind := range []byte{schemaTimeKind, partitionStatsKind} {
			spans = append(spans, storage.Span{
				Start: append([]byte{mvcc.LocalPrefix, kind}, d.Span.Start...),
				End:   append([]byte{mvcc.LocalPrefix, kind}, d.Span.End...),
			})
		}
	}
	out := make([][2][]byte, len(spans))
	for i, s := range spans {
		lo, hi, _ := mvcc.EngineSpan(s) // spans are never inverted: validate
		out[i] = [2][]byte{lo, hi}
	}
	return out
}

func encodeStats(s mvcc.Stats) []byte {
	b := make([]byte, 0, 64)
	for _, c := range s.Counters() {
		b = binary.BigEndian.AppendUint64(b, uint64(c))
	}
	return b
}

func decodeStats(b []byte) (mvcc.Stats, error) {
	if len(b) != 64 {
		return mvcc.Stats{}, fmt.Errorf("shardsm: stats counter of %d bytes", len(b))
	}
	c := make([]int64, 8)
	for i := range c {
		c[i] = int64(binary.BigEndian.Uint64(b[8*i:]))
	}
	return mvcc.Stats{LiveBytes: c[0], LiveCount: c[1], OldBytes: c[2], OldCount: c[3],
		IntentBytes: c[4], IntentCount: c[5], LockBytes: c[6], LockCount: c[7]}, nil
}

// lessEngine orders engine keys as the store's comparer does.
func lessEngine(a, b []byte) bool { return enginekey.Compare(a, b) < 0 }

func encodeMembers(m map[raft.ReplicaID]string) []byte {
	b := binary.AppendUvarint(nil, uint64(len(m)))
	for _, r := range sortedReplicas(m) {
		b = binary.BigEndian.AppendUint64(b, uint64(r))
		b = appendBytes(b, []byte(m[r]))
	}
	return b
}

func decodeMembers(b []byte) (map[raft.ReplicaID]string, error) {
	r := reader{b: b}
	n := r.uvarint()
	if n > uint64(len(b)) {
		return nil, fmt.Errorf("shardsm: corrupt members: %d of them", n)
	}
	out := make(map[raft.ReplicaID]string, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		id := raft.ReplicaID(r.u64())
		out[id] = string(r.bytes())
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("shardsm: corrupt members: %w", err)
	}
	return out, nil
}

// lockRecordKind is the local kind of lock records (0x03 0x01, storage/mvcc).
const lockRecordKind byte = 0x01

// isLockSpan reports whether sp is a span of lock records.
func isLockSpan(sp storage.Span) bool {
	return len(sp.Start) >= 2 && sp.Start[0] == mvcc.LocalPrefix && sp.Start[1] == lockRecordKind
}
