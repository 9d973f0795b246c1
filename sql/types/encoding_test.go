package types

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain ascii", ""},
		{"é😀", ""},
		{"abc\x00def", `invalid byte sequence for encoding "UTF8": 0x00`},
		{"\xff", `invalid byte sequence for encoding "UTF8": 0xff`},
		{"a\xc3\x28", `invalid byte sequence for encoding "UTF8": 0xc3 0x28`},
		{"a\xe2\x82", `invalid byte sequence for encoding "UTF8": 0xe2 0x82`},
		{"\xed\xa0\x80", `invalid byte sequence for encoding "UTF8": 0xed 0xa0 0x80`}, // a surrogate
	} {
		err := CheckText(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
			if sqlerr.Code(err) != sqlerr.CharacterNotInRepertoire {
				t.Errorf("%q: code %s", tc.in, sqlerr.Code(err))
			}
		}
		if got != tc.want {
			t.Errorf("CheckText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Every way bytes become text goes through it.
	if _, err := ParseText(TypeUtf8, "a\x00"); sqlerr.Code(err) != sqlerr.CharacterNotInRepertoire {
		t.Errorf("ParseText: %v", err)
	}
	if _, err := Cast(NewString("a\x00"), TypeUtf8); sqlerr.Code(err) != sqlerr.CharacterNotInRepertoire {
		t.Errorf("Cast from String: %v", err)
	}
	if _, err := Cast(NewUnknown("a\x00"), TypeUtf8); sqlerr.Code(err) != sqlerr.CharacterNotInRepertoire {
		t.Errorf("Cast from Unknown: %v", err)
	}
}
