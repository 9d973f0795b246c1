package types

import (
	"testing"
	"time"
)

func TestZonesAndTimestampTZText(t *testing.T) {
	instant := time.Date(2024, 7, 1, 12, 0, 0, 500000000, time.UTC).UnixMicro()
	for _, c := range []struct{ zone, want string }{
		{"UTC", "2024-07-01 12:00:00.5+00"},
		{"Europe/Berlin", "2024-07-01 14:00:00.5+02"},
		{"Asia/Kolkata", "2024-07-01 17:30:00.5+05:30"},
		{"+03:00", "2024-07-01 09:00:00.5-03"}, // POSIX: west of Greenwich
		{"3", "2024-07-01 15:00:00.5+03"},      // hours east
		{"America/St_Johns", "2024-07-01 09:30:00.5-02:30"},
	} {
		loc, err := LoadZone(c.zone)
		if err != nil {
			t.Fatalf("%s: %v", c.zone, err)
		}
		if got := FormatTimestampTZ(instant, loc); got != c.want {
			t.Errorf("%s: %q, want %q", c.zone, got, c.want)
		}
		if got := NewTimestampTZ(instant).InZone(c.zone).Text(); got != c.want {
			t.Errorf("%s: Text %q, want %q", c.zone, got, c.want)
		}
	}
	for _, bad := range []string{"Mars/Olympus", "../etc/passwd", "+99:00", "-1:99", "20"} {
		if _, err := LoadZone(bad); err == nil {
			t.Errorf("LoadZone(%q) accepted", bad)
		}
	}
}

func TestWallAndInstantAcrossDST(t *testing.T) {
	berlin, _ := LoadZone("Europe/Berlin")
	// 2024-03-31 01:30 UTC is 03:30 CEST (the clocks jumped at 01:00 UTC).
	instant := time.Date(2024, 3, 31, 1, 30, 0, 0, time.UTC).UnixMicro()
	wall := WallMicros(instant, berlin)
	if got := FormatTimestamp(wall); got != "2024-03-31 03:30:00" {
		t.Fatalf("wall clock %s", got)
	}
	if back := InstantMicros(wall, berlin); back != instant {
		t.Fatalf("round trip %d, want %d", back, instant)
	}
	m, err := ParseTimestampIn("2024-01-01 12:00:00", berlin)
	if err != nil || FormatTimestampTZ(m, time.UTC) != "2024-01-01 11:00:00+00" {
		t.Fatalf("parse in zone: %v %s", err, FormatTimestampTZ(m, time.UTC))
	}
	m, err = ParseTimestampIn("2024-01-01 12:00:00+05", berlin)
	if err != nil || FormatTimestampTZ(m, time.UTC) != "2024-01-01 07:00:00+00" {
		t.Fatalf("explicit offset wins: %v %s", err, FormatTimestampTZ(m, time.UTC))
	}
}

// TestParseTimestampInFreeForm checks that text only the free-form parser
// reads (decodeDateTime) is a wall-clock time in the session's zone unless
// it names a zone or an offset, as PostgreSQL's timestamptz_in does.
func TestParseTimestampInFreeForm(t *testing.T) {
	ny, _ := LoadZone("America/New_York")
	for _, c := range []struct{ in, want string }{
		{"January 8, 1999 04:05:06", "1999-01-08 09:05:06+00"},
		{"1999-01-08 04:05:06 PST", "1999-01-08 12:05:06+00"},
		{"01/08/1999 04:05 PM", "1999-01-08 21:05:00+00"},
		{"July 4, 2024 12:00", "2024-07-04 16:00:00+00"}, // EDT
		{"2024-07-04 12:00 UTC", "2024-07-04 12:00:00+00"},
		{"2024-07-04 12:00:00 Europe/Berlin", "2024-07-04 10:00:00+00"},
	} {
		m, err := ParseTimestampIn(c.in, ny)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := FormatTimestampTZ(m, time.UTC); got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
	}
	if _, err := ParseTimestampIn("January 32, 1999", ny); err == nil {
		t.Errorf("January 32 accepted")
	}
}
