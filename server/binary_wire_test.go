package server

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/pivotdb/pivotdb/sql/types"
)

// wireCase is one value sent as a parameter of "select $1::typ" and read
// back. dst makes a pointer to scan into; want is what it must hold
// afterwards (the sent value when nil).
type wireCase struct {
	typ  string
	oid  uint32
	val  any
	dst  func() any
	want any
}

func wireCases() []wireCase {
	ptr := func(v any) func() any {
		return func() any { return reflect.New(reflect.TypeOf(v)).Interface() }
	}
	maxU64 := new(big.Int).SetUint64(math.MaxUint64)
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	numeric := func(i *big.Int, exp int32) pgtype.Numeric { return pgtype.Numeric{Int: i, Exp: exp, Valid: true} }
	return []wireCase{
		{typ: "bool", oid: types.OIDBool, val: true, dst: ptr(true)},
		{typ: "int2", oid: types.OIDInt2, val: int16(-12345), dst: ptr(int16(0))},
		{typ: "int4", oid: types.OIDInt4, val: int32(math.MinInt32), dst: ptr(int32(0))},
		{typ: "int8", oid: types.OIDInt8, val: int64(math.MaxInt64), dst: ptr(int64(0))},
		{typ: "Uint32", oid: types.OIDInt8, val: int64(math.MaxUint32), dst: ptr(int64(0))},
		{typ: "float4", oid: types.OIDFloat4, val: float32(1.25), dst: ptr(float32(0))},
		{typ: "float8", oid: types.OIDFloat8, val: math.Pi, dst: ptr(float64(0))},
		{typ: "numeric", oid: types.OIDNumeric, val: numeric(big.NewInt(-12345678), -3), dst: ptr(pgtype.Numeric{})},
		{typ: "numeric", oid: types.OIDNumeric, val: numeric(big.NewInt(0), 0), dst: ptr(pgtype.Numeric{})},
		{typ: "numeric", oid: types.OIDNumeric, val: pgtype.Numeric{NaN: true, Valid: true}, dst: ptr(pgtype.Numeric{})},
		{typ: "Uint64", oid: types.OIDNumeric, val: numeric(maxU64, 0), dst: ptr(pgtype.Numeric{})},
		{typ: "Uint64", oid: types.OIDNumeric, val: uint64(math.MaxUint64), dst: ptr(uint64(0))},
		{typ: "bytea", oid: types.OIDBytea, val: []byte{0, 1, 2, 255}, dst: ptr([]byte(nil))},
		{typ: "text", oid: types.OIDText, val: "héllo, wörld", dst: ptr("")},
		{typ: "varchar(20)", oid: types.OIDText, val: "short", dst: ptr("")},
		{typ: "json", oid: types.OIDJSON, val: map[string]any{"a": []any{1.0, "x"}}, dst: ptr(map[string]any(nil))},
		{typ: "date", oid: types.OIDDate, val: time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), dst: ptr(time.Time{})},
		{typ: "date", oid: types.OIDDate, val: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), dst: ptr(time.Time{})},
		{typ: "timestamp", oid: types.OIDTimestamp, val: ts, dst: ptr(time.Time{})},
		{typ: "timestamp", oid: types.OIDTimestamp, val: time.Date(1960, 1, 1, 0, 0, 0, 1000, time.UTC), dst: ptr(time.Time{})},
		{typ: "Datetime", oid: types.OIDTimestamp, val: ts, dst: ptr(time.Time{}), want: ts.Truncate(time.Second)},
		{typ: "interval", oid: types.OIDInterval, val: 26*time.Hour + 3*time.Second + 500*time.Microsecond, dst: ptr(time.Duration(0))},
		{typ: "interval", oid: types.OIDInterval, val: -time.Minute, dst: ptr(time.Duration(0))},
	}
}

func derefString(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	switch x := rv.Interface().(type) {
	case pgtype.Numeric:
		s, _ := x.Value()
		return fmt.Sprint(s)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%v", rv.Interface())
}

// TestBinaryOverPgx sends every wire type through pgx in the modes that use
// binary parameters and results, and reads it back.
func TestBinaryOverPgx(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			conn := ts.connect(t, mode)
			for _, tc := range wireCases() {
				dst := tc.dst()
				if err := conn.QueryRow(testContext(t), "select $1::"+tc.typ, tc.val).Scan(dst); err != nil {
					t.Errorf("%s %v: %v", tc.typ, tc.val, err)
					continue
				}
				want := tc.want
				if want == nil {
					want = tc.val
				}
				if got, w := derefString(dst), derefString(want); got != w {
					t.Errorf("%s: sent %s, got %s", tc.typ, w, got)
				}
			}
			// NULL in every type.
			for _, tc := range wireCases() {
				var v any = "x"
				if err := conn.QueryRow(testContext(t), "select $1::"+tc.typ, nil).Scan(&v); err != nil || v != nil {
					t.Errorf("%s NULL: %v %v", tc.typ, v, err)
				}
			}
		})
	}
}

// TestBinaryExplicitFormats uses pgconn directly so that the formats on the
// wire are certain: binary parameters in, binary results out, compared
// byte for byte with pgx's own encoding.
func TestBinaryExplicitFormats(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	conn := ts.connect(t, pgx.QueryExecModeExec)
	m := conn.TypeMap()
	for _, tc := range wireCases() {
		if tc.want != nil {
			continue // lossy on purpose
		}
		in, err := m.Encode(tc.oid, pgtype.BinaryFormatCode, tc.val, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		res := conn.PgConn().ExecParams(testContext(t), "select $1::"+tc.typ, [][]byte{in}, []uint32{tc.oid}, []int16{1}, []int16{1}).Read()
		if res.Err != nil {
			t.Errorf("%s: %v", tc.typ, res.Err)
			continue
		}
		if res.FieldDescriptions[0].Format != 1 || res.FieldDescriptions[0].DataTypeOID != tc.oid {
			t.Errorf("%s: field %+v", tc.typ, res.FieldDescriptions[0])
		}
		out := res.Rows[0][0]
		dst := tc.dst()
		if err := m.Scan(tc.oid, pgtype.BinaryFormatCode, out, dst); err != nil {
			t.Errorf("%s: scan %x: %v", tc.typ, out, err)
			continue
		}
		if got, w := derefString(dst), derefString(tc.val); got != w {
			t.Errorf("%s: sent %s, got %s", tc.typ, w, got)
		}
		// Fixed-size types must come back exactly as pgx encoded them.
		if tc.oid != types.OIDNumeric && tc.oid != types.OIDJSON && tc.oid != types.OIDInterval && !bytes.Equal(in, out) {
			t.Errorf("%s: sent %x, got %x", tc.typ, in, out)
		}
	}
}
