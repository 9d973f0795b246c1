package types

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// IntToFamily returns i as a value of integer family f, or 22003 when it
// does not fit.
func IntToFamily(f Family, i int64) (Value, error) {
	lo, hi := IntRange(f)
	if f.IsUnsigned() {
		if i < 0 || uint64(i) > hi {
			return Value{}, outOfRange(T(f))
		}
		return NewUint(f, uint64(i)), nil
	}
	if i < lo || (i > 0 && uint64(i) > hi) {
		return Value{}, outOfRange(T(f))
	}
	return NewInt(f, i), nil
}

// UintToFamily returns u as a value of integer family f, or 22003.
func UintToFamily(f Family, u uint64) (Value, error) {
	_, hi := IntRange(f)
	if u > hi {
		return Value{}, outOfRange(T(f))
	}
	if f.IsUnsigned() {
		return NewUint(f, u), nil
	}
	return NewInt(f, int64(u)), nil
}

var decimalCtx = apd.BaseContext.WithPrecision(1000)

// DecimalContext is the context for decimal arithmetic: 1000 digits, as
// PostgreSQL's numeric allows, with traps for invalid operations.
func DecimalContext() *apd.Context { return decimalCtx }

// CastDecimal rounds d to the scale of t and checks its precision.
func CastDecimal(t Type, d *apd.Decimal) (Value, error) {
	if d.Form != apd.Finite {
		if t.Precision > 0 {
			return Value{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
		}
		return NewDecimal(d), nil
	}
	if t.Precision == 0 {
		return NewDecimal(d), nil
	}
	r := new(apd.Decimal)
	if _, err := decimalCtx.Quantize(r, d, -int32(t.Scale)); err != nil {
		return Value{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
	}
	if int(r.NumDigits()) > t.Precision && !r.IsZero() {
		return Value{}, sqlerr.New(sqlerr.NumericValueOutOfRange,
			"numeric field overflow: a field with precision %d, scale %d must round to an absolute value less than 10^%d",
			t.Precision, t.Scale, t.Precision-t.Scale)
	}
	return NewDecimal(r), nil
}

// ParseJSON validates JSON text and returns a Json value holding it as given.
func ParseJSON(s string) (Value, error) {
	if !json.Valid([]byte(s)) {
		return Value{}, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
	}
	return NewJson(s), nil
}

// Cast converts v to type t with SQL CAST semantics: numbers convert with
// range checks (22003), floats round to integers half away from zero, text
// parses (22P02), and every value renders to text. NULL casts to NULL.
func Cast(v Value, t Type) (Value, error) {
	if v.fam == Null {
		return v, nil
	}
	if t.Family == Array {
		switch v.fam {
		case Array:
			if v.a != nil && v.a.elem == t.ElemType() {
				return v, nil
			}
			return castArray(v, t)
		case Unknown, Utf8:
			return parseArray(t, v.s)
		}
		return Value{}, sqlerr.New(sqlerr.DatatypeMismatch, "cannot cast type %s to %s", T(v.fam).PGName(), t.PGName())
	}
	if v.fam == Array && t.Family != Utf8 && t.Family != String {
		return Value{}, sqlerr.New(sqlerr.DatatypeMismatch, "cannot cast type %s to %s", v.ArrayType().PGName(), t.PGName())
	}
	if v.fam == Enum || t.Family == Enum {
		return castEnum(v, t)
	}
	if (t.Family == Timestamp || t.Family == TimestampTZ) && t.Qual != 0 {
		// timestamp(p): the value, then rounded.
		r, err := Cast(v, Type{Family: t.Family})
		return AdjustTimestamp(r, t.Qual), err
	}
	if v.fam == t.Family && t.Plain() {
		return v, nil
	}
	switch {
	case v.fam == Interval && t.Family == Interval:
		// interval(3), INTERVAL DAY TO MINUTE: PostgreSQL's
		// interval_scale.
		return AdjustInterval(v, t.Qual)
	case t.Family == Time:
		// time(p); timestamp::time (the wall clock's time of day);
		// interval::time (its time part, modulo a day).
		switch {
		case v.fam == Time:
			return AdjustTime(v, t.Qual), nil
		case v.fam == Timestamp || v.fam == Datetime:
			if v.IsInfiniteTime() {
				// PostgreSQL's timestamp_time: no time of day.
				return NullValue, nil
			}
			return AdjustTime(NewTime(TimeOfDay(v.micros())), t.Qual), nil
		case v.fam == Interval:
			return AdjustTime(NewTime(IntervalToTime(v)), t.Qual), nil
		case v.fam == TimeTZ:
			// The time of day, without the zone (timetz_time).
			us, _ := v.TimeTZParts()
			return AdjustTime(NewTime(us), t.Qual), nil
		case v.fam == Unknown || v.fam == Utf8 || v.fam == String:
			return ParseText(t, v.s)
		}
	case t.Family == TimeTZ:
		// timetz(p); text; timestamptz and time go through the session's
		// zone (sql/expr, zone.go).
		switch v.fam {
		case TimeTZ:
			return AdjustTimeTZ(v, t.Qual), nil
		case Unknown, Utf8, String:
			return ParseText(t, v.s)
		}
	case v.fam == Time && t.Family == Interval:
		return AdjustInterval(NewInterval(v.i), t.Qual)
	case v.fam == Unknown:
		return ParseText(t, v.s)
	case t.Family == Utf8:
		s := v.Text()
		if v.fam == String {
			s = v.s
		}
		return ParseText(t, s)
	case t.Family == String:
		if v.fam == Utf8 {
			// Text becomes bytes by bytea's input rules (\x hex, the
			// escape format's \\ and \nnn), as an untyped literal does
			// (ParseText): '\xdeadbeef' is four bytes whether it was
			// typed text first or not.
			return NewString(parseBytea(v.s)), nil
		}
		if v.fam == Json {
			return NewString(v.s), nil
		}
		return NewString(v.Text()), nil
	case t.Family == Json:
		if v.fam == Utf8 || v.fam == String {
			return ParseJSON(v.s)
		}
	case v.fam == Utf8 || v.fam == String:
		return ParseText(t, v.s)
	case t.Family == Bool:
		if v.fam.IsInteger() {
			return NewBool(v.i != 0), nil
		}
	case t.Family.IsInteger():
		return castToInt(v, t.Family)
	case t.Family == Float || t.Family == Double:
		if v.fam.IsNumeric() || v.fam == Bool {
			f := v.AsFloat()
			if t.Family == Float {
				if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
					return Value{}, outOfRange(t)
				}
				return NewFloat(f), nil
			}
			return NewDouble(f), nil
		}
	case t.Family == Decimal:
		if v.fam.IsNumeric() {
			if v.fam.IsFloat() && (math.IsNaN(v.fl()) || math.IsInf(v.fl(), 0)) {
				if math.IsNaN(v.fl()) {
					return CastDecimal(t, &apd.Decimal{Form: apd.NaN})
				}
				return Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "cannot convert infinity to numeric")
			}
			return CastDecimal(t, v.AsDecimal())
		}
	case t.Family.IsTime():
		if v.fam.IsTime() {
			m := v.micros()
			if v.IsInfiniteTime() {
				switch t.Family {
				case Date:
					return NewDate(m), nil
				case Datetime:
					return Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "%s out of range for type Datetime", v.Text())
				case TimestampTZ:
					return NewTimestampTZ(m), nil
				}
				return NewTimestamp(m), nil
			}
			switch t.Family {
			case Date:
				return NewDate(floorDiv(m, microsPerDay)), nil
			case Datetime:
				return NewDatetime(floorDiv(m, 1e6)), nil
			case TimestampTZ:
				return NewTimestampTZ(m), nil
			}
			return NewTimestamp(m), nil
		}
	}
	return Value{}, sqlerr.New(sqlerr.DatatypeMismatch, "cannot cast type %s to %s", T(v.fam).PGName(), t.PGName())
}

func castToInt(v Value, f Family) (Value, error) {
	switch {
	case v.fam == Bool:
		return IntToFamily(f, v.i)
	case v.fam.IsUnsigned():
		return UintToFamily(f, uint64(v.i))
	case v.fam.IsInteger():
		return IntToFamily(f, v.i)
	case v.fam.IsFloat():
		x := math.Round(v.fl())
		if math.IsNaN(x) || x < -9.223372036854775808e18 || x >= 1.8446744073709551616e19 {
			return Value{}, outOfRange(T(f))
		}
		if x >= 9.223372036854775808e18 {
			return UintToFamily(f, uint64(x))
		}
		return IntToFamily(f, int64(x))
	case v.fam == Decimal:
		var r apd.Decimal
		if _, err := decimalCtx.RoundToIntegralValue(&r, v.d); err != nil {
			return Value{}, outOfRange(T(f))
		}
		if i, err := r.Int64(); err == nil {
			return IntToFamily(f, i)
		}
		if u, err := strconv.ParseUint(r.Text('f'), 10, 64); err == nil {
			return UintToFamily(f, u)
		}
		return Value{}, outOfRange(T(f))
	}
	return Value{}, sqlerr.New(sqlerr.DatatypeMismatch, "cannot cast type %s to %s", T(v.fam).PGName(), T(f).PGName())
}

// ParseInterval parses interval text (ParseIntervalValue) where a
// length of time is needed (TTL settings, AS OF SYSTEM TIME): days count
// 24 hours, and years and months, which have no fixed length, are
// rejected (0A000).
func ParseInterval(s string) (int64, error) {
	v, err := ParseIntervalValue(s)
	if err != nil {
		return 0, err
	}
	months, _, _ := v.IntervalParts()
	if months != 0 {
		return 0, monthsNotSupported(s)
	}
	m, ok := v.IntervalMicros()
	if !ok {
		return 0, intervalOverflow()
	}
	return m, nil
}

// monthsNotSupported is the error for an interval with years or months
// where a fixed length of time is needed.
func monthsNotSupported(s string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"interval %q is not supported here yet: years and months have no fixed length of time", s)
}

// parseClock reads an interval's time field, [+-]h:m[:s[.f]], or m:s.f
// (two fields with a fraction are always minutes and seconds, as in
// PostgreSQL's DecodeTime); minSec reads m:s without a fraction as
// minutes and seconds too (INTERVAL MINUTE TO SECOND).
func parseClock(f string, minSec bool) (int64, bool) {
	neg := strings.HasPrefix(f, "-")
	f = strings.TrimPrefix(strings.TrimPrefix(f, "-"), "+")
	parts := strings.Split(f, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	if len(parts) == 2 && (minSec || strings.Contains(parts[1], ".")) {
		parts = []string{"0", parts[0], parts[1]}
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	var sec float64
	if len(parts) == 3 {
		var err error
		if sec, err = strconv.ParseFloat(parts[2], 64); err != nil {
			return 0, false
		}
	}
	total := h*3600e6 + m*60e6 + int64(math.Round(sec*1e6))
	if neg {
		total = -total
	}
	return total, true
}

// castEnum casts to or from an enum: only text converts (an enum value is
// its own type's only); labels are checked (22P02).
func castEnum(v Value, t Type) (Value, error) {
	switch {
	case v.fam == Enum && t.Family == Enum:
		if l, ok := t.Enum.Label(v.s); ok && l.Sort == v.fl() {
			return v, nil
		}
	case t.Family == Enum && (v.fam == Unknown || v.fam == Utf8):
		return parseEnum(t, v.s)
	case v.fam == Enum && t.Family == Utf8:
		return ParseText(t, v.s)
	case v.fam == Enum && t.Family == String:
		return NewString(v.s), nil
	}
	from := T(v.fam).PGName()
	if v.fam == Enum {
		from = "enum"
	}
	return Value{}, sqlerr.New(sqlerr.DatatypeMismatch, "cannot cast type %s to %s", from, t.PGName())
}

// splitNumberUnits splits fields that join a number and its unit, as
// PostgreSQL reads '1000us', '5min' or '2days' like '1000 us'.
func splitNumberUnits(fields []string) []string {
	out := fields[:0:0]
	for _, f := range fields {
		k := strings.IndexFunc(f, func(r rune) bool { return r >= 'a' && r <= 'z' })
		if k > 0 && !strings.Contains(f, ":") && f[k-1] >= '0' && f[k-1] <= '9' &&
			!(f[k] == 'e' && k+1 < len(f) && (f[k+1] >= '0' && f[k+1] <= '9' || f[k+1] == '-' || f[k+1] == '+')) {
			out = append(out, f[:k], f[k:])
			continue
		}
		out = append(out, f)
	}
	return out
}
