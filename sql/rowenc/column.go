package rowenc

import (
	"encoding/binary"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Single columns of a stored row value, for readers that need one column
// of many rows and no typed row: a hash semi join's build side keys its
// table by one column (sql/exec/subhash.go). Each function gives exactly
// what DecodeValue would put into that column, a column added with a
// DEFAULT (catalog.Column.Missing) included.

// columnEntry finds the entry of non-key column col in the row value val:
// its wire tag and the payload that follows (aliasing val, or the
// column's Missing default when the row holds no entry). ok is false when
// the column reads NULL.
func columnEntry(t *catalog.Table, val []byte, col int) (wire byte, payload []byte, ok bool, err error) {
	id := t.Columns[col].ID
	wire, payload, found, err := findEntry(val, id)
	if !found && err == nil {
		if m := t.Columns[col].Missing; m != nil {
			wire, payload, found, err = findEntry(m, id)
		}
	}
	return wire, payload, found && wire != wireNull, err
}

// findEntry finds the entry of column id in the row value val.
func findEntry(val []byte, id int) (wire byte, payload []byte, found bool, err error) {
	for len(val) > 0 {
		eid, n := binary.Uvarint(val)
		if n <= 0 || len(val) < n+1 {
			return 0, nil, false, ErrCorruptValue
		}
		wire, val = val[n], val[n+1:]
		if eid == uint64(id) {
			return wire, val, true, nil
		}
		l, err := payloadLen(wire, val)
		if err != nil {
			return 0, nil, false, err
		}
		val = val[l:]
	}
	return 0, nil, false, nil
}

// ColumnText returns the bytes of non-key column col — of family Utf8 or
// String — in the row value val, as DecodeValue would give them as the
// column's string, but aliasing val (or the column's Missing default)
// instead of copying. ok is false for NULL.
func ColumnText(t *catalog.Table, val []byte, col int) (b []byte, ok bool, err error) {
	wire, p, ok, err := columnEntry(t, val, col)
	if !ok || err != nil {
		return nil, false, err
	}
	if f := t.Columns[col].Type.Family; wire != wireBytes || (f != types.Utf8 && f != types.String) {
		return nil, false, ErrCorruptValue
	}
	l, n := binary.Uvarint(p)
	if n <= 0 || uint64(len(p)-n) < l {
		return nil, false, ErrCorruptValue
	}
	return p[n : n+int(l)], true, nil
}

// DecodeColumn decodes non-key column col of the row value val alone: the
// value DecodeValue would put into row[col].
func DecodeColumn(t *catalog.Table, val []byte, col int) (types.Value, error) {
	wire, p, ok, err := columnEntry(t, val, col)
	if !ok || err != nil {
		return types.NullValue, err
	}
	v, _, err := decodePayload(wire, p, &t.Columns[col].Type)
	return v, err
}
