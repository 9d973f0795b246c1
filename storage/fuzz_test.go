package storage

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every decoder. A decoder must never
// panic; it either fails with ErrCorruptEncoding or returns a value and a
// rest that is a suffix of its input, such that re-encoding the value
// reproduces exactly the bytes it consumed (decoders accept only canonical
// encodings). Run it with: go test -fuzz FuzzDecode ./storage/
func FuzzDecode(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		AppendNull(nil),
		AppendMax(nil),
		AppendBool(nil, true),
		AppendInt64(nil, math.MinInt64),
		AppendUint64(nil, 42),
		AppendFloat64(nil, math.NaN()),
		AppendFloat64(nil, -1.5),
		AppendBytes(nil, []byte("a\x00\xffb")),
		AppendDecimal(nil, true, "12345", -3),
		AppendDecimal(nil, false, "1000", math.MaxInt32-2),
		AppendDecimalInf(nil, true),
		AppendDecimalNaN(nil),
		AppendInt64(AppendTablePrefix(nil, 7), 20),
		appendOrderedVarint(nil, -300),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// consumed checks the decoder contract for one decoder's result.
		consumed := func(name string, rest []byte, err error, reencode func() []byte) {
			if err != nil {
				if !errors.Is(err, ErrCorruptEncoding) {
					t.Fatalf("%s(%x): error %v does not wrap ErrCorruptEncoding", name, b, err)
				}
				return
			}
			if len(rest) > len(b) || !bytes.Equal(rest, b[len(b)-len(rest):]) {
				t.Fatalf("%s(%x): rest %x is not a suffix of the input", name, b, rest)
			}
			if got, want := reencode(), b[:len(b)-len(rest)]; !bytes.Equal(got, want) {
				t.Fatalf("%s(%x): value re-encodes as %x, but consumed %x", name, b, got, want)
			}
		}

		tag, rest, err := DecodeTag(b)
		consumed("DecodeTag", rest, err, func() []byte { return []byte{byte(tag)} })
		_ = PeekNull(b)
		rest, err = DecodeNull(b)
		consumed("DecodeNull", rest, err, func() []byte { return AppendNull(nil) })
		rest, err = DecodeMax(b)
		consumed("DecodeMax", rest, err, func() []byte { return AppendMax(nil) })

		bv, rest, err := DecodeBool(b)
		consumed("DecodeBool", rest, err, func() []byte { return AppendBool(nil, bv) })
		iv, rest, err := DecodeInt64(b)
		consumed("DecodeInt64", rest, err, func() []byte { return AppendInt64(nil, iv) })
		uv, rest, err := DecodeUint64(b)
		consumed("DecodeUint64", rest, err, func() []byte { return AppendUint64(nil, uv) })
		fv, rest, err := DecodeFloat64(b)
		consumed("DecodeFloat64", rest, err, func() []byte { return AppendFloat64(nil, fv) })
		sv, rest, err := DecodeBytes(b)
		consumed("DecodeBytes", rest, err, func() []byte { return AppendBytes(nil, sv) })
		ss, rest, err := DecodeString(b)
		consumed("DecodeString", rest, err, func() []byte { return AppendString(nil, ss) })
		dv, rest, err := DecodeDecimal(b)
		consumed("DecodeDecimal", rest, err, func() []byte { return AppendDecimalValue(nil, dv) })
		vv, rest, err := decodeOrderedVarint(b)
		consumed("decodeOrderedVarint", rest, err, func() []byte { return appendOrderedVarint(nil, vv) })
		id, rest, err := DecodeTablePrefix(b)
		consumed("DecodeTablePrefix", rest, err, func() []byte { return TablePrefix(id) })

		_ = FormatKey(b)
		_ = PrefixEnd(b)
	})
}
