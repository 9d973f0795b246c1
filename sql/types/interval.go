package types

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's interval keeps three fields that it never converts into
// one another on its own: months, days and microseconds. '1 month' is
// not '30 days' and '1 day' is not '24 hours' (a day across a DST change
// is 23 or 25 hours, a month 28 to 31 days), though they compare equal:
// comparison, hashing and index keys use the span with 30-day months and
// 24-hour days, as PostgreSQL's interval_cmp does.
//
// YQL's Interval (design.md §3.1: microseconds, YDB semantics) is the
// same family with months and days zero: its constructors
// (Interval("PT1H"), timestamp − timestamp in yql) make only those, so
// its arithmetic, storage and keys are what they were. The value keeps
// the micros in i and, only when months or days is not zero, both as 8
// bytes in s (months, days: little-endian int32), so Value stays 48 bytes
// and a YQL interval allocates nothing.

const (
	daysPerMonth   = 30
	microsPerHour  = 3600 * 1e6
	microsPerMonth = daysPerMonth * microsPerDay
)

// NewIntervalParts returns a PostgreSQL interval of months, days and
// microseconds.
func NewIntervalParts(months, days int32, micros int64) Value {
	v := Value{fam: Interval, i: micros}
	if months != 0 || days != 0 {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:4], uint32(months))
		binary.LittleEndian.PutUint32(b[4:], uint32(days))
		v.s = string(b[:])
	}
	return v
}

// IntervalParts returns an Interval's months, days and microseconds.
func (v Value) IntervalParts() (months, days int32, micros int64) {
	if len(v.s) == 8 {
		months = int32(binary.LittleEndian.Uint32([]byte(v.s[:4])))
		days = int32(binary.LittleEndian.Uint32([]byte(v.s[4:])))
	}
	return months, days, v.i
}

// IntervalSpan returns an interval's length with 30-day months and
// 24-hour days as whole days and the microseconds left over (0 ≤ rest <
// one day): the order PostgreSQL sorts intervals in, without overflow.
func (v Value) IntervalSpan() (days int64, rest int64) {
	m, d, us := v.IntervalParts()
	days = int64(m)*daysPerMonth + int64(d) + floorDiv(us, microsPerDay)
	return days, us - floorDiv(us, microsPerDay)*microsPerDay
}

// IntervalMicros returns an interval's span in microseconds (30-day
// months, 24-hour days); ok is false when that does not fit an int64.
func (v Value) IntervalMicros() (int64, bool) {
	days, rest := v.IntervalSpan()
	if days > (math.MaxInt64-rest)/microsPerDay || days < math.MinInt64/int64(microsPerDay) {
		return 0, false
	}
	return days*microsPerDay + rest, true
}

// compareIntervals orders intervals by span (interval_cmp).
func compareIntervals(a, b Value) int {
	ad, ar := a.IntervalSpan()
	bd, br := b.IntervalSpan()
	if c := cmp.Compare(ad, bd); c != 0 {
		return c
	}
	return cmp.Compare(ar, br)
}

// IntervalKeyMicros is the span an index key orders an interval by: the
// span in microseconds, which for an interval of microseconds alone (all
// YQL intervals, and every key written before intervals had months) is
// the microseconds themselves, so old keys keep their order. Spans past
// ±292,000 years share the extreme keys; rows read through such a key
// carry their exact value (the key is not decoded for the row's value).
func IntervalKeyMicros(v Value) int64 {
	if m, ok := v.IntervalMicros(); ok {
		return m
	}
	if d, _ := v.IntervalSpan(); d < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

func intervalOverflow() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
}

// MakeInterval builds an interval from 64-bit parts, with PostgreSQL's
// error when months or days do not fit its 32-bit fields.
func MakeInterval(months, days, micros int64) (Value, error) {
	if months != int64(int32(months)) || days != int64(int32(days)) {
		return Value{}, intervalOverflow()
	}
	return NewIntervalParts(int32(months), int32(days), micros), nil
}

// ---- input ----

// ParseIntervalValue parses interval text as PostgreSQL 15's interval_in
// does (IntervalStyle postgres): '1 year 2 mons 3 days 04:05:06',
// '@ 1 minute ago', '1.5 months', '1-2' (SQL year-month), '3 4:05:06'
// (SQL day-time), ISO 8601 'P1Y2M3DT4H5M6S' and 'P0001-02-03T04:05:06'.
func ParseIntervalValue(s string) (Value, error) { return ParseIntervalStyle(s, IntervalPostgres) }

// ParseIntervalStyle is ParseIntervalValue under an IntervalStyle: in
// sql_standard a leading minus applies to every field ('-1 2:03:04' is
// minus one day, two hours ...) unless another field has its own sign.
func ParseIntervalStyle(s string, style uint8) (Value, error) { return parseIntervalQual(s, style, 0) }

// parseIntervalQual is ParseIntervalStyle for an interval with qualifier
// q, which decides what a number without a unit is (bareUnit) and whether
// 'a:b' is minutes and seconds (MINUTE TO SECOND); it does not drop the
// fields q leaves out (AdjustInterval does).
func parseIntervalQual(s string, style uint8, q Qual) (Value, error) {
	bad := sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type interval: %q", s)
	ts := strings.ToLower(strings.TrimSpace(s))
	acc := intervalAcc{qual: q}
	var err error
	switch {
	case ts == "":
		return Value{}, bad
	case ts == "infinity" || ts == "-infinity" || ts == "+infinity":
		// PostgreSQL 15's interval has no infinity (17 adds it).
		return Value{}, bad
	case strings.HasPrefix(ts, "p") || strings.HasPrefix(ts, "-p"):
		neg := strings.HasPrefix(ts, "-")
		if err = acc.iso8601(strings.TrimPrefix(strings.TrimPrefix(ts, "-"), "p")); err != nil {
			return Value{}, bad
		}
		if neg {
			acc.negate()
		}
	default:
		if err = acc.postgres(ts, style == IntervalSQLStandard); err != nil {
			if sqlerr.Code(err) == sqlerr.DatetimeFieldOverflow {
				return Value{}, sqlerr.New(sqlerr.IntervalFieldOverflow, "interval field value out of range: %q", s)
			}
			return Value{}, bad
		}
	}
	v, err := acc.value()
	if err != nil {
		return Value{}, sqlerr.New(sqlerr.IntervalFieldOverflow, "interval field value out of range: %q", s)
	}
	return v, nil
}

// IntervalStyleDependent reports whether interval text s means another
// value under IntervalStyle sql_standard ('-1 2:03:04'): such a literal
// is parsed when the statement runs, in the session's style.
func IntervalStyleDependent(t Type, s string) bool {
	if t.Family != Interval || !strings.HasPrefix(strings.TrimSpace(s), "-") {
		return false
	}
	a, errA := ParseIntervalValue(s)
	b, errB := ParseIntervalStyle(s, IntervalSQLStandard)
	if errA != nil || errB != nil {
		return (errA == nil) != (errB == nil)
	}
	am, ad, au := a.IntervalParts()
	bm, bd, bu := b.IntervalParts()
	return am != bm || ad != bd || au != bu
}

// intervalAcc accumulates fields; fractions of a unit cascade down as
// PostgreSQL's DecodeInterval does (a fraction of a year becomes whole
// months, of a month days and then time, of a day or week time).
type intervalAcc struct {
	months, days int64
	us           int64   // whole microseconds
	micros       float64 // fractions of units, in microseconds
	overflow     bool
	seen         bool
	// mask has a bit per unit given (PostgreSQL's fmask): a unit given
	// twice ('1 day 1 day', '1:20:05 5 us') is bad input.
	mask uint16
	dup  bool
	// exact is the number being added when it is an integer, which a
	// float64 may not hold exactly ('9223372036854775807 us').
	exact    int64
	hasExact bool
	// qual is the type's qualifier (interval_qual.go).
	qual Qual
}

func (a *intervalAcc) negate() {
	a.months, a.days, a.us, a.micros = -a.months, -a.days, -a.us, -a.micros
}

// addMicros adds n units of mul microseconds: the whole part exactly,
// the fraction rounded at the end.
func (a *intervalAcc) addMicros(n float64, mul int64) {
	whole := math.Trunc(n)
	var w int64
	switch {
	case a.hasExact:
		if a.exact > math.MaxInt64/mul || a.exact < math.MinInt64/mul {
			a.overflow = true
			return
		}
		w, whole = a.exact*mul, n
	case whole >= float64(math.MaxInt64/mul) || whole <= float64(math.MinInt64/mul):
		a.overflow = true
		return
	default:
		w = int64(whole) * mul
	}
	r := a.us + w
	if (w > 0 && r < a.us) || (w < 0 && r > a.us) {
		a.overflow = true
	}
	a.us = r
	a.micros += (n - whole) * float64(mul)
}

func (a *intervalAcc) value() (Value, error) {
	f := math.Round(a.micros)
	if a.overflow || math.IsNaN(f) || math.Abs(f) >= 9.2e18 {
		return Value{}, intervalOverflow()
	}
	r := a.us + int64(f)
	if (f > 0 && r < a.us) || (f < 0 && r > a.us) {
		return Value{}, intervalOverflow()
	}
	return MakeInterval(a.months, a.days, r)
}

// addFracDays adds frac days (which may be fractional): whole days to
// days, the rest as time (AdjustFractDays).
func (a *intervalAcc) addFracDays(f float64) {
	whole := math.Trunc(f)
	a.days += int64(whole)
	a.micros += (f - whole) * microsPerDay
}

// add adds n of unit (already singular, lower case); false for an unknown
// unit.
// Unit bits of intervalAcc.mask.
const (
	mYear uint16 = 1 << iota
	mMonth
	mDay
	mHour
	mMinute
	mSecond
	mMilli
	mMicro
	mWeek
	mDecade
	mCentury
	mMillennium
	mAllSecs = mSecond | mMilli | mMicro
	mTime    = mHour | mMinute | mAllSecs
)

// use records units given, noting a repeat.
func (a *intervalAcc) use(m uint16) {
	if a.mask&m != 0 {
		a.dup = true
	}
	a.mask |= m
}

func (a *intervalAcc) add(n float64, unit string) bool {
	whole := math.Trunc(n)
	frac := n - whole
	var m uint16
	switch UnitAlias(unit) {
	case "microseconds":
		m = mMicro
	case "milliseconds":
		m = mMilli
	case "second":
		m = mSecond
		if frac != 0 {
			m = mAllSecs
		}
	case "minute":
		m = mMinute
	case "hour":
		m = mHour
	case "day":
		m = mDay
	case "week":
		m = mWeek
	case "month":
		m = mMonth
	case "year":
		m = mYear
	case "decade":
		m = mDecade
	case "century":
		m = mCentury
	case "millennium":
		m = mMillennium
	}
	a.use(m)
	switch unit {
	case "microsecond", "microseconds", "us", "usec", "usecs", "useconds":
		a.addMicros(n, 1)
	case "millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds":
		a.addMicros(n, 1e3)
	case "second", "seconds", "s", "sec", "secs":
		a.addMicros(n, 1e6)
	case "minute", "minutes", "m", "min", "mins":
		a.addMicros(n, 60e6)
	case "hour", "hours", "h", "hr", "hrs":
		a.addMicros(n, microsPerHour)
	case "day", "days", "d":
		a.days += int64(whole)
		a.micros += frac * microsPerDay
	case "week", "weeks", "w":
		a.days += int64(whole) * 7
		a.addFracDays(frac * 7)
	case "month", "months", "mon", "mons":
		a.months += int64(whole)
		a.addFracDays(frac * daysPerMonth)
	case "year", "years", "y", "yr", "yrs":
		a.months += int64(whole)*12 + int64(math.Round(frac*12))
	case "decade", "decades", "dec", "decs":
		a.months += int64(whole)*120 + int64(math.Round(frac*120))
	case "century", "centuries", "c", "cent", "cents":
		a.months += int64(whole)*1200 + int64(math.Round(frac*1200))
	case "millennium", "millennia", "millenniums", "mil", "mils":
		a.months += int64(whole)*12000 + int64(math.Round(frac*12000))
	default:
		return false
	}
	a.seen = true
	return true
}

var errIntervalSyntax = sqlerr.New(sqlerr.InvalidDatetimeFormat, "bad interval")

// postgres reads the postgres and SQL-standard forms.
func (a *intervalAcc) postgres(ts string, sqlStandard bool) error {
	ago := false
	if rest, ok := strings.CutPrefix(ts, "@"); ok {
		ts = strings.TrimSpace(rest)
	}
	fields := splitNumberUnits(strings.Fields(ts))
	if n := len(fields); n > 0 && fields[n-1] == "ago" {
		ago, fields = true, fields[:n-1]
	}
	if len(fields) == 0 {
		return errIntervalSyntax
	}
	bare := bareUnits(fields, a.qual)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.Contains(f, ":"):
			m, ok := parseClock(f, a.qual.Fields() == QualMinute|QualSecond)
			if !ok {
				return errIntervalSyntax
			}
			a.addMicros(float64(m), 1)
			a.use(mTime)
			a.seen = true
			continue
		case isYearMonth(f):
			// SQL standard '1-2': years and months, both with the sign.
			neg := strings.HasPrefix(f, "-")
			y, m, _ := strings.Cut(strings.TrimLeft(f, "+-"), "-")
			yi, _ := strconv.ParseInt(y, 10, 64)
			mi, _ := strconv.ParseInt(m, 10, 64)
			if mi > 11 {
				return sqlerr.New(sqlerr.DatetimeFieldOverflow, "month out of range")
			}
			t := yi*12 + mi
			if neg {
				t = -t
			}
			a.months += t
			a.use(mYear | mMonth)
			a.seen = true
			continue
		}
		n, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return errIntervalSyntax
		}
		a.exact, err = strconv.ParseInt(f, 10, 64)
		a.hasExact = err == nil
		if i+1 < len(fields) && !isNumberLike(fields[i+1]) {
			ok := a.add(n, fields[i+1])
			a.hasExact = false
			if !ok {
				return errIntervalSyntax
			}
			i++
			continue
		}
		// A number without a unit (bareUnits).
		a.add(n, bare[i])
		a.hasExact = false
	}
	if !a.seen || a.dup {
		return errIntervalSyntax
	}
	if sqlStandard && strings.HasPrefix(fields[0], "-") {
		// IntervalStyle sql_standard: '-1 2:03:04' is negative
		// throughout, unless another field has a sign of its own: read
		// it without the minus and negate the whole.
		more := false
		for _, f := range fields[1:] {
			more = more || strings.HasPrefix(f, "-") || strings.HasPrefix(f, "+")
		}
		if !more {
			b := intervalAcc{qual: a.qual}
			if err := b.postgres(strings.Join(append([]string{fields[0][1:]}, fields[1:]...), " "), false); err != nil {
				return err
			}
			b.negate()
			*a = b
		}
	}
	if ago {
		a.negate()
	}
	return nil
}

// bareUnits finds the unit of each number written without one, as
// PostgreSQL's DecodeInterval does, reading the fields from the right: a
// number takes the unit of the field after it (a unit word, or the unit
// the number after it took), days before a time ('3 4:05:06') or after
// hours ('3 4 hours'), months after '1-2', and as the last field the
// qualifier's last field (seconds without one: '5', INTERVAL '5' DAY).
// A unit taken twice is then bad input ('1 2', '1 2 days').
func bareUnits(fields []string, q Qual) []string {
	units := make([]string, len(fields))
	next := ""
	for i := len(fields) - 1; i >= 0; i-- {
		f := fields[i]
		switch {
		case strings.Contains(f, ":"):
			next = "day"
		case isYearMonth(f):
			next = "month"
		case !isNumberLike(f):
			next = UnitAlias(f)
		default:
			if next == "" {
				next = q.bareUnit()
			}
			units[i] = next
			if next == "hour" {
				next = "day"
			}
		}
	}
	return units
}

func isNumberLike(f string) bool {
	if f == "" {
		return false
	}
	c := f[0]
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.'
}

func isYearMonth(f string) bool {
	t := strings.TrimLeft(f, "+-")
	y, m, ok := strings.Cut(t, "-")
	if !ok || y == "" || m == "" {
		return false
	}
	_, e1 := strconv.ParseUint(y, 10, 63)
	_, e2 := strconv.ParseUint(m, 10, 63)
	return e1 == nil && e2 == nil
}

// iso8601 reads the part after P: designators (1Y2M3DT4H5M6S, W) or the
// alternative format (0001-02-03T04:05:06).
func (a *intervalAcc) iso8601(s string) error {
	if s == "" {
		return errIntervalSyntax
	}
	if len(s) >= 4 && isDigit(s[0]) && strings.Count(strings.SplitN(s, "t", 2)[0], "-") == 2 {
		date, clock, _ := strings.Cut(s, "t")
		p := strings.Split(date, "-")
		y, e1 := strconv.ParseInt(p[0], 10, 64)
		m, e2 := strconv.ParseInt(p[1], 10, 64)
		d, e3 := strconv.ParseInt(p[2], 10, 64)
		if e1 != nil || e2 != nil || e3 != nil {
			return errIntervalSyntax
		}
		a.months, a.days = y*12+m, d
		if clock != "" {
			us, ok := parseClock(clock, false)
			if !ok {
				return errIntervalSyntax
			}
			a.addMicros(float64(us), 1)
		}
		return nil
	}
	inTime, num := false, ""
	for _, c := range s {
		switch {
		case c == 't':
			if inTime || num != "" {
				return errIntervalSyntax
			}
			inTime = true
		case c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+':
			num += string(c)
		default:
			n, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return errIntervalSyntax
			}
			unit := ""
			switch {
			case !inTime && c == 'y':
				unit = "year"
			case !inTime && c == 'm':
				unit = "month"
			case !inTime && c == 'w':
				unit = "week"
			case !inTime && c == 'd':
				unit = "day"
			case inTime && c == 'h':
				unit = "hour"
			case inTime && c == 'm':
				unit = "minute"
			case inTime && c == 's':
				unit = "second"
			default:
				return errIntervalSyntax
			}
			a.add(n, unit)
			num = ""
		}
	}
	if num != "" || !a.seen {
		return errIntervalSyntax
	}
	return nil
}

// ---- output ----

// Interval output styles (the IntervalStyle setting).
const (
	IntervalPostgres uint8 = iota
	IntervalPostgresVerbose
	IntervalSQLStandard
	IntervalISO8601
)

// intervalFields splits an interval as PostgreSQL's interval2itm does:
// years and months from months, hours, minutes, seconds and microseconds
// from the time, each with the sign of its source (C's truncating
// division).
func intervalFields(v Value) (year, mon, mday int64, hour, min, sec, fsec int64) {
	m, d, us := v.IntervalParts()
	year, mon = int64(m)/12, int64(m)%12
	hour = us / microsPerHour
	us -= hour * microsPerHour
	min = us / 60e6
	us -= min * 60e6
	sec = us / 1e6
	fsec = us - sec*1e6
	return year, mon, int64(d), hour, min, sec, fsec
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func abs64(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}

// appendSeconds is PostgreSQL's AppendSeconds: whole seconds (two digits
// when fill), then the fraction without trailing zeros.
func appendSeconds(b []byte, sec, fsec int64, fill bool) []byte {
	if fill {
		b = fmt.Appendf(b, "%02d", abs64(sec))
	} else {
		b = strconv.AppendUint(b, abs64(sec), 10)
	}
	if fsec != 0 {
		f := strings.TrimRight(fmt.Sprintf("%06d", abs64(fsec)), "0")
		b = append(append(b, '.'), f...)
	}
	return b
}

// FormatIntervalStyle prints an interval as PostgreSQL's EncodeInterval
// does in the given IntervalStyle.
func FormatIntervalStyle(v Value, style uint8) string {
	year, mon, mday, hour, min, sec, fsec := intervalFields(v)
	var b []byte
	switch style {
	case IntervalISO8601:
		if year == 0 && mon == 0 && mday == 0 && hour == 0 && min == 0 && sec == 0 && fsec == 0 {
			return "PT0S"
		}
		b = append(b, 'P')
		part := func(x int64, u byte) {
			if x != 0 {
				b = append(strconv.AppendInt(b, x, 10), u)
			}
		}
		part(year, 'Y')
		part(mon, 'M')
		part(mday, 'D')
		if hour != 0 || min != 0 || sec != 0 || fsec != 0 {
			b = append(b, 'T')
		}
		part(hour, 'H')
		part(min, 'M')
		if sec != 0 || fsec != 0 {
			if sec < 0 || fsec < 0 {
				b = append(b, '-')
			}
			b = append(appendSeconds(b, sec, fsec, false), 'S')
		}
		return string(b)
	case IntervalSQLStandard:
		neg := year < 0 || mon < 0 || mday < 0 || hour < 0 || min < 0 || sec < 0 || fsec < 0
		pos := year > 0 || mon > 0 || mday > 0 || hour > 0 || min > 0 || sec > 0 || fsec > 0
		hasYM := year != 0 || mon != 0
		hasDT := mday != 0 || hour != 0 || min != 0 || sec != 0 || fsec != 0
		std := !(neg && pos) && !(hasYM && hasDT)
		if neg && std {
			b = append(b, '-')
			year, mon, mday, hour, min, sec, fsec = -year, -mon, -mday, -hour, -min, -sec, -fsec
		}
		switch {
		case !neg && !pos:
			return "0"
		case !std:
			ys, ds, ss := byte('+'), byte('+'), byte('+')
			if year < 0 || mon < 0 {
				ys = '-'
			}
			if mday < 0 {
				ds = '-'
			}
			if hour < 0 || min < 0 || sec < 0 || fsec < 0 {
				ss = '-'
			}
			b = fmt.Appendf(b, "%c%d-%d %c%d %c%d:%02d:", ys, abs64(year), abs64(mon), ds, abs64(mday), ss, abs64(hour), abs64(min))
			b = appendSeconds(b, sec, fsec, true)
		case hasYM:
			b = fmt.Appendf(b, "%d-%d", year, mon)
		case mday != 0:
			b = fmt.Appendf(b, "%d %d:%02d:", mday, hour, min)
			b = appendSeconds(b, sec, fsec, true)
		default:
			b = fmt.Appendf(b, "%d:%02d:", hour, min)
			b = appendSeconds(b, sec, fsec, true)
		}
		return string(b)
	case IntervalPostgresVerbose:
		isZero, isBefore := true, false
		b = append(b, '@')
		part := func(x int64, unit string) {
			if x == 0 {
				return
			}
			if isZero {
				isBefore = x < 0
				if x < 0 {
					x = -x
				}
			} else if isBefore {
				x = -x
			}
			b = fmt.Appendf(b, " %d %s", x, unit)
			if x != 1 {
				b = append(b, 's')
			}
			isZero = false
		}
		part(year, "year")
		part(mon, "mon")
		part(mday, "day")
		part(hour, "hour")
		part(min, "min")
		if sec != 0 || fsec != 0 {
			b = append(b, ' ')
			if sec < 0 || (sec == 0 && fsec < 0) {
				if isZero {
					isBefore = true
				} else if !isBefore {
					b = append(b, '-')
				}
			} else if isBefore {
				b = append(b, '-')
			}
			b = appendSeconds(b, sec, fsec, false)
			b = append(b, " sec"...)
			if abs64(sec) != 1 || fsec != 0 {
				b = append(b, 's')
			}
			isZero = false
		}
		if isZero {
			b = append(b, " 0"...)
		}
		if isBefore {
			b = append(b, " ago"...)
		}
		return string(b)
	}
	isZero, isBefore := true, false
	part := func(x int64, unit string) {
		if x == 0 {
			return
		}
		if !isZero {
			b = append(b, ' ')
		}
		if isBefore && x > 0 {
			b = append(b, '+')
		}
		b = fmt.Appendf(b, "%d %s", x, unit)
		if x != 1 {
			b = append(b, 's')
		}
		isBefore, isZero = x < 0, false
	}
	part(year, "year")
	part(mon, "mon")
	part(mday, "day")
	if isZero || hour != 0 || min != 0 || sec != 0 || fsec != 0 {
		minus := hour < 0 || min < 0 || sec < 0 || fsec < 0
		if !isZero {
			b = append(b, ' ')
		}
		if minus {
			b = append(b, '-')
		} else if isBefore {
			b = append(b, '+')
		}
		b = fmt.Appendf(b, "%02d:%02d:", abs64(hour), abs64(min))
		b = appendSeconds(b, sec, fsec, true)
	}
	return string(b)
}

// ---- arithmetic ----

// AddIntervalMicros adds an interval to a time given as microseconds
// since the epoch, in loc's wall clock for the months and days (as
// PostgreSQL's timestamp_pl_interval and timestamptz_pl_interval do:
// months first, clamping the day to the month's end — '2024-01-31' + '1
// month' is '2024-02-29' — then days, then the microseconds). A nil loc
// is UTC. sign −1 subtracts.
func AddIntervalMicros(t int64, iv Value, sign int64, loc *time.Location) (int64, error) {
	months, days, us := iv.IntervalParts()
	if months != 0 || days != 0 {
		if loc == nil {
			loc = time.UTC
		}
		secs := floorDiv(t, 1e6)
		frac := t - secs*1e6
		wall := time.Unix(secs, 0).In(loc)
		y, mo, d := wall.Date()
		if months != 0 {
			total := int64(y)*12 + int64(mo-1) + sign*int64(months)
			y, mo = int(floorDiv(total, 12)), time.Month(total-floorDiv(total, 12)*12+1)
			if last := daysIn(y, mo); d > last {
				d = last
			}
		}
		n := time.Date(y, mo, d+int(sign*int64(days)), wall.Hour(), wall.Minute(), wall.Second(), 0, loc)
		if n.Year() < -4713 || n.Year() > 294276 {
			return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		t = n.Unix()*1e6 + frac
	}
	r := t + sign*us
	if (sign*us > 0 && r < t) || (sign*us < 0 && r > t) || sign*us == math.MinInt64 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
	}
	return r, nil
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// JustifyHours moves whole 24-hour periods of the time into days
// (justify_hours), so the time and days have the same sign.
func JustifyHours(v Value) (Value, error) {
	m, d, us := v.IntervalParts()
	days := int64(d) + us/microsPerDay
	us %= microsPerDay
	if days > 0 && us < 0 {
		us += microsPerDay
		days--
	} else if days < 0 && us > 0 {
		us -= microsPerDay
		days++
	}
	return MakeInterval(int64(m), days, us)
}

// JustifyDays moves whole 30-day periods into months (justify_days).
func JustifyDays(v Value) (Value, error) {
	m, d, us := v.IntervalParts()
	months := int64(m) + int64(d)/daysPerMonth
	days := int64(d) % daysPerMonth
	if months > 0 && days < 0 {
		days += daysPerMonth
		months--
	} else if months < 0 && days > 0 {
		days -= daysPerMonth
		months++
	}
	return MakeInterval(months, days, us)
}

// JustifyInterval is justify_interval: both, with one sign throughout.
func JustifyInterval(v Value) (Value, error) {
	m, d, us := v.IntervalParts()
	months := int64(m)
	days := int64(d)
	months += days / daysPerMonth
	days %= daysPerMonth
	days += us / microsPerDay
	us %= microsPerDay
	if months > 0 && (days < 0 || days == 0 && us < 0) {
		days += daysPerMonth
		months--
	} else if months < 0 && (days > 0 || days == 0 && us > 0) {
		days -= daysPerMonth
		months++
	}
	if days > 0 && us < 0 {
		us += microsPerDay
		days--
	} else if days < 0 && us > 0 {
		us -= microsPerDay
		days++
	}
	return MakeInterval(months, days, us)
}

// MulInterval multiplies an interval by f as interval_mul does: the
// fraction of the months spills into days (30 per month) and the fraction
// of the days into the time.
func MulInterval(v Value, f float64) (Value, error) {
	return scaleInterval(v, func(x float64) float64 { return x * f })
}

// DivInterval divides an interval by f (not zero) as interval_div does.
func DivInterval(v Value, f float64) (Value, error) {
	return scaleInterval(v, func(x float64) float64 { return x / f })
}

func scaleInterval(v Value, by func(float64) float64) (Value, error) {
	m, d, us := v.IntervalParts()
	monthsF := by(float64(m))
	daysF := by(float64(d))
	if math.IsNaN(monthsF) || math.IsNaN(daysF) || math.Abs(monthsF) > math.MaxInt32 || math.Abs(daysF) > math.MaxInt32 {
		return Value{}, intervalOverflow()
	}
	months := math.Trunc(monthsF)
	days := math.Trunc(daysF)
	// TSROUND: to microsecond precision, as PostgreSQL rounds the spill.
	monthRemDays := math.RoundToEven((monthsF-months)*daysPerMonth*1e6) / 1e6
	secRem := math.RoundToEven((daysF-days+monthRemDays-math.Trunc(monthRemDays))*86400*1e6) / 1e6
	if math.Abs(secRem) >= 86400 {
		days += math.Trunc(secRem / 86400)
		secRem -= math.Trunc(secRem/86400) * 86400
	}
	days += math.Trunc(monthRemDays)
	t := math.RoundToEven(by(float64(us)) + secRem*1e6)
	if math.IsNaN(t) || math.Abs(t) >= 9.223372036854775807e18 || math.Abs(days) > math.MaxInt32 {
		return Value{}, intervalOverflow()
	}
	return MakeInterval(int64(months), int64(days), int64(t))
}

// AddIntervals adds (sign 1) or subtracts (sign −1) two intervals field
// by field.
func AddIntervals(a, b Value, sign int64) (Value, error) {
	am, ad, au := a.IntervalParts()
	bm, bd, bu := b.IntervalParts()
	u := au + sign*bu
	if (sign*bu > 0 && u < au) || (sign*bu < 0 && u > au) || sign*bu == math.MinInt64 {
		return Value{}, intervalOverflow()
	}
	return MakeInterval(int64(am)+sign*int64(bm), int64(ad)+sign*int64(bd), u)
}

// NegateInterval is unary minus.
func NegateInterval(v Value) (Value, error) {
	m, d, us := v.IntervalParts()
	if us == math.MinInt64 || m == math.MinInt32 || d == math.MinInt32 {
		return Value{}, intervalOverflow()
	}
	return NewIntervalParts(-m, -d, -us), nil
}

// AgeMicros is PostgreSQL's age(a, b) for two wall-clock times: the
// difference in years, months and days of the calendar (not 30-day
// months) and the time left over, all with one sign.
func AgeMicros(a, b int64) (Value, error) {
	neg := false
	if a < b {
		a, b, neg = b, a, true
	}
	ta := time.UnixMicro(a).UTC()
	tb := time.UnixMicro(b).UTC()
	usA := int64(ta.Hour())*microsPerHour + int64(ta.Minute())*60e6 + int64(ta.Second())*1e6 + int64(ta.Nanosecond()/1000)
	usB := int64(tb.Hour())*microsPerHour + int64(tb.Minute())*60e6 + int64(tb.Second())*1e6 + int64(tb.Nanosecond()/1000)
	us := usA - usB
	days := int64(ta.Day() - tb.Day())
	months := int64(ta.Month()-tb.Month()) + 12*int64(ta.Year()-tb.Year())
	if us < 0 {
		us += microsPerDay
		days--
	}
	for days < 0 {
		// Borrow the length of the earlier time's month, as PostgreSQL's
		// timestamp_age does.
		days += int64(daysIn(tb.Year(), tb.Month()))
		months--
	}
	if neg {
		months, days, us = -months, -days, -us
	}
	return MakeInterval(months, days, us)
}

// UnitAlias maps PostgreSQL's spellings of a date/time unit (interval
// input, date_part) to one: "mins" → "minute", "us" → "microseconds".
func UnitAlias(u string) string {
	switch u {
	case "microsecond", "microseconds", "us", "usec", "usecs", "useconds":
		return "microseconds"
	case "millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds":
		return "milliseconds"
	case "second", "seconds", "s", "sec", "secs":
		return "second"
	case "minute", "minutes", "m", "min", "mins":
		return "minute"
	case "hour", "hours", "h", "hr", "hrs":
		return "hour"
	case "day", "days", "d":
		return "day"
	case "week", "weeks", "w":
		return "week"
	case "month", "months", "mon", "mons":
		return "month"
	case "quarter", "qtr":
		return "quarter"
	case "year", "years", "y", "yr", "yrs":
		return "year"
	case "decade", "decades", "dec", "decs":
		return "decade"
	case "century", "centuries", "c", "cent":
		return "century"
	case "millennium", "millennia", "mil", "mils", "millenniums":
		return "millennium"
	}
	return u
}
