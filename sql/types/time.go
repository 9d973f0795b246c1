package types

import (
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's time [without time zone]: a time of day, i = microseconds
// since midnight, 0 through 24:00:00 inclusive (PostgreSQL keeps
// 24:00:00 apart from 00:00:00). It is not a point in time (IsTime is
// false): it does not compare with dates or timestamps, and it keys and
// stores as an integer. Its precision, time(p), is Type.Qual's
// (interval_qual.go); values are rounded to it on input and cast.
//
// time with time zone (timetz) is timetz.go.

// TypeTime is time without time zone, microseconds.
var TypeTime = T(Time)

// NewTime returns a time of day of micros since midnight.
func NewTime(micros int64) Value { return Value{fam: Time, i: micros} }

// parseTimeType reads time and time(p) [without time zone].
func parseTimeType(args []int) (Type, error) {
	switch len(args) {
	case 0:
		return TypeTime, nil
	case 1:
		if args[0] < 0 {
			return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "TIME(%d) precision must not be negative", args[0])
		}
		// PostgreSQL warns and takes 6 for a larger precision.
		return Type{Family: Time, Qual: Qual(0).WithPrecision(args[0])}, nil
	}
	return Type{}, sqlerr.New(sqlerr.SyntaxError, "invalid type modifier")
}

// TimeTypmod is the atttypmod of a time column: its precision, -1 for
// none.
func TimeTypmod(q Qual) int32 {
	if p, ok := q.Precision(); ok {
		return int32(p)
	}
	return -1
}

// TimeTypmodText is format_type's spelling of time with typmod mod.
func TimeTypmodText(mod int64) string {
	if mod >= 0 && mod <= MaxTimePrecision {
		return "time(" + strconv.Itoa(int(mod)) + ") without time zone"
	}
	return "time without time zone"
}

// FormatTime prints a time of day as PostgreSQL's time_out does:
// HH:MM:SS with the fraction's trailing zeros dropped.
func FormatTime(us int64) string {
	b := make([]byte, 0, 15)
	h, m := us/microsPerHour, us/60e6%60
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':')
	return string(appendSeconds(b, us/1e6%60, us%1e6, true))
}

const microsPerDayInt = int64(microsPerDay)

// timeOutOfRange is PostgreSQL's error for a time field past 24:00:00.
func timeOutOfRange(s string) error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: %q", s)
}

// ParseTime parses time text as PostgreSQL's time_in does: '04:05:06.789',
// '04:05', '4:05 PM', '040506', 'allballs', '24:00:00', a date before the
// time and a zone after it (both ignored: '2003-04-12 04:05:06
// America/New_York' is 04:05:06). 'now' is the time of day in loc.
func ParseTime(s string, loc *time.Location) (int64, error) {
	us, _, err := parseTimeOfDay(s, loc, "time")
	return us, err
}

// parseTimeOfDay is ParseTime that also returns the fields read (the zone
// and date timetz needs); typ names the type in errors. 'now' and
// 'allballs' come back with a zone set: loc's and UTC.
func parseTimeOfDay(s string, loc *time.Location, typ string) (int64, dtFields, error) {
	bad := sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %q", typ, s)
	in := strings.ToLower(strings.TrimSpace(s))
	switch in {
	case "allballs":
		return 0, dtFields{haveZone: true}, nil
	case "now":
		if loc == nil {
			loc = time.UTC
		}
		t := Now().In(loc)
		_, off := t.Zone()
		return int64(t.Hour())*microsPerHour + int64(t.Minute())*60e6 + int64(t.Second())*1e6 + int64(t.Nanosecond()/1000),
			dtFields{haveZone: true, offset: off}, nil
	case "":
		return 0, dtFields{}, bad
	}
	f := dtFields{order: OrderMDY}
	fields := strings.FieldsFunc(in, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	for i := 0; i < len(fields); i++ {
		tok := fields[i]
		if j := strings.IndexByte(tok, 't'); j >= 0 && j < len(tok)-1 && isDigit(tok[j+1]) && (j == 0 || isDigit(tok[j-1])) {
			// ISO 8601: 2003-04-12T04:05:06, T040506.
			if j > 0 {
				fields = append(fields[:i+1], append([]string{tok[j+1:]}, fields[i+1:]...)...)
				tok = tok[:j]
			} else {
				tok = tok[1:]
			}
		}
		if !f.haveTime && !strings.ContainsAny(tok, ":-/") && len(f.nums) == 0 && isClockDigits(tok) {
			// hhmm, hhmmss[.frac]
			tok = tok[:2] + ":" + tok[2:4] + map[bool]string{true: ":" + tok[4:], false: ""}[len(tok) > 4]
		}
		if err := f.field(tok, i > 0); err != nil {
			return 0, f, bad
		}
	}
	if !f.haveTime || len(f.nums) > 0 && !f.haveDate {
		return 0, f, bad
	}
	if f.pm || f.am {
		if f.hour < 1 || f.hour > 12 {
			return 0, f, timeOutOfRange(s)
		}
		if f.pm && f.hour < 12 {
			f.hour += 12
		} else if f.am && f.hour == 12 {
			f.hour = 0
		}
	}
	if f.hour < 0 || f.min < 0 || f.min > 59 || f.sec < 0 || f.sec > 60 {
		return 0, f, timeOutOfRange(s)
	}
	us := int64(f.hour)*microsPerHour + int64(f.min)*60e6 + int64(f.sec)*1e6 + int64(f.usec)
	if us > microsPerDayInt {
		return 0, f, timeOutOfRange(s)
	}
	return us, f, nil
}

// isClockDigits reports whether tok is hhmm or hhmmss[.frac], all digits.
func isClockDigits(tok string) bool {
	whole, frac, hasFrac := strings.Cut(tok, ".")
	if len(whole) != 4 && len(whole) != 6 || hasFrac && len(whole) != 6 {
		return false
	}
	for i := 0; i < len(whole); i++ {
		if !isDigit(whole[i]) {
			return false
		}
	}
	for i := 0; i < len(frac); i++ {
		if !isDigit(frac[i]) {
			return false
		}
	}
	return true
}

// AdjustTime rounds a time of day to the precision of q (PostgreSQL's
// AdjustTimeForTypmod): halves up, so 23:59:59.9 as time(0) is 24:00:00.
func AdjustTime(v Value, q Qual) Value {
	if p, ok := q.Precision(); ok && v.fam == Time {
		return NewTime(roundMicros(v.i, p))
	}
	return v
}

// TimeOfDay is the time of day of a timestamp's microseconds (a wall
// clock): timestamp::time.
func TimeOfDay(micros int64) int64 {
	return micros - floorDiv(micros, microsPerDayInt)*microsPerDayInt
}

// AddTimeInterval is time ± interval: the interval's time part moved
// around the clock, wrapping at midnight; its months and days do not
// move a time of day (PostgreSQL's time_pl_interval).
func AddTimeInterval(t int64, iv Value, sign int64) int64 {
	_, _, us := iv.IntervalParts()
	return TimeOfDay(t + sign*(us%microsPerDayInt))
}

// IntervalToTime is interval::time: the time part modulo a day.
func IntervalToTime(iv Value) int64 {
	_, _, us := iv.IntervalParts()
	return TimeOfDay(us)
}

// parseTimestampType reads timestamp(p) and timestamptz(p): the precision
// rounds the microseconds (AdjustTimestamp).
func parseTimestampType(t Type, args []int) (Type, error) {
	switch len(args) {
	case 0:
		return t, nil
	case 1:
		if args[0] < 0 {
			return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "TIMESTAMP(%d) precision must not be negative", args[0])
		}
		// PostgreSQL warns and takes 6 for a larger precision.
		t.Qual = Qual(0).WithPrecision(args[0])
		return t, nil
	}
	return Type{}, sqlerr.New(sqlerr.SyntaxError, "invalid type modifier")
}

// pgEpochMicros is 2000-01-01 00:00:00 UTC, PostgreSQL's timestamp
// epoch, in microseconds since 1970.
const pgEpochMicros = 946684800 * 1e6

// AdjustTimestamp rounds a finite timestamp or timestamptz to the
// precision of q as PostgreSQL's AdjustTimestampForTypmod does: halves
// away from PostgreSQL's epoch (2000-01-01), so '1999-12-31
// 23:59:59.5'::timestamp(0) is 23:59:59 and '2000-01-01
// 00:00:00.5'::timestamp(0) is 00:00:01.
func AdjustTimestamp(v Value, q Qual) Value {
	p, ok := q.Precision()
	if !ok || v.fam != Timestamp && v.fam != TimestampTZ || v.IsInfiniteTime() {
		return v
	}
	v.i = roundMicros(v.i-pgEpochMicros, p) + pgEpochMicros
	return v
}

// TimestampTypmodText is format_type's spelling of timestamp (tz true:
// with time zone) with typmod mod.
func TimestampTypmodText(mod int64, tz bool) string {
	zone := " without time zone"
	if tz {
		zone = " with time zone"
	}
	if mod >= 0 && mod <= MaxTimePrecision {
		return "timestamp(" + strconv.Itoa(int(mod)) + ")" + zone
	}
	return "timestamp" + zone
}
