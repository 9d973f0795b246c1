package rowenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// ErrCorruptValue reports a row value that cannot be decoded.
var ErrCorruptValue = errors.New("rowenc: corrupt row value")

// AppendKeyValue appends the order-preserving key encoding of one value.
func AppendKeyValue(buf []byte, v types.Value) []byte {
	switch f := v.Family(); {
	case v.IsNull():
		return storage.AppendNull(buf)
	case f == types.Bool:
		return storage.AppendBool(buf, v.Bool())
	case f.IsUnsigned():
		return storage.AppendUint64(buf, v.Uint())
	case f.IsInteger():
		return storage.AppendInt64(buf, v.Int())
	case f.IsTime():
		// Times compare across families in microseconds, so the key does too:
		// a Date pivot then bounds a Timestamp column correctly.
		return storage.AppendInt64(buf, v.Micros())
	case f == types.Time:
		return storage.AppendInt64(buf, v.Int())
	case f == types.TimeTZ:
		// The packed integer, whose order is timetz's (types/timetz.go).
		return storage.AppendInt64(buf, v.Int())
	case f == types.Interval:
		// The span with 30-day months, PostgreSQL's interval order ('1 mon'
		// and '30 days' are one key, as they are equal); for an interval
		// of microseconds alone that is the encoding keys always had. The
		// row's value, not the key, gives the exact months and days.
		return storage.AppendInt64(buf, types.IntervalKeyMicros(v))
	case f.IsFloat():
		return storage.AppendFloat64(buf, v.Float())
	case f == types.Enum:
		// The sort position: keys keep the enum's declaration order.
		return storage.AppendFloat64(buf, v.EnumSort())
	case f == types.Decimal:
		return appendDecimalKey(buf, v.Dec())
	case f == types.Array, f == types.Record:
		// A record's fields are kept as an array's elements (grouping
		// and sorting by a record compare field by field).
		return appendArrayKey(buf, v)
	default: // String, Utf8, Json, Unknown
		return storage.AppendString(buf, v.Str())
	}
}

func appendDecimalKey(buf []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return storage.AppendDecimalNaN(buf)
	case apd.Infinite:
		return storage.AppendDecimalInf(buf, d.Negative)
	}
	return storage.AppendDecimal(buf, d.Negative && !d.IsZero(), d.Coeff.String(), d.Exponent)
}

// tablePrefixLen is len(storage.TablePrefix(id)) for every id (the area
// byte and the big-endian id; TestTablePrefixLen checks it), so that
// DecodeKey does not build the prefix of every row it decodes.
const tablePrefixLen = 1 + 8

// DecodeKeyValue decodes one key column of type t.
func DecodeKeyValue(b []byte, t types.Type) (types.Value, []byte, error) {
	return decodeKeyValue(b, &t)
}

// decodeKeyValue is DecodeKeyValue with the type by pointer: a Type is 64
// bytes, and a scan decodes every key column of every row it reads.
func decodeKeyValue(b []byte, t *types.Type) (types.Value, []byte, error) {
	if storage.PeekNull(b) {
		rest, err := storage.DecodeNull(b)
		return types.NullValue, rest, err
	}
	switch f := t.Family; {
	case f == types.Bool:
		v, rest, err := storage.DecodeBool(b)
		return types.NewBool(v), rest, err
	case f.IsUnsigned():
		v, rest, err := storage.DecodeUint64(b)
		return types.NewUint(f, v), rest, err
	case f.IsInteger():
		v, rest, err := storage.DecodeInt64(b)
		return types.NewInt(f, v), rest, err
	case f.IsTime():
		v, rest, err := storage.DecodeInt64(b)
		if err != nil {
			return types.Value{}, nil, err
		}
		switch f {
		case types.Date:
			if types.IsInfinite(v) {
				return types.NewDate(v), rest, nil
			}
			return types.NewDate(v / 86400e6), rest, nil
		case types.Datetime:
			return types.NewDatetime(v / 1e6), rest, nil
		case types.TimestampTZ:
			return types.NewTimestampTZ(v), rest, nil
		}
		return types.NewTimestamp(v), rest, nil
	case f == types.Interval:
		v, rest, err := storage.DecodeInt64(b)
		return types.NewInterval(v), rest, err
	case f == types.Time:
		v, rest, err := storage.DecodeInt64(b)
		return types.NewTime(v), rest, err
	case f == types.TimeTZ:
		v, rest, err := storage.DecodeInt64(b)
		return types.TimeTZFromKey(v), rest, err
	case f == types.Enum:
		v, rest, err := storage.DecodeFloat64(b)
		if err != nil {
			return types.Value{}, nil, err
		}
		e, err := enumValue(*t, v)
		return e, rest, err
	case f.IsFloat():
		v, rest, err := storage.DecodeFloat64(b)
		if f == types.Float {
			return types.NewFloat(v), rest, err
		}
		return types.NewDouble(v), rest, err
	case f == types.Decimal:
		d, rest, err := storage.DecodeDecimal(b)
		if err != nil {
			return types.Value{}, nil, err
		}
		return types.NewDecimal(decimalFromKey(d)), rest, nil
	}
	s, rest, err := storage.DecodeString(b)
	if err != nil {
		return types.Value{}, nil, err
	}
	switch t.Family {
	case types.String:
		return types.NewString(s), rest, nil
	case types.Json:
		return types.NewJson(s), rest, nil
	case types.Uuid:
		v, ok := types.UuidFromBytes([]byte(s))
		if !ok {
			return types.Value{}, nil, ErrCorruptValue
		}
		return v, rest, nil
	}
	return types.NewUtf8(s), rest, nil
}

func decimalFromKey(d storage.Decimal) *apd.Decimal {
	switch d.Form {
	case storage.DecimalNaN:
		return &apd.Decimal{Form: apd.NaN}
	case storage.DecimalInfinite:
		return &apd.Decimal{Form: apd.Infinite, Negative: d.Neg}
	}
	r := new(apd.Decimal)
	r.Coeff.SetString(d.Coeff, 10)
	r.Exponent = d.Exponent
	r.Negative = d.Neg
	return r
}

// EncodeKey returns the key of a row: table prefix plus key columns.
func EncodeKey(t *catalog.Table, row []types.Value) []byte {
	return AppendKey(make([]byte, 0, KeySizeHint(t, row)), t, row)
}

// KeySizeHint is the usual size of row's key, what EncodeKey allocates
// for it in one go: the prefix, and per column a tag and 8 bytes, or a
// string with its escapes and terminator in most cases.
func KeySizeHint(t *catalog.Table, row []types.Value) int {
	n := 9
	for _, k := range t.PrimaryKey {
		n += 10 + row[k].PayloadSize()
	}
	return n
}

// AppendKey appends row's key (EncodeKey) to buf.
func AppendKey(buf []byte, t *catalog.Table, row []types.Value) []byte {
	key := storage.AppendTablePrefix(buf, t.ID)
	for _, k := range t.PrimaryKey {
		key = AppendKeyValue(key, row[k])
	}
	return key
}

// EncodeKeyPrefix encodes the given values (a prefix of the key columns).
func EncodeKeyPrefix(t *catalog.Table, vals []types.Value) []byte {
	key := storage.TablePrefix(t.ID)
	for _, v := range vals {
		key = AppendKeyValue(key, v)
	}
	return key
}

// DecodeKey decodes a row key into the key columns of row.
func DecodeKey(t *catalog.Table, key []byte, row []types.Value) error {
	b := key[tablePrefixLen:]
	for _, k := range t.PrimaryKey {
		v, rest, err := decodeKeyValue(b, &t.Columns[k].Type)
		if err != nil {
			return err
		}
		row[k] = v
		b = rest
	}
	if len(b) != 0 {
		return fmt.Errorf("rowenc: %d trailing bytes in key of table %d", len(b), t.ID)
	}
	return nil
}

// Wire tags of value payloads.
const (
	wireVarint  = 0 // zig-zag varint (signed, bool, times)
	wireUvarint = 1 // unsigned varint
	wireFixed64 = 2 // 8 bytes little-endian (floats)
	wireBytes   = 3 // uvarint length then bytes (strings, decimals as text)
	// wireNull is an explicit NULL, written only for columns that have a
	// Missing value (added with a DEFAULT), where leaving the column out
	// would read the default.
	wireNull = 4
)

// EncodeValue encodes the non-key columns of a row.
func EncodeValue(buf []byte, t *catalog.Table, row []types.Value) []byte {
	for i := range t.Columns {
		v := row[i]
		if t.IsKeyColumn(i) {
			continue
		}
		if v.IsNull() {
			if t.Columns[i].Missing != nil {
				buf = binary.AppendUvarint(buf, uint64(t.Columns[i].ID))
				buf = append(buf, wireNull)
			}
			continue
		}
		buf = appendEntry(buf, t.Columns[i].ID, v)
	}
	return buf
}

// EncodeMissing encodes v as the Missing value of column id (see
// catalog.Column.Missing); nil for NULL.
func EncodeMissing(id int, v types.Value) []byte {
	if v.IsNull() {
		return nil
	}
	return appendEntry(nil, id, v)
}

// appendEntry appends one non-NULL column entry of a row value.
func appendEntry(buf []byte, id int, v types.Value) []byte {
	buf = binary.AppendUvarint(buf, uint64(id))
	return appendPayload(buf, v)
}

// appendPayload appends a non-NULL value's wire tag and payload.
func appendPayload(buf []byte, v types.Value) []byte {
	switch f := v.Family(); {
	case f == types.Bool:
		buf = append(buf, wireVarint)
		buf = binary.AppendVarint(buf, v.Int())
	case f.IsUnsigned():
		buf = append(buf, wireUvarint)
		buf = binary.AppendUvarint(buf, v.Uint())
	case f == types.Interval && v.Str() != "":
		// Months and days too (PostgreSQL's interval): 16 bytes, months
		// and days as int32 then the microseconds, little-endian. An
		// interval of microseconds alone keeps the varint it always had.
		months, days, us := v.IntervalParts()
		buf = append(buf, wireBytes, 16)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(months))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(days))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(us))
	case f.IsInteger() || f.IsTime() || f == types.Interval || f == types.Time || f == types.TimeTZ:
		buf = append(buf, wireVarint)
		buf = binary.AppendVarint(buf, v.Int())
	case f.IsFloat():
		buf = append(buf, wireFixed64)
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float()))
	case f == types.Enum:
		// The sort position, which never changes (types/enum.go); the
		// label comes from the column's type when the row is read.
		buf = append(buf, wireFixed64)
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.EnumSort()))
	case f == types.Decimal:
		s := v.Dec().Text('E')
		buf = append(buf, wireBytes)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	case f == types.Array:
		// Built apart first: the length goes in front of it.
		inner := appendArray(nil, v)
		buf = append(buf, wireBytes)
		buf = binary.AppendUvarint(buf, uint64(len(inner)))
		buf = append(buf, inner...)
	default:
		s := v.Str()
		buf = append(buf, wireBytes)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	return buf
}

// decodePayload decodes one payload of wire tag wire at the start of val
// as a value of type t, returning the rest of val.
func decodePayload(wire byte, val []byte, t *types.Type) (types.Value, []byte, error) {
	switch wire {
	case wireNull:
		return types.NullValue, val, nil
	case wireVarint:
		x, n := binary.Varint(val)
		if n <= 0 {
			return types.Value{}, nil, ErrCorruptValue
		}
		return fromInt(t.Family, x), val[n:], nil
	case wireUvarint:
		x, n := binary.Uvarint(val)
		if n <= 0 {
			return types.Value{}, nil, ErrCorruptValue
		}
		return types.NewUint(t.Family, x), val[n:], nil
	case wireFixed64:
		if len(val) < 8 {
			return types.Value{}, nil, ErrCorruptValue
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(val))
		if t.Family == types.Enum {
			v, err := enumValue(*t, f)
			return v, val[8:], err
		}
		if t.Family == types.Float {
			return types.NewFloat(f), val[8:], nil
		}
		return types.NewDouble(f), val[8:], nil
	case wireBytes:
		l, n := binary.Uvarint(val)
		if n <= 0 || uint64(len(val)-n) < l {
			return types.Value{}, nil, ErrCorruptValue
		}
		v, err := fromBytes(t, val[n:n+int(l)])
		if err != nil {
			return types.Value{}, nil, err
		}
		return v, val[n+int(l):], nil
	}
	return types.Value{}, nil, ErrCorruptValue
}

// DecodeValue decodes a row value into the non-key columns of row; columns
// not present stay NULL. row must be all NULL in those positions on entry.
func DecodeValue(t *catalog.Table, val []byte, row []types.Value) error {
	if !t.HasMissing() {
		return decodeEntries(t, val, row, nil)
	}
	// Columns added with a DEFAULT read it when the row has no entry for
	// them (the row is older than the column).
	seen := make([]bool, len(t.Columns))
	if err := decodeEntries(t, val, row, seen); err != nil {
		return err
	}
	for i := range t.Columns {
		if m := t.Columns[i].Missing; m != nil && !seen[i] && !t.IsKeyColumn(i) {
			if err := decodeEntries(t, m, row, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeEntries decodes column entries into row, marking in seen (when
// not nil) the columns it found.
func decodeEntries(t *catalog.Table, val []byte, row []types.Value, seen []bool) error {
	for len(val) > 0 {
		id, n := binary.Uvarint(val)
		if n <= 0 || len(val) < n+1 {
			return ErrCorruptValue
		}
		wire := val[n]
		val = val[n+1:]
		col := columnByID(t, int(id))
		if col >= 0 && seen != nil {
			seen[col] = true
		}
		if col < 0 {
			// A dropped column: skip its payload without a type.
			_, rest, err := decodePayload(wire, val, &types.TypeString)
			if err != nil {
				return err
			}
			val = rest
			continue
		}
		ct := &t.Columns[col].Type
		if wire == wireBytes && (ct.Family == types.Utf8 || ct.Family == types.String) {
			// Text and bytes, the most common payloads, straight into the
			// row: decodePayload and fromBytes would return the 48-byte
			// Value through two calls and two switches (a tenth of a
			// scan's decoding; BenchmarkDecodeRow).
			l, n := binary.Uvarint(val)
			if n <= 0 || uint64(len(val)-n) < l {
				return ErrCorruptValue
			}
			if ct.Family == types.Utf8 {
				row[col] = types.NewUtf8(string(val[n : n+int(l)]))
			} else {
				row[col] = types.NewString(string(val[n : n+int(l)]))
			}
			val = val[n+int(l):]
			continue
		}
		v, rest, err := decodePayload(wire, val, ct)
		if err != nil {
			return err
		}
		row[col] = v
		val = rest
	}
	return nil
}

func columnByID(t *catalog.Table, id int) int {
	// Columns are few and usually stored in id order, so try the position
	// id-1 first.
	if id-1 < len(t.Columns) && id-1 >= 0 && t.Columns[id-1].ID == id {
		return id - 1
	}
	for i := range t.Columns {
		if t.Columns[i].ID == id {
			return i
		}
	}
	return -1
}

func fromInt(f types.Family, x int64) types.Value {
	switch f {
	case types.Bool:
		return types.NewBool(x != 0)
	case types.Date:
		return types.NewDate(x)
	case types.Datetime:
		return types.NewDatetime(x)
	case types.Timestamp:
		return types.NewTimestamp(x)
	case types.TimestampTZ:
		return types.NewTimestampTZ(x)
	case types.Interval:
		return types.NewInterval(x)
	case types.Time:
		return types.NewTime(x)
	case types.TimeTZ:
		return types.TimeTZFromKey(x)
	}
	return types.NewInt(f, x)
}

func fromBytes(t *types.Type, b []byte) (types.Value, error) {
	switch t.Family {
	case types.Array:
		return decodeArray(t.ElemType(), b)
	case types.Interval:
		if len(b) != 16 {
			return types.Value{}, ErrCorruptValue
		}
		return types.NewIntervalParts(int32(binary.LittleEndian.Uint32(b)), int32(binary.LittleEndian.Uint32(b[4:])),
			int64(binary.LittleEndian.Uint64(b[8:]))), nil
	}
	s := string(b)
	switch t.Family {
	case types.Decimal:
		d, _, err := apd.NewFromString(s)
		if err != nil {
			return types.Value{}, ErrCorruptValue
		}
		return types.NewDecimal(d), nil
	case types.String:
		return types.NewString(s), nil
	case types.Json:
		return types.NewJson(s), nil
	case types.Uuid:
		v, ok := types.UuidFromBytes([]byte(s))
		if !ok {
			return types.Value{}, ErrCorruptValue
		}
		return v, nil
	}
	return types.NewUtf8(s), nil
}

// DecodeRow decodes a whole row (key and value) into a new slice.
func DecodeRow(t *catalog.Table, key, val []byte) ([]types.Value, error) {
	row := make([]types.Value, len(t.Columns))
	if err := DecodeKey(t, key, row); err != nil {
		return nil, err
	}
	if err := DecodeValue(t, val, row); err != nil {
		return nil, err
	}
	return row, nil
}

// enumValue is the value of enum type t at sort position p.
func enumValue(t types.Type, p float64) (types.Value, error) {
	if t.Enum == nil {
		return types.Value{}, ErrCorruptValue
	}
	l, ok := t.Enum.BySort(p)
	if !ok {
		return types.Value{}, fmt.Errorf("%w: no label of enum %s at position %v", ErrCorruptValue, t.Enum.Name, p)
	}
	return types.NewEnum(l), nil
}
