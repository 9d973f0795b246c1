package types

import (
	"fmt"
	"strings"
	"time"
)

// Style is how dates, times and intervals print: the session's DateStyle
// (ISO, SQL, Postgres or German, and the field order MDY, DMY or YMD)
// and IntervalStyle. Like a timestamptz's zone (InZone) it is
// presentation only and travels with the value from the session's output
// (WithStyle) to Text; comparison, arithmetic, storage and the binary
// format never see it. The zero Style is PostgreSQL's default: ISO, MDY
// and postgres.
type Style uint8

// Date output styles (DateStyle's first part).
const (
	DateISO uint8 = iota
	DateSQL
	DatePostgres
	DateGerman
)

// Date field orders (DateStyle's second part): how ambiguous numeric
// input such as '01/02/03' is read, and the order SQL and Postgres
// output put day and month in.
const (
	OrderMDY uint8 = iota
	OrderDMY
	OrderYMD
)

// MakeStyle packs a date style, field order and interval style.
func MakeStyle(date, order, interval uint8) Style {
	return Style(date&3 | (order&3)<<2 | (interval&3)<<4)
}

// DateStyle, Order and IntervalStyle unpack a Style.
func (s Style) DateStyle() uint8     { return uint8(s) & 3 }
func (s Style) Order() uint8         { return uint8(s) >> 2 & 3 }
func (s Style) IntervalStyle() uint8 { return uint8(s) >> 4 & 3 }

// WithStyle returns v to be printed in style st (dates, times, intervals
// and arrays of them); other values are returned unchanged.
func (v Value) WithStyle(st Style) Value {
	switch v.fam {
	case Date, Datetime, Timestamp, TimestampTZ, Interval:
		v.st = st
	case Array:
		if v.a != nil {
			switch v.a.elem.Family {
			case Date, Datetime, Timestamp, TimestampTZ, Interval:
				a := *v.a
				a.elems = make([]Value, len(v.a.elems))
				for i, e := range v.a.elems {
					a.elems[i] = e.WithStyle(st)
				}
				v.a = &a
			}
		}
	}
	return v
}

// StyleDependent reports whether values of family f print differently
// in some Style.
func StyleDependent(f Family) bool {
	switch f {
	case Date, Datetime, Timestamp, TimestampTZ, Interval:
		return true
	}
	return false
}

func (v Value) intervalStyle() uint8 { return v.st.IntervalStyle() }

var weekdayAbbrev = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// formatDateStyled prints a date (EncodeDateOnly).
func formatDateStyled(t time.Time, st Style) string {
	y := formatYear(t.Year())
	switch st.DateStyle() {
	case DateSQL:
		if st.Order() == OrderDMY {
			return fmt.Sprintf("%02d/%02d/%s", t.Day(), int(t.Month()), y) + bcSuffix(t.Year())
		}
		return fmt.Sprintf("%02d/%02d/%s", int(t.Month()), t.Day(), y) + bcSuffix(t.Year())
	case DateGerman:
		return fmt.Sprintf("%02d.%02d.%s", t.Day(), int(t.Month()), y) + bcSuffix(t.Year())
	case DatePostgres:
		if st.Order() == OrderDMY {
			return fmt.Sprintf("%02d-%02d-%s", t.Day(), int(t.Month()), y) + bcSuffix(t.Year())
		}
		return fmt.Sprintf("%02d-%02d-%s", int(t.Month()), t.Day(), y) + bcSuffix(t.Year())
	}
	return y + t.Format("-01-02") + bcSuffix(t.Year())
}

// formatTimestampStyled prints a timestamp (EncodeDateTime); zone is the
// time zone's text for a timestamptz ("" for a timestamp): the numeric
// offset in ISO style, the abbreviation in the others.
func formatTimestampStyled(t time.Time, frac int64, st Style, withZone bool) string {
	var b strings.Builder
	secs := fmt.Sprintf("%02d", t.Second())
	if frac != 0 {
		secs += "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	}
	clock := fmt.Sprintf("%02d:%02d:%s", t.Hour(), t.Minute(), secs)
	y := formatYear(t.Year())
	abbrev := func() string {
		name, off := t.Zone()
		if name == "" || name[0] == '+' || name[0] == '-' || name[0] >= '0' && name[0] <= '9' {
			return numericZone(off)
		}
		return name
	}
	switch st.DateStyle() {
	case DateSQL, DateGerman:
		switch {
		case st.DateStyle() == DateGerman:
			fmt.Fprintf(&b, "%02d.%02d.%s %s", t.Day(), int(t.Month()), y, clock)
		case st.Order() == OrderDMY:
			fmt.Fprintf(&b, "%02d/%02d/%s %s", t.Day(), int(t.Month()), y, clock)
		default:
			fmt.Fprintf(&b, "%02d/%02d/%s %s", int(t.Month()), t.Day(), y, clock)
		}
		if withZone {
			b.WriteString(" " + abbrev())
		}
	case DatePostgres:
		b.WriteString(weekdayAbbrev[t.Weekday()])
		if st.Order() == OrderDMY {
			fmt.Fprintf(&b, " %02d %s", t.Day(), t.Month().String()[:3])
		} else {
			fmt.Fprintf(&b, " %s %02d", t.Month().String()[:3], t.Day())
		}
		fmt.Fprintf(&b, " %s %s", clock, y)
		if withZone {
			b.WriteString(" " + abbrev())
		}
	default:
		b.WriteString(y + t.Format("-01-02") + " " + clock)
		if withZone {
			_, off := t.Zone()
			b.WriteString(numericZone(off))
		}
	}
	return b.String() + bcSuffix(t.Year())
}

// numericZone prints a UTC offset as PostgreSQL does: "+01", "-05:30".
func numericZone(off int) string {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	s := fmt.Sprintf("%c%02d", sign, off/3600)
	if rest := off % 3600; rest != 0 {
		s += fmt.Sprintf(":%02d", rest/60)
		if rest%60 != 0 {
			s += fmt.Sprintf(":%02d", rest%60)
		}
	}
	return s
}
