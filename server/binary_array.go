package server

import (
	"encoding/binary"
	"math"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// PostgreSQL's binary array format (array_send / array_recv):
//
//	int32 ndim · int32 flags (1 when some element is NULL) · int32 element OID
//	· ndim × (int32 length · int32 lower bound)
//	· each element: int32 byte length (-1 for NULL) · its binary form

// appendBinaryArray appends array v in the binary format of array type
// oid, whose elements are sent as element type ElemOID(oid).
func appendBinaryArray(buf []byte, oid uint32, v types.Value) ([]byte, error) {
	if v.Family() != types.Array {
		return buf, sqlerr.New(sqlerr.InternalError, "server: cannot send a %v value as binary type %d", v.Family(), oid)
	}
	elemOID := types.ElemOID(oid)
	dims, lower := v.ArrayDims(), v.ArrayLower()
	flags := uint32(0)
	for _, e := range v.ArrayElems() {
		if e.IsNull() {
			flags = 1
			break
		}
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(dims)))
	buf = binary.BigEndian.AppendUint32(buf, flags)
	buf = binary.BigEndian.AppendUint32(buf, elemOID)
	for i := range dims {
		buf = binary.BigEndian.AppendUint32(buf, uint32(int32(dims[i])))
		buf = binary.BigEndian.AppendUint32(buf, uint32(int32(lower[i])))
	}
	for _, e := range v.ArrayElems() {
		if e.IsNull() {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // -1
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		if buf, err = appendBinary(buf, elemOID, e); err != nil {
			return buf, err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf, nil
}

// decodeBinaryArray decodes a binary array parameter of array type oid.
// Malformed input is 22P03; an element type other than the array's own
// is 42804, as in PostgreSQL.
func decodeBinaryArray(oid uint32, b []byte, param int) (types.Value, error) {
	bad := func() (types.Value, error) { return types.Value{}, errBadBinary(param) }
	u32 := func() (uint32, bool) {
		if len(b) < 4 {
			return 0, false
		}
		x := binary.BigEndian.Uint32(b)
		b = b[4:]
		return x, true
	}
	nd, ok1 := u32()
	flags, ok2 := u32()
	elemOID, ok3 := u32()
	if !ok1 || !ok2 || !ok3 || flags > 1 {
		return bad()
	}
	if int32(nd) < 0 || nd > types.MaxArrayDims {
		return types.Value{}, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "invalid number of dimensions: %d", int32(nd))
	}
	want := types.ElemOID(oid)
	if elemOID != want {
		return types.Value{}, sqlerr.New(sqlerr.DatatypeMismatch, "binary data has array element type %d instead of expected %d", elemOID, want)
	}
	et, ok := types.FromOID(elemOID)
	if !ok || !hasBinary(elemOID) {
		return types.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "binary arrays of type %d are not supported", elemOID)
	}
	dims := make([]int, nd)
	lower := make([]int, nd)
	count := int64(1)
	for i := range dims {
		d, ok1 := u32()
		lo, ok2 := u32()
		if !ok1 || !ok2 || int32(d) < 0 {
			return bad()
		}
		dims[i], lower[i] = int(int32(d)), int(int32(lo))
		count *= int64(int32(d))
		if count > int64(len(b))/4+1 {
			// Every element takes at least its 4-byte length.
			return bad()
		}
	}
	if nd == 0 {
		count = 0
	}
	elems := make([]types.Value, count)
	for i := range elems {
		l, ok := u32()
		if !ok {
			return bad()
		}
		if int32(l) == -1 {
			continue
		}
		if int32(l) < 0 || int(l) > len(b) {
			return bad()
		}
		v, err := decodeBinary(elemOID, b[:l], param)
		if err != nil {
			return types.Value{}, err
		}
		b = b[l:]
		if v.Family() != et.Family {
			if v, err = types.Cast(v, et); err != nil {
				return types.Value{}, err
			}
		}
		elems[i] = v
	}
	if len(b) != 0 {
		return bad()
	}
	if nd == 0 || count == 0 {
		return types.NewArray(et, nil), nil
	}
	return types.NewArrayDims(et, dims, lower, elems)
}
