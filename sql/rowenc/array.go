package rowenc

import (
	"encoding/binary"
	"math"

	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// An array column's value is a wireBytes payload holding
//
//	uvarint(ndims) · ndims × (varint(length) · varint(lower bound))
//	· each element as (wire tag · payload), wireNull for a NULL element
//
// with the element count implied by the dimensions. Elements use the
// same wire tags and payloads as columns, so the element type read from
// the schema decodes them as it decodes a column.

// appendArray appends the payload of a non-NULL array value.
func appendArray(buf []byte, v types.Value) []byte {
	dims, lower := v.ArrayDims(), v.ArrayLower()
	buf = binary.AppendUvarint(buf, uint64(len(dims)))
	for i := range dims {
		buf = binary.AppendVarint(buf, int64(dims[i]))
		buf = binary.AppendVarint(buf, int64(lower[i]))
	}
	for _, e := range v.ArrayElems() {
		if e.IsNull() {
			buf = append(buf, wireNull)
			continue
		}
		buf = appendPayload(buf, e)
	}
	return buf
}

// decodeArray decodes an array payload whose elements have type elem.
func decodeArray(elem types.Type, b []byte) (types.Value, error) {
	nd, n := binary.Uvarint(b)
	if n <= 0 || nd > types.MaxArrayDims {
		return types.Value{}, ErrCorruptValue
	}
	b = b[n:]
	dims := make([]int, nd)
	lower := make([]int, nd)
	count := 1
	for i := range dims {
		d, n := binary.Varint(b)
		if n <= 0 || d < 0 || d > math.MaxInt32 {
			return types.Value{}, ErrCorruptValue
		}
		b = b[n:]
		lo, n := binary.Varint(b)
		if n <= 0 || lo < math.MinInt32 || lo > math.MaxInt32 {
			return types.Value{}, ErrCorruptValue
		}
		b = b[n:]
		dims[i], lower[i] = int(d), int(lo)
		count *= int(d)
		if count > len(b) {
			// Every element takes at least one byte.
			return types.Value{}, ErrCorruptValue
		}
	}
	if nd == 0 {
		count = 0
	}
	elems := make([]types.Value, count)
	for i := range elems {
		if len(b) == 0 {
			return types.Value{}, ErrCorruptValue
		}
		wire := b[0]
		v, rest, err := decodePayload(wire, b[1:], &elem)
		if err != nil {
			return types.Value{}, err
		}
		elems[i], b = v, rest
	}
	if len(b) != 0 {
		return types.Value{}, ErrCorruptValue
	}
	if nd == 0 {
		return types.NewArray(elem, nil), nil
	}
	v, err := types.NewArrayDims(elem, dims, lower, elems)
	if err != nil {
		return types.Value{}, ErrCorruptValue
	}
	return v, nil
}

// appendArrayKey appends an order-preserving encoding of an array, for
// the executor's sort and partition keys (arrays are never stored in
// primary keys or indexes): each element behind a 1 byte, then a 0
// byte, so that a prefix sorts first as in types.Compare. NULL elements
// sort last there, so they take a 2 byte instead.
func appendArrayKey(buf []byte, v types.Value) []byte {
	for _, e := range v.ArrayElems() {
		if e.IsNull() {
			buf = append(buf, 2)
			continue
		}
		buf = append(buf, 1)
		buf = AppendKeyValue(buf, e)
	}
	buf = append(buf, 0)
	for i, d := range v.ArrayDims() {
		buf = storage.AppendInt64(buf, int64(d))
		buf = storage.AppendInt64(buf, int64(v.ArrayLower()[i]))
	}
	return buf
}
