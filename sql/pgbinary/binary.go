// Package pgbinary is PostgreSQL's binary format of values: what the wire
// protocol sends and receives for binary parameters and result columns,
// and what COPY ... (FORMAT binary) reads and writes. It depends only on
// sql/types, so the server and the COPY codec (sql/pgcopy) share it.
package pgbinary

import (
	"encoding/binary"
	"math"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// PostgreSQL's binary formats count dates and timestamps from 2000-01-01;
// PivotDB's values count from 1970-01-01.
const (
	pgEpochDays   = 10957            // days from 1970-01-01 to 2000-01-01
	pgEpochMicros = 946684800_000000 // microseconds between the same dates
	microsPerDay  = 86400 * 1000000  // an interval day is 24 hours here
	pgDateNoBegin = math.MinInt32    // date '-infinity'
	pgDateNoEnd   = math.MaxInt32    // date 'infinity'
	pgTimeNoBegin = math.MinInt64    // timestamp '-infinity'
	pgTimeNoEnd   = math.MaxInt64    // timestamp 'infinity'
	jsonbVersion  = 1                // first byte of binary jsonb
)

// Has reports whether oid has a binary format here: the wire types
// of design.md §3.1 and their close relatives clients declare.
func Has(oid uint32) bool {
	switch oid {
	case types.OIDBool, types.OIDInt2, types.OIDInt4, types.OIDInt8, types.OIDOid,
		types.OIDFloat4, types.OIDFloat8, types.OIDNumeric, types.OIDBytea,
		types.OIDText, types.OIDVarchar, types.OIDBPChar, types.OIDName, types.OIDUnknown,
		types.OIDJSON, types.OIDJSONB, types.OIDDate, types.OIDTimestamp, types.OIDTimestampTZ,
		types.OIDInterval, types.OIDUuid, types.OIDTime, types.OIDTimeTZ:
		return true
	}
	if e := types.ElemOID(oid); e != 0 {
		return Has(e)
	}
	return false
}

// Append appends v in the binary format of wire type oid. The value's
// family must suit the type (any integer for an integer type that holds it,
// any number for numeric); a mismatch is a bug upstream and reports XX000.
func Append(buf []byte, oid uint32, v types.Value) ([]byte, error) {
	f := v.Family()
	mismatch := func() ([]byte, error) {
		return buf, sqlerr.New(sqlerr.InternalError, "server: cannot send a %v value as binary type %d", f, oid)
	}
	switch oid {
	case types.OIDBool:
		if f != types.Bool {
			return mismatch()
		}
		if v.Bool() {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case types.OIDInt2, types.OIDInt4, types.OIDInt8:
		if !f.IsInteger() {
			return mismatch()
		}
		if f.IsUnsigned() && v.Uint() > math.MaxInt64 {
			return buf, outOfRange(oid)
		}
		i := v.Int()
		switch oid {
		case types.OIDInt2:
			if i < math.MinInt16 || i > math.MaxInt16 {
				return buf, outOfRange(oid)
			}
			return binary.BigEndian.AppendUint16(buf, uint16(i)), nil
		case types.OIDInt4:
			if i < math.MinInt32 || i > math.MaxInt32 {
				return buf, outOfRange(oid)
			}
			return binary.BigEndian.AppendUint32(buf, uint32(i)), nil
		}
		return binary.BigEndian.AppendUint64(buf, uint64(i)), nil
	case types.OIDFloat4:
		if !f.IsNumeric() {
			return mismatch()
		}
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(v.AsFloat()))), nil
	case types.OIDFloat8:
		if !f.IsNumeric() {
			return mismatch()
		}
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(v.AsFloat())), nil
	case types.OIDNumeric:
		if !f.IsNumeric() {
			return mismatch()
		}
		if f.IsFloat() {
			switch x := v.Float(); {
			case math.IsNaN(x):
				return appendNumericSpecial(buf, numericNaN), nil
			case math.IsInf(x, 1):
				return appendNumericSpecial(buf, numericPInf), nil
			case math.IsInf(x, -1):
				return appendNumericSpecial(buf, numericNInf), nil
			}
		}
		return AppendNumeric(buf, v.AsDecimal())
	case types.OIDBytea, types.OIDText, types.OIDVarchar, types.OIDBPChar, types.OIDName, types.OIDUnknown, types.OIDJSON:
		// Every type's text is its binary form for text types.
		if f.IsStringLike() || f == types.Unknown {
			return append(buf, v.Str()...), nil
		}
		return append(buf, v.Text()...), nil
	case types.OIDJSONB:
		if !f.IsStringLike() {
			return mismatch()
		}
		return append(append(buf, jsonbVersion), v.Str()...), nil
	case types.OIDDate:
		if !f.IsTime() {
			return mismatch()
		}
		var days int64
		switch {
		case v.IsInfiniteTime() && v.Micros() > 0:
			return binary.BigEndian.AppendUint32(buf, uint32(int32(pgDateNoEnd))), nil
		case v.IsInfiniteTime():
			return binary.BigEndian.AppendUint32(buf, 1<<31), nil // INT32_MIN
		case f == types.Date:
			days = v.Int() - pgEpochDays
		default:
			days = floorDiv(v.Micros(), microsPerDay) - pgEpochDays
		}
		if days <= pgDateNoBegin || days >= pgDateNoEnd {
			return buf, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range")
		}
		return binary.BigEndian.AppendUint32(buf, uint32(int32(days))), nil
	case types.OIDTimestamp, types.OIDTimestampTZ:
		if !f.IsTime() {
			return mismatch()
		}
		m := v.Micros()
		if v.IsInfiniteTime() {
			// PostgreSQL's infinities are the same extremes.
			return binary.BigEndian.AppendUint64(buf, uint64(m)), nil
		}
		if m < math.MinInt64+pgEpochMicros {
			return buf, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		return binary.BigEndian.AppendUint64(buf, uint64(m-pgEpochMicros)), nil
	case types.OIDUuid:
		if f != types.Uuid {
			return mismatch()
		}
		return append(buf, v.Str()...), nil
	case types.OIDInterval:
		if f != types.Interval {
			return mismatch()
		}
		// PostgreSQL's three fields as the value keeps them.
		months, days, us := v.IntervalParts()
		buf = binary.BigEndian.AppendUint64(buf, uint64(us))
		buf = binary.BigEndian.AppendUint32(buf, uint32(days))
		return binary.BigEndian.AppendUint32(buf, uint32(months)), nil
	case types.OIDTime:
		if f != types.Time {
			return mismatch()
		}
		// Microseconds since midnight, as PostgreSQL's time_send.
		return binary.BigEndian.AppendUint64(buf, uint64(v.Int())), nil
	case types.OIDTimeTZ:
		if f != types.TimeTZ {
			return mismatch()
		}
		// timetz_send: the time of day, then the zone in seconds west.
		us, zone := v.TimeTZParts()
		buf = binary.BigEndian.AppendUint64(buf, uint64(us))
		return binary.BigEndian.AppendUint32(buf, uint32(zone)), nil
	}
	// Arrays last: their OIDs are none of the above, and the look-up in
	// the table of element types cost more than a scalar's encoding when
	// it came first (issue 23's profiles).
	if types.ElemOID(oid) != 0 {
		return appendArray(buf, oid, v)
	}
	return buf, sqlerr.New(sqlerr.InternalError, "server: no binary output for type %d", oid)
}

func outOfRange(oid uint32) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range for binary type %d", oid)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// ErrBadFormat is the error of Decode for bytes that do not parse as their
// type (22P03); callers say where the value was (a bind parameter, a COPY
// column).
var ErrBadFormat = &sqlerr.Error{Code: sqlerr.InvalidBinaryRepresentation, Message: "incorrect binary data format"}

// Decode decodes b in the binary format of wire type oid (one for
// which Has is true). Malformed input is ErrBadFormat;
// well-formed values PivotDB cannot hold get their own SQLSTATE.
func Decode(oid uint32, b []byte) (types.Value, error) {
	if types.ElemOID(oid) != 0 {
		return decodeArray(oid, b)
	}
	bad := func() (types.Value, error) { return types.Value{}, ErrBadFormat }
	need := func(n int) bool { return len(b) == n }
	switch oid {
	case types.OIDBool:
		if !need(1) || b[0] > 1 {
			return bad()
		}
		return types.NewBool(b[0] == 1), nil
	case types.OIDInt2:
		if !need(2) {
			return bad()
		}
		return types.NewInt(types.Int16, int64(int16(binary.BigEndian.Uint16(b)))), nil
	case types.OIDInt4:
		if !need(4) {
			return bad()
		}
		return types.NewInt(types.Int32, int64(int32(binary.BigEndian.Uint32(b)))), nil
	case types.OIDOid:
		if !need(4) {
			return bad()
		}
		return types.NewInt64(int64(binary.BigEndian.Uint32(b))), nil
	case types.OIDInt8:
		if !need(8) {
			return bad()
		}
		return types.NewInt64(int64(binary.BigEndian.Uint64(b))), nil
	case types.OIDFloat4:
		if !need(4) {
			return bad()
		}
		return types.NewFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(b)))), nil
	case types.OIDFloat8:
		if !need(8) {
			return bad()
		}
		return types.NewDouble(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case types.OIDNumeric:
		d, ok := DecodeNumeric(b)
		if !ok {
			return bad()
		}
		return types.NewDecimal(d), nil
	case types.OIDBytea:
		return types.NewString(string(b)), nil
	case types.OIDText, types.OIDVarchar, types.OIDBPChar, types.OIDName, types.OIDUnknown:
		if err := types.CheckText(string(b)); err != nil {
			return types.Value{}, err
		}
		return types.NewUtf8(string(b)), nil
	case types.OIDJSON:
		if err := types.CheckText(string(b)); err != nil {
			return types.Value{}, err
		}
		return types.ParseJSON(string(b))
	case types.OIDJSONB:
		if len(b) == 0 || b[0] != jsonbVersion {
			return bad()
		}
		if err := types.CheckText(string(b[1:])); err != nil {
			return types.Value{}, err
		}
		return types.ParseJSON(string(b[1:]))
	case types.OIDDate:
		if !need(4) {
			return bad()
		}
		d := int64(int32(binary.BigEndian.Uint32(b)))
		switch d {
		case pgDateNoBegin:
			return types.NewDate(types.NegInfinityMicros), nil
		case pgDateNoEnd:
			return types.NewDate(types.InfinityMicros), nil
		}
		return types.NewDate(d + pgEpochDays), nil
	case types.OIDTimestamp, types.OIDTimestampTZ:
		if !need(8) {
			return bad()
		}
		m := int64(binary.BigEndian.Uint64(b))
		if m > math.MaxInt64-pgEpochMicros && m != pgTimeNoEnd {
			return types.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		if m != pgTimeNoBegin && m != pgTimeNoEnd {
			m += pgEpochMicros
		}
		if oid == types.OIDTimestampTZ {
			return types.NewTimestampTZ(m), nil
		}
		return types.NewTimestamp(m), nil
	case types.OIDUuid:
		v, ok := types.UuidFromBytes(b)
		if !ok {
			return bad()
		}
		return v, nil
	case types.OIDInterval:
		if !need(16) {
			return bad()
		}
		micros := int64(binary.BigEndian.Uint64(b))
		days := int32(binary.BigEndian.Uint32(b[8:]))
		months := int32(binary.BigEndian.Uint32(b[12:]))
		return types.NewIntervalParts(months, days, micros), nil
	case types.OIDTime:
		if !need(8) {
			return bad()
		}
		us := int64(binary.BigEndian.Uint64(b))
		if us < 0 || us > 86400*1e6 {
			return types.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "time out of range")
		}
		return types.NewTime(us), nil
	case types.OIDTimeTZ:
		if !need(12) {
			return bad()
		}
		us := int64(binary.BigEndian.Uint64(b))
		zone := int32(binary.BigEndian.Uint32(b[8:]))
		if us < 0 || us > 86400*1e6 {
			return types.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "time out of range")
		}
		if zone < -(15*3600+59*60+59) || zone > 15*3600+59*60+59 {
			return types.Value{}, sqlerr.New(sqlerr.InvalidTimeZoneDisplacementValue, "time zone displacement out of range")
		}
		return types.NewTimeTZ(us, zone), nil
	}
	return types.Value{}, sqlerr.New(sqlerr.InternalError, "server: no binary input for type %d", oid)
}
