package types

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's free-form date and timestamp input (DecodeDateTime), for
// what the ISO layouts of ParseTimestamp do not take: month names
// ('January 8, 1999', '08-Jan-1999'), numeric dates read in DateStyle's
// field order ('1/8/1999': January 8 in MDY, August 1 in DMY), 'yyyymmdd', times with AM/PM, time zone
// abbreviations and names ('04:05:06 PST', 'America/New_York'), BC, and the
// special values epoch, now, today, tomorrow and yesterday. The result is
// microseconds since the epoch in UTC.

// Now is the clock the special inputs 'now', 'today', 'tomorrow' and
// 'yesterday' read; tests replace it.
var Now = time.Now

var monthNames = map[string]time.Month{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
	"may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
	"september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

var weekdayNames = map[string]bool{
	"sun": true, "sunday": true, "mon": true, "monday": true, "tue": true, "tues": true, "tuesday": true,
	"wed": true, "wednesday": true, "thu": true, "thur": true, "thurs": true, "thursday": true,
	"fri": true, "friday": true, "sat": true, "saturday": true,
}

// zoneAbbrevs are the common abbreviations of PostgreSQL's Default
// timezone_abbreviations set, as offsets east of UTC in seconds.
var zoneAbbrevs = map[string]int{
	"utc": 0, "ut": 0, "gmt": 0, "z": 0, "zulu": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"akst": -9 * 3600, "akdt": -8 * 3600, "hst": -10 * 3600,
	"wet": 0, "west": 3600, "bst": 3600, "cet": 3600, "cest": 2 * 3600, "met": 3600, "mest": 2 * 3600,
	"eet": 2 * 3600, "eest": 3 * 3600, "msk": 3 * 3600, "jst": 9 * 3600, "kst": 9 * 3600,
	"aest": 10 * 3600, "aedt": 11 * 3600, "nzst": 12 * 3600, "nzdt": 13 * 3600,
}

// dtFields is what decodeDateTime found.
type dtFields struct {
	year, day      int
	month          time.Month
	haveDate       bool
	hour, min, sec int
	usec           int
	haveTime       bool
	pm, am, bc     bool
	zone           *time.Location
	offset         int
	haveZone       bool
	nums           []string // numbers not yet placed in the date
	order          uint8    // DateStyle's field order (OrderMDY ...)
	written        int      // a two-digit year as written (fixYear)
	numericDate    bool     // the date was all numbers, read in order
}

// decodeDateTime parses s (already failed the ISO layouts); typ names the
// type in errors. It returns microseconds since the epoch, UTC. Text
// without a zone names a wall-clock time in loc: UTC for date and
// timestamp, the session's TimeZone for timestamptz (ParseTimestampIn).
func decodeDateTime(s, typ string, order uint8, loc *time.Location) (int64, error) {
	bad := sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %q", typ, s)
	in := strings.ToLower(strings.TrimSpace(s))
	switch in {
	case "epoch":
		return 0, nil
	case "infinity", "+infinity", "-infinity":
		m, _ := parseInfinity(in)
		return m, nil
	case "now":
		return Now().UnixMicro(), nil
	case "today", "tomorrow", "yesterday":
		// Midnight of the day it is in loc.
		y, m, d := Now().In(loc).Date()
		d += map[string]int{"today": 0, "tomorrow": 1, "yesterday": -1}[in]
		return time.Date(y, m, d, 0, 0, 0, 0, loc).UnixMicro(), nil
	}
	f := dtFields{order: order}
	// Fields are separated by spaces and commas; a 'T' between a date and
	// a time (ISO 8601) separates too.
	fields := strings.FieldsFunc(in, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	for i := 0; i < len(fields); i++ {
		tok := fields[i]
		if j := strings.IndexByte(tok, 't'); j > 0 && j < len(tok)-1 && isDigit(tok[j-1]) && isDigit(tok[j+1]) {
			fields = append(fields[:i+1], append([]string{tok[j+1:]}, fields[i+1:]...)...)
			tok = tok[:j]
		}
		if f.haveDate && !f.haveTime && len(f.nums) == 0 && len(tok) >= 6 && isClockDigits(tok) {
			// hhmmss after a date ('19990108 040506').
			tok = tok[:2] + ":" + tok[2:4] + ":" + tok[4:]
		}
		if err := f.field(tok, i > 0 && (f.haveTime || f.haveDate)); err != nil {
			return 0, bad
		}
	}
	if err := f.placeNumbers(); err != nil || !f.haveDate {
		return 0, bad
	}
	if f.pm && f.hour < 12 {
		f.hour += 12
	} else if f.am && f.hour == 12 {
		f.hour = 0
	}
	if f.bc {
		if f.written != 0 {
			f.year = f.written
		}
		f.year = 1 - f.year
	}
	if f.month < 1 || f.month > 12 || f.day < 1 || f.day > 31 || f.hour > 24 || f.min > 59 || f.sec > 60 {
		e := sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: %q", s)
		if f.numericDate && (f.month > 12 || f.day > 31) {
			// As PostgreSQL hints when a field may be in the wrong place.
			e.Hint = `Perhaps you need a different "datestyle" setting.`
		}
		return 0, e
	}
	if f.zone != nil {
		loc = f.zone
	} else if f.haveZone {
		loc = time.FixedZone("", f.offset)
	}
	t := time.Date(f.year, f.month, f.day, f.hour, f.min, f.sec, f.usec*1000, loc)
	if t.Day() != f.day {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: %q", s)
	}
	return t.Unix()*1e6 + int64(t.Nanosecond()/1000), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// field takes one whitespace-separated field.
func (f *dtFields) field(tok string, afterFirst bool) error {
	switch {
	case tok == "":
		return nil
	case tok == "am" || tok == "a.m.":
		f.am = true
		return nil
	case tok == "pm" || tok == "p.m.":
		f.pm = true
		return nil
	case tok == "bc":
		f.bc = true
		return nil
	case tok == "ad":
		return nil
	case weekdayNames[tok]:
		return nil
	}
	if m, ok := monthNames[strings.TrimSuffix(tok, ".")]; ok {
		f.month, f.haveDate = m, true
		return nil
	}
	if off, ok := zoneAbbrevs[tok]; ok {
		f.offset, f.haveZone = off, true
		return nil
	}
	if (tok[0] == '+' || tok[0] == '-') && f.haveTime {
		return f.zoneOffset(tok)
	}
	if strings.Contains(tok, ":") {
		return f.clock(tok)
	}
	if strings.ContainsAny(tok, "-/.") && !f.haveDate {
		return f.dateParts(strings.FieldsFunc(tok, func(r rune) bool { return r == '-' || r == '/' || r == '.' }))
	}
	if strings.IndexFunc(tok, unicode.IsLetter) >= 0 {
		if strings.Contains(tok, "/") || len(tok) > 4 {
			if loc, err := time.LoadLocation(zoneName(tok)); err == nil {
				f.zone, f.haveZone = loc, true
				return nil
			}
		}
		return errBadField
	}
	if len(tok) == 8 && !f.haveDate && len(f.nums) == 0 {
		// yyyymmdd
		return f.dateParts([]string{tok[:4], tok[4:6], tok[6:]})
	}
	f.nums = append(f.nums, tok)
	return nil
}

var errBadField = sqlerr.New(sqlerr.InvalidDatetimeFormat, "bad date/time field")

// zoneName restores the capitalisation of an IANA zone name lowered with
// the rest of the input ("america/new_york" → "America/New_York").
func zoneName(s string) string {
	b := []byte(s)
	up := true
	for i, c := range b {
		if up && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		up = c == '/' || c == '_' || c == '-'
	}
	return string(b)
}

// dateParts reads a date written with '-', '/' or '.' between its parts.
func (f *dtFields) dateParts(parts []string) error {
	if len(parts) != 3 {
		return errBadField
	}
	var nums []string
	for _, p := range parts {
		if m, ok := monthNames[p]; ok {
			f.month = m
			continue
		}
		if _, err := strconv.Atoi(p); err != nil {
			return errBadField
		}
		nums = append(nums, p)
	}
	f.haveDate = true
	if f.month != 0 {
		if len(nums) != 2 {
			return errBadField
		}
		f.nums = append(nums, f.nums...)
		return nil
	}
	n := make([]int, 3)
	for i, p := range parts {
		n[i], _ = strconv.Atoi(p)
	}
	f.numericDate = true
	switch {
	case len(parts[0]) >= 3:
		f.year, f.month, f.day = n[0], time.Month(n[1]), n[2] // y-m-d
	case f.order == OrderDMY:
		f.day, f.month, f.year = n[0], time.Month(n[1]), f.fixYear(parts[2], n[2])
	case f.order == OrderYMD:
		f.year, f.month, f.day = f.fixYear(parts[0], n[0]), time.Month(n[1]), n[2]
	default:
		f.month, f.day, f.year = time.Month(n[0]), n[1], f.fixYear(parts[2], n[2]) // MDY
	}
	return nil
}

// fixYear reads a two-digit year as PostgreSQL does (70-99: 19xx, else
// 20xx), remembering the year as written: a BC year is taken as written.
func (f *dtFields) fixYear(text string, y int) int {
	f.written = y
	if len(text) <= 2 {
		if y < 70 {
			return 2000 + y
		}
		return 1900 + y
	}
	return y
}

// placeNumbers puts the loose numbers of a date with a month name: the
// day, then the year (a number over 31 or of 3+ digits is the year).
func (f *dtFields) placeNumbers() error {
	if len(f.nums) == 0 {
		if f.haveDate && f.year == 0 && f.day == 0 {
			return errBadField
		}
		return nil
	}
	if f.month == 0 || f.day != 0 || len(f.nums) != 2 {
		return errBadField
	}
	a, _ := strconv.Atoi(f.nums[0])
	b, _ := strconv.Atoi(f.nums[1])
	switch {
	case len(f.nums[0]) >= 3 || a > 31:
		f.year, f.day = a, b
	default:
		f.day, f.year = a, f.fixYear(f.nums[1], b)
	}
	f.nums = nil
	return nil
}

// clock reads hh:mm[:ss[.frac]], with a zone offset or Z glued on.
func (f *dtFields) clock(tok string) error {
	if f.haveTime {
		return errBadField
	}
	if j := strings.IndexAny(tok, "+-z"); j > 0 {
		if err := f.zoneOffset(tok[j:]); err != nil {
			return err
		}
		tok = tok[:j]
	}
	parts := strings.Split(tok, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return errBadField
	}
	var err error
	if f.hour, err = strconv.Atoi(parts[0]); err != nil {
		return errBadField
	}
	if f.min, err = strconv.Atoi(parts[1]); err != nil {
		return errBadField
	}
	if len(parts) == 3 {
		sec, frac, _ := strings.Cut(parts[2], ".")
		if f.sec, err = strconv.Atoi(sec); err != nil {
			return errBadField
		}
		if frac != "" {
			frac = (frac + "000000")[:6]
			if f.usec, err = strconv.Atoi(frac); err != nil {
				return errBadField
			}
		}
	}
	f.haveTime = true
	return nil
}

// zoneOffset reads Z, ±h, ±hh, ±hhmm, ±h[h]:mm or ±h[h]:mm:ss.
func (f *dtFields) zoneOffset(tok string) error {
	if tok == "z" {
		f.offset, f.haveZone = 0, true
		return nil
	}
	sign := 1
	if tok[0] == '-' {
		sign = -1
	}
	d := tok[1:]
	secs := 0
	if hm, s, ok := strings.Cut(d, ":"); ok && strings.Count(d, ":") == 2 {
		// ±hh:mm:ss (PostgreSQL prints a zone with seconds so).
		m, sec, _ := strings.Cut(s, ":")
		n, err := strconv.Atoi(sec)
		if err != nil || len(sec) != 2 || n > 59 {
			return errBadField
		}
		d, secs = hm+":"+m, n
	}
	if h, m, ok := strings.Cut(d, ":"); ok && len(h) <= 2 {
		d = strings.Repeat("0", 2-len(h)) + h + m
	} else if len(d) == 1 {
		d = "0" + d
	}
	if len(d) != 2 && len(d) != 4 {
		return errBadField
	}
	h, err := strconv.Atoi(d[:2])
	if err != nil {
		return errBadField
	}
	m := 0
	if len(d) == 4 {
		if m, err = strconv.Atoi(d[2:]); err != nil {
			return errBadField
		}
	}
	f.offset, f.haveZone = sign*(h*3600+m*60+secs), true
	return nil
}

// ParseTextOrder is ParseText with DateStyle's field order for dates and
// timestamps ('01/02/03'); a timestamptz without an offset is UTC here
// (ParseTimestampInOrder takes a zone).
func ParseTextOrder(t Type, s string, order uint8) (Value, error) {
	if order == OrderMDY {
		return ParseText(t, s)
	}
	switch t.Family {
	case Date:
		d, err := parseDate(s, order)
		if err != nil {
			return Value{}, err
		}
		return NewDate(d), nil
	case Datetime, Timestamp, TimestampTZ:
		if _, inf := parseInfinity(s); inf && t.Family == Datetime {
			return ParseText(t, s)
		}
		m, err := parseTimestamp(s, order)
		if err != nil {
			return Value{}, err
		}
		switch t.Family {
		case Datetime:
			return NewDatetime(floorDiv(m, 1e6)), nil
		case TimestampTZ:
			return AdjustTimestamp(NewTimestampTZ(m), t.Qual), nil
		}
		return AdjustTimestamp(NewTimestamp(m), t.Qual), nil
	}
	return ParseText(t, s)
}

// OrderDependent reports whether text s means different values of type t
// (a date or timestamp) in different DateStyle field orders: such a
// literal is parsed when the statement runs, in the session's order.
func OrderDependent(t Type, s string) bool {
	switch t.Family {
	case Date, Datetime, Timestamp, TimestampTZ:
	default:
		return false
	}
	a, errA := ParseTextOrder(t, s, OrderMDY)
	for _, o := range []uint8{OrderDMY, OrderYMD} {
		b, errB := ParseTextOrder(t, s, o)
		if (errA == nil) != (errB == nil) || errA == nil && a.i != b.i {
			return true
		}
	}
	return false
}
