package storage

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

// The engine's key space is cut into areas by the first byte of every key:
//
//	 first byte   rest of the key                 holds
//	+------------+-------------------------------+--------------------------------+
//	| 0x00       |                               | reserved, never written        |
//	| 0x01       | system key                    | catalog, shard maps, settings  |
//	| 0x02       | table id (8 bytes BE) | pk    | rows of every table            |
//	| 0x03       | kind | row key ...            | shard-local keys (below)       |
//	| 0x04..0xFF |                               | reserved                       |
//	+------------+-------------------------------+--------------------------------+
//
// A row of table 42 whose primary key is (k Int64 = 20, l Utf8 = NULL):
//
//	02 | 00 00 00 00 00 00 00 2a | 01 80 00 00 00 00 00 00 14 | 00
//	^    ^ table id 42            ^  ^ k = 20, sign bit flipped  ^ l is NULL
//	|                             tag: non-NULL
//	table data area
//
// Table id 0 is never a table's: it holds the catalog's history, versions
// of the catalog's records (meta/history.go).
//
// Keeping the catalog and the shard maps in the same Pebble instance as the
// rows is what lets a split (which rewrites only a shard map) and a DDL change
// commit atomically in one batch together with any row writes. The table id is
// fixed-width big-endian, so the tables follow one another in id order and
// TableSpan is simply the prefix's span. Sub-layout inside the system area
// belongs to its users (sql's catalog, partition's shard maps); they are
// expected to build their keys with the tuple encoding in encoding.go after
// SystemPrefix, which keeps every system key self-describing in FormatKey.
const (
	// SystemPrefix starts every key of the system area.
	SystemPrefix byte = 0x01
	// TableDataPrefix starts every key of a table row; it is followed by the
	// table id (see TablePrefix).
	TableDataPrefix byte = 0x02
)

// Shard-local keys (0x03 <kind> <row key ...>) are routed, on a cluster,
// to the shard group that owns the row key after the kind byte
// (cluster/shardsm.RouteKey), so that they commit in the rows' own group
// and follow its snapshots and splits. storage/mvcc owns kinds 0x01-0x04;
// the others are:
//
//	0x03 0x10 <table prefix>   schema times (schematime.go)
//	0x03 0x11 <shard pivot>    a shard's [rows, bytes] statistics counter
//	                           (package partition, keys.go)
const (
	// LocalSchemaTime is the local kind of schema times.
	LocalSchemaTime byte = 0x10
	// LocalPartitionStats is the local kind of partition's per-shard
	// statistics counters, addressed by the shard's pivot (its first key).
	LocalPartitionStats byte = 0x11
	// LocalTxnRecord is storage/mvcc's kind of transaction records (0x03
	// 0x02 <anchor><txn id>; mvcc checks the two agree), which storage
	// does not read: only whether any exist (closedts.go's recovery hold).
	LocalTxnRecord byte = 0x02
)

// tablePrefixLen is the length of TablePrefix(id): the area byte and the id.
const tablePrefixLen = 1 + 8

// SystemSpan returns the span of the system area.
func SystemSpan() Span {
	return Span{Start: []byte{SystemPrefix}, End: []byte{SystemPrefix + 1}}
}

// TablesSpan returns the span holding the rows of every table.
func TablesSpan() Span {
	return Span{Start: []byte{TableDataPrefix}, End: []byte{TableDataPrefix + 1}}
}

// TablePrefix returns the prefix of every row key of the table: TableDataPrefix
// followed by the id as 8 bytes big-endian.
func TablePrefix(tableID uint64) []byte {
	return AppendTablePrefix(make([]byte, 0, tablePrefixLen), tableID)
}

// AppendTablePrefix appends TablePrefix(tableID) to buf. Row keys are built
// with it followed by the Append* functions of the primary key columns.
func AppendTablePrefix(buf []byte, tableID uint64) []byte {
	buf = append(buf, TableDataPrefix)
	return binary.BigEndian.AppendUint64(buf, tableID)
}

// TableSpan returns the span holding every row of the table.
func TableSpan(tableID uint64) Span {
	return PrefixSpan(TablePrefix(tableID))
}

// DecodeTablePrefix splits a row key into its table id and the encoded
// primary key that follows.
func DecodeTablePrefix(key []byte) (tableID uint64, rest []byte, err error) {
	if len(key) < tablePrefixLen || key[0] != TableDataPrefix {
		return 0, key, fmt.Errorf("%w: %s is not a table key", ErrCorruptEncoding, FormatKey(key))
	}
	return binary.BigEndian.Uint64(key[1:tablePrefixLen]), key[tablePrefixLen:], nil
}

// PrefixEnd returns the smallest key greater than every key that begins with
// prefix, for use as the exclusive End of the prefix's span. It increments the
// last byte that is not 0xFF and drops the 0xFF bytes after it. If there is no
// such key (prefix is empty or all 0xFF), PrefixEnd returns nil, which as a
// Span.End means "unbounded". The result never aliases prefix.
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			end := make([]byte, i+1)
			copy(end, prefix)
			end[i]++
			return end
		}
	}
	return nil
}

// FormatKey renders a key for logs, errors and test output: the area and the
// table id are decoded, the rest is shown in hex. It never fails; keys that do
// not follow the layout are shown as raw hex.
func FormatKey(key []byte) string {
	switch {
	case len(key) == 0:
		return "/Min"
	case key[0] == SystemPrefix:
		return "/System/" + hex.EncodeToString(key[1:])
	case key[0] == TableDataPrefix && len(key) >= tablePrefixLen:
		id := binary.BigEndian.Uint64(key[1:tablePrefixLen])
		return "/Table/" + strconv.FormatUint(id, 10) + "/" + hex.EncodeToString(key[tablePrefixLen:])
	default:
		return "0x" + hex.EncodeToString(key)
	}
}
