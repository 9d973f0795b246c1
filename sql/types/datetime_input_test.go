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
	if _, err := ParseTimestamp("infinity"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("infinity: %v", err)
	}
	if d, err := ParseDate("January 8, 1999"); err != nil || FormatDate(d) != "1999-01-08" {
		t.Errorf("date January 8, 1999: %v %v", FormatDate(d), err)
	}
}

// TestIntervalInputForms: PostgreSQL's interval input, printed in its
// postgres style; forms with years or months are 0A000.
func TestIntervalInputForms(t *testing.T) {
	for in, want := range map[string]string{
		"1 day 2 hours":    "1 day 02:00:00",
		"@ 1 minute":       "00:01:00",
		"@ 2 hours ago":    "-02:00:00",
		"1 day 02:03:04.5": "1 day 02:03:04.5",
		"90 seconds":       "00:01:30",
		"250 ms":           "00:00:00.25",
		"PT1H":             "01:00:00",
		"P1DT2H":           "1 day 02:00:00",
		"3 days ago":       "-3 days",
		"-00:00:01":        "-00:00:01",
		"1 week":           "7 days",
		"1000us":           "00:00:00.001",
		"5min 30s":         "00:05:30",
		"2days 1h":         "2 days 01:00:00",
		"1.5e1 s":          "00:00:15",
	} {
		m, err := ParseInterval(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := FormatInterval(m); got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"P1Y2M", "1-2", "1 year", "2 months 3 days", "1 century"} {
		if _, err := ParseInterval(in); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%q: got %v, want 0A000", in, err)
		}
	}
	for _, in := range []string{"@", "banana", "1 fortnight", "5fortnights"} {
		if _, err := ParseInterval(in); sqlerr.Code(err) != sqlerr.InvalidDatetimeFormat {
			t.Errorf("%q: got %v, want 22007", in, err)
		}
	}
}
