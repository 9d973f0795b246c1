package exec

import (
	"sync/atomic"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/types"
)

// rawKey reads the one key column of a decorrelated EXISTS's build side
// straight from the stored rows of a plain scan (rawRows: the scan still
// applies its filter and the table's TTL), instead of decoding every
// column of every row into typed values and projecting the key out of
// them. A text key is copied from the stored bytes into the table's
// arena (keyset.go) with no string made per row; other keys decode that
// one column only. The table is the same as the one the row path builds:
// rowenc.ColumnText and DecodeColumn give what DecodeValue would.
type rawKey struct {
	rows  rawRows
	table *catalog.Table
	col   int  // the key's column in table, stored in the row's value
	text  bool // a text column, read as its stored bytes
}

// RawKeyBuilds counts the builds that read their keys through rawKey
// since the process started: tests check that the path is taken
// (sql's TestDecorrelatedRawKeys).
var RawKeyBuilds atomic.Int64

// rawKeyOf returns the raw reader of the build of s when the inner plan,
// built as it, is a scan read in one goroutine (serialScan, pointScan)
// whose projection exprs keeps a column stored in the rows' values as the
// one key of an EXISTS keyed by mode; nil otherwise (the rows are decoded
// as before). A primary-key column is left to that path: the binder
// hashes on one only when the correlation cannot narrow the inner read,
// which is rare.
func rawKeyOf(s *Subquery, mode hashKeyMode, it Iter, exprs []expr.Expr) *rawKey {
	if s.Kind != SubExists || len(s.Hash.Probe) != 1 || exprs == nil || s.Hash.KeyAt >= len(exprs) {
		return nil
	}
	var rows rawRows
	var t *catalog.Table
	switch sc := it.(type) {
	case *serialScan:
		rows, t = sc, sc.n.Table
	case *pointScan:
		rows, t = sc, sc.n.Table
	default:
		return nil
	}
	ref, ok := exprs[s.Hash.KeyAt].(*expr.ColumnRef)
	if !ok || ref.Index < 0 || ref.Index >= len(t.Columns) {
		return nil
	}
	f := t.Columns[ref.Index].Type.Family
	if ref.Typ.Family != f || t.IsKeyColumn(ref.Index) {
		return nil
	}
	rk := &rawKey{rows: rows, table: t, col: ref.Index}
	switch {
	case mode == keyText && (f == types.Utf8 || f == types.String):
		rk.text = true
	case mode == keyInt && f.IsInteger():
	default:
		return nil
	}
	RawKeyBuilds.Add(1)
	return rk
}

// put adds the key of the stored row key/val to t, as buildRows would
// from its decoded row: added is false for a NULL key or one already
// there, size the bytes it added.
func (rk *rawKey) put(t *subHashTable, val []byte) (size int64, added bool, err error) {
	if rk.text {
		b, ok, err := rowenc.ColumnText(rk.table, val, rk.col)
		if err != nil || !ok {
			return 0, false, err // a NULL key matches no outer row
		}
		if !t.set.add(b) {
			return 0, false, nil
		}
		return int64(len(b)) + keySetEntryBytes, true, nil
	}
	v, err := rowenc.DecodeColumn(rk.table, val, rk.col)
	if err != nil {
		return 0, false, err
	}
	if v.IsNull() {
		return 0, false, nil
	}
	vals := [1]types.Value{v}
	size, added = t.put(vals[:])
	return size, added, nil
}
