package server

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

func dec(t testing.TB, s string) *apd.Decimal {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// numericCases are the numeric edge cases: zero with and without scale,
// signs, the Uint64 range, long fractions, exponents that are not multiples
// of four, NaN and infinities.
var numericCases = []string{
	"0", "0.00", "1", "-1", "9999", "10000", "-10000.5", "0.5", "-0.5",
	"12345.678", "0.0001", "0.00001", "1.50", "100000000", "1E+20", "123E+5",
	"18446744073709551615", "-18446744073709551615", "18446744073709551616",
	"9223372036854775807", "-9223372036854775808",
	"0.000000000000000000001", "123456789012345678901234567890.123456789",
	"NaN", "Infinity", "-Infinity",
}

// TestNumericAgainstPgtype checks the numeric codec against pgx's, which is
// an independent implementation of the same PostgreSQL format: each decodes
// what the other encodes to the same number.
func TestNumericAgainstPgtype(t *testing.T) {
	m := pgtype.NewMap()
	for _, s := range numericCases {
		d := dec(t, s)
		ours, err := appendNumeric(nil, d)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		var n pgtype.Numeric
		if err := m.Scan(types.OIDNumeric, pgtype.BinaryFormatCode, ours, &n); err != nil {
			t.Fatalf("%s: pgtype cannot read ours %x: %v", s, ours, err)
		}
		if got := numericString(t, n); !sameDecimal(t, got, d) {
			t.Errorf("%s: pgtype read ours as %s", s, got)
		}

		var pn pgtype.Numeric
		ps := s
		if d.Form == apd.Finite {
			ps = d.Text('f') // pgtype does not read exponents
		}
		if err := pn.Scan(ps); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		theirs, err := m.Encode(types.OIDNumeric, pgtype.BinaryFormatCode, pn, nil)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		back, ok := decodeNumeric(theirs)
		if !ok {
			t.Fatalf("%s: cannot read pgtype's %x", s, theirs)
		}
		if back.Cmp(d) != 0 && !(d.Form == apd.NaN && back.Form == apd.NaN) {
			t.Errorf("%s: read pgtype's %x as %s", s, theirs, back.Text('f'))
		}
	}
}

func numericString(t testing.TB, n pgtype.Numeric) string {
	t.Helper()
	v, err := n.Value()
	if err != nil {
		t.Fatal(err)
	}
	return v.(string)
}

func sameDecimal(t testing.TB, s string, d *apd.Decimal) bool {
	if d.Form == apd.NaN {
		return s == "NaN"
	}
	if d.Form == apd.Infinite {
		return (s == "Infinity" && !d.Negative) || (s == "-Infinity" && d.Negative)
	}
	return dec(t, s).Cmp(d) == 0
}

func TestNumericLayout(t *testing.T) {
	// Byte layouts from PostgreSQL's numeric_send.
	for _, tc := range []struct {
		in   string
		want []byte
	}{
		{"0", []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{"0.00", []byte{0, 0, 0, 0, 0, 0, 0, 2}},
		{"12345.678", []byte{0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c}},
		{"-1.50", []byte{0, 2, 0, 0, 0x40, 0, 0, 2, 0, 1, 0x13, 0x88}},
		{"1E+8", []byte{0, 1, 0, 2, 0, 0, 0, 0, 0, 1}},
		{"NaN", []byte{0, 0, 0, 0, 0xc0, 0, 0, 0}},
	} {
		got, err := appendNumeric(nil, dec(t, tc.in))
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: got %x %v, want %x", tc.in, got, err, tc.want)
		}
	}
}

func TestNumericDisplayScale(t *testing.T) {
	// The display scale survives a round trip, and digits beyond it are
	// truncated on input as numeric_recv does.
	for _, s := range []string{"1.50", "0.000", "-2.10", "7"} {
		b, err := appendNumeric(nil, dec(t, s))
		if err != nil {
			t.Fatal(err)
		}
		d, ok := decodeNumeric(b)
		if !ok || d.Text('f') != s {
			t.Errorf("%s: round trip gave %s", s, d.Text('f'))
		}
	}
	// 1.2345 with dscale 2: digits [1 2345], weight 0.
	d, ok := decodeNumeric([]byte{0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x09, 0x29})
	if !ok || d.Text('f') != "1.23" {
		t.Errorf("truncation gave %v %v", d, ok)
	}
}

func TestDecodeNumericRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"short":           {0, 0, 0},
		"digit too big":   {0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10},
		"bad sign":        {0, 0, 0, 0, 0x12, 0x34, 0, 0},
		"count mismatch":  {0, 2, 0, 0, 0, 0, 0, 0, 0, 1},
		"trailing bytes":  {0, 0, 0, 0, 0, 0, 0, 0, 0},
		"negative ndigit": {0xff, 0xff, 0, 0, 0, 0, 0, 0},
		"bad dscale":      {0, 0, 0, 0, 0, 0, 0xc0, 0},
	} {
		if _, ok := decodeNumeric(b); ok {
			t.Errorf("%s: accepted %x", name, b)
		}
	}
}

// binaryCases pair a value with its wire type.
func binaryCases(t testing.TB) []struct {
	oid uint32
	v   types.Value
} {
	return []struct {
		oid uint32
		v   types.Value
	}{
		{types.OIDBool, types.NewBool(true)},
		{types.OIDBool, types.NewBool(false)},
		{types.OIDInt2, types.NewInt(types.Int16, -32768)},
		{types.OIDInt2, types.NewUint(types.Uint8, 255)},
		{types.OIDInt4, types.NewInt(types.Int32, math.MaxInt32)},
		{types.OIDInt4, types.NewUint(types.Uint16, 65535)},
		{types.OIDInt8, types.NewInt64(math.MinInt64)},
		{types.OIDInt8, types.NewUint(types.Uint32, math.MaxUint32)},
		{types.OIDFloat4, types.NewFloat(-1.5)},
		{types.OIDFloat4, types.NewFloat(math.Inf(1))},
		{types.OIDFloat8, types.NewDouble(math.Pi)},
		{types.OIDFloat8, types.NewDouble(math.NaN())},
		{types.OIDNumeric, types.NewUint64(math.MaxUint64)},
		{types.OIDNumeric, types.NewUint64(0)},
		{types.OIDNumeric, types.NewDecimal(dec(t, "-12345.678"))},
		{types.OIDNumeric, types.NewDecimal(dec(t, "NaN"))},
		{types.OIDBytea, types.NewString("\x00\x01\xff")},
		{types.OIDBytea, types.NewString("")},
		{types.OIDText, types.NewUtf8("héllo")},
		{types.OIDText, types.NewUtf8("")},
		{types.OIDVarchar, types.NewUtf8("v")},
		{types.OIDJSON, types.NewJson(`{"a": [1, 2]}`)},
		{types.OIDJSONB, types.NewJson(`{"a":1}`)},
		{types.OIDDate, types.NewDate(0)},
		{types.OIDDate, types.NewDate(-800000)},
		{types.OIDDate, types.NewDate(19723)},
		{types.OIDTimestamp, types.NewTimestamp(1704067200123456)},
		{types.OIDTimestamp, types.NewTimestamp(-1)},
		{types.OIDTimestamp, types.NewDatetime(1704067200)},
		{types.OIDInterval, types.NewInterval(93784500000)},
		{types.OIDInterval, types.NewInterval(-93784500000)},
		{types.OIDInterval, types.NewInterval(0)},
		{types.OIDInterval, types.NewIntervalParts(14, -3, 4e6)},
		{types.OIDInterval, types.NewIntervalParts(-1, 40, -1)},
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	for _, tc := range binaryCases(t) {
		b, err := appendBinary(nil, tc.oid, tc.v)
		if err != nil {
			t.Fatalf("%d %v: %v", tc.oid, tc.v, err)
		}
		got, err := decodeBinary(tc.oid, b, 1)
		if err != nil {
			t.Fatalf("%d %v: decode %x: %v", tc.oid, tc.v, b, err)
		}
		if got.Text() != tc.v.Text() {
			t.Errorf("%d: %v came back as %v", tc.oid, tc.v, got)
		}
	}
}

// TestBinaryAgainstPgtype decodes our encoding with pgx's codecs and
// checks the text they print against PostgreSQL's text for the value.
func TestBinaryAgainstPgtype(t *testing.T) {
	m := pgtype.NewMap()
	for _, tc := range binaryCases(t) {
		b, err := appendBinary(nil, tc.oid, tc.v)
		if err != nil {
			t.Fatal(err)
		}
		var text string
		switch tc.oid {
		case types.OIDBytea:
			var bs []byte
			if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &bs); err != nil {
				t.Fatalf("%v: %v", tc.v, err)
			}
			text = types.NewString(string(bs)).Text()
		case types.OIDBool:
			var v bool
			if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &v); err != nil {
				t.Fatalf("%v: %v", tc.v, err)
			}
			text = types.NewBool(v).Text()
		case types.OIDInterval:
			var iv pgtype.Interval
			if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &iv); err != nil {
				t.Fatalf("%v: %v", tc.v, err)
			}
			text = types.NewIntervalParts(iv.Months, iv.Days, iv.Microseconds).Text()
		case types.OIDDate, types.OIDTimestamp:
			var ts pgtype.Timestamp
			if tc.oid == types.OIDDate {
				var d pgtype.Date
				if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &d); err != nil {
					t.Fatalf("%v: %v", tc.v, err)
				}
				text = types.NewDate(floorDiv(d.Time.Unix(), 86400)).Text()
				break
			}
			if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &ts); err != nil {
				t.Fatalf("%v: %v", tc.v, err)
			}
			text = types.NewTimestamp(ts.Time.UnixMicro()).Text()
		default:
			// Every other codec prints PostgreSQL's text form when asked
			// to scan into a string (floats aside: compare numerically).
			var s pgtype.Text
			if tc.oid == types.OIDFloat4 || tc.oid == types.OIDFloat8 {
				var f pgtype.Float8
				if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &f); err != nil {
					t.Fatalf("%v: %v", tc.v, err)
				}
				if g := tc.v.Float(); f.Float64 != g && !(math.IsNaN(g) && math.IsNaN(f.Float64)) {
					t.Errorf("%v: pgtype read %v", tc.v, f.Float64)
				}
				continue
			}
			if tc.oid == types.OIDNumeric {
				var n pgtype.Numeric
				if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &n); err != nil {
					t.Fatalf("%v: %v", tc.v, err)
				}
				if got := numericString(t, n); !sameDecimal(t, got, tc.v.AsDecimal()) {
					t.Errorf("%v: pgtype read %s", tc.v, got)
				}
				continue
			}
			if tc.oid == types.OIDJSON || tc.oid == types.OIDJSONB {
				var raw []byte
				if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &raw); err != nil {
					t.Fatalf("%v: %v", tc.v, err)
				}
				text = string(raw)
				break
			}
			if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, b, &s); err != nil {
				t.Fatalf("%v: %v", tc.v, err)
			}
			text = s.String
		}
		if text != tc.v.Text() {
			t.Errorf("oid %d: %v read by pgtype as %q", tc.oid, tc.v, text)
		}
	}
}

func TestDecodeBinaryErrors(t *testing.T) {
	interval := func(micros int64, days, months int32) []byte {
		b := make([]byte, 16)
		for i := range 8 {
			b[i] = byte(uint64(micros) >> (56 - 8*i))
		}
		b[8], b[9], b[10], b[11] = byte(days>>24), byte(days>>16), byte(days>>8), byte(days)
		b[12], b[13], b[14], b[15] = byte(months>>24), byte(months>>16), byte(months>>8), byte(months)
		return b
	}
	for _, tc := range []struct {
		oid  uint32
		in   []byte
		code string
	}{
		{types.OIDBool, []byte{2}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDBool, []byte{1, 1}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDInt2, []byte{1}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDInt4, []byte{1, 2, 3}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDInt8, nil, sqlerr.InvalidBinaryRepresentation},
		{types.OIDFloat4, []byte{1, 2, 3, 4, 5}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDFloat8, []byte{1}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDNumeric, []byte{0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDText, []byte{0xff, 0xfe}, sqlerr.CharacterNotInRepertoire},
		{types.OIDJSON, []byte("{"), sqlerr.InvalidTextRepresentation},
		{types.OIDJSONB, []byte("{}"), sqlerr.InvalidBinaryRepresentation},
		{types.OIDDate, []byte{1, 2}, sqlerr.InvalidBinaryRepresentation},
		{types.OIDTimestamp, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0}, sqlerr.DatetimeFieldOverflow},
		{types.OIDInterval, []byte{1}, sqlerr.InvalidBinaryRepresentation},
	} {
		_, err := decodeBinary(tc.oid, tc.in, 3)
		if code := sqlerr.Code(err); code != tc.code {
			t.Errorf("oid %d %x: got %v (%s), want %s", tc.oid, tc.in, err, code, tc.code)
		}
	}
	// PostgreSQL's infinities and an interval's three fields are values,
	// not errors.
	for _, tc := range []struct {
		oid  uint32
		in   []byte
		want string
	}{
		{types.OIDDate, []byte{0x7f, 0xff, 0xff, 0xff}, "infinity"},
		{types.OIDDate, []byte{0x80, 0, 0, 0}, "-infinity"},
		{types.OIDTimestamp, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "infinity"},
		{types.OIDTimestampTZ, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}, "-infinity"},
		{types.OIDInterval, interval(0, 0, 1), "1 mon"},
		{types.OIDInterval, interval(math.MaxInt64, 1, 0), "1 day 2562047788:00:54.775807"},
	} {
		v, err := decodeBinary(tc.oid, tc.in, 3)
		if err != nil || v.Text() != tc.want {
			t.Errorf("oid %d %x: got %s (%v), want %s", tc.oid, tc.in, v.Text(), err, tc.want)
		}
	}
	var e *sqlerr.Error
	if _, err := decodeBinary(types.OIDInt4, nil, 3); !errors.As(err, &e) || e.Message != "incorrect binary data format in bind parameter 3" {
		t.Errorf("message: %v", err)
	}
}

func TestAppendBinaryErrors(t *testing.T) {
	for _, tc := range []struct {
		oid  uint32
		v    types.Value
		code string
	}{
		{types.OIDInt2, types.NewInt64(1 << 20), sqlerr.NumericValueOutOfRange},
		{types.OIDInt8, types.NewUint64(math.MaxUint64), sqlerr.NumericValueOutOfRange},
		{types.OIDInt4, types.NewUtf8("1"), sqlerr.InternalError},
		{types.OIDBool, types.NewInt64(1), sqlerr.InternalError},
		{types.OIDInterval, types.NewInt64(1), sqlerr.InternalError},
		{types.OIDTimestampTZ + 1000, types.NewInt64(1), sqlerr.InternalError},
	} {
		if _, err := appendBinary(nil, tc.oid, tc.v); sqlerr.Code(err) != tc.code {
			t.Errorf("oid %d %v: got %v, want %s", tc.oid, tc.v, err, tc.code)
		}
	}
}

func TestDecodeParam(t *testing.T) {
	num := func(s string) []byte {
		b, err := appendNumeric(nil, dec(t, s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	int8b := []byte{0, 0, 0, 0, 0, 0, 0, 5}
	for _, tc := range []struct {
		typ    types.Type
		oid    uint32
		format int16
		in     []byte
		want   string // value text, or the SQLSTATE of the error
	}{
		// Uint64 travels as numeric.
		{types.TypeUint64, types.OIDNumeric, 1, num("18446744073709551615"), "18446744073709551615"},
		{types.TypeUint64, types.OIDNumeric, 1, num("18446744073709551616"), sqlerr.NumericValueOutOfRange},
		{types.TypeUint64, types.OIDNumeric, 1, num("-1"), sqlerr.NumericValueOutOfRange},
		{types.TypeUint64, types.OIDNumeric, 0, []byte("18446744073709551615"), "18446744073709551615"},
		// A declared int8 feeds a Uint64 through a range-checked cast.
		{types.TypeUint64, types.OIDInt8, 1, int8b, "5"},
		{types.T(types.Int16), types.OIDInt8, 1, []byte{0, 0, 0, 0, 0, 1, 0, 0}, sqlerr.NumericValueOutOfRange},
		{types.Type{Family: types.Decimal, Precision: 5, Scale: 2}, types.OIDNumeric, 1, num("1.005"), "1.01"},
		{types.Type{Family: types.Utf8, Width: 2}, types.OIDText, 1, []byte("abc"), sqlerr.StringDataRightTruncation},
		// Unknown types take the bytes as text in either format.
		{types.TypeUnknown, types.OIDText, 1, []byte("abc"), "abc"},
		{types.TypeInt32, types.OIDInt4, 0, []byte("x"), sqlerr.InvalidTextRepresentation},
		{types.TypeUtf8, types.OIDText, 0, []byte{0xff}, sqlerr.CharacterNotInRepertoire},
		// NUL is not text, in either format (PostgreSQL: 22021 ... 0x00).
		{types.TypeUtf8, types.OIDText, 0, []byte("a\x00b"), sqlerr.CharacterNotInRepertoire},
		{types.TypeUtf8, types.OIDText, 1, []byte("a\x00b"), sqlerr.CharacterNotInRepertoire},
		{types.TypeUtf8, types.OIDVarchar, 1, []byte("\x00"), sqlerr.CharacterNotInRepertoire},
		{types.TypeUnknown, types.OIDUnknown, 1, []byte("a\x00"), sqlerr.CharacterNotInRepertoire},
		{types.TypeString, types.OIDBytea, 1, []byte("a\x00b"), `\x610062`},
		// A declared type the server has no binary form for falls back to
		// the statement's type.
		{types.TypeInt64, 869, 1, int8b, "5"}, // inet
		{types.T(types.Uuid), types.OIDUuid, 1, []byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11},
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{types.T(types.Uuid), types.OIDUuid, 1, []byte{1, 2, 3}, sqlerr.InvalidBinaryRepresentation},
		{types.T(types.Uuid), types.OIDUuid, 0, []byte("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	} {
		v, err := decodeParam(tc.typ, tc.oid, tc.format, tc.in, 1)
		got := v.Text()
		if err != nil {
			got = sqlerr.Code(err)
		}
		if got != tc.want {
			t.Errorf("%v from oid %d format %d %x: got %s (%v), want %s", tc.typ, tc.oid, tc.format, tc.in, got, err, tc.want)
		}
	}
}

// bindParams cuts a Bind's text parameters from one string: every value
// must get its own bytes, whatever the mix of formats, NULLs and untyped
// parameters around it, and none may alias the message's buffer, which
// the next message overwrites.
func TestBindParamsMixed(t *testing.T) {
	st := &statement{prep: &sql.Prepared{ParamTypes: []types.Type{
		types.TypeUtf8, types.TypeInt64, types.TypeUtf8, types.TypeUtf8, types.TypeUnknown, types.TypeInt64, types.TypeUtf8}}}
	m := &pgproto3.Bind{
		ParameterFormatCodes: []int16{0, 1, 0, 0, 1, 0, 0},
		Parameters: [][]byte{[]byte("héllo"), {0, 0, 0, 0, 0, 0, 0, 7}, []byte(""), nil,
			[]byte("untyped"), []byte("-42"), []byte("last")},
	}
	got, err := bindParams(st, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Parameters {
		for i := range p {
			p[i] = 'X'
		}
	}
	want := []string{"héllo", "7", "", "NULL", "untyped", "-42", "last"}
	for i, v := range got {
		s := v.Text()
		if v.IsNull() {
			s = "NULL"
		}
		if s != want[i] {
			t.Errorf("parameter %d: got %q, want %q", i+1, s, want[i])
		}
	}
	// A bad text parameter after good ones fails with its own error.
	m.Parameters = [][]byte{[]byte("a"), {0, 0, 0, 0, 0, 0, 0, 7}, []byte("b"), []byte{0xff}, []byte("u"), []byte("1"), []byte("c")}
	if _, err := bindParams(st, m); sqlerr.Code(err) != sqlerr.CharacterNotInRepertoire {
		t.Fatalf("invalid UTF-8: got %v, want 22021", err)
	}
}

// The int8 fast path of decodeParam gives what the generic decoder gives,
// and leaves everything else to it.
func TestDecodeParamInt8FastPath(t *testing.T) {
	for _, b := range [][]byte{{0, 0, 0, 0, 0, 0, 0, 7}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, {0x80, 0, 0, 0, 0, 0, 0, 0}} {
		got, err := decodeParam(types.TypeInt64, types.OIDInt8, formatBinary, b, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeBinary(types.OIDInt8, b, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got.Family() != want.Family() || got.Int() != want.Int() {
			t.Fatalf("% x: %v, want %v", b, got, want)
		}
	}
	if _, err := decodeParam(types.TypeInt64, types.OIDInt8, formatBinary, []byte{1, 2, 3}, 1); err == nil {
		t.Fatal("a 3-byte int8 was accepted")
	}
}

// BenchmarkBindParams decodes the Bind of the bench's IN-list of 100
// keys: 100 binary int8 parameters.
func BenchmarkBindParams(b *testing.B) {
	types100 := make([]types.Type, 100)
	m := &pgproto3.Bind{ParameterFormatCodes: []int16{formatBinary}, Parameters: make([][]byte, 100)}
	for i := range types100 {
		types100[i] = types.TypeInt64
		m.Parameters[i] = []byte{0, 0, 0, 0, 0, 1, 0, byte(i)}
	}
	st := &statement{prep: &sql.Prepared{ParamTypes: types100}, paramOIDs: make([]uint32, 100)}
	for i := range st.paramOIDs {
		st.paramOIDs[i] = types.OIDInt8
	}
	b.ReportAllocs()
	for range b.N {
		if _, err := bindParams(st, m); err != nil {
			b.Fatal(err)
		}
	}
}
