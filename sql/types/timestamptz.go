package types

import (
	"strconv"
	"strings"
	"sync"
	"time"
	// The zone database is compiled in, so that SET TIME ZONE
	// 'Europe/Berlin' works on machines without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TimestampTZ is PostgreSQL's timestamp with time zone: an instant,
// microseconds since the Unix epoch like Timestamp, printed in the
// session's TimeZone. YQL's Timestamp (always UTC, printed without a zone)
// stays a family of its own.
//
// A TimestampTZ Value may carry the name of the zone it is to be printed
// in (InZone); that is presentation only: comparison, arithmetic and the
// binary format see the instant.

// NewTimestampTZ returns a TimestampTZ value, microseconds since the
// Unix epoch, printed in UTC until InZone says otherwise.
func NewTimestampTZ(micros int64) Value { return Value{fam: TimestampTZ, i: micros} }

// TypeTimestampTZ is timestamp with time zone.
var TypeTimestampTZ = T(TimestampTZ)

// InZone returns v (a TimestampTZ) to be printed in the zone named by a
// TimeZone setting; other values are returned unchanged.
func (v Value) InZone(zone string) Value {
	if v.fam == TimestampTZ {
		v.s = zone
	}
	if v.fam == Array && v.a != nil && v.a.elem.Family == TimestampTZ {
		// An array of timestamptz prints its elements in the zone too.
		a := *v.a
		a.elems = make([]Value, len(v.a.elems))
		for i, e := range v.a.elems {
			a.elems[i] = e.InZone(zone)
		}
		v.a = &a
	}
	return v
}

var zoneCache sync.Map // setting value -> *time.Location

// LoadZone resolves a TimeZone setting as PostgreSQL does: UTC, a zone
// name of the tz database ("Europe/Berlin"), a number of hours east of
// Greenwich ("3", "-5.5"), or a POSIX-style offset ("+03:00", "-5"), in
// which, as in POSIX and PostgreSQL, a positive offset is WEST of
// Greenwich.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if l, ok := zoneCache.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := loadZone(name)
	if err != nil {
		return nil, err
	}
	zoneCache.Store(name, loc)
	return loc, nil
}

func loadZone(name string) (*time.Location, error) {
	s := strings.TrimSpace(name)
	bad := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": %q", name)
	switch strings.ToUpper(s) {
	case "UTC", "GMT", "Z", "ZULU", "ETC/UTC", "UCT":
		return time.UTC, nil
	}
	if h, err := strconv.ParseFloat(s, 64); err == nil {
		if h < -15 || h > 15 {
			return nil, bad
		}
		return time.FixedZone(s, int(h*3600)), nil
	}
	if s[0] == '+' || s[0] == '-' {
		hh, mm, ok := strings.Cut(s[1:], ":")
		h, err1 := strconv.Atoi(hh)
		m := 0
		var err2 error
		if ok {
			m, err2 = strconv.Atoi(mm)
		}
		if err1 != nil || err2 != nil || h > 15 || m > 59 {
			return nil, bad
		}
		off := h*3600 + m*60
		if s[0] == '+' {
			off = -off
		}
		return time.FixedZone(s, off), nil
	}
	if strings.Contains(s, "..") || strings.HasPrefix(s, "/") {
		return nil, bad
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, bad
	}
	return loc, nil
}

// FormatTimestampTZ prints an instant as PostgreSQL prints a timestamptz
// in zone loc: "2024-01-01 12:00:00.5+01", "+05:30" for a zone off by
// minutes.
func FormatTimestampTZ(micros int64, loc *time.Location) string {
	return formatTimestampTZStyled(micros, loc, 0)
}

// FormatTimestampTZStyle is FormatTimestampTZ in a DateStyle.
func FormatTimestampTZStyle(micros int64, loc *time.Location, st Style) string {
	return formatTimestampTZStyled(micros, loc, st)
}

func formatTimestampTZStyled(micros int64, loc *time.Location, st Style) string {
	if inf, ok := infinityText(micros); ok {
		return inf
	}
	return formatTimestampStyledMicros(micros, loc, st, true)
}

// formatTimestampTZ is Text of a TimestampTZ value.
func (v Value) formatTimestampTZ() string {
	loc, err := LoadZone(v.s)
	if err != nil {
		loc = time.UTC
	}
	return formatTimestampTZStyled(v.i, loc, v.st)
}

// ParseTimestampIn parses timestamp text; a time without a zone offset is
// the wall-clock time in loc (the session's TimeZone, for timestamptz
// input), one with an offset is that instant.
func ParseTimestampIn(s string, loc *time.Location) (int64, error) {
	return ParseTimestampInOrder(s, loc, OrderMDY)
}

// ParseTimestampInOrder is ParseTimestampIn with DateStyle's field order.
func ParseTimestampInOrder(s string, loc *time.Location, order uint8) (int64, error) {
	if loc == nil {
		loc = time.UTC
	}
	// ParseInLocation takes a written offset over loc, and the free-form
	// parser (decodeDateTime) a written zone or offset over loc, so
	// only text without one is read in the session's zone.
	return parseTimestampIn(s, order, loc, "timestamp with time zone")
}

// WallMicros converts an instant to the wall-clock time it is in loc,
// as microseconds of a zone-less Timestamp (timestamptz::timestamp).
func WallMicros(micros int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return micros
	}
	_, off := time.UnixMicro(micros).In(loc).Zone()
	return micros + int64(off)*1e6
}

// InstantMicros converts a wall-clock Timestamp in loc to the instant it
// names (timestamp::timestamptz): the offset in force at that wall time.
func InstantMicros(wall int64, loc *time.Location) int64 {
	if loc == time.UTC {
		return wall
	}
	secs := floorDiv(wall, 1e6)
	t := time.Unix(secs, 0).UTC()
	local := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc)
	return local.Unix()*1e6 + (wall - secs*1e6)
}
