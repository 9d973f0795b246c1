package storage

import (
	"math"
	"testing"
)

// benchValues are one typical value per encoder, shared by the encode and
// decode benchmarks so that their numbers describe the same bytes.
var benchValues = []struct {
	name   string
	encode func([]byte) []byte
	decode func([]byte) ([]byte, error)
}{
	{"Int64", func(b []byte) []byte { return AppendInt64(b, -1234567) },
		func(b []byte) ([]byte, error) { _, rest, err := DecodeInt64(b); return rest, err }},
	{"Uint64", func(b []byte) []byte { return AppendUint64(b, 1234567) },
		func(b []byte) ([]byte, error) { _, rest, err := DecodeUint64(b); return rest, err }},
	{"Float64", func(b []byte) []byte { return AppendFloat64(b, math.Pi) },
		func(b []byte) ([]byte, error) { _, rest, err := DecodeFloat64(b); return rest, err }},
	{"Bytes/16", func(b []byte) []byte { return AppendBytes(b, []byte("user-0000012345@")) },
		func(b []byte) ([]byte, error) { _, rest, err := DecodeBytes(b); return rest, err }},
	{"Bytes/16-escaped", func(b []byte) []byte { return AppendBytes(b, []byte("user\x00000012\x00345")) },
		func(b []byte) ([]byte, error) { _, rest, err := DecodeBytes(b); return rest, err }},
	{"String/16", func(b []byte) []byte { return AppendString(b, "user-0000012345@") },
		func(b []byte) ([]byte, error) { _, rest, err := DecodeString(b); return rest, err }},
	{"Decimal/12", func(b []byte) []byte { return AppendDecimal(b, true, "123456789012", -4) },
		func(b []byte) ([]byte, error) { _, rest, err := DecodeDecimal(b); return rest, err }},
	{"RowKey", func(b []byte) []byte { // (hash Uint64, id Int64, name Utf8) of table 42.
		b = AppendTablePrefix(b, 42)
		b = AppendUint64(b, 0x9ddfea08eb382d69)
		b = AppendInt64(b, 20)
		return AppendString(b, "hello")
	}, func(b []byte) ([]byte, error) {
		_, b, err := DecodeTablePrefix(b)
		if err == nil {
			_, b, err = DecodeUint64(b)
		}
		if err == nil {
			_, b, err = DecodeInt64(b)
		}
		if err == nil {
			_, b, err = DecodeString(b)
		}
		return b, err
	}},
}

func BenchmarkEncode(b *testing.B) {
	for _, v := range benchValues {
		b.Run(v.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				buf = v.encode(buf[:0])
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, v := range benchValues {
		b.Run(v.name, func(b *testing.B) {
			enc := v.encode(nil)
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.decode(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
