package rowenc

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/pgbinary"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// WireEncoder appends the PostgreSQL wire form (a DataRow's fields) of
// chosen columns of a stored row straight from the row's key and value
// encodings (issue 23): a plain projection of stored columns, the bulk of
// a range scan's or IN-list's output, then costs no typed value and no
// allocation per row. An integer goes from its key bytes or varint to its
// digits or big-endian bytes; a text value's bytes are copied as they are
// stored.
//
// Families whose wire form needs more than that (timestamps print in the
// session's zone and DateStyle, decimals, floats, arrays, enums, ...) are
// decoded into a typed value, passed through Present and encoded as the
// server encodes any value (Value.AppendText, pgbinary.Append), so both
// ways give the same bytes; TestWireEncoderMatchesTyped checks that for
// every family.
//
// A WireEncoder is not safe for concurrent use; it keeps per-row scratch.
type WireEncoder struct {
	t    *catalog.Table
	cols []wireCol
	// at is, per table column, where the current row holds it: a key
	// column as its encoded bytes, another as a value entry (its payload
	// and wire tag; seen when the row has one).
	at []wireAt
	// Present readies a typed value for output (the session's TimeZone,
	// DateStyle, IntervalStyle); nil leaves values as they are.
	Present Presenter
	one     [1]types.Value
	scratch []byte
}

// Presenter readies a one-value row for output; it may return another
// slice.
type Presenter interface {
	Present(row []types.Value) []types.Value
}

type wireAt struct {
	enc  []byte
	tag  byte
	seen bool
}

// wireCol is one output column.
type wireCol struct {
	col    int // table column index
	key    bool
	binary bool
	oid    uint32
	kind   wireKind
}

// wireKind is how a column's stored form becomes its wire form.
type wireKind uint8

const (
	kindTyped wireKind = iota // decode a typed value, encode it generically
	kindInt                   // signed integer: digits, or 2/4/8 bytes big-endian
	kindUint                  // unsigned integer that fits its wire type
	kindBool                  // t/f, or one byte
	kindText                  // text-like: the stored bytes in both formats
	kindBytea                 // bytea: \x and hex digits, or the stored bytes
)

// Init readies e to encode table t's columns cols (table column
// indexes), each output column i in format formats[i] (1: binary; nil
// formats: all text) as wire type oid(i). It reuses e's memory.
func (e *WireEncoder) Init(t *catalog.Table, cols []int, formats []int16, oid func(i int) uint32) {
	e.t = t
	if cap(e.at) >= len(t.Columns) {
		e.at = e.at[:len(t.Columns)]
	} else {
		e.at = make([]wireAt, len(t.Columns))
	}
	if cap(e.cols) >= len(cols) {
		e.cols = e.cols[:0]
	} else {
		e.cols = make([]wireCol, 0, len(cols))
	}
	for i, c := range cols {
		typ := t.Columns[c].Type
		wc := wireCol{col: c, key: t.IsKeyColumn(c), binary: formats != nil && formats[i] == 1, oid: oid(i)}
		// The direct ways apply only when the output type is the stored
		// column's own (an int4 column sent as int4, not as int8).
		if wc.oid == typ.OID() {
			switch f := typ.Family; {
			case f == types.Bool:
				wc.kind = kindBool
			case f.IsInteger() && !f.IsUnsigned():
				wc.kind = kindInt
			case f.IsUnsigned() && f != types.Uint64:
				// Uint64 is numeric on the wire.
				wc.kind = kindUint
			case f == types.Utf8 || f == types.Json:
				wc.kind = kindText
			case f == types.String:
				wc.kind = kindBytea
			}
		}
		e.cols = append(e.cols, wc)
	}
}

// Release drops e's references to its table, its last row's bytes and its
// Presenter, keeping its memory for the next Init: an encoder kept for
// reuse (one per prepared statement) then keeps no stored block or
// session alive.
func (e *WireEncoder) Release() {
	e.t, e.Present = nil, nil
	clear(e.at)
	e.one[0] = types.Value{}
	e.scratch = e.scratch[:0]
}

// EstimateSize bounds what AppendRow appends for a row stored as key and
// val: every stored byte may become two (hex), plus each field's length.
func (e *WireEncoder) EstimateSize(key, val []byte) int64 {
	return int64(len(e.cols))*(8+24) + 2*int64(len(key)+len(val))
}

// AppendRow appends the fields of the row stored under key with value
// val to buf: per output column its length (int32, -1 for NULL) and its
// bytes. On error buf's contents past its original length are undefined.
func (e *WireEncoder) AppendRow(buf []byte, key, val []byte) ([]byte, error) {
	if err := e.split(key, val); err != nil {
		return buf, err
	}
	for i := range e.cols {
		var err error
		buf, err = e.appendField(buf, &e.cols[i])
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// split finds each column's encoded bytes in key and val.
func (e *WireEncoder) split(key, val []byte) error {
	b := key[min(len(key), storage.TablePrefixLen):]
	for _, k := range e.t.PrimaryKey {
		n, err := keyValueLen(b, e.t.Columns[k].Type)
		if err != nil {
			return err
		}
		e.at[k].enc = b[:n]
		b = b[n:]
	}
	if len(b) != 0 {
		return ErrCorruptValue
	}
	for i := range e.at {
		e.at[i].seen = false
	}
	for len(val) > 0 {
		id, n := binary.Uvarint(val)
		if n <= 0 || len(val) < n+1 {
			return ErrCorruptValue
		}
		tag := val[n]
		val = val[n+1:]
		l, err := payloadLen(tag, val)
		if err != nil {
			return err
		}
		if col := columnByID(e.t, int(id)); col >= 0 {
			e.at[col] = wireAt{enc: val[:l], tag: tag, seen: true}
		}
		val = val[l:]
	}
	return nil
}

// payloadLen is the length of a value entry's payload of wire tag tag at
// the start of val, length prefix included.
func payloadLen(tag byte, val []byte) (int, error) {
	switch tag {
	case wireNull:
		return 0, nil
	case wireVarint, wireUvarint:
		for i := 0; i < len(val) && i < binary.MaxVarintLen64; i++ {
			if val[i] < 0x80 {
				return i + 1, nil
			}
		}
	case wireFixed64:
		if len(val) >= 8 {
			return 8, nil
		}
	case wireBytes:
		l, n := binary.Uvarint(val)
		if n > 0 && uint64(len(val)-n) >= l {
			return n + int(l), nil
		}
	}
	return 0, ErrCorruptValue
}

// keyValueLen is the length of the key encoding of one value of type t at
// the start of b.
func keyValueLen(b []byte, t types.Type) (int, error) {
	if len(b) == 0 {
		return 0, ErrCorruptValue
	}
	if storage.PeekNull(b) {
		return 1, nil
	}
	switch f := t.Family; {
	case f == types.Bool:
		return 2, checkLen(b, 2)
	case f.IsInteger(), f.IsTime(), f == types.Interval, f == types.Time, f == types.Enum, f.IsFloat():
		return 9, checkLen(b, 9)
	case f == types.Decimal:
		_, rest, err := storage.DecodeDecimal(b)
		return len(b) - len(rest), err
	}
	rest, err := storage.SkipBytes(b)
	return len(b) - len(rest), err
}

func checkLen(b []byte, n int) error {
	if len(b) < n {
		return ErrCorruptValue
	}
	return nil
}

// appendField appends one output column's length and bytes.
func (e *WireEncoder) appendField(buf []byte, c *wireCol) ([]byte, error) {
	var enc []byte
	var tag byte
	switch {
	case c.key:
		enc = e.at[c.col].enc
		if storage.PeekNull(enc) {
			return append(buf, 0xff, 0xff, 0xff, 0xff), nil
		}
	case e.at[c.col].seen:
		enc, tag = e.at[c.col].enc, e.at[c.col].tag
		if tag == wireNull {
			return append(buf, 0xff, 0xff, 0xff, 0xff), nil
		}
	case e.t.Columns[c.col].Missing != nil:
		// The row is older than the column: it reads the column's
		// Missing value, one entry like a row's.
		return e.appendMissing(buf, c)
	default:
		return append(buf, 0xff, 0xff, 0xff, 0xff), nil
	}
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	var err error
	if c.key {
		buf, err = e.appendKeyForm(buf, c, enc)
	} else {
		buf, err = e.appendValueForm(buf, c, tag, enc)
	}
	if err != nil {
		return buf, err
	}
	return finishField(buf, at)
}

// finishField fills in the length of the field that starts at at.
func finishField(buf []byte, at int) ([]byte, error) {
	n := len(buf) - at - 4
	if n > math.MaxInt32 {
		return buf, errTooLong
	}
	binary.BigEndian.PutUint32(buf[at:], uint32(n))
	return buf, nil
}

var errTooLong = &tooLongError{}

type tooLongError struct{}

func (*tooLongError) Error() string { return "rowenc: value too long to send" }

// IsTooLong reports whether err is AppendRow's error for a field longer
// than the protocol's 2 GB.
func IsTooLong(err error) bool { return err == errTooLong }

func (e *WireEncoder) appendMissing(buf []byte, c *wireCol) ([]byte, error) {
	m := e.t.Columns[c.col].Missing
	_, n := binary.Uvarint(m)
	if n <= 0 || len(m) < n+1 {
		return buf, ErrCorruptValue
	}
	tag := m[n]
	if tag == wireNull {
		return append(buf, 0xff, 0xff, 0xff, 0xff), nil
	}
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	buf, err := e.appendValueForm(buf, c, tag, m[n+1:])
	if err != nil {
		return buf, err
	}
	return finishField(buf, at)
}

// appendKeyForm appends the wire form of a non-NULL key column from its
// key encoding enc.
func (e *WireEncoder) appendKeyForm(buf []byte, c *wireCol, enc []byte) ([]byte, error) {
	switch c.kind {
	case kindInt:
		v, _, err := storage.DecodeInt64(enc)
		if err != nil {
			return buf, err
		}
		return appendInt(buf, c, v), nil
	case kindUint:
		v, _, err := storage.DecodeUint64(enc)
		if err != nil {
			return buf, err
		}
		return appendInt(buf, c, int64(v)), nil
	case kindBool:
		v, _, err := storage.DecodeBool(enc)
		if err != nil {
			return buf, err
		}
		return appendBool(buf, c, v), nil
	case kindText:
		out, _, err := storage.AppendDecodedBytes(buf, enc)
		return out, err
	case kindBytea:
		if c.binary {
			out, _, err := storage.AppendDecodedBytes(buf, enc)
			return out, err
		}
		var err error
		e.scratch, _, err = storage.AppendDecodedBytes(e.scratch[:0], enc)
		if err != nil {
			return buf, err
		}
		return appendHex(buf, e.scratch), nil
	}
	v, _, err := DecodeKeyValue(enc, e.t.Columns[c.col].Type)
	if err != nil {
		return buf, err
	}
	return e.appendTyped(buf, c, v)
}

// appendValueForm appends the wire form of a non-NULL value entry with
// wire tag tag and payload enc.
func (e *WireEncoder) appendValueForm(buf []byte, c *wireCol, tag byte, enc []byte) ([]byte, error) {
	switch {
	case c.kind == kindInt && tag == wireVarint, c.kind == kindBool && tag == wireVarint:
		x, n := binary.Varint(enc)
		if n <= 0 {
			return buf, ErrCorruptValue
		}
		if c.kind == kindBool {
			return appendBool(buf, c, x != 0), nil
		}
		return appendInt(buf, c, x), nil
	case c.kind == kindUint && tag == wireUvarint:
		x, n := binary.Uvarint(enc)
		if n <= 0 {
			return buf, ErrCorruptValue
		}
		return appendInt(buf, c, int64(x)), nil
	case (c.kind == kindText || c.kind == kindBytea) && tag == wireBytes:
		l, n := binary.Uvarint(enc)
		if n <= 0 || uint64(len(enc)-n) < l {
			return buf, ErrCorruptValue
		}
		s := enc[n : n+int(l)]
		if c.kind == kindText || c.binary {
			return append(buf, s...), nil
		}
		return appendHex(buf, s), nil
	}
	v, _, err := decodePayload(tag, enc, &e.t.Columns[c.col].Type)
	if err != nil {
		return buf, err
	}
	return e.appendTyped(buf, c, v)
}

// appendInt appends an integer that fits the column's wire type (the
// stored family guarantees it: int2 holds Int8, Int16 and Uint8, and so on).
func appendInt(buf []byte, c *wireCol, v int64) []byte {
	if !c.binary {
		if c.kind == kindUint {
			return strconv.AppendUint(buf, uint64(v), 10)
		}
		return strconv.AppendInt(buf, v, 10)
	}
	switch c.oid {
	case types.OIDInt2:
		return binary.BigEndian.AppendUint16(buf, uint16(v))
	case types.OIDInt4:
		return binary.BigEndian.AppendUint32(buf, uint32(v))
	}
	return binary.BigEndian.AppendUint64(buf, uint64(v))
}

func appendBool(buf []byte, c *wireCol, v bool) []byte {
	switch {
	case c.binary && v:
		return append(buf, 1)
	case c.binary:
		return append(buf, 0)
	case v:
		return append(buf, 't')
	}
	return append(buf, 'f')
}

const hexDigits = "0123456789abcdef"

// appendHex appends bytea's text form of s: \x and two hex digits a byte.
func appendHex(buf []byte, s []byte) []byte {
	buf = append(buf, '\\', 'x')
	for _, b := range s {
		buf = append(buf, hexDigits[b>>4], hexDigits[b&0x0f])
	}
	return buf
}

// appendTyped encodes a decoded value as the server encodes any value.
func (e *WireEncoder) appendTyped(buf []byte, c *wireCol, v types.Value) ([]byte, error) {
	if e.Present != nil {
		e.one[0] = v
		v = e.Present.Present(e.one[:])[0]
	}
	if c.binary {
		return pgbinary.Append(buf, c.oid, v)
	}
	return v.AppendText(buf), nil
}
