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
	if v.fam == t.Family && t.Precision == 0 && t.Width == 0 {
		return v, nil
	}
	switch {
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

// ParseInterval parses an ISO 8601 duration ("PT1H", "P1DT2H30M", "-PT0.5S",
// "P2W") as YQL writes intervals, or PostgreSQL's interval input ("1 day
// 02:00:00", "3 hours", "-00:00:01", "90 seconds"). Months and years are not
// fixed lengths of time and are rejected.
func ParseInterval(s string) (int64, error) {
	ts := strings.TrimSpace(s)
	bad := func() (int64, error) {
		return 0, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type interval: %q", s)
	}
	// PostgreSQL's verbose form: '@ 1 minute', '@ 2 hours ago'.
	ago := false
	if rest, ok := strings.CutPrefix(ts, "@"); ok {
		ts = strings.TrimSpace(rest)
	}
	if rest, ok := strings.CutSuffix(strings.ToLower(ts), " ago"); ok {
		ts, ago = strings.TrimSpace(rest), true
	}
	if ts == "" {
		return bad()
	}
	m, err := parseIntervalNoAgo(ts, bad)
	if ago {
		m = -m
	}
	return m, err
}

// monthsNotSupported is the error for interval input with years or
// months: PivotDB's interval is a length of time in microseconds, and a
// month has no fixed length.
func monthsNotSupported(s string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"interval %q is not supported yet: intervals with years or months have no fixed length, and PivotDB's interval counts microseconds", s)
}

func parseIntervalNoAgo(ts string, bad func() (int64, error)) (int64, error) {
	if y, m, ok := strings.Cut(ts, "-"); ok && y != "" && !strings.ContainsAny(ts, " :") {
		// SQL year-month form '1-2'.
		if _, err1 := strconv.Atoi(y); err1 == nil {
			if _, err2 := strconv.Atoi(m); err2 == nil {
				return 0, monthsNotSupported(ts)
			}
		}
	}
	neg := false
	iso := ts
	if strings.HasPrefix(iso, "-") {
		neg, iso = true, iso[1:]
	}
	if strings.HasPrefix(iso, "P") {
		m, ok := parseISODuration(iso[1:])
		if !ok {
			if date, _, _ := strings.Cut(iso[1:], "T"); strings.ContainsAny(date, "YM") {
				return 0, monthsNotSupported(ts)
			}
			return bad()
		}
		if neg {
			m = -m
		}
		return m, nil
	}
	// PostgreSQL style: a sequence of "<number> <unit>" and hh:mm[:ss].
	var total float64
	fields := splitNumberUnits(strings.Fields(strings.ToLower(ts)))
	if len(fields) == 0 {
		return bad()
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			m, ok := parseClock(f)
			if !ok {
				return bad()
			}
			total += float64(m)
			continue
		}
		n, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return bad()
		}
		unit := "second"
		if i+1 < len(fields) {
			unit = fields[i+1]
			if unit != "ms" && unit != "us" && unit != "s" {
				unit = strings.TrimSuffix(unit, "s")
			}
			i++
		}
		var mul float64
		switch unit {
		case "year", "yr", "y", "month", "mon", "decade", "dec", "century", "cent", "millennium", "millennia", "millenium", "mil":
			return 0, monthsNotSupported(ts)
		case "microsecond", "us", "usec":
			mul = 1
		case "millisecond", "ms", "msec":
			mul = 1e3
		case "second", "sec", "s":
			mul = 1e6
		case "minute", "min":
			mul = 60e6
		case "hour", "h", "hr":
			mul = 3600e6
		case "day", "d":
			mul = 86400e6
		case "week", "w":
			mul = 7 * 86400e6
		default:
			return bad()
		}
		total += n * mul
	}
	if math.Abs(total) > 9.2e18 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	return int64(math.Round(total)), nil
}

func parseClock(f string) (int64, bool) {
	neg := strings.HasPrefix(f, "-")
	f = strings.TrimPrefix(strings.TrimPrefix(f, "-"), "+")
	parts := strings.Split(f, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
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

// parseISODuration parses the part after "P" of an ISO 8601 duration.
func parseISODuration(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var total float64
	inTime := false
	num := ""
	seen := false
	for _, c := range s {
		switch {
		case c == 'T':
			if inTime || num != "" {
				return 0, false
			}
			inTime = true
		case (c >= '0' && c <= '9') || c == '.':
			num += string(c)
		default:
			if num == "" {
				return 0, false
			}
			n, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, false
			}
			var mul float64
			switch {
			case !inTime && c == 'W':
				mul = 7 * 86400e6
			case !inTime && c == 'D':
				mul = 86400e6
			case inTime && c == 'H':
				mul = 3600e6
			case inTime && c == 'M':
				mul = 60e6
			case inTime && c == 'S':
				mul = 1e6
			default:
				return 0, false
			}
			total += n * mul
			num = ""
			seen = true
		}
	}
	if num != "" || !seen || total > 9.2e18 {
		return 0, false
	}
	return int64(math.Round(total)), true
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
