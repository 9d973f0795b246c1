package types

import (
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// AppendText must append exactly what Text returns, after whatever the
// buffer held, for every family (the fast paths and the fallback).
func TestAppendTextMatchesText(t *testing.T) {
	vals := []Value{
		NewBool(true), NewBool(false),
		NewInt(Int8, -128), NewInt(Int16, 32767), NewInt(Int32, math.MinInt32), NewInt64(0), NewInt64(math.MinInt64), NewInt64(math.MaxInt64),
		NewUint(Uint8, 255), NewUint(Uint32, math.MaxUint32), NewUint64(math.MaxUint64), NewUint64(0),
		NewUtf8(""), NewUtf8("héllo, wörld"), NewJson(`{"a": [1, 2]}`), NewUnknown("x"),
		NewString(""), NewString("\x00\x01\xfe\xff abc"),
		NewDouble(1.5), NewDouble(math.Inf(-1)), NewFloat(0.1), NewDecimal(apd.New(-12345, -3)),
		NewDate(19000), NewTimestamp(1700000000123456), NewTimestampTZ(-1), NewInterval(90061000001),
		NewUuid([16]byte{0xde, 0xad, 0xbe, 0xef, 15: 1}),
		NewArray(Type{Family: Int64}, []Value{NewInt64(1), NullValue, NewInt64(-3)}),
	}
	for _, v := range vals {
		got := string(v.AppendText([]byte("prefix:")))
		if want := "prefix:" + v.Text(); got != want {
			t.Errorf("%v (%v): AppendText gave %q, Text %q", v, v.Family(), got, want)
		}
	}
}

func BenchmarkAppendText(b *testing.B) {
	vals := []Value{NewInt64(1234567890), NewUtf8("value-0000000000001234"), NewBool(true), NewString("\x01\x02\x03\x04")}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = buf[:0]
		for _, v := range vals {
			buf = v.AppendText(buf)
		}
	}
}
