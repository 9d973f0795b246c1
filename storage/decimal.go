package storage

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Decimal key encoding.
//
// A finite decimal is Coeff × 10^Exponent. To compare decimals bytewise, the
// encoding first normalises the value to scientific form 0.d₁d₂…dₙ × 10^E with
// d₁ ≠ 0 and dₙ ≠ 0 (leading and trailing zeros dropped; E = Exponent +
// number of digits after dropping leading zeros), so that equal values such as
// 1.0, 1.00 and 10×10⁻¹ get one encoding. Then:
//
//	01 tag, then a class byte:
//	  02  -Infinity
//	  03  negative   varint(^E)  ^pairs…  FF
//	  04  zero
//	  05  positive   varint(E)    pairs…  00
//	  06  +Infinity
//	  07  NaN                              (PostgreSQL: NaN sorts last)
//
// For a positive value a larger E means a larger value, so E comes first, as
// an order-preserving varint (appendOrderedVarint). With E equal, the digit
// strings compare as decimal fractions; they are packed two digits a byte as
// 1 + 10a + b (1..100), the last pair padded with a 0 digit, and terminated by
// 00, which sorts before every pair byte so that 0.12 < 0.123. For a negative
// value everything compares backwards: E is stored complemented (^E, again
// order-preserving), and each pair byte p as FF - p (9B..FE) followed by the
// terminator FF, so that -0.12 > -0.123. This is CockroachDB's decimal key
// encoding in spirit, with a simpler exponent and digit layout.
//
// The special values exist because PostgreSQL's numeric has them; their order
// (-Inf < negatives < 0 < positives < +Inf < NaN) is PostgreSQL's.

// DecimalForm says whether a Decimal is a number or one of the special values.
type DecimalForm uint8

const (
	// DecimalFinite is a number: Coeff × 10^Exponent.
	DecimalFinite DecimalForm = iota
	// DecimalInfinite is +Infinity, or -Infinity when Neg.
	DecimalInfinite
	// DecimalNaN is NaN; Neg is false.
	DecimalNaN
)

// Decimal is a decoded decimal key value. A finite value is Coeff ×
// 10^Exponent, negated when Neg. DecodeDecimal returns it normalised: Coeff has
// no leading or trailing zeros, and zero is {Coeff: "0", Exponent: 0} with Neg
// false.
type Decimal struct {
	Form     DecimalForm
	Neg      bool
	Coeff    string
	Exponent int32
}

// String renders d as "[-]COEFFeEXP", "Infinity", "-Infinity" or "NaN"; it is
// meant for tests and debugging, not for clients.
func (d Decimal) String() string {
	sign := ""
	if d.Neg {
		sign = "-"
	}
	switch d.Form {
	case DecimalInfinite:
		return sign + "Infinity"
	case DecimalNaN:
		return "NaN"
	default:
		return sign + d.Coeff + "e" + strconv.Itoa(int(d.Exponent))
	}
}

// Class bytes, in the order of the values they start.
const (
	decimalNegInf byte = 0x02
	decimalNeg    byte = 0x03
	decimalZero   byte = 0x04
	decimalPos    byte = 0x05
	decimalPosInf byte = 0x06
	decimalNaN    byte = 0x07
)

const (
	// decimalPosEnd terminates the digit pairs of a positive value.
	decimalPosEnd byte = 0x00
	// decimalNegEnd terminates the digit pairs of a negative value.
	decimalNegEnd byte = 0xFF
)

// maxDecimalPadding bounds the zeros DecodeDecimal appends to Coeff when the
// normalised exponent exceeds math.MaxInt32 (possible only for a value that
// was given with trailing zeros and an exponent near math.MaxInt32). It keeps
// a corrupt key from making the decoder allocate gigabytes.
const maxDecimalPadding = 4096

// AppendDecimal appends the finite decimal coeff × 10^exponent, negated when
// neg. coeff is the coefficient's decimal digits, most significant first,
// leading zeros allowed; "" and all-zero strings are zero, whatever neg says.
//
// A coeff with a character other than '0'..'9' is a caller bug (the sql
// package formats coefficients itself), so AppendDecimal panics on it rather
// than return an error on every call.
func AppendDecimal(buf []byte, neg bool, coeff string, exponent int32) []byte {
	digits := strings.TrimLeft(coeff, "0")
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; c < '0' || c > '9' {
			panic(fmt.Sprintf("storage: AppendDecimal: coefficient %q is not a digit string", coeff))
		}
	}
	buf = append(buf, byte(TagValue))
	if digits == "" {
		return append(buf, decimalZero)
	}
	// The scientific exponent of 0.d₁d₂…dₙ × 10^e. Computed in int64, it
	// cannot overflow: a string has fewer than 2⁶³ - 2³¹ bytes.
	e := int64(exponent) + int64(len(digits))
	digits = strings.TrimRight(digits, "0")

	class, end, mask := decimalPos, decimalPosEnd, byte(0)
	if neg {
		class, end, mask = decimalNeg, decimalNegEnd, 0xFF
		e = ^e
	}
	buf = append(buf, class)
	buf = appendOrderedVarint(buf, e)
	for i := 0; i < len(digits); i += 2 {
		pair := 10 * (digits[i] - '0')
		if i+1 < len(digits) {
			pair += digits[i+1] - '0'
		}
		buf = append(buf, (1+pair)^mask) // For negatives, x^0xFF == 0xFF-x.
	}
	return append(buf, end)
}

// AppendDecimalInf appends +Infinity, or -Infinity when neg.
func AppendDecimalInf(buf []byte, neg bool) []byte {
	if neg {
		return append(buf, byte(TagValue), decimalNegInf)
	}
	return append(buf, byte(TagValue), decimalPosInf)
}

// AppendDecimalNaN appends the decimal NaN, which sorts after +Infinity.
func AppendDecimalNaN(buf []byte) []byte {
	return append(buf, byte(TagValue), decimalNaN)
}

// AppendDecimalValue appends d with AppendDecimal, AppendDecimalInf or
// AppendDecimalNaN according to its Form.
func AppendDecimalValue(buf []byte, d Decimal) []byte {
	switch d.Form {
	case DecimalInfinite:
		return AppendDecimalInf(buf, d.Neg)
	case DecimalNaN:
		return AppendDecimalNaN(buf)
	default:
		return AppendDecimal(buf, d.Neg, d.Coeff, d.Exponent)
	}
}

// DecodeDecimal decodes a value written by AppendDecimal, AppendDecimalInf or
// AppendDecimalNaN.
func DecodeDecimal(b []byte) (v Decimal, rest []byte, err error) {
	p, err := decodeValueTag(b)
	if err != nil {
		return Decimal{}, b, err
	}
	if len(p) == 0 {
		return Decimal{}, b, fmt.Errorf("%w: missing Decimal class", ErrCorruptEncoding)
	}
	class, p := p[0], p[1:]
	switch class {
	case decimalNegInf:
		return Decimal{Form: DecimalInfinite, Neg: true}, p, nil
	case decimalPosInf:
		return Decimal{Form: DecimalInfinite}, p, nil
	case decimalNaN:
		return Decimal{Form: DecimalNaN}, p, nil
	case decimalZero:
		return Decimal{Coeff: "0"}, p, nil
	case decimalPos, decimalNeg:
	default:
		return Decimal{}, b, fmt.Errorf("%w: unknown Decimal class 0x%02x", ErrCorruptEncoding, class)
	}
	neg := class == decimalNeg
	e, p, err := decodeOrderedVarint(p)
	if err != nil {
		return Decimal{}, b, err
	}
	end, mask := decimalPosEnd, byte(0)
	if neg {
		e, end, mask = ^e, decimalNegEnd, 0xFF
	}
	// AppendDecimal writes e = exponent + digits with exponent ≥ MinInt32 and
	// at least one digit. Rejecting smaller values here also keeps e - n below
	// from overflowing.
	if e <= math.MinInt32 {
		return Decimal{}, b, fmt.Errorf("%w: Decimal exponent %d out of range", ErrCorruptEncoding, e)
	}

	n := 0
	for n < len(p) && p[n] != end {
		n++
	}
	if n == len(p) {
		return Decimal{}, b, fmt.Errorf("%w: unterminated Decimal", ErrCorruptEncoding)
	}
	if n == 0 {
		return Decimal{}, b, fmt.Errorf("%w: Decimal without digits", ErrCorruptEncoding)
	}
	digits := make([]byte, 0, 2*n)
	for _, c := range p[:n] {
		pair := c ^ mask
		if pair < 1 || pair > 100 {
			return Decimal{}, b, fmt.Errorf("%w: bad Decimal digit pair 0x%02x", ErrCorruptEncoding, c)
		}
		pair--
		digits = append(digits, '0'+pair/10, '0'+pair%10)
	}
	p = p[n+1:]
	// The last pair may carry a padding zero; anything more means the encoder
	// did not normalise, and so the bytes are not an encoding at all.
	if digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if digits[0] == '0' || digits[len(digits)-1] == '0' {
		return Decimal{}, b, fmt.Errorf("%w: Decimal digits not normalised", ErrCorruptEncoding)
	}

	exp := e - int64(len(digits))
	switch {
	case exp < math.MinInt32:
		return Decimal{}, b, fmt.Errorf("%w: Decimal exponent %d out of range", ErrCorruptEncoding, exp)
	case exp > math.MaxInt32:
		// The value was written with trailing zeros that its exponent cannot
		// absorb; give them back.
		pad := exp - math.MaxInt32
		if pad > maxDecimalPadding {
			return Decimal{}, b, fmt.Errorf("%w: Decimal exponent %d out of range", ErrCorruptEncoding, exp)
		}
		digits = append(digits, strings.Repeat("0", int(pad))...)
		exp = math.MaxInt32
	}
	return Decimal{Form: DecimalFinite, Neg: neg, Coeff: string(digits), Exponent: int32(exp)}, p, nil
}

// appendOrderedVarint appends v in a variable-length form whose bytes compare
// like the values: a header byte that orders by sign and length, then the
// magnitude's significant bytes big-endian.
//
//	v ≥ 0:  0x80+n, then v in n bytes               (0 is the lone byte 0x80)
//	v < 0:  0x7F-n, then ^m in n bytes, where m = ^v = -v-1 is n bytes long
//	                                                (-1 is the lone byte 0x7F)
//
// A longer non-negative number is larger and a longer negative one smaller, so
// the header orders values of different lengths; within one length the bytes
// do (negatives store the complement of m, which orders like v).
func appendOrderedVarint(buf []byte, v int64) []byte {
	u, header, mask := uint64(v), byte(0x80), uint64(0)
	if v < 0 {
		u, mask = uint64(^v), ^uint64(0)
	}
	n := 0
	for x := u; x != 0; x >>= 8 {
		n++
	}
	if v < 0 {
		header = 0x7F - byte(n)
	} else {
		header += byte(n)
	}
	buf = append(buf, header)
	for i := n - 1; i >= 0; i-- {
		buf = append(buf, byte((u^mask)>>(8*i)))
	}
	return buf
}

// decodeOrderedVarint decodes appendOrderedVarint, accepting only its minimal
// form.
func decodeOrderedVarint(b []byte) (int64, []byte, error) {
	if len(b) == 0 {
		return 0, b, fmt.Errorf("%w: missing varint", ErrCorruptEncoding)
	}
	h := b[0]
	neg := h < 0x80
	n := int(h) - 0x80
	if neg {
		n = 0x7F - int(h)
	}
	if n < 0 || n > 8 || len(b) < 1+n {
		return 0, b, fmt.Errorf("%w: bad varint header 0x%02x", ErrCorruptEncoding, h)
	}
	var u uint64
	for _, c := range b[1 : 1+n] {
		if neg {
			c = ^c
		}
		u = u<<8 | uint64(c)
	}
	// Minimal form: the most significant stored byte of the magnitude is not
	// zero. (A zero there would make two encodings of one value, and the
	// longer one would sort wrongly.)
	if n > 0 && u>>(8*(n-1)) == 0 {
		return 0, b, fmt.Errorf("%w: non-minimal varint", ErrCorruptEncoding)
	}
	if neg {
		if u > math.MaxInt64 {
			return 0, b, fmt.Errorf("%w: varint out of range", ErrCorruptEncoding)
		}
		return ^int64(u), b[1+n:], nil
	}
	if u > math.MaxInt64 {
		return 0, b, fmt.Errorf("%w: varint out of range", ErrCorruptEncoding)
	}
	return int64(u), b[1+n:], nil
}
