package types

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Text renders v in PostgreSQL's text output format (what psql prints and
// what the wire protocol sends in text mode). NULL renders as "NULL"; the wire
// layer sends NULL as a null field instead of calling Text.
func (v Value) Text() string {
	switch v.fam {
	case Null:
		return "NULL"
	case Bool:
		if v.i != 0 {
			return "t"
		}
		return "f"
	case Int8, Int16, Int32, Int64:
		return strconv.FormatInt(v.i, 10)
	case Uint8, Uint16, Uint32, Uint64:
		return strconv.FormatUint(uint64(v.i), 10)
	case Float:
		return formatFloat(v.fl(), 32)
	case Double:
		return formatFloat(v.fl(), 64)
	case Decimal:
		return v.d.Text('f')
	case String:
		return `\x` + hex.EncodeToString([]byte(v.s))
	case Utf8, Json, Unknown, Enum:
		return v.s
	case Date:
		if inf, ok := infinityText(v.i); ok {
			return inf
		}
		return formatDateStyled(time.Unix(v.i*86400, 0).UTC(), v.st)
	case Datetime:
		return formatTimestampStyledMicros(v.i*1e6, time.UTC, v.st, false)
	case Timestamp:
		if inf, ok := infinityText(v.i); ok {
			return inf
		}
		return formatTimestampStyledMicros(v.i, time.UTC, v.st, false)
	case TimestampTZ:
		return v.formatTimestampTZ()
	case Interval:
		return FormatIntervalStyle(v, v.intervalStyle())
	case Time:
		return FormatTime(v.i)
	case TimeTZ:
		return FormatTimeTZ(v.TimeTZParts())
	case Uuid:
		return formatUuid(v.s)
	case Array:
		return v.formatArray()
	case Record:
		return v.formatRecord()
	}
	return fmt.Sprintf("<%v>", v.fam)
}

// String is for debugging and test output: text with strings quoted.
func (v Value) String() string {
	switch v.fam {
	case Utf8, Unknown, Json, Enum:
		return strconv.Quote(v.s)
	case String:
		return "b" + strconv.Quote(v.s)
	case Uuid:
		return quoteUuid(v.s)
	}
	return v.Text()
}

// formatFloat prints the shortest representation that round-trips, as
// PostgreSQL 12+ does with extra_float_digits = 1 (its default for clients
// that set it, and what drivers set).
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if bits == 64 {
		// float8out: the shortest digits, in fixed notation when the
		// decimal exponent is in [-4, 15) ('34239600', '1e+15'); float4
		// switches at 6, as %g does.
		e := strconv.FormatFloat(f, 'e', -1, 64)
		if x, err := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:]); err == nil && x >= -4 && x < 15 {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return e
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	// PostgreSQL switches to exponent notation at the same points as %g with
	// the shortest digits, and writes exponents with at least two digits.
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := exp[0]
		digits := exp[1:]
		if len(digits) < 2 {
			digits = "0" + digits
		}
		s = mant + "e" + string(sign) + digits
	}
	return s
}

const microsPerDay = 86400 * 1e6

// FormatDate prints days since the epoch as YYYY-MM-DD.
func FormatDate(days int64) string { return NewDate(days).Text() }

// FormatTimestamp prints microseconds since the epoch as
// "YYYY-MM-DD HH:MM:SS[.ffffff]" with trailing zeros of the fraction removed.
func FormatTimestamp(micros int64) string { return NewTimestamp(micros).Text() }

// formatTimestampStyledMicros prints microseconds since the epoch in loc.
func formatTimestampStyledMicros(micros int64, loc *time.Location, st Style, withZone bool) string {
	secs := floorDiv(micros, 1e6)
	return formatTimestampStyled(time.Unix(secs, 0).In(loc), micros-secs*1e6, st, withZone)
}

func formatYear(y int) string {
	if y <= 0 {
		y = 1 - y
	}
	return fmt.Sprintf("%04d", y)
}

func bcSuffix(y int) string {
	if y <= 0 {
		return " BC"
	}
	return ""
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// FormatInterval prints an interval of microseconds in PostgreSQL's
// "postgres" style: "02:03:04.5", "-00:00:01", "00:00:00".
func FormatInterval(micros int64) string {
	return FormatIntervalStyle(NewInterval(micros), IntervalPostgres)
}

// ParseText converts text (a string literal, a text-format parameter, a cast
// from text) to a value of type t. Errors carry 22P02/22007/22003 as
// PostgreSQL reports them.
func ParseText(t Type, s string) (Value, error) {
	switch t.Family {
	case Array:
		return parseArray(t, s)
	case Uuid:
		return parseUuid(s)
	case Enum:
		return parseEnum(t, s)
	case Null, Unknown:
		return NewUnknown(s), nil
	case Bool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "yes", "y", "on", "1":
			return NewBool(true), nil
		case "f", "false", "no", "n", "off", "0":
			return NewBool(false), nil
		}
		return Value{}, invalidInput("boolean", s)
	case Int8, Int16, Int32, Int64:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{}, outOfRange(t)
			}
			return Value{}, invalidInput(t.PGName(), s)
		}
		return IntToFamily(t.Family, i)
	case Uint8, Uint16, Uint32, Uint64:
		ts := strings.TrimSpace(s)
		u, err := strconv.ParseUint(ts, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Value{}, outOfRange(t)
			}
			if strings.HasPrefix(ts, "-") {
				if _, err2 := strconv.ParseInt(ts, 10, 64); err2 == nil {
					return Value{}, outOfRange(t)
				}
			}
			return Value{}, invalidInput(t.String(), s)
		}
		return UintToFamily(t.Family, u)
	case Float, Double:
		ts := strings.TrimSpace(s)
		var f float64
		switch strings.ToLower(ts) {
		case "nan":
			f = math.NaN()
		case "infinity", "inf", "+infinity", "+inf":
			f = math.Inf(1)
		case "-infinity", "-inf":
			f = math.Inf(-1)
		default:
			var err error
			bits := 64
			if t.Family == Float {
				bits = 32
			}
			f, err = strconv.ParseFloat(ts, bits)
			if err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					return Value{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "%q is out of range for type %s", s, t.PGName())
				}
				return Value{}, invalidInput(t.PGName(), s)
			}
		}
		if t.Family == Float {
			return NewFloat(f), nil
		}
		return NewDouble(f), nil
	case Decimal:
		d, _, err := apd.NewFromString(strings.TrimSpace(s))
		if err != nil {
			return Value{}, invalidInput("numeric", s)
		}
		return CastDecimal(t, d)
	case String:
		return NewString(parseBytea(s)), nil
	case Utf8:
		if err := CheckText(s); err != nil {
			return Value{}, err
		}
		if t.Width > 0 {
			var err error
			if s, err = fitWidth(t, s); err != nil {
				return Value{}, err
			}
		}
		return NewUtf8(s), nil
	case Json:
		return ParseJSON(s)
	case Date:
		days, err := ParseDate(s)
		if err != nil {
			return Value{}, err
		}
		return NewDate(days), nil
	case Datetime:
		if _, inf := parseInfinity(s); inf {
			return Value{}, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type Datetime: %q", s)
		}
		m, err := ParseTimestamp(s)
		if err != nil {
			return Value{}, err
		}
		return NewDatetime(floorDiv(m, 1e6)), nil
	case Timestamp:
		m, err := ParseTimestamp(s)
		if err != nil {
			return Value{}, err
		}
		return AdjustTimestamp(NewTimestamp(m), t.Qual), nil
	case TimestampTZ:
		// Without a session zone (types has none), a time without an
		// offset is UTC; expressions parse in the session's TimeZone
		// (sql/expr, cast.go).
		m, err := ParseTimestamp(s)
		if err != nil {
			return Value{}, err
		}
		return AdjustTimestamp(NewTimestampTZ(m), t.Qual), nil
	case Interval:
		return ParseIntervalTyped(t, s, IntervalPostgres)
	case Time:
		us, err := ParseTime(s, nil)
		if err != nil {
			return Value{}, err
		}
		return AdjustTime(NewTime(us), t.Qual), nil
	case TimeTZ:
		// Without a zone in the text, UTC here; the session's TimeZone
		// in expressions (sql/expr, zone.go).
		v, err := ParseTimeTZ(s, nil)
		if err != nil {
			return Value{}, err
		}
		return AdjustTimeTZ(v, t.Qual), nil
	}
	return Value{}, sqlerr.New(sqlerr.InternalError, "types: no text input for %v", t)
}

func invalidInput(typ, s string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", typ, s)
}

func outOfRange(t Type) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range for type %s", t.String())
}

// parseBytea accepts PostgreSQL's hex format (\x...) and otherwise takes the
// text's bytes as they are, with the escape format's \\ and \nnn decoded.
func parseBytea(s string) string {
	if strings.HasPrefix(s, `\x`) {
		if b, err := hex.DecodeString(s[2:]); err == nil {
			return string(b)
		}
	}
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == '\\' {
				b.WriteByte('\\')
				i++
				continue
			}
			if i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
				b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// ParseDate parses YYYY-MM-DD (optionally followed by a time, which must be
// midnight-free of meaning and is ignored as PostgreSQL's date input does).
func ParseDate(s string) (int64, error) { return parseDate(s, OrderMDY) }

func parseDate(s string, order uint8) (int64, error) {
	if d, ok := parseInfinity(s); ok {
		return d, nil // ±infinity in days too (infinity.go)
	}
	ts := strings.TrimSpace(s)
	if len(ts) > 10 && (ts[10] == ' ' || ts[10] == 'T') && !strings.Contains(strings.ToLower(ts[10:]), "bc") {
		ts = ts[:10] // the time of day does not change the date
	}
	t, err := time.Parse("2006-01-02", ts)
	if err != nil {
		m, err := decodeDateTime(s, "date", order, time.UTC)
		if err != nil {
			return 0, err
		}
		return floorDiv(m, microsPerDay), nil
	}
	return floorDiv(t.Unix(), 86400), nil
}

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// ParseTimestamp parses an ISO 8601 / PostgreSQL timestamp. A zone offset or
// Z converts the time to UTC; without one the time is taken as UTC.
func ParseTimestamp(s string) (int64, error) { return parseTimestamp(s, OrderMDY) }

func parseTimestamp(s string, order uint8) (int64, error) {
	return parseTimestampIn(s, order, time.UTC, "timestamp")
}

// parseTimestampIn is parseTimestamp with text without a zone read as a
// wall-clock time in loc; typ names the type in errors.
func parseTimestampIn(s string, order uint8, loc *time.Location, typ string) (int64, error) {
	ts := strings.TrimSpace(s)
	if strings.HasSuffix(ts, " UTC") || strings.HasSuffix(ts, "+00") && !strings.Contains(ts[len(ts)-4:], ":") {
		ts = strings.TrimSuffix(ts, " UTC")
		loc = time.UTC
	}
	for _, layout := range timestampLayouts {
		if t, err := time.ParseInLocation(layout, ts, loc); err == nil {
			if t.Year() < -4713 || t.Year() > 294276 {
				break
			}
			return t.Unix()*1e6 + int64(t.Nanosecond()/1000), nil
		}
	}
	return decodeDateTime(s, typ, order, loc)
}
