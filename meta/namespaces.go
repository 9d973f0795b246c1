package meta

import (
	"bytes"
	"fmt"

	"github.com/pivotdb/pivotdb/storage"
)

// A namespace is the key prefix of one kind of metadata. The encodings
// differ by history (the catalog's prefixes are plain text, the shard
// manager's order-preserving strings) and are kept as they are on disk.
var (
	// Catalog holds the catalog's records: "cat/seq", "cat/db/", "cat/tbl/",
	// "cat/view/", "cat/user/" (sql/catalog).
	Catalog = append([]byte{storage.SystemPrefix}, "cat/"...)
	// Partition holds the shard manager's records: shard maps, statistics,
	// pending markers, reshape counters, the shard id sequence (partition).
	Partition = storage.AppendString([]byte{storage.SystemPrefix}, "part")
	// Sequence holds where each sequence stands: "seq/" <id BE8> → the
	// first value not reserved yet and whether the sequence ran out
	// (package sql, sequences.go). It is written on every reservation of a
	// range of values, outside schema changes.
	Sequence = append([]byte{storage.SystemPrefix}, "seq/"...)
	// Jobs holds the jobs registry: "job/" <id BE8> → the job's record as
	// JSON (package jobs). Written when a job starts, at most once a second
	// while it runs, and when it ends.
	Jobs = append([]byte{storage.SystemPrefix}, "job/"...)
	// PartitionStats holds the shard manager's per-shard statistics
	// counters: 0x03 0x11 <shard pivot> (partition/keys.go). Unlike the
	// others it is not in the system area but shard-local, addressed by
	// the shard's first row key, so that on a cluster a write's counter
	// delta commits in the same shard group as its rows.
	PartitionStats = []byte{0x03, storage.LocalPartitionStats}
)

// namespaces lists every registered namespace; a new kind of metadata
// adds its prefix here.
var namespaces = [][]byte{Catalog, Partition, Sequence, Jobs, PartitionStats}

// Check returns an error unless key belongs to a registered namespace.
func Check(key []byte) error {
	for _, ns := range namespaces {
		if bytes.HasPrefix(key, ns) {
			return nil
		}
	}
	return fmt.Errorf("meta: %s is not a metadata key", storage.FormatKey(key))
}

// checkSpan returns an error unless span lies inside one namespace.
func checkSpan(span storage.Span) error {
	for _, ns := range namespaces {
		if bytes.HasPrefix(span.Start, ns) && span.End != nil && bytes.Compare(span.End, storage.PrefixEnd(ns)) <= 0 {
			return nil
		}
	}
	return fmt.Errorf("meta: span [%s, %s) is not inside a metadata namespace", storage.FormatKey(span.Start), storage.FormatKey(span.End))
}
