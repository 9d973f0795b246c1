package types

import (
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestDateTimeInputForms: the input forms PostgreSQL 15 accepts give the
// values PostgreSQL gives (timestamps shown in UTC).
func TestDateTimeInputForms(t *testing.T) {
	Now = func() time.Time { return time.Date(2024, 3, 5, 10, 11, 12, 0, time.UTC) }
	defer func() { Now = time.Now }()
	for in, want := range map[string]string{
		"January 8, 1999":                      "1999-01-08 00:00:00",
		"1999-01-08 04:05:06":                  "1999-01-08 04:05:06",
		"1999-01-08 04:05:06 PST":              "1999-01-08 12:05:06",
		"1999-01-08 04:05:06-8:00":             "1999-01-08 12:05:06",
		"January 8 04:05:06 1999 PST":          "1999-01-08 12:05:06",
		"Jan 8, 1999 4:05 PM":                  "1999-01-08 16:05:00",
		"1999-Jan-08":                          "1999-01-08 00:00:00",
		"08-Jan-1999":                          "1999-01-08 00:00:00",
		"Jan-08-1999":                          "1999-01-08 00:00:00",
		"1/8/1999":                             "1999-01-08 00:00:00",
		"1/18/99":                              "1999-01-18 00:00:00",
		"19990108":                             "1999-01-08 00:00:00",
		"1999-01-08T04:05:06Z":                 "1999-01-08 04:05:06",
		"Fri Jan 08 04:05:06.789 1999":         "1999-01-08 04:05:06.789",
		"1999-01-08 04:05:06 America/New_York": "1999-01-08 09:05:06",
		"epoch":                                "1970-01-01 00:00:00",
		"today":                                "2024-03-05 00:00:00",
		"tomorrow":                             "2024-03-06 00:00:00",
		"yesterday":                            "2024-03-04 00:00:00",
		"now":                                  "2024-03-05 10:11:12",
		"  2001-02-03 ":                        "2001-02-03 00:00:00",
	} {
		m, err := ParseTimestamp(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := FormatTimestamp(m); got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"January 32, 1999", "1999-02-30", "13/8/1999"} {
		if _, err := ParseTimestamp(in); sqlerr.Code(err) != sqlerr.DatetimeFieldOverflow && sqlerr.Code(err) != sqlerr.InvalidDatetimeFormat {
			t.Errorf("%q: got %v, want 22008 or 22007", in, err)
		}
	}
	for _, in := range []string{"banana", "1999-01-08 25:99", "Jan 1999", "", "1999 Jan 8 9 10"} {
		if _, err := ParseTimestamp(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	if m, err := ParseTimestamp("infinity"); err != nil || FormatTimestamp(m) != "infinity" {
		t.Errorf("infinity: %v %v", m, err)
	}
	if d, err := ParseDate(" -Infinity"); err != nil || FormatDate(d) != "-infinity" {
		t.Errorf("-infinity: %v %v", d, err)
	}
	if d, err := ParseDate("January 8, 1999"); err != nil || FormatDate(d) != "1999-01-08" {
		t.Errorf("date January 8, 1999: %v %v", FormatDate(d), err)
	}
}

// TestIntervalInputForms: PostgreSQL's interval input, printed in its
// postgres style, as PostgreSQL 15 prints them (its interval regression
// expectations and psql against 15.x).
func TestIntervalInputForms(t *testing.T) {
	for in, want := range map[string]string{
		"1 day 2 hours":                     "1 day 02:00:00",
		"@ 1 minute":                        "00:01:00",
		"@ 2 hours ago":                     "-02:00:00",
		"1 day 02:03:04.5":                  "1 day 02:03:04.5",
		"90 seconds":                        "00:01:30",
		"250 ms":                            "00:00:00.25",
		"PT1H":                              "01:00:00",
		"P1DT2H":                            "1 day 02:00:00",
		"3 days ago":                        "-3 days",
		"-00:00:01":                         "-00:00:01",
		"1 week":                            "7 days",
		"1000us":                            "00:00:00.001",
		"5min 30s":                          "00:05:30",
		"2days 1h":                          "2 days 01:00:00",
		"1.5e1 s":                           "00:00:15",
		"30 hours":                          "30:00:00",
		"1 year 2 mons 3 days 04:05:06":     "1 year 2 mons 3 days 04:05:06",
		"1.5 years":                         "1 year 6 mons",
		"1.5 months":                        "1 mon 15 days",
		"1.5 weeks":                         "10 days 12:00:00",
		"1.5 days":                          "1 day 12:00:00",
		"-1 days +02:03":                    "-1 days +02:03:00",
		"1 day -1 hour":                     "1 day -01:00:00",
		"@ 1 year 2 mons ago":               "-1 years -2 mons",
		"1-2":                               "1 year 2 mons",
		"-1-2":                              "-1 years -2 mons",
		"3 4:05:06":                         "3 days 04:05:06",
		"P1Y2M3DT4H5M6S":                    "1 year 2 mons 3 days 04:05:06",
		"P0001-02-03T04:05:06":              "1 year 2 mons 3 days 04:05:06",
		"1 century":                         "100 years",
		"2 decades 1 millennium":            "1020 years",
		"-1 year -2 mons +3 days -04:05:06": "-1 years -2 mons +3 days -04:05:06",
		"0":                                 "00:00:00",
		"2147483647 months":                 "178956970 years 7 mons",
		"10 mon":                            "10 mons",
		"1 mon -1 day":                      "1 mon -1 days",
		"2562047788 hours 0.5 sec":          "2562047788:00:00.5",
	} {
		v, err := ParseIntervalValue(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := v.Text(); got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"P1Y2M", "1-2", "1 year", "2 months 3 days", "1 century"} {
		if _, err := ParseInterval(in); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%q: got %v, want 0A000 where a fixed length is needed", in, err)
		}
	}
	for _, in := range []string{"@", "banana", "1 fortnight", "5fortnights", "infinity", ""} {
		if _, err := ParseIntervalValue(in); sqlerr.Code(err) != sqlerr.InvalidDatetimeFormat {
			t.Errorf("%q: got %v, want 22007", in, err)
		}
	}
	if _, err := ParseIntervalValue("2147483648 months"); sqlerr.Code(err) != sqlerr.IntervalFieldOverflow {
		t.Errorf("2147483648 months: %v, want 22015", err)
	}
}

// TestIntervalStyles: each IntervalStyle prints as PostgreSQL 15 does
// (the table in its documentation, §8.5.5).
func TestIntervalStyles(t *testing.T) {
	for _, c := range []struct{ in, pg, verbose, sql, iso string }{
		{"1-2", "1 year 2 mons", "@ 1 year 2 mons", "1-2", "P1Y2M"},
		{"3 4:05:06", "3 days 04:05:06", "@ 3 days 4 hours 5 mins 6 secs", "3 4:05:06", "P3DT4H5M6S"},
		{"-1 year -2 mons +3 days -04:05:06", "-1 years -2 mons +3 days -04:05:06",
			"@ 1 year 2 mons -3 days 4 hours 5 mins 6 secs ago", "-1-2 +3 -4:05:06", "P-1Y-2M3DT-4H-5M-6S"},
		{"0", "00:00:00", "@ 0", "0", "PT0S"},
		{"-00:00:01.5", "-00:00:01.5", "@ 1.5 secs ago", "-0:00:01.5", "PT-1.5S"},
		{"1 day", "1 day", "@ 1 day", "1 0:00:00", "P1D"},
	} {
		v, err := ParseIntervalValue(c.in)
		if err != nil {
			t.Fatal(err)
		}
		for st, want := range []string{c.pg, c.verbose, c.sql, c.iso} {
			if got := v.WithStyle(MakeStyle(0, 0, uint8(st))).Text(); got != want {
				t.Errorf("%q style %d: got %q, want %q", c.in, st, got, want)
			}
		}
	}
}

// TestIntervalOrderAndArithmetic: comparison with 30-day months, month
// arithmetic with end-of-month clamping, justify_*, interval * float.
func TestIntervalOrderAndArithmetic(t *testing.T) {
	iv := func(s string) Value {
		v, err := ParseIntervalValue(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if Compare(iv("1 mon"), iv("30 days")) != 0 || Compare(iv("1 day"), iv("24 hours")) != 0 ||
		Compare(iv("1 mon"), iv("29 days 23:59:59")) <= 0 || Compare(iv("-1 mon"), iv("1 day")) >= 0 {
		t.Error("interval order is not PostgreSQL's")
	}
	if string(AppendGroupKey(nil, iv("1 mon"))) != string(AppendGroupKey(nil, iv("720 hours"))) {
		t.Error("equal intervals group apart")
	}
	ts := func(s string) int64 {
		m, err := ParseTimestamp(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct{ t, iv, want string }{
		{"2024-01-31", "1 mon", "2024-02-29 00:00:00"},
		{"2023-01-31", "1 mon", "2023-02-28 00:00:00"},
		{"2024-03-31 10:00", "-1 mon", "2024-02-29 10:00:00"},
		{"2024-01-31", "1 mon 1 day", "2024-03-01 00:00:00"},
		{"2024-12-15", "1 year 1 mon 12:00", "2026-01-15 12:00:00"},
	} {
		r, err := AddIntervalMicros(ts(c.t), iv(c.iv), 1, nil)
		if err != nil || FormatTimestamp(r) != c.want {
			t.Errorf("%s + %s = %s (%v), want %s", c.t, c.iv, FormatTimestamp(r), err, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		fn   func(Value) (Value, error)
		want string
	}{
		{"35 days", JustifyDays, "1 mon 5 days"},
		{"-35 days", JustifyDays, "-1 mons -5 days"},
		{"27 hours", JustifyHours, "1 day 03:00:00"},
		{"1 mon -1 hour", JustifyInterval, "29 days 23:00:00"},
		{"-1 mon 1 hour", JustifyInterval, "-29 days -23:00:00"},
		{"1 mon -1 day", JustifyDays, "29 days"},
	} {
		r, err := c.fn(iv(c.in))
		if err != nil || r.Text() != c.want {
			t.Errorf("justify %q: %s (%v), want %s", c.in, r.Text(), err, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		f    float64
		want string
	}{
		{"1 mon", 1.5, "1 mon 15 days"},
		{"1 day", 0.5, "12:00:00"},
		{"1 year 1 mon", 0.5, "6 mons 15 days"},
		{"01:00:00", 2.5, "02:30:00"},
	} {
		r, err := MulInterval(iv(c.in), c.f)
		if err != nil || r.Text() != c.want {
			t.Errorf("%q * %v = %s (%v), want %s", c.in, c.f, r.Text(), err, c.want)
		}
	}
	for _, c := range []struct{ a, b, want string }{
		{"2024-03-31", "2024-01-31", "2 mons"},
		{"2024-03-01", "2024-01-31", "1 mon 1 day"},
		{"2001-04-10", "1957-06-13", "43 years 9 mons 27 days"},
		{"1957-06-13", "2001-04-10", "-43 years -9 mons -27 days"},
		{"2024-01-01 01:00", "2023-12-31 23:00", "02:00:00"},
	} {
		r, err := AgeMicros(ts(c.a), ts(c.b))
		if err != nil || r.Text() != c.want {
			t.Errorf("age(%s, %s) = %s (%v), want %s", c.a, c.b, r.Text(), err, c.want)
		}
	}
}

// TestIntervalInputPG15: PostgreSQL 15's interval regression cases
// (src/test/regress/expected/interval.out): repeated units are bad input,
// and IntervalStyle sql_standard reads a leading minus for every field.
func TestIntervalInputPG15(t *testing.T) {
	for _, in := range []string{"1 second 2 seconds", "10 milliseconds 20 milliseconds",
		"5.5 seconds 3 milliseconds", "1:20:05 5 microseconds", "1 day 1 day", "123 11", "123 2:03 -2:04"} {
		if _, err := ParseIntervalValue(in); sqlerr.Code(err) != sqlerr.InvalidDatetimeFormat {
			t.Errorf("%q: %v, want 22007", in, err)
		}
	}
	for in, want := range map[string]string{
		"+1 -1:00:00":                "1 day -01:00:00",
		"-1 +1:00:00":                "-1 days +01:00:00",
		"+1-2 -3 +4:05:06.789":       "1 year 2 mons -3 days +04:05:06.789",
		"-23 hours 45 min 12.34 sec": "-22:14:47.66",
		"-1 year 2 months 1 day 23 hours 45 min 12.34 sec": "-10 mons +1 day 23:45:12.34",
		"P0002-10-15T10:30:20":                             "2 years 10 mons 15 days 10:30:20",
		"P1Y0M3DT4H5M6S":                                   "1 year 3 days 04:05:06",
		"P1.1Y0M3DT4H5M6S":                                 "1 year 1 mon 3 days 04:05:06",
		"9223372036854775807 microseconds":                 "2562047788:00:54.775807",
		"-9223372036854775808 microseconds":                "-2562047788:00:54.775808",
	} {
		v, err := ParseIntervalValue(in)
		if err != nil || v.Text() != want {
			t.Errorf("%q: %s (%v), want %s", in, v.Text(), err, want)
		}
	}
	sql := MakeStyle(0, 0, IntervalSQLStandard)
	for in, want := range map[string]string{
		"-23 hours 45 min 12.34 sec":                        "-23:45:12.34",
		"-1 day 23 hours 45 min 12.34 sec":                  "-1 23:45:12.34",
		"-1 year 2 months 1 day 23 hours 45 min 12.34 sec":  "-1-2 -1 -23:45:12.34",
		"-1 year 2 months 1 day 23 hours 45 min +12.34 sec": "-0-10 +1 +23:45:12.34",
		"P1W":     "7 0:00:00",
		"PT-0.1S": "-0:00:00.1",
	} {
		v, err := ParseIntervalStyle(in, IntervalSQLStandard)
		if err != nil || v.WithStyle(sql).Text() != want {
			t.Errorf("sql_standard %q: %s (%v), want %s", in, v.WithStyle(sql).Text(), err, want)
		}
	}
}
