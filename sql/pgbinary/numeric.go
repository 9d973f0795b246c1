package pgbinary

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's binary numeric (numeric_send / numeric_recv):
//
//	int16  ndigits   number of base-10000 digits that follow
//	int16  weight    power of 10000 of the first digit
//	uint16 sign      0x0000 +, 0x4000 -, 0xC000 NaN, 0xD000 +Inf, 0xF000 -Inf
//	uint16 dscale    digits shown after the decimal point
//	int16  digits[ndigits], each 0..9999, most significant first
//
// value = sum(digits[i] * 10000^(weight-i)). 12345.678 is
// ndigits=3 weight=1 dscale=3 digits=[1 2345 6780]. Trailing zero digits
// are not sent; zero is ndigits=0.
const (
	numericPos        = 0x0000
	numericNeg        = 0x4000
	numericNaN        = 0xC000
	numericPInf       = 0xD000
	numericNInf       = 0xF000
	numericDScaleMask = 0x3FFF
	numericBase       = 10000
	numericBaseDigits = 4
)

var pow10 = [numericBaseDigits]int{1, 10, 100, 1000}

func appendNumericSpecial(buf []byte, sign uint16) []byte {
	return appendNumericHeader(buf, 0, 0, sign, 0)
}

func appendNumericHeader(buf []byte, ndigits, weight int, sign uint16, dscale int) []byte {
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(ndigits)))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	return binary.BigEndian.AppendUint16(buf, uint16(dscale))
}

// AppendNumeric appends d in binary numeric format. The display scale is the
// decimal's own (-exponent), so 1.50 stays 1.50 and a Uint64 is an integer.
func AppendNumeric(buf []byte, d *apd.Decimal) ([]byte, error) {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return appendNumericSpecial(buf, numericNaN), nil
	case apd.Infinite:
		if d.Negative {
			return appendNumericSpecial(buf, numericNInf), nil
		}
		return appendNumericSpecial(buf, numericPInf), nil
	}
	overflow := func() ([]byte, error) {
		return buf, sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	exp := int(d.Exponent)
	dscale := max(0, -exp)
	if dscale > numericDScaleMask {
		return overflow()
	}
	digits := strings.TrimLeft(d.Coeff.Text(10), "-0")
	if digits == "" {
		return appendNumericHeader(buf, 0, 0, numericPos, dscale), nil
	}
	sign := uint16(numericPos)
	if d.Negative {
		sign = numericNeg
	}
	// Decimal digit j (from the left) stands for 10^p with
	// p = top - j; it lands in base-10000 digit floor(p/4), at
	// position p mod 4 inside it.
	top := len(digits) - 1 + exp
	weight := floorDiv(int64(top), numericBaseDigits)
	low := floorDiv(int64(exp), numericBaseDigits)
	n := int(weight - low + 1)
	if weight > math.MaxInt16 || weight < math.MinInt16 || n > math.MaxInt16 {
		return overflow()
	}
	groups := make([]int, n)
	for j := 0; j < len(digits); j++ {
		p := int64(top - j)
		g := floorDiv(p, numericBaseDigits)
		groups[weight-g] += int(digits[j]-'0') * pow10[p-g*numericBaseDigits]
	}
	for n > 0 && groups[n-1] == 0 {
		n--
	}
	buf = appendNumericHeader(buf, n, int(weight), sign, dscale)
	for _, g := range groups[:n] {
		buf = binary.BigEndian.AppendUint16(buf, uint16(g))
	}
	return buf, nil
}

// DecodeNumeric parses binary numeric with numeric_recv's checks. Digits
// beyond the display scale are truncated, as numeric_recv does, so the
// result has exactly dscale fractional digits.
func DecodeNumeric(b []byte) (*apd.Decimal, bool) {
	if len(b) < 8 {
		return nil, false
	}
	ndigits := int(int16(binary.BigEndian.Uint16(b)))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if ndigits < 0 || len(b) != 8+2*ndigits {
		return nil, false
	}
	switch sign {
	case numericNaN:
		return &apd.Decimal{Form: apd.NaN}, true
	case numericPInf:
		return &apd.Decimal{Form: apd.Infinite}, true
	case numericNInf:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, true
	case numericPos, numericNeg:
	default:
		return nil, false
	}
	if dscale&^numericDScaleMask != 0 {
		return nil, false
	}
	var sb strings.Builder
	sb.Grow(ndigits * numericBaseDigits)
	for i := 0; i < ndigits; i++ {
		g := binary.BigEndian.Uint16(b[8+2*i:])
		if g >= numericBase {
			return nil, false
		}
		sb.WriteByte(byte('0' + g/1000))
		sb.WriteByte(byte('0' + g/100%10))
		sb.WriteByte(byte('0' + g/10%10))
		sb.WriteByte(byte('0' + g%10))
	}
	// The digit string is the coefficient at exponent exp; bring it to
	// exponent -dscale by appending zeros or cutting digits.
	coeff := sb.String()
	exp := numericBaseDigits * (weight - ndigits + 1)
	switch {
	case ndigits == 0:
		coeff = "0"
	case exp > -dscale:
		coeff += strings.Repeat("0", exp+dscale)
	case exp < -dscale:
		cut := -dscale - exp
		if cut >= len(coeff) {
			coeff = "0"
		} else {
			coeff = coeff[:len(coeff)-cut]
		}
	}
	d := new(apd.Decimal)
	if _, ok := d.Coeff.SetString(coeff, 10); !ok {
		return nil, false
	}
	d.Exponent = int32(-dscale)
	d.Negative = sign == numericNeg && d.Coeff.Sign() != 0
	return d, true
}
