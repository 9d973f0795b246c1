package sql

import (
	"bytes"
	"slices"

	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// The existence checks of a multi-row INSERT, UPSERT or REPLACE as one
// sorted batch (issue 23). rowWriter.write reads each row's key before it
// writes the row (is it a duplicate, what does UPSERT keep, which index
// entries go); read one at a time, each read pays for a storage iterator
// of its own, which was half the CPU time of a 1,000-row INSERT. Before a
// chunk of rows is written, preRead computes their keys, takes the locks it
// can take without waiting, in key order, and reads those keys with one
// reader in key order (txn.GetSorted); write then takes a key's pre-read
// value instead of reading it again.
//
// What the statement does is unchanged:
//   - A key is pre-read under its lock, as write reads it, and a pre-read
//     value serves only the first write of its key: a second row with the
//     same key is read again and sees the first (23505, or UPSERT's update
//     of the row just written).
//   - Only locks free at once are taken early (TryLockStrength), so the
//     statement waits for other transactions exactly where the row-by-row
//     path waited: at the write of the row whose lock is held.
//   - A row whose values do not coerce or whose computed key fails ends
//     the pre-read there; write meets the error at that row, in order.
//   - Tables keyed by a generated random value (no PRIMARY KEY) draw the
//     key at write time and are not pre-read.

// preReadChunk is how many rows are placed, pre-read and written at a
// time, which bounds the memory the placed rows and their pre-read values
// add to the statement's.
const preReadChunk = 1024

// preReadMin is the fewest rows worth a batch: one row gains nothing.
const preReadMin = 2

// preRead is a key's value read by preRead.
type preRead struct {
	val     []byte
	present bool
}

// preRead reads the keys of rows (placed in the table's columns) ahead of
// their writes; see above. It leaves what it read in w.pre.
func (w *rowWriter) preRead(rows [][]types.Value) error {
	w.pre = nil
	if len(rows) < preReadMin || w.table.HiddenKeyColumn() >= 0 {
		return nil
	}
	keys := make([][]byte, 0, len(rows))
	for _, row := range rows {
		// write coerces and computes the key columns again; both give the
		// same values the second time.
		if w.coerce(row) != nil || w.compute(row, true) != nil {
			break
		}
		keys = append(keys, rowenc.EncodeKey(w.table, row))
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	locked := keys[:0]
	for _, k := range keys {
		if w.t.TryLockStrength(k, mvcc.Update) == nil {
			locked = append(locked, k)
		}
	}
	if len(locked) == 0 {
		return nil
	}
	w.pre = make(map[string]preRead, len(locked))
	return w.t.GetSorted(locked, func(i int, val []byte, present bool) {
		w.pre[string(locked[i])] = preRead{val: val, present: present}
	})
}
