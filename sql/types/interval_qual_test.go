package types

import "testing"

// TestIntervalQualifiers checks input and rounding under interval field
// qualifiers and precisions against PostgreSQL 15's answers.
func TestIntervalQualifiers(t *testing.T) {
	for _, c := range []struct{ typ, in, want string }{
		{"interval day", "1", "1 day"},
		{"interval year to month", "1-2", "1 year 2 mons"},
		{"interval day to minute", "1 2:03:04.5678", "1 day 02:03:00"},
		{"interval year", "1.5", "1 year"},
		{"interval year", "-13 months", "-1 years"},
		{"interval month", "1", "1 mon"},
		{"interval hour", "-1 day -02:30", "-1 days -02:00:00"},
		{"interval day to hour", "1 2", "1 day 02:00:00"},
		{"interval day to second", "1", "00:00:01"},
		{"interval minute to second", "1:02", "00:01:02"},
		{"interval second", "1:02", "01:02:00"},
		{"interval", "1:02.5", "00:01:02.5"},
		{"interval", "3 4 hours", "3 days 04:00:00"},
		{"interval second(2)", "1.23456789", "00:00:01.23"},
		{"interval(3)", "1.23456789", "00:00:01.235"},
		{"interval second(0)", "-1.5", "-00:00:02"},
		{"interval second(0)", "2.5", "00:00:03"},
		{"interval day to second(1)", "1 day 2.345678 sec", "1 day 00:00:02.3"},
		{"interval(7)", "1.5", "00:00:01.5"},
		{"interval minute", "10000000000", "166666666:40:00"},
	} {
		typ, err := ParseTypeName(c.typ)
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		v, err := ParseText(typ, c.in)
		if err != nil {
			t.Errorf("%s %q: %v", c.typ, c.in, err)
			continue
		}
		if got := v.Text(); got != c.want {
			t.Errorf("%s %q: %s, want %s", c.typ, c.in, got, c.want)
		}
		if back, err := ParseTypeName(typ.String()); err != nil || back != typ {
			t.Errorf("%s: %s reads back as %v, %v", c.typ, typ.String(), back, err)
		}
		if typ.Qual != 0 && QualFromIntervalTypmod(int64(IntervalTypmod(typ.Qual))) != typ.Qual {
			t.Errorf("%s: typmod %d does not read back", c.typ, IntervalTypmod(typ.Qual))
		}
	}
	for _, bad := range []string{"5 1-2", "1 2 days", "1 2"} {
		if v, err := ParseText(TypeInterval, bad); err == nil {
			t.Errorf("%q accepted as %s", bad, v.Text())
		}
	}
	if _, err := ParseText(Type{Family: Interval, Qual: QualDay | QualHour | QualMinute}, "1 2"); err == nil {
		t.Errorf("'1 2' DAY TO MINUTE accepted")
	}
	for _, bad := range []string{"interval day(2)", "interval day to hour(1)", "interval year to day", "interval(1,2)"} {
		if _, err := ParseTypeName(bad); err == nil {
			t.Errorf("type %q accepted", bad)
		}
	}
	iv, _ := ParseText(TypeInterval, "1 day 02:03:04.5678")
	typ, _ := ParseTypeName("interval hour to minute")
	if got, err := Cast(iv, typ); err != nil || got.Text() != "1 day 02:03:00" {
		t.Errorf("cast to %s: %v %v", typ, got, err)
	}
}
