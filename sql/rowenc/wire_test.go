package rowenc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/pgbinary"
	"github.com/pivotdb/pivotdb/sql/types"
)

// typedFields is the oracle of WireEncoder: the row decoded into typed
// values (DecodeRow) and each output column encoded as the server encodes
// a value (Value.AppendText, pgbinary.Append).
func typedFields(t *catalog.Table, key, val []byte, cols []int, bin []bool, oids []uint32) ([]byte, error) {
	row, err := DecodeRow(t, key, val)
	if err != nil {
		return nil, err
	}
	var buf []byte
	for i, c := range cols {
		v := row[c]
		if v.IsNull() {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		if bin[i] {
			if buf, err = pgbinary.Append(buf, oids[i], v); err != nil {
				return nil, err
			}
		} else {
			buf = v.AppendText(buf)
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf, nil
}

// TestWireEncoderMatchesTyped checks, for random tables of every column
// type (1-3 key columns, the rest stored in the value), random rows with
// NULLs, random output columns in both formats, a column added with a
// DEFAULT after the rows were written and a dropped column still in the
// rows, that WireEncoder appends exactly what the typed way does.
func TestWireEncoderMatchesTyped(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 3))
	valueTypes := append(append([]types.Type{}, keyFamilies...), types.T(types.Float), types.T(types.Double),
		types.T(types.Json), types.T(types.Interval), types.TypeBPChar)
	randomVal := func(typ types.Type) types.Value {
		if r.IntN(8) == 0 {
			return types.NullValue
		}
		switch typ.Family {
		case types.Float:
			return types.NewFloat(float64(float32(r.NormFloat64())))
		case types.Double:
			return types.NewDouble([]float64{math.Inf(1), -0.5, r.NormFloat64()}[r.IntN(3)])
		case types.Json:
			return types.NewJson(`{"a": 1}`)
		case types.Interval:
			if r.IntN(2) == 0 {
				return types.NewIntervalParts(int32(r.IntN(30)), int32(r.IntN(40)), r.Int64N(1e12))
			}
			return types.NewInterval(r.Int64N(1e12))
		}
		return randomValue(r, typ)
	}
	for trial := 0; trial < 300; trial++ {
		nkey := 1 + r.IntN(3)
		nval := r.IntN(5)
		tbl := &catalog.Table{ID: uint64(5 + r.IntN(1000))}
		for i := 0; i < nkey+nval; i++ {
			typ := valueTypes[r.IntN(len(valueTypes))]
			if i < nkey {
				typ = keyFamilies[r.IntN(len(keyFamilies))]
				tbl.PrimaryKey = append(tbl.PrimaryKey, i)
			}
			tbl.Columns = append(tbl.Columns, catalog.Column{ID: i + 1, Name: fmt.Sprint("c", i), Type: typ})
		}
		// Rows are written with one more column (dropped before the read)
		// and without the one added later.
		written := *tbl
		written.Columns = append(append([]catalog.Column{}, tbl.Columns...), catalog.Column{ID: 100, Name: "gone", Type: types.TypeUtf8})
		addedType := valueTypes[r.IntN(len(valueTypes))]
		added := randomVal(addedType)
		read := *tbl
		read.Columns = append(append([]catalog.Column{}, tbl.Columns...),
			catalog.Column{ID: 101, Name: "added", Type: addedType, Missing: EncodeMissing(101, added)})
		if added.IsNull() {
			read.Columns[len(read.Columns)-1].Missing = nil
		}
		for rowN := 0; rowN < 20; rowN++ {
			row := make([]types.Value, len(written.Columns))
			for i, c := range written.Columns {
				row[i] = randomVal(c.Type)
			}
			key, val := EncodeKey(&written, row), EncodeValue(nil, &written, row)
			ncols := 1 + r.IntN(len(read.Columns)+1)
			cols := make([]int, ncols)
			bin := make([]bool, ncols)
			oids := make([]uint32, ncols)
			for i := range cols {
				cols[i] = r.IntN(len(read.Columns))
				bin[i] = r.IntN(2) == 0
				oids[i] = read.Columns[cols[i]].Type.OID()
			}
			want, wantErr := typedFields(&read, key, val, cols, bin, oids)
			var enc WireEncoder
			enc.Init(&read, cols, formatCodes(bin), func(i int) uint32 { return oids[i] })
			got, err := enc.AppendRow([]byte("prefix"), key, val)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("seed %d: row %v cols %v bin %v: error %v, typed error %v", seed, row, cols, bin, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !bytes.Equal(got[len("prefix"):], want) || string(got[:len("prefix")]) != "prefix" {
				t.Fatalf("seed %d: row %v cols %v bin %v:\n got %q\nwant %q", seed, row, cols, bin, got, want)
			}
		}
	}
}

// TestWireEncoderCorrupt checks that damaged rows fail with an error.
func TestWireEncoderCorrupt(t *testing.T) {
	tbl := &catalog.Table{ID: 9, PrimaryKey: []int{0}, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.TypeUtf8}, {ID: 2, Name: "v", Type: types.TypeUtf8}, {ID: 3, Name: "n", Type: types.TypeInt64}}}
	row := []types.Value{types.NewUtf8("key"), types.NewUtf8("value"), types.NewInt64(-5)}
	key, val := EncodeKey(tbl, row), EncodeValue(nil, tbl, row)
	oids := []uint32{types.OIDText, types.OIDText, types.OIDInt8}
	var enc WireEncoder
	enc.Init(tbl, []int{0, 1, 2}, nil, func(i int) uint32 { return oids[i] })
	if _, err := enc.AppendRow(nil, key, val); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(key); n++ {
		if _, err := enc.AppendRow(nil, key[:n], val); err == nil {
			t.Errorf("key cut to %d bytes: no error", n)
		}
	}
	// A value cut between two entries is a row with fewer columns.
	for n := 1; n < len(val); n++ {
		_, typedErr := DecodeRow(tbl, key, val[:n])
		if _, err := enc.AppendRow(nil, key, val[:n]); (err == nil) != (typedErr == nil) {
			t.Errorf("value cut to %d bytes: error %v, typed error %v", n, err, typedErr)
		}
	}
}

// BenchmarkWireEncoder compares, for a row of kv (k Int64 key, v Utf8),
// the wire encoding from the stored bytes against decoding into typed
// values and encoding those, the way before it.
func BenchmarkWireEncoder(b *testing.B) {
	tbl := &catalog.Table{ID: 42, Columns: []catalog.Column{
		{ID: 1, Name: "k", Type: types.TypeInt64}, {ID: 2, Name: "v", Type: types.TypeUtf8}}, PrimaryKey: []int{0}}
	row := []types.Value{types.NewInt64(123456), types.NewUtf8("value-0000000000123456")}
	key, val := EncodeKey(tbl, row), EncodeValue(nil, tbl, row)
	for _, bin := range []bool{false, true} {
		bins := []bool{bin, bin}
		oids := []uint32{types.OIDInt8, types.OIDText}
		b.Run(fmt.Sprintf("direct/binary=%v", bin), func(b *testing.B) {
			var enc WireEncoder
			enc.Init(tbl, []int{0, 1}, formatCodes(bins), func(i int) uint32 { return oids[i] })
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var err error
				if buf, err = enc.AppendRow(buf[:0], key, val); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("typed/binary=%v", bin), func(b *testing.B) {
			dec := make([]types.Value, 2)
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				dec[0], dec[1] = types.NullValue, types.NullValue
				if err := DecodeKey(tbl, key, dec); err != nil {
					b.Fatal(err)
				}
				if err := DecodeValue(tbl, val, dec); err != nil {
					b.Fatal(err)
				}
				buf = buf[:0]
				for j, v := range dec {
					if bin {
						buf, _ = pgbinary.Append(buf, oids[j], v)
					} else {
						buf = v.AppendText(buf)
					}
				}
			}
		})
	}
}

func formatCodes(bin []bool) []int16 {
	f := make([]int16, len(bin))
	for i, b := range bin {
		if b {
			f[i] = 1
		}
	}
	return f
}
