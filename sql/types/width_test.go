package types

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestVarcharTrailingSpaces: spaces past varchar(n)'s width are trimmed, as
// PostgreSQL does; any other character past it is 22001.
func TestVarcharTrailingSpaces(t *testing.T) {
	vc := Type{Family: Utf8, Width: 4}
	for in, want := range map[string]string{"abcd    ": "abcd", "ab  ": "ab  ", "äöüß  ": "äöüß", "abcd": "abcd", "a   b": ""} {
		v, err := ParseText(vc, in)
		if want == "" {
			if sqlerr.Code(err) != sqlerr.StringDataRightTruncation {
				t.Errorf("%q: got %v, want 22001", in, err)
			}
			continue
		}
		if err != nil || v.Str() != want {
			t.Errorf("%q: got %q, %v; want %q", in, v.Str(), err, want)
		}
	}
}
