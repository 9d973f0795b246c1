package partition

import (
	"bytes"
	"fmt"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
)

// Persisted layout.
//
// Shard records, pending markers, reshape counters and the sequence live in
// the system area. Keys are tuples in storage's key encoding (S =
// AppendString, U = AppendUint64, B = AppendBytes), so that they sort by
// table and then by pivot or shard id, and each table's records of one kind
// form one key range that Drop removes with a range tombstone:
//
//	key                                                     value
//	01 S"part" S"seq"                                       U(next shard id)
//	01 S"part" S"shard"   U(table id) B(pivot suffix)       U(shard id)
//	01 S"part" S"pending" U(table id) U(shard id)           empty
//	01 S"part" S"table"   U(table id)                       counters [splits, merges, reshards]
//	03 11 <pivot>                                           counters [rows, bytes]
//
// The pivot suffix is the pivot without the table prefix (empty for pivot
// 0); B keeps byte order, so a table's shard records are read in pivot
// order.
//
// A shard's statistics counter is a shard-local key (storage's local kind
// LocalPartitionStats, namespace meta.PartitionStats): 03 11 followed by
// the shard's full pivot, unescaped (pivot 0 is the table prefix). It is
// addressed by the shard's first row key, so on a cluster with a Raft group
// per shard it lives in the rows' group (cluster/shardsm.RouteKey routes a
// local key by the row key after its kind byte), and a write that changes a
// shard's row count commits in that one group. A table's counters are the
// prefix 03 11 <table prefix>: one scan, one range deletion at Drop. The
// key names the shard's start, not its id: a split's first new shard and a
// merge's new shard reuse the key of the old shard that started at the
// same pivot, which the swap batch deletes (or replaces) first.
//
// "table" and counter values are storage counter vectors, changed only by
// Batch.Merge deltas (plus a Set when a shard's base count is rebuilt at
// Load or a merge sums its sources). A "pending" marker says the shard's
// counter lacks its base count (see stats.go); Load recounts such shards.
//
// Before the counters were shard-local they were system keys
//
//	01 S"part" S"stats"   U(table id) U(shard id)           counters [rows, bytes]
//
// (legacyStatsNS); Load moves any it finds to the new key of the shard with
// that id, in one batch, before anything writes (migrateLegacyStats).
//
// Example: table 7 with shards #3 [(), (10)) and #5 [(10), <end>), key
// (k Int64), 120 rows of 5321 bytes in #5. S"part" is 01 70617274 0001; the
// pivot suffix of (10), 01 800000000000000a, has its 00 bytes escaped in the
// shard record and not in the counter key:
//
//	01 S"part" S"shard" 01 0000000000000007 01 0001                               -> 01 0000000000000003
//	01 S"part" S"shard" 01 0000000000000007 01 018000ff00ff00ff00ff00ff00ff0a 0001 -> 01 0000000000000005
//	03 11 02 0000000000000007 01 800000000000000a                                 -> 0000000000000078 00000000000014c9
var (
	nsPrefix      = clone(meta.Partition)
	seqKey        = storage.AppendString(clone(nsPrefix), "seq")
	shardNS       = storage.AppendString(clone(nsPrefix), "shard")
	legacyStatsNS = storage.AppendString(clone(nsPrefix), "stats")
	pendingNS     = storage.AppendString(clone(nsPrefix), "pending")
	tableStatsNS  = storage.AppendString(clone(nsPrefix), "table")
	allShardsSpan = storage.PrefixSpan(shardNS)
)

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// tableKeyPrefix returns ns followed by the table id.
func tableKeyPrefix(ns []byte, tableID uint64) []byte {
	return storage.AppendUint64(clone(ns), tableID)
}

// shardRecordKey is the key of the record of the shard starting at pivot.
func shardRecordKey(tableID uint64, pivot []byte) []byte {
	return storage.AppendBytes(tableKeyPrefix(shardNS, tableID), pivot[len(storage.TablePrefix(tableID)):])
}

// statsKey is the key of the [rows, bytes] counters of the shard starting
// at pivot.
func statsKey(pivot []byte) []byte {
	return append(append(make([]byte, 0, len(meta.PartitionStats)+len(pivot)), meta.PartitionStats...), pivot...)
}

// ShardStatsKey is the key of the statistics counter of the shard that
// starts at pivot (a full pivot: pivot 0 is the table prefix): a
// shard-local key that routes to the shard holding the row key pivot. For
// tools and for the cluster's tests of that routing.
func ShardStatsKey(pivot []byte) []byte { return statsKey(pivot) }

// tableStatsSpan is the span of every shard counter of a table.
func tableStatsSpan(tableID uint64) storage.Span {
	return storage.PrefixSpan(statsKey(storage.TablePrefix(tableID)))
}

// decodeStatsKey returns the table and the pivot a shard counter key is
// addressed by.
func decodeStatsKey(key []byte) (tableID uint64, pivot []byte, err error) {
	pivot, ok := bytes.CutPrefix(key, meta.PartitionStats)
	if !ok {
		return 0, nil, fmt.Errorf("%w: key %s", ErrCorruptRecord, storage.FormatKey(key))
	}
	if tableID, _, err = storage.DecodeTablePrefix(pivot); err != nil {
		return 0, nil, fmt.Errorf("%w: key %s: %w", ErrCorruptRecord, storage.FormatKey(key), err)
	}
	return tableID, pivot, nil
}

// legacyStatsKey is where a shard's counters were before they became
// shard-local (migrateLegacyStats).
func legacyStatsKey(tableID uint64, id ShardID) []byte {
	return storage.AppendUint64(tableKeyPrefix(legacyStatsNS, tableID), uint64(id))
}

// pendingKey is the key of a shard's stats-pending marker.
func pendingKey(tableID uint64, id ShardID) []byte {
	return storage.AppendUint64(tableKeyPrefix(pendingNS, tableID), uint64(id))
}

// tableStatsKey is the key of a table's [splits, merges, reshards] counters.
func tableStatsKey(tableID uint64) []byte { return tableKeyPrefix(tableStatsNS, tableID) }

// tableMetaSpans are the spans of every record of one table, which Drop
// deletes.
func tableMetaSpans(tableID uint64) []storage.Span {
	return []storage.Span{
		storage.PrefixSpan(tableKeyPrefix(shardNS, tableID)),
		tableStatsSpan(tableID),
		storage.PrefixSpan(tableKeyPrefix(legacyStatsNS, tableID)),
		storage.PrefixSpan(tableKeyPrefix(pendingNS, tableID)),
		storage.PrefixSpan(tableStatsKey(tableID)),
	}
}

// decodeShardRecord decodes a shard record into its table, full pivot and
// shard id.
func decodeShardRecord(key, value []byte) (tableID uint64, pivot []byte, id ShardID, err error) {
	rest, ok := bytes.CutPrefix(key, shardNS)
	if !ok {
		return 0, nil, 0, fmt.Errorf("%w: key %s", ErrCorruptRecord, storage.FormatKey(key))
	}
	tableID, rest, err = storage.DecodeUint64(rest)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("%w: key %s: %w", ErrCorruptRecord, storage.FormatKey(key), err)
	}
	suffix, rest, err := storage.DecodeBytes(rest)
	if err != nil || len(rest) != 0 {
		return 0, nil, 0, fmt.Errorf("%w: key %s: bad pivot", ErrCorruptRecord, storage.FormatKey(key))
	}
	// Later fields may follow the id in future versions; they are ignored.
	u, _, err := storage.DecodeUint64(value)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("%w: value of %s: %w", ErrCorruptRecord, storage.FormatKey(key), err)
	}
	return tableID, append(storage.TablePrefix(tableID), suffix...), ShardID(u), nil
}

// decodeShardIDKey decodes a stats or pending key of namespace ns into its
// table and shard id.
func decodeShardIDKey(ns, key []byte) (tableID uint64, id ShardID, err error) {
	rest, ok := bytes.CutPrefix(key, ns)
	if !ok {
		return 0, 0, fmt.Errorf("%w: key %s", ErrCorruptRecord, storage.FormatKey(key))
	}
	tableID, rest, err = storage.DecodeUint64(rest)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: key %s: %w", ErrCorruptRecord, storage.FormatKey(key), err)
	}
	u, rest, err := storage.DecodeUint64(rest)
	if err != nil || len(rest) != 0 {
		return 0, 0, fmt.Errorf("%w: key %s: bad shard id", ErrCorruptRecord, storage.FormatKey(key))
	}
	return tableID, ShardID(u), nil
}

// encodeShardID is the value of a shard record.
func encodeShardID(id ShardID) []byte { return storage.AppendUint64(nil, uint64(id)) }
