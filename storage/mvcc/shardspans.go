package mvcc

import "github.com/pivotdb/pivotdb/storage"

// LocalReplicaState is the local kind byte (0x03 0x04 ...) reserved for the
// state a replicated shard keeps about itself under its Raft group's id
// rather than under a row key: its applied index, descriptor and stats
// counter (cluster/shardsm). This package never reads or writes it.
const LocalReplicaState byte = 0x04

// ShardSpans returns the user-key spans holding the data of the shard whose
// rows are span: the rows themselves and, in the local area, the lock
// records, transaction records and GC state addressed by its row keys, in
// ascending key order. A shard's snapshot is these spans (design §12), and
// a split divides each of them at the same row key. span.End must be set
// and sort at or below the local area (0x03): row keys do.
func ShardSpans(span storage.Span) []storage.Span {
	local := func(kind byte) storage.Span {
		return storage.Span{
			Start: append([]byte{LocalPrefix, kind}, span.Start...),
			End:   append([]byte{LocalPrefix, kind}, span.End...),
		}
	}
	return []storage.Span{span, local(localLock), local(localTxnRecord), local(localGCState)}
}

// EngineSpan returns the engine-key bounds [lower, upper) of a user-key
// span: every version, bare key and lock suffix of the user keys in it. A
// nil End leaves upper nil (unbounded).
func EngineSpan(s storage.Span) (lower, upper []byte, err error) { return engineSpan(s) }
