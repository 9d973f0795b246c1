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
// reader in key order (txn.GetSorted); write then takes the row's
// coerced values, its encoded key and the key's pre-read value instead of
// coercing, encoding, locking and reading again (the second round was
// about 6% of a 1,000-row INSERT's CPU).
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

// preRead is what preRead left for one row of its chunk: the row's
// encoded key (its values coerced and key columns computed in place), and
// for the first row of each key whose lock was free, the key's value read
// under that lock.
type preRead struct {
	key     []byte
	read    bool // locked and read: val and present hold the key's value
	val     []byte
	present bool
}

// preRead reads the keys of rows (placed in the table's columns) ahead of
// their writes; see above. It leaves in w.pre one entry per row, in row
// order, up to the first row whose values do not coerce or whose key does
// not compute. write takes row i's entry (w.takePre) instead of coercing,
// computing and encoding the row's key, locking it and reading it again.
func (w *rowWriter) preRead(rows [][]types.Value) error {
	w.pre, w.preNext = w.pre[:0], -1
	if len(rows) < preReadMin || w.table.HiddenKeyColumn() >= 0 {
		return nil
	}
	// The keys are appended to one arena, fresh for each chunk (the
	// transaction may keep a written key): a capped slice of it each.
	var arena []byte
	for _, row := range rows {
		// A row is coerced and its key computed once: write keeps both.
		if w.coerce(row) != nil || w.compute(row, true) != nil {
			break
		}
		if arena == nil {
			arena = make([]byte, 0, len(rows)*rowenc.KeySizeHint(w.table, row))
		}
		start := len(arena)
		arena = rowenc.AppendKey(arena, w.table, row)
		w.pre = append(w.pre, preRead{key: arena[start:len(arena):len(arena)]})
	}
	// The rows in key order, equal keys in row order: the first row of a
	// key is the one its pre-read value serves.
	order := w.preOrder[:0]
	for i := range w.pre {
		order = append(order, int32(i))
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := bytes.Compare(w.pre[a].key, w.pre[b].key); c != 0 {
			return c
		}
		return int(a - b)
	})
	w.preOrder = order
	w.t.ReserveLocks(len(order))
	locked := w.preLocked[:0]
	lockedRow := w.preLockedRow[:0]
	for i, r := range order {
		k := w.pre[r].key
		if i > 0 && bytes.Equal(k, w.pre[order[i-1]].key) {
			continue
		}
		if w.t.TryLockStrength(k, mvcc.Update) == nil {
			locked = append(locked, k)
			lockedRow = append(lockedRow, r)
		}
	}
	w.preLocked, w.preLockedRow = locked, lockedRow
	if len(locked) == 0 {
		return nil
	}
	return w.t.GetSorted(locked, func(i int, val []byte, present bool) {
		p := &w.pre[lockedRow[i]]
		p.read, p.val, p.present = true, val, present
	})
}

// usePre makes row i of the chunk last given to preRead the next row
// write writes.
func (w *rowWriter) usePre(i int) { w.preNext = i }

// takePre returns the pre-read entry of the row write is about to write
// (nil: none), once.
func (w *rowWriter) takePre() *preRead {
	i := w.preNext
	w.preNext = -1
	if i < 0 || i >= len(w.pre) {
		return nil
	}
	return &w.pre[i]
}
