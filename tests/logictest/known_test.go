package logictest

import (
	"bytes"
	"strings"
	"testing"
)

func TestKnownFailures(t *testing.T) {
	src := `
# comment
select1.test:12 CASE without ELSE
index/in/slt_good_5.test:100
/abs/dir/evidence/in1.test:7	tab reason
`
	k, err := ParseKnownFailures(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path   string
		line   int
		ok     bool
		reason string
	}{
		{"select1.test", 12, true, "CASE without ELSE"},
		{"/work/shared/sqllogictest/select1.test", 12, true, "CASE without ELSE"},
		{"./sqllogictest/select1.test", 12, true, "CASE without ELSE"},
		{"select1.test", 13, false, ""},
		{"xselect1.test", 12, false, ""},
		{"/x/index/in/slt_good_5.test", 100, true, ""},
		{"/x/index/between/slt_good_5.test", 100, false, ""},
		{"slt_good_5.test", 100, false, ""},
		{"/abs/dir/evidence/in1.test", 7, true, "tab reason"},
		{"evidence/in1.test", 7, false, ""},
	}
	for _, c := range cases {
		r, ok := k.Lookup(c.path, c.line)
		if ok != c.ok || r != c.reason {
			t.Errorf("Lookup(%s, %d) = %q, %v; want %q, %v", c.path, c.line, r, ok, c.reason, c.ok)
		}
	}
	var nilK KnownFailures
	if _, ok := nilK.Lookup("select1.test", 12); ok {
		t.Error("nil list matched")
	}
	for _, bad := range []string{"select1.test", "select1.test:x", ":5", "f:0"} {
		if _, err := ParseKnownFailures(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestWriteKnownFailuresRoundTrip(t *testing.T) {
	results := []FileResult{{
		File: "b.test",
		Failures: []Failure{
			{File: "b.test", Line: 10, Message: "wrong result:\n value 1"},
			{File: "b.test", Line: 9, Message: "query failed"},
		},
		KnownFailures: []Failure{{File: "b.test", Line: 100, Message: "old reason"}},
	}, {
		File:     "a.test",
		Failures: []Failure{{File: "a.test", Line: 3, Message: "x"}},
	}}
	var buf bytes.Buffer
	if err := WriteKnownFailures(&buf, results); err != nil {
		t.Fatal(err)
	}
	want := "a.test:3 x\nb.test:9 query failed\nb.test:10 wrong result: value 1\nb.test:100 old reason\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	k, err := ParseKnownFailures(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := k.Lookup("dir/b.test", 10); !ok || r != "wrong result: value 1" {
		t.Errorf("round trip: %q %v", r, ok)
	}
}
