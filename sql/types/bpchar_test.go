package types

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestBPCharInput: char(n) input is padded to n, trailing spaces past n
// are dropped, anything else past n is 22001 (PostgreSQL 15's results).
func TestBPCharInput(t *testing.T) {
	c4, err := ParseTypeName("char(4)")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"ab", "ab  "}, {"abcd", "abcd"}, {"abcd    ", "abcd"}, {"", "    "}, {"é", "é   "}, {"ab  ", "ab  "},
	} {
		v, err := ParseText(c4, tc.in)
		if err != nil || v.Str() != tc.want {
			t.Errorf("char(4) %q: got %q, %v; want %q", tc.in, v.Str(), err, tc.want)
		}
	}
	_, err = ParseText(c4, "abcde")
	if sqlerr.Code(err) != sqlerr.StringDataRightTruncation || err.Error() != "value too long for type character(4)" {
		t.Errorf("abcde into char(4): %v", err)
	}
	if v, _ := ParseText(TypeBPChar, "ab  "); v.Str() != "ab  " {
		t.Errorf("bare bpchar keeps its input: %q", v.Str())
	}
}

// TestBPCharNames: the spellings of the type, its wire OID and how it
// reads back from its own name.
func TestBPCharNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Type
		pg   string
	}{
		{"char(3)", Type{Family: Utf8, Width: 3, Blank: true}, "character(3)"},
		{"character(10)", Type{Family: Utf8, Width: 10, Blank: true}, "character(10)"},
		{"char", Type{Family: Utf8, Width: 1, Blank: true}, "character(1)"},
		{"bpchar", TypeBPChar, "bpchar"},
		{"varchar(3)", Type{Family: Utf8, Width: 3}, "character varying(3)"},
	} {
		got, err := ParseTypeName(tc.name)
		if err != nil || got != tc.want || got.PGName() != tc.pg {
			t.Errorf("%s: got %+v %q, %v", tc.name, got, got.PGName(), err)
			continue
		}
		// (Utf8(n), varchar's YQL spelling, is not a name that parses.)
		if back, err := ParseTypeName(got.String()); got.Blank && (err != nil || back != got) {
			t.Errorf("%s: %s reads back as %+v, %v", tc.name, got.String(), back, err)
		}
		if wantOID := map[bool]uint32{true: OIDBPChar, false: OIDText}[got.Blank]; got.OID() != wantOID {
			t.Errorf("%s: OID %d", tc.name, got.OID())
		}
	}
	if tt, ok := FromOID(OIDBPChar); !ok || tt != TypeBPChar {
		t.Errorf("FromOID(1042) = %+v", tt)
	}
	if _, err := ParseTypeName("char(0)"); sqlerr.Code(err) != sqlerr.InvalidParameterValue {
		t.Errorf("char(0): %v", err)
	}
	if v := TrimBlanks(NewUtf8("ab  ")); v.Str() != "ab" {
		t.Errorf("TrimBlanks: %q", v.Str())
	}
}
