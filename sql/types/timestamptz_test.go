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
