package types

import (
	"strconv"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's time with time zone (timetz): a time of day and a zone's
// fixed displacement, as PostgreSQL keeps it (seconds west of UTC, the
// sign opposite to the displayed offset). The two pack into the Value's
// integer as (time + zone) · 2^17 + zone + 2^16, so that integer order is
// PostgreSQL's timetz order (timetz_cmp: by the UTC time of day, unwrapped,
// then by zone) and the value keys, stores and hashes as that integer:
// '12:00+02' and '10:00+00' are the same instant but not equal, as in
// PostgreSQL. Zones reach ±15:59:59 (TZDISP_LIMIT).

const (
	tzZoneBias = 1 << 16
	tzZoneSpan = 1 << 17
	// tzDispLimit is PostgreSQL's limit on a zone's displacement.
	tzDispLimit = 15*3600 + 59*60 + 59
)

// TypeTimeTZ is time with time zone.
var TypeTimeTZ = T(TimeTZ)

// NewTimeTZ is the time of day micros in a zone zoneWest seconds west of
// UTC (PostgreSQL's TimeTzADT).
func NewTimeTZ(micros int64, zoneWest int32) Value {
	utc := micros + int64(zoneWest)*1e6
	return Value{fam: TimeTZ, i: utc*tzZoneSpan + int64(zoneWest) + tzZoneBias}
}

// TimeTZFromKey is the timetz whose packed integer is i (rowenc's keys and
// stored values).
func TimeTZFromKey(i int64) Value { return Value{fam: TimeTZ, i: i} }

// TimeTZParts are a timetz's time of day and its zone in seconds west.
func (v Value) TimeTZParts() (micros int64, zoneWest int32) {
	z := floorMod(v.i, tzZoneSpan)
	zone := z - tzZoneBias
	utc := (v.i - z) / tzZoneSpan
	return utc - zone*1e6, int32(zone)
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// parseTimeTZType reads timetz and time(p) with time zone.
func parseTimeTZType(args []int) (Type, error) {
	t, err := parseTimeType(args)
	t.Family = TimeTZ
	return t, err
}

// FormatTimeTZ prints a timetz as timetz_out does: the time, then the
// offset as +HH, +HH:MM or +HH:MM:SS.
func FormatTimeTZ(micros int64, zoneWest int32) string {
	return FormatTime(micros) + formatZoneWest(zoneWest)
}

// formatZoneWest is PostgreSQL's EncodeTimezone of a zone tz seconds west.
func formatZoneWest(tz int32) string {
	sec := int(tz)
	sign := byte('+')
	if sec > 0 {
		sign = '-'
	} else {
		sec = -sec
	}
	h, m, s := sec/3600, sec/60%60, sec%60
	b := []byte{sign}
	two := func(n int) {
		b = append(b, byte('0'+n/10), byte('0'+n%10))
	}
	if h >= 100 {
		b = strconv.AppendInt(b, int64(h), 10)
	} else {
		two(h)
	}
	if m != 0 || s != 0 {
		b = append(b, ':')
		two(m)
	}
	if s != 0 {
		b = append(b, ':')
		two(s)
	}
	return string(b)
}

// ParseTimeTZ reads timetz text as timetz_in does: a time (the forms of
// ParseTime) and a zone, '+02', '-05:30', 'PST', 'UTC', 'Z' or a zone name.
// A named zone, or loc (the session's TimeZone) when the text has none,
// gives its offset on the date in the text, else on today's date there.
func ParseTimeTZ(s string, loc *time.Location) (Value, error) {
	us, f, err := parseTimeOfDay(s, loc, "time with time zone")
	if err != nil {
		return Value{}, err
	}
	off := 0
	switch {
	case f.haveZone && f.zone == nil:
		off = f.offset
	default:
		z := f.zone
		if z == nil {
			z = loc
		}
		if z == nil {
			z = time.UTC
		}
		y, m, d := Now().In(z).Date()
		if f.haveDate && f.year != 0 && f.month != 0 && f.day != 0 {
			y, m, d = f.year, f.month, f.day
		}
		_, off = time.Date(y, m, d, int(us/microsPerHour), int(us/60e6%60), int(us/1e6%60), 0, z).Zone()
	}
	if off > tzDispLimit || off < -tzDispLimit {
		return Value{}, sqlerr.New(sqlerr.InvalidTimeZoneDisplacementValue, "time zone displacement out of range: %q", s)
	}
	return NewTimeTZ(us, int32(-off)), nil
}

// TimeTZAt is the time of day and zone of the instant micros (since the
// epoch, UTC) on loc's wall clock: timestamptz::timetz.
func TimeTZAt(micros int64, loc *time.Location) Value {
	t := time.UnixMicro(micros).In(loc)
	_, off := t.Zone()
	return NewTimeTZ(TimeOfDay(micros+int64(off)*1e6), int32(-off))
}

// TimeToTimeTZ is time::timetz: the time of day in loc with loc's offset
// today (PostgreSQL's time_timetz uses the current date's offset).
func TimeToTimeTZ(micros int64, loc *time.Location) Value {
	y, m, d := Now().In(loc).Date()
	_, off := time.Date(y, m, d, int(micros/microsPerHour), int(micros/60e6%60), int(micros/1e6%60), 0, loc).Zone()
	return NewTimeTZ(micros, int32(-off))
}

// AdjustTimeTZ rounds a timetz's time of day to the precision of q.
func AdjustTimeTZ(v Value, q Qual) Value {
	if p, ok := q.Precision(); ok && v.fam == TimeTZ {
		us, z := v.TimeTZParts()
		return NewTimeTZ(roundMicros(us, p), z)
	}
	return v
}

// AddTimeTZInterval is timetz ± interval: the time moves around the
// clock, the zone stays (timetz_pl_interval).
func AddTimeTZInterval(v Value, iv Value, sign int64) Value {
	us, z := v.TimeTZParts()
	return NewTimeTZ(AddTimeInterval(us, iv, sign), z)
}

// TimeTZTypmodText is format_type's spelling of timetz with typmod mod.
func TimeTZTypmodText(mod int64) string {
	if mod >= 0 && mod <= MaxTimePrecision {
		return "time(" + strconv.Itoa(int(mod)) + ") with time zone"
	}
	return "time with time zone"
}
