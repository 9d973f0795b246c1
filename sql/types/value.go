package types

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/big"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Value is one SQL datum. The zero Value is NULL.
type Value struct {
	fam Family
	st  Style // how a date, time or interval prints (style.go); in padding
	i   int64 // also a Float's or Double's IEEE bits (fl), to keep Value small
	s   string
	d   *apd.Decimal
	a   *arrayData // an Array's payload (array.go)
}

// NullValue is the SQL NULL.
var NullValue = Value{}

// Constructors.

func NewBool(b bool) Value {
	if b {
		return Value{fam: Bool, i: 1}
	}
	return Value{fam: Bool}
}

// NewInt returns a signed integer value of family f (one of Int8..Int64).
// The caller guarantees that i fits f.
func NewInt(f Family, i int64) Value { return Value{fam: f, i: i} }

// NewInt64 returns an Int64 value.
func NewInt64(i int64) Value { return Value{fam: Int64, i: i} }

// NewUint returns an unsigned integer value of family f (Uint8..Uint64).
func NewUint(f Family, u uint64) Value { return Value{fam: f, i: int64(u)} }

// NewUint64 returns a Uint64 value.
func NewUint64(u uint64) Value { return Value{fam: Uint64, i: int64(u)} }

// NewDouble returns a Double value.
func NewDouble(f float64) Value { return Value{fam: Double, i: int64(math.Float64bits(f))} }

// NewFloat returns a Float (32-bit) value; f is rounded to float32.
func NewFloat(f float64) Value {
	return Value{fam: Float, i: int64(math.Float64bits(float64(float32(f))))}
}

// fl returns a Float's or Double's value.
func (v Value) fl() float64 { return math.Float64frombits(uint64(v.i)) }

// NewDecimal returns a Decimal value. d must not be mutated afterwards.
// As in PostgreSQL's numeric, the value has no negative zero and no
// negative scale: -0.0 is 0.0, and 1E+3 is 1000, so that 1E+3 * 1.0 is
// 1000.0 (a product's scale is the sum of the operands').
func NewDecimal(d *apd.Decimal) Value {
	if d != nil && d.Form == apd.Finite && (d.Exponent > 0 || d.Negative && d.IsZero()) {
		d = pgNumeric(d)
	}
	return Value{fam: Decimal, d: d}
}

// pgNumeric returns a copy of d with a non-negative scale and a zero
// without sign.
func pgNumeric(d *apd.Decimal) *apd.Decimal {
	r := new(apd.Decimal).Set(d)
	if r.Exponent > 0 {
		ctx := apd.BaseContext.WithPrecision(uint32(int64(r.NumDigits()) + int64(r.Exponent) + 1))
		if _, err := ctx.Quantize(r, r, 0); err != nil {
			return d
		}
	}
	if r.IsZero() {
		r.Negative = false
	}
	return r
}

// NewUtf8 returns a Utf8 (text) value.
func NewUtf8(s string) Value { return Value{fam: Utf8, s: s} }

// NewString returns a String (bytes) value.
func NewString(b string) Value { return Value{fam: String, s: b} }

// NewJson returns a Json value holding the given JSON text.
func NewJson(s string) Value { return Value{fam: Json, s: s} }

// NewDate returns a Date value, days since the Unix epoch.
func NewDate(days int64) Value { return Value{fam: Date, i: days} }

// NewDatetime returns a Datetime value, seconds since the Unix epoch.
func NewDatetime(secs int64) Value { return Value{fam: Datetime, i: secs} }

// NewTimestamp returns a Timestamp value, microseconds since the Unix epoch.
func NewTimestamp(micros int64) Value { return Value{fam: Timestamp, i: micros} }

// NewInterval returns an Interval value of microseconds (no months or
// days: YQL's Interval; NewIntervalParts makes PostgreSQL's).
func NewInterval(micros int64) Value { return Value{fam: Interval, i: micros} }

// NewUnknown returns an untyped string literal: its type is decided by the
// context it is used in, as PostgreSQL does for 'quoted' constants.
func NewUnknown(s string) Value { return Value{fam: Unknown, s: s} }

// Accessors.

func (v Value) IsNull() bool      { return v.fam == Null }
func (v Value) Family() Family    { return v.fam }
func (v Value) Bool() bool        { return v.i != 0 }
func (v Value) Int() int64        { return v.i }
func (v Value) Uint() uint64      { return uint64(v.i) }
func (v Value) Float() float64    { return v.fl() }
func (v Value) Str() string       { return v.s }
func (v Value) Dec() *apd.Decimal { return v.d }

// AsFloat returns a numeric value as float64.
func (v Value) AsFloat() float64 {
	switch {
	case v.fam.IsUnsigned():
		return float64(uint64(v.i))
	case v.fam.IsInteger(), v.fam == Bool:
		return float64(v.i)
	case v.fam.IsFloat():
		return v.fl()
	case v.fam == Decimal:
		f, _ := v.d.Float64()
		return f
	}
	return math.NaN()
}

// AsBigInt returns an integer value as a big.Int (exact for every family).
func (v Value) AsBigInt() *big.Int {
	if v.fam.IsUnsigned() {
		return new(big.Int).SetUint64(uint64(v.i))
	}
	return big.NewInt(v.i)
}

// Compare orders two non-NULL values of comparable families: numbers with
// numbers (exactly, across signed, unsigned, decimal and float), strings with
// strings, times with times. NULL sorts before every value, as in keys.
// Incomparable families order by family so that sorting never panics; the
// executor type-checks comparisons before they run.
func Compare(a, b Value) int {
	if a.fam == Null || b.fam == Null {
		switch {
		case a.fam == b.fam:
			return 0
		case a.fam == Null:
			return -1
		}
		return 1
	}
	if a.fam == b.fam {
		if a.fam == Array || a.fam == Record {
			return compareArrays(a, b)
		}
		if a.fam == Enum {
			return compareFloat(a.fl(), b.fl())
		}
		if a.fam == Interval {
			return compareIntervals(a, b)
		}
		return compareSame(a, b)
	}
	an, bn := a.fam.IsNumeric() || a.fam == Bool, b.fam.IsNumeric() || b.fam == Bool
	if an && bn {
		return compareNumeric(a, b)
	}
	if a.fam.IsStringLike() || a.fam == Unknown {
		if b.fam.IsStringLike() || b.fam == Unknown {
			return strings.Compare(a.s, b.s)
		}
	}
	if a.fam.IsTime() && b.fam.IsTime() {
		return cmp.Compare(a.micros(), b.micros())
	}
	return cmp.Compare(a.fam, b.fam)
}

// compareDecimals orders numeric values as PostgreSQL and the key
// encoding (storage/decimal.go) do: NaN equals NaN and sorts after every
// other value, +Infinity included.
func compareDecimals(a, b *apd.Decimal) int {
	an := a.Form == apd.NaN || a.Form == apd.NaNSignaling
	bn := b.Form == apd.NaN || b.Form == apd.NaNSignaling
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return a.Cmp(b)
}

// micros returns a time value as microseconds since the epoch.
func (v Value) micros() int64 {
	switch v.fam {
	case Date:
		if IsInfinite(v.i) {
			return v.i // ±infinity maps to itself (infinity.go)
		}
		return v.i * 86400 * 1e6
	case Datetime:
		return v.i * 1e6
	}
	return v.i
}

// Micros returns a Date, Datetime or Timestamp as microseconds since the
// epoch (the common unit for comparing and doing arithmetic on times).
func (v Value) Micros() int64 { return v.micros() }

func compareSame(a, b Value) int {
	switch {
	case a.fam.IsUnsigned():
		return cmp.Compare(uint64(a.i), uint64(b.i))
	case a.fam.IsFloat():
		return compareFloat(a.fl(), b.fl())
	case a.fam == Decimal:
		return compareDecimals(a.d, b.d)
	case a.fam.IsStringLike() || a.fam == Unknown || a.fam == Uuid:
		return strings.Compare(a.s, b.s)
	}
	return cmp.Compare(a.i, b.i)
}

// compareFloat orders floats with NaN greater than every number, as
// PostgreSQL does, so that sorting is total.
func compareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

func compareNumeric(a, b Value) int {
	if a.fam.IsFloat() || b.fam.IsFloat() {
		if a.fam == Decimal || b.fam == Decimal || !isExactInFloat(a) || !isExactInFloat(b) {
			// Compare exactly through decimals unless NaN/Inf is involved.
			af, bf := a.AsFloat(), b.AsFloat()
			if math.IsNaN(af) || math.IsNaN(bf) || math.IsInf(af, 0) || math.IsInf(bf, 0) {
				return compareFloat(af, bf)
			}
			return a.AsDecimal().Cmp(b.AsDecimal())
		}
		return compareFloat(a.AsFloat(), b.AsFloat())
	}
	if a.fam == Decimal || b.fam == Decimal {
		return compareDecimals(a.AsDecimal(), b.AsDecimal())
	}
	// Integers (and Bool) of different signedness.
	au, bu := a.fam.IsUnsigned(), b.fam.IsUnsigned()
	switch {
	case au && !bu:
		if b.i < 0 {
			return 1
		}
		return cmp.Compare(uint64(a.i), uint64(b.i))
	case !au && bu:
		if a.i < 0 {
			return -1
		}
		return cmp.Compare(uint64(a.i), uint64(b.i))
	}
	return cmp.Compare(a.i, b.i)
}

// isExactInFloat reports whether an integer value converts to float64 exactly.
func isExactInFloat(v Value) bool {
	switch {
	case v.fam.IsUnsigned():
		return uint64(v.i) < 1<<53
	case v.fam.IsInteger():
		return v.i > -(1<<53) && v.i < 1<<53
	}
	return true
}

// AsDecimal returns a numeric value as a decimal (exact for integers and
// decimals; the shortest exact rendering for floats).
func (v Value) AsDecimal() *apd.Decimal {
	switch {
	case v.fam == Decimal:
		return v.d
	case v.fam.IsUnsigned():
		d := new(apd.Decimal)
		d.Coeff.SetUint64(uint64(v.i))
		return d
	case v.fam.IsInteger() || v.fam == Bool:
		return apd.New(v.i, 0)
	case v.fam.IsFloat():
		d := new(apd.Decimal)
		if _, err := d.SetFloat64(v.fl()); err != nil {
			return apd.New(0, 0)
		}
		return d
	}
	return apd.New(0, 0)
}

// Equal reports whether two values are equal for grouping and DISTINCT:
// NULLs are equal to each other here (unlike in `=`).
func Equal(a, b Value) bool { return Compare(a, b) == 0 }

// CompareRows compares two rows column by column.
func CompareRows(a, b []Value) int {
	for i := range a {
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// AppendGroupKey appends a byte string that is equal for two values exactly
// when Equal says they are, for hashing in GROUP BY, DISTINCT and hash joins.
// Numbers of different families that compare equal get the same key.
func AppendGroupKey(buf []byte, v Value) []byte {
	switch {
	case v.fam == Null:
		return append(buf, 0)
	case v.fam.IsNumeric() || v.fam == Bool:
		if v.fam.IsFloat() && (math.IsNaN(v.fl()) || math.IsInf(v.fl(), 0)) {
			buf = append(buf, 2)
			return append(buf, []byte(formatFloat(v.fl(), 64))...)
		}
		d := v.AsDecimal()
		var r apd.Decimal
		r.Reduce(d)
		buf = append(buf, 1)
		return append(buf, r.Text('f')...)
	case v.fam.IsStringLike() || v.fam == Unknown:
		buf = append(buf, 3)
		buf = append(buf, v.s...)
		return append(buf, 0, 0xff)
	case v.fam == Array:
		return appendArrayGroupKey(buf, v)
	case v.fam == Enum:
		buf = append(buf, 9)
		return binary.BigEndian.AppendUint64(buf, uint64(v.i))
	case v.fam == Uuid:
		buf = append(buf, 6)
		return append(buf, v.s...)
	case v.fam == Interval:
		// The span, as compareIntervals orders: '1 day' = '24 hours'.
		days, rest := v.IntervalSpan()
		buf = append(buf, 7)
		buf = binary.BigEndian.AppendUint64(buf, uint64(days))
		return binary.BigEndian.AppendUint64(buf, uint64(rest))
	case v.fam.IsTime():
		buf = append(buf, 4)
		m := v.micros()
		return append(buf, byte(m>>56), byte(m>>48), byte(m>>40), byte(m>>32), byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
	}
	buf = append(buf, 5, byte(v.fam))
	m := v.i
	return append(buf, byte(m>>56), byte(m>>48), byte(m>>40), byte(m>>32), byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
}

// GroupKey is AppendGroupKey for a whole row.
func GroupKey(row []Value) string {
	var buf bytes.Buffer
	b := buf.AvailableBuffer()
	for _, v := range row {
		b = AppendGroupKey(b, v)
	}
	return string(b)
}
