package sql

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestParseCopyFieldMatchesParseText: where the COPY shortcut answers, it
// gives the value, or the error (SQLSTATE and message), that the general
// parse gives.
func TestParseCopyFieldMatchesParseText(t *testing.T) {
	fields := []string{"0", "7", "-7", "+7", "007", "-0", "127", "128", "-128", "-129", "255", "256",
		"32767", "32768", "2147483647", "2147483648", "-2147483649", "999999999999999999",
		"-999999999999999999", "9223372036854775807", "9223372036854775808", "18446744073709551615",
		"", " 1", "1 ", "1e3", "0x10", "1_000", "--1", "+", "-", "abc", "héllo", "a\x00b", "tab\there"}
	typs := []types.Type{types.T(types.Int8), types.T(types.Int16), types.T(types.Int32), types.TypeInt64,
		types.T(types.Uint8), types.T(types.Uint16), types.T(types.Uint32), types.TypeUint64,
		types.TypeUtf8, {Family: types.Utf8, Width: 3}, types.T(types.Double)}
	answered := 0
	for _, typ := range typs {
		for _, f := range fields {
			got, ok, gerr := parseCopyField(typ, []byte(f))
			if !ok {
				continue
			}
			answered++
			want, werr := types.ParseText(typ, f)
			if (gerr == nil) != (werr == nil) || gerr != nil && (sqlerr.Code(gerr) != sqlerr.Code(werr) || gerr.Error() != werr.Error()) {
				t.Errorf("%s %q: error %v, ParseText's %v", typ, f, gerr, werr)
				continue
			}
			if gerr == nil && (got.Family() != want.Family() || types.Compare(got, want) != 0) {
				t.Errorf("%s %q: %v (%s), ParseText's %v (%s)", typ, f, got, got.Family(), want, want.Family())
			}
		}
	}
	if answered < 100 {
		t.Fatalf("the shortcut answered only %d cases", answered)
	}
}

func TestCastFree(t *testing.T) {
	for _, c := range []struct {
		v    types.Value
		t    types.Type
		want bool
	}{
		{types.Value{}, types.TypeInt64, true},
		{types.NewInt64(1), types.TypeInt64, true},
		{types.NewInt64(1), types.T(types.Int32), false},
		{types.NewUtf8("x"), types.TypeUtf8, true},
		{types.NewUtf8("x"), types.Type{Family: types.Utf8, Width: 1}, false},
		{types.NewUtf8("x"), types.TypeInt64, false},
	} {
		if got := castFree(c.v, c.t); got != c.want {
			t.Errorf("castFree(%v, %s) = %v", c.v, c.t, got)
		}
	}
}
