package types

import "testing"

// TestTimeInputAndRounding checks time input forms, time(p) rounding and
// the type's spellings against PostgreSQL 15's answers.
func TestTimeInputAndRounding(t *testing.T) {
	for _, c := range []struct{ typ, in, want string }{
		{"time", "04:05:06.789", "04:05:06.789"},
		{"time", "04:05", "04:05:00"},
		{"time", "4:05 PM", "16:05:00"},
		{"time", "12:00 am", "00:00:00"},
		{"time", "040506", "04:05:06"},
		{"time", "T040506.5", "04:05:06.5"},
		{"time", "allballs", "00:00:00"},
		{"time", "24:00:00", "24:00:00"},
		{"time", "2003-04-12 04:05:06 America/New_York", "04:05:06"},
		{"time", "04:05:06-08", "04:05:06"},
		{"time", "1:2:3", "01:02:03"},
		{"time(0)", "12:00:00.5", "12:00:01"},
		{"time(0)", "23:59:59.9", "24:00:00"},
		{"time(2) without time zone", "01:02:03.456", "01:02:03.46"},
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
			t.Errorf("%s: %s reads back as %v, %v", c.typ, typ, back, err)
		}
	}
	for _, bad := range []string{"24:00:01", "25:00", "abc", "", "13:00 pm", "12:60"} {
		if v, err := ParseText(TypeTime, bad); err == nil {
			t.Errorf("%q accepted as %s", bad, v.Text())
		}
	}
	if tt, err := ParseTypeName("time(2) with time zone"); err != nil || tt.Family != TimeTZ {
		t.Errorf("time(2) with time zone: %v %v", tt, err)
	}
	ts, _ := ParseText(TypeTimestamp, "1969-12-31 23:00:00")
	if v, err := Cast(ts, TypeTime); err != nil || v.Text() != "23:00:00" {
		t.Errorf("timestamp before 1970 as time: %v %v", v, err)
	}
	iv, _ := ParseText(TypeInterval, "-1 hour")
	if v, err := Cast(iv, TypeTime); err != nil || v.Text() != "23:00:00" {
		t.Errorf("interval '-1 hour'::time: %v %v", v, err)
	}
}

// TestTimeTZOrder checks that a timetz's packed integer orders as
// PostgreSQL's timetz_cmp (the UTC time of day, unwrapped, then the zone)
// and gives its parts back.
func TestTimeTZOrder(t *testing.T) {
	in := []string{"00:00+14", "12:00+02", "10:00+00", "10:00-00:30", "23:00-10", "24:00-15:59:59", "00:00+15:59:59"}
	var vals []Value
	for _, s := range in {
		v, err := ParseTimeTZ(s, nil)
		if err != nil {
			t.Fatal(s, err)
		}
		us, z := v.TimeTZParts()
		if back := FormatTimeTZ(us, z); back == "" {
			t.Fatal(s)
		}
		vals = append(vals, v)
	}
	for i := range vals {
		for j := range vals {
			ui, zi := vals[i].TimeTZParts()
			uj, zj := vals[j].TimeTZParts()
			want := cmpInt(ui+int64(zi)*1e6, uj+int64(zj)*1e6)
			if want == 0 {
				want = cmpInt(int64(zi), int64(zj))
			}
			if got := Compare(vals[i], vals[j]); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", in[i], in[j], got, want)
			}
		}
	}
	v, _ := ParseTimeTZ("12:34:56.789-05:30", nil)
	if us, z := v.TimeTZParts(); us != (12*3600+34*60+56)*1e6+789e3 || z != 5*3600+30*60 {
		t.Errorf("parts %d %d", us, z)
	}
	if s := v.Text(); s != "12:34:56.789-05:30" {
		t.Errorf("text %q", s)
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
