package server

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestBinaryArrays checks the binary array format against pgx's codecs,
// an independent implementation: what one encodes the other decodes to
// the same array (NULL elements, empty arrays, two dimensions).
func TestBinaryArrays(t *testing.T) {
	m := pgtype.NewMap()
	for _, tc := range []struct {
		elem types.Type
		text string
	}{
		{types.TypeInt32, "{1,NULL,-3}"},
		{types.TypeInt32, "{}"},
		{types.TypeInt32, "{{1,2},{3,4}}"},
		{types.TypeInt64, "{9223372036854775807}"},
		{types.TypeUtf8, `{a,"b c",NULL,""}`},
		{types.TypeDouble, "{1.5,-2}"},
		{types.TypeDecimal, "{1.25,NULL}"},
		{types.TypeBool, "{t,f}"},
	} {
		at := types.ArrayOf(tc.elem)
		v, err := types.ParseText(at, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		b, err := appendBinary(nil, at.OID(), v)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		// pgx reads ours, with its dimensions ...
		var arr pgtype.Array[any]
		if err := m.Scan(at.OID(), pgtype.BinaryFormatCode, b, &arr); err != nil {
			t.Fatalf("%s: pgx cannot read our binary array: %v", tc.text, err)
		}
		// ... and what it writes of that decodes to the same array here.
		pb, err := m.Encode(at.OID(), pgtype.BinaryFormatCode, arr, nil)
		if err != nil {
			t.Fatalf("%s: pgx encode: %v", tc.text, err)
		}
		got, err := decodeBinary(at.OID(), pb, 1)
		if err != nil {
			t.Fatalf("%s: decoding pgx's binary array: %v", tc.text, err)
		}
		if got.Text() != v.Text() {
			t.Errorf("%s: pgx's binary array decodes to %s", tc.text, got.Text())
		}
		back, err := decodeBinary(at.OID(), b, 1)
		if err != nil || back.Text() != v.Text() {
			t.Errorf("%s: round trip %s %v", tc.text, back.Text(), err)
		}
	}
}

// TestDecodeBinaryArrayErrors: malformed arrays are 22P03, an element type
// other than the array's is 42804, never a panic.
func TestDecodeBinaryArrayErrors(t *testing.T) {
	v, _ := types.ParseText(types.ArrayOf(types.TypeInt32), "{{1,2},{3,NULL}}")
	good, err := appendBinary(nil, 1007, v)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut < len(good); cut++ {
		if _, err := decodeBinary(1007, good[:cut], 1); err == nil {
			t.Errorf("truncated at %d: accepted", cut)
		}
	}
	if _, err := decodeBinary(1016, good, 1); sqlerr.Code(err) != sqlerr.DatatypeMismatch {
		t.Errorf("int4 elements as int8[]: %v", err)
	}
	bad := append([]byte(nil), good...)
	bad[3] = 9 // nine dimensions
	if _, err := decodeBinary(1007, bad, 1); sqlerr.Code(err) != sqlerr.InvalidBinaryRepresentation {
		t.Errorf("too many dimensions: %v", err)
	}
}
