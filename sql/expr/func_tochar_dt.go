package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// to_char of a date, timestamp or timestamptz with PostgreSQL's date/time
// pictures (formatting.c's DCH keywords), in the C locale: the fields
// YYYY, MM, DD, HH24, MI, SS, MS, US, FF1-FF6, month and day names in
// three cases, ISO years and weeks, Q, CC, J, RM, AM/PM, BC/AD, TZ, TZH,
// TZM and OF, with the FM prefix (no padding), TM (translation: C's
// names) and the TH/th suffixes. A timestamptz prints on the session
// zone's clock. Intervals and times are 0A000.

// dchKeywords are tried longest first among those sharing a prefix, as
// PostgreSQL's table orders them.
var dchKeywords = []string{
	"A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
	"FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I",
	"J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.", "PM", "Q", "RM", "SSSSS", "SSSS", "SS",
	"TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y",
	"a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy", "d",
	"ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw", "iyyy", "iyy", "iy", "i",
	"j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm", "sssss", "ssss", "ss",
	"tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
}

// dchTime is what a picture reads from the value.
type dchTime struct {
	t      time.Time // wall clock (year may be ≤ 0 for BC)
	usec   int
	zone   string // TZ's abbreviation; "" without a zone
	offset int    // seconds east
	hasTZ  bool
}

var romanMonths = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}

// toCharTime formats v (a date, timestamp or timestamptz) with picture f.
func toCharTime(c *Context, v types.Value, f string) (types.Value, error) {
	if v.IsInfiniteTime() {
		return types.NullValue, nil
	}
	if f == "" {
		return types.NewUtf8(""), nil
	}
	m := v.Micros()
	var dt dchTime
	loc := time.UTC
	var t time.Time
	switch v.Family() {
	case types.TimestampTZ:
		loc = c.zone()
		dt.hasTZ = true
		t = time.UnixMicro(m).In(loc)
	case types.Date:
		// to_char(date) is to_char(timestamptz): the date's midnight in
		// the session's zone (PostgreSQL's implicit cast).
		loc = c.zone()
		dt.hasTZ = true
		u := time.UnixMicro(m).UTC()
		t = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, loc)
	default:
		t = time.UnixMicro(m).In(loc)
	}
	dt.t, dt.usec = t, t.Nanosecond()/1000
	if dt.hasTZ {
		dt.zone, dt.offset = t.Zone()
	}
	var out strings.Builder
	for i := 0; i < len(f); {
		fm, tm, th, thUpper := false, false, false, false
		j := i
		for {
			if strings.HasPrefix(f[j:], "FM") || strings.HasPrefix(f[j:], "fm") {
				fm, j = true, j+2
				continue
			}
			if strings.HasPrefix(f[j:], "TM") || strings.HasPrefix(f[j:], "tm") {
				// Translation mode: the C locale's names, unpadded.
				tm, j = true, j+2
				continue
			}
			break
		}
		key := ""
		for _, k := range dchKeywords {
			if strings.HasPrefix(f[j:], k) {
				key = k
				break
			}
		}
		if key == "" {
			// Not a keyword: a quoted string or a character, copied. A
			// prefix before it is dropped, as PostgreSQL's parser does.
			i = j
			if i >= len(f) {
				break
			}
			switch {
			case f[i] == '"':
				i++
				for i < len(f) && f[i] != '"' {
					if f[i] == '\\' && i+1 < len(f) {
						i++
					}
					out.WriteByte(f[i])
					i++
				}
				i++
			case f[i] == '\\' && i+1 < len(f) && f[i+1] == '"':
				out.WriteByte('"')
				i += 2
			default:
				out.WriteByte(f[i])
				i++
			}
			continue
		}
		j += len(key)
		if strings.HasPrefix(f[j:], "TH") {
			th, thUpper, j = true, true, j+2
		} else if strings.HasPrefix(f[j:], "th") {
			th, j = true, j+2
		}
		if strings.HasPrefix(f[j:], "SP") || strings.HasPrefix(f[j:], "sp") {
			j += 2 // spell mode: not implemented by PostgreSQL either
		}
		s, numeric, err := dchField(key, &dt, fm, tm)
		if err != nil {
			return types.Value{}, err
		}
		if th && numeric {
			s += ordinalSuffix([]byte(s), thUpper)
		}
		out.WriteString(s)
		i = j
	}
	return types.NewUtf8(out.String()), nil
}

// dchField is one keyword's text and whether it is a number (TH applies).
func dchField(key string, dt *dchTime, fm, tm bool) (string, bool, error) {
	t := dt.t
	num := func(n, width int) string {
		if fm {
			return strconv.Itoa(n)
		}
		return fmt.Sprintf("%0*d", width, n)
	}
	year := t.Year()
	adjYear := year
	if year <= 0 {
		adjYear = -(year - 1)
	}
	cased := func(s string) string {
		switch {
		case key == strings.ToUpper(key):
			return strings.ToUpper(s)
		case key == strings.ToLower(key):
			return strings.ToLower(s)
		}
		return s
	}
	pad9 := func(s string) string {
		if fm || tm {
			return s
		}
		return fmt.Sprintf("%-9s", s)
	}
	switch strings.ToUpper(key) {
	case "HH24":
		return num(t.Hour(), 2), true, nil
	case "HH", "HH12":
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return num(h, 2), true, nil
	case "MI":
		return num(t.Minute(), 2), true, nil
	case "SS":
		return num(t.Second(), 2), true, nil
	case "MS":
		return num(dt.usec/1000, 3), true, nil
	case "US":
		return num(dt.usec, 6), true, nil
	case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6":
		d := int(key[2] - '0')
		n := dt.usec
		for k := d; k < 6; k++ {
			n /= 10
		}
		return num(n, d), true, nil
	case "SSSS", "SSSSS":
		return strconv.Itoa(t.Hour()*3600 + t.Minute()*60 + t.Second()), true, nil
	case "AM", "PM":
		if t.Hour() >= 12 {
			return cased("PM"), false, nil
		}
		return cased("AM"), false, nil
	case "A.M.", "P.M.":
		if t.Hour() >= 12 {
			return cased("P.M."), false, nil
		}
		return cased("A.M."), false, nil
	case "AD", "BC":
		if year <= 0 {
			return cased("BC"), false, nil
		}
		return cased("AD"), false, nil
	case "A.D.", "B.C.":
		if year <= 0 {
			return cased("B.C."), false, nil
		}
		return cased("A.D."), false, nil
	case "Y,YYY":
		return fmt.Sprintf("%d,%03d", adjYear/1000, adjYear%1000), true, nil
	case "YYYY":
		return num(adjYear, 4), true, nil
	case "YYY", "YY", "Y", "IYYY", "IYY", "IY", "I":
		y := adjYear
		digits := len(key)
		if key[0] == 'I' || key[0] == 'i' {
			iy, _ := t.ISOWeek()
			y = iy
			if iy <= 0 {
				y = -(iy - 1)
			}
		}
		switch digits {
		case 4:
			return num(y, 4), true, nil
		case 3:
			return num(y%1000, 3), true, nil
		case 2:
			return num(y%100, 2), true, nil
		}
		return num(y%10, 1), true, nil
	case "MONTH":
		return pad9(cased(t.Month().String())), false, nil
	case "MON":
		return cased(t.Month().String()[:3]), false, nil
	case "MM":
		return num(int(t.Month()), 2), true, nil
	case "DAY":
		return pad9(cased(t.Weekday().String())), false, nil
	case "DY":
		return cased(t.Weekday().String()[:3]), false, nil
	case "DDD":
		return num(t.YearDay(), 3), true, nil
	case "IDDD":
		_, w := t.ISOWeek()
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return num((w-1)*7+wd, 3), true, nil
	case "DD":
		return num(t.Day(), 2), true, nil
	case "D":
		return strconv.Itoa(int(t.Weekday()) + 1), true, nil
	case "ID":
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return strconv.Itoa(wd), true, nil
	case "W":
		return strconv.Itoa((t.Day()-1)/7 + 1), true, nil
	case "WW":
		return num((t.YearDay()-1)/7+1, 2), true, nil
	case "IW":
		_, w := t.ISOWeek()
		return num(w, 2), true, nil
	case "CC":
		cc := year/100 - 1
		if year > 0 {
			cc = (year-1)/100 + 1
		}
		if cc > 99 || cc < -99 {
			return strconv.Itoa(cc), true, nil
		}
		if cc < 0 {
			return num(cc, 3), true, nil
		}
		return num(cc, 2), true, nil
	case "J":
		return strconv.Itoa(julianDay(t)), true, nil
	case "Q":
		return strconv.Itoa((int(t.Month())-1)/3 + 1), true, nil
	case "RM":
		r := romanMonths[t.Month()-1]
		if !fm {
			r = fmt.Sprintf("%-4s", r)
		}
		if key == "rm" {
			r = strings.ToLower(r)
		}
		return r, false, nil
	case "TZ":
		if key == "tz" {
			return strings.ToLower(dt.zone), false, nil
		}
		return dt.zone, false, nil
	case "TZH", "TZM", "OF":
		off := dt.offset
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		h, m := off/3600, off/60%60
		switch strings.ToUpper(key) {
		case "TZH":
			return sign + fmt.Sprintf("%02d", h), false, nil
		case "TZM":
			return fmt.Sprintf("%02d", m), false, nil
		}
		s := sign + num(h, 2)
		if m != 0 {
			s += fmt.Sprintf(":%02d", m)
		}
		return s, false, nil
	case "FX":
		return "", false, nil
	}
	return "", false, sqlerr.New(sqlerr.FeatureNotSupported, "to_char pattern %q is not supported yet", key)
}

// julianDay is the Julian day number of t's date (PostgreSQL's date2j).
func julianDay(t time.Time) int {
	y, m, d := t.Year(), int(t.Month()), t.Day()
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	julian := y*365 - 32167
	julian += y/4 - century + century/4
	julian += 7834*m/256 + d
	return julian
}
