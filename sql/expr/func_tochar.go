package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// to_char of a number and to_number, PostgreSQL's number formatting
// (numfmt.go holds the picture parser and processor). As in PostgreSQL,
// each argument type prepares the digits its own way: integers exactly
// (smallint and integer through double precision for EEEE, bigint through
// numeric), numeric rounded half away from zero, real and double
// precision with printf's rounding and at most 6 or 15 significant digits.
// to_char of date/time values is 0A000.

func init() {
	register(&funcDef{2, 2, buildToChar}, "to_char")
	register(&funcDef{2, 2, buildToNumber}, "to_number")
}

// toCharKind is which of PostgreSQL's to_char functions applies.
type toCharKind uint8

const (
	toCharInt4 toCharKind = iota
	toCharInt8
	toCharNumeric
	toCharFloat4
	toCharFloat8
)

func buildToChar(b *Builder, name string, args []Expr) (Expr, error) {
	switch f := args[0].Type().Family; {
	case f == types.Unknown || f == types.Null:
		return nil, &sqlerr.Error{Code: codeAmbiguousFunction,
			Message: "function to_char(unknown, unknown) is not unique",
			Hint:    "Could not choose a best candidate function. You might need to add explicit type casts."}
	case f.IsTime():
		// A date prints as the timestamp at its midnight, as
		// PostgreSQL's implicit cast makes it.
		if err := b.textArg(args, 1); err != nil {
			return nil, err
		}
		fn := newFunc(name, types.TypeUtf8, args, true, func(c *Context, a []types.Value) (types.Value, error) {
			return toCharTime(c, a[0], a[1].Str())
		})
		fn.Deterministic = f != types.TimestampTZ && f != types.Date // they read the session zone
		return fn, nil
	case f == types.Interval || f == types.Time || f == types.TimeTZ:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "to_char(%s, text) is not supported yet", TypeName(args[0].Type()))
	}
	if err := b.numArg(args, 0, types.TypeDecimal); err != nil {
		return nil, err
	}
	if err := b.textArg(args, 1); err != nil {
		return nil, err
	}
	var kind toCharKind
	switch f := args[0].Type().Family; f {
	case types.Int8, types.Int16, types.Int32, types.Uint8, types.Uint16:
		kind = toCharInt4
	case types.Int64, types.Uint32:
		kind = toCharInt8
	case types.Float:
		kind = toCharFloat4
	case types.Double:
		kind = toCharFloat8
	default:
		kind = toCharNumeric
	}
	return newFunc(name, types.TypeUtf8, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		s, err := toChar(kind, a[0], a[1].Str())
		if err != nil {
			return types.Value{}, err
		}
		return types.NewUtf8(s), nil
	}), nil
}

func buildToNumber(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		if err := b.textArg(args, i); err != nil {
			return nil, err
		}
	}
	return newFunc(name, types.TypeDecimal, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		d, err := toNumber(a[0].Str(), a[1].Str())
		if err != nil || d == nil {
			return types.NullValue, err
		}
		return types.NewDecimal(d), nil
	}), nil
}

// toChar formats v with the picture f.
func toChar(kind toCharKind, v types.Value, f string) (string, error) {
	if f == "" {
		return "", nil
	}
	nodes, d, err := parseNumFormat(f)
	if err != nil {
		return "", err
	}
	var number string
	outPreSpaces := 0
	sign := byte('+')
	switch {
	case d.is(nfRoman):
		n, err := romanValue(kind, v)
		if err != nil {
			return "", err
		}
		number = intToRoman(n)
	case d.is(nfEEEE):
		number = eeeeText(kind, v, &d)
	default:
		var digits string
		switch kind {
		case toCharInt4, toCharInt8:
			digits, sign, err = intDigits(kind, v, &d)
		case toCharNumeric:
			digits, sign, err = numericDigits(v.AsDecimal(), &d)
		default:
			digits, sign = floatDigits(kind, v.AsFloat(), &d)
		}
		if err != nil {
			return "", err
		}
		preLen := len(digits)
		if i := strings.IndexByte(digits, '.'); i >= 0 {
			preLen = i
		}
		switch {
		case preLen < d.pre:
			outPreSpaces = d.pre - preLen
		case preLen > d.pre:
			// Too many digits for the picture: '#' in every position.
			digits = strings.Repeat("#", d.pre) + "." + strings.Repeat("#", d.post)
		}
		number = digits
	}
	return numToChar(nodes, d, number, outPreSpaces, sign)
}

// romanValue is v rounded to an integer for RN: numeric and bigint must
// fit an integer (22003), floats round half to even.
func romanValue(kind toCharKind, v types.Value) (int64, error) {
	switch kind {
	case toCharInt4, toCharInt8:
		if kind == toCharInt8 && (v.Int() > math.MaxInt32 || v.Int() < math.MinInt32) {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
		}
		if v.Family().IsUnsigned() {
			return int64(v.Uint()), nil
		}
		return v.Int(), nil
	case toCharNumeric:
		r, err := decRound(v.AsDecimal(), 0)
		if err != nil {
			return 0, err
		}
		n, err := r.Int64()
		if err != nil || r.Form != apd.Finite || n > math.MaxInt32 || n < math.MinInt32 {
			return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
		}
		return n, nil
	}
	x := math.RoundToEven(v.AsFloat())
	if math.IsNaN(x) || x > math.MaxInt32 || x < math.MinInt32 {
		return 0, nil // int_to_roman prints '#'s
	}
	return int64(x), nil
}

// eeeeText is the EEEE form: a blank or '-', the mantissa with post
// digits, e, the exponent's sign and at least two digits; '#'s for NaN
// and infinities.
func eeeeText(kind toCharKind, v types.Value, d *numDesc) string {
	hashes := func() string {
		b := []byte(strings.Repeat("#", d.pre+d.post+6))
		b[0] = ' '
		b[d.pre+1] = '.'
		return string(b)
	}
	var s string
	switch kind {
	case toCharInt4, toCharFloat4, toCharFloat8:
		x := v.AsFloat()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return hashes()
		}
		s = strconv.FormatFloat(x, 'e', d.post, 64)
	default:
		x := v.AsDecimal()
		if x.Form != apd.Finite {
			return hashes()
		}
		s = decimalSci(x, d.post)
	}
	if !strings.HasPrefix(s, "-") {
		s = " " + s
	}
	return s
}

// decimalSci is numeric's scientific form with scale digits after the
// point, rounded half away from zero (PostgreSQL's numeric_out_sci: a
// mantissa that rounds up to 10 stays 10).
func decimalSci(x *apd.Decimal, scale int) string {
	exp := 0
	if !x.IsZero() {
		exp = decAdj(x)
	}
	m := new(apd.Decimal).Set(x)
	m.Exponent -= int32(exp)
	r, err := decRound(m, scale)
	if err != nil {
		r = m
	}
	if r.IsZero() {
		r.Negative = false
	}
	e := strconv.Itoa(abs(exp))
	if len(e) < 2 {
		e = "0" + e
	}
	es := "+"
	if exp < 0 {
		es = "-"
	}
	return r.Text('f') + "e" + es + e
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// intDigits is an integer's digits with d.post zeros after a point; V
// multiplies by 10^multi (integer wraps around as in PostgreSQL's int4
// version, bigint overflow is 22003).
func intDigits(kind toCharKind, v types.Value, d *numDesc) (string, byte, error) {
	var s string
	if v.Family().IsUnsigned() {
		u := v.Uint()
		if d.is(nfMulti) {
			p := uint64(math.Pow10(d.multi))
			if d.multi > 19 || u != 0 && u*p/p != u || u*p > math.MaxInt64 {
				return "", 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
			}
			u *= p
		}
		s = strconv.FormatUint(u, 10)
	} else {
		n := v.Int()
		if d.is(nfMulti) {
			if kind == toCharInt4 {
				n = int64(int32(n) * int32(math.Pow10(d.multi)))
			} else {
				m := math.Pow10(d.multi)
				if m >= 9223372036854775808.0 {
					return "", 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
				}
				p := int64(m)
				r := n * p
				if n != 0 && (r/p != n || n == -1 && p == math.MinInt64) {
					return "", 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
				}
				n = r
			}
		}
		s = strconv.FormatInt(n, 10)
	}
	if d.is(nfMulti) {
		d.pre += d.multi
	}
	sign := byte('+')
	if strings.HasPrefix(s, "-") {
		sign, s = '-', s[1:]
	}
	if d.post > 0 {
		s += "." + strings.Repeat("0", d.post)
	}
	return s, sign, nil
}

// numericDigits is x times 10^multi rounded to d.post digits after the
// point, as numeric prints it.
func numericDigits(x *apd.Decimal, d *numDesc) (string, byte, error) {
	if d.is(nfMulti) {
		m := new(apd.Decimal).Set(x)
		if m.Form == apd.Finite {
			m.Exponent += int32(d.multi)
		}
		x = m
		d.pre += d.multi
	}
	r, err := decRound(x, d.post)
	if err != nil {
		return "", 0, err
	}
	if r.Form == apd.Finite && r.IsZero() {
		r.Negative = false
	}
	s := r.Text('f')
	if r.Form == apd.Finite && r.Exponent > 0 {
		// 1E+3 prints as 1000 with Text('f'); a scale of zero has no point.
		s = strings.TrimSuffix(s, ".")
	}
	if strings.HasPrefix(s, "-") {
		return s[1:], '-', nil
	}
	return s, '+', nil
}

// floatDigits is printf's %.*f of x with at most 15 (double) or 6
// (real) significant digits before and after the point together.
func floatDigits(kind toCharKind, x float64, d *numDesc) (string, byte) {
	maxDigits := 15
	if kind == toCharFloat4 {
		maxDigits = 6
	}
	if d.is(nfMulti) {
		if kind == toCharFloat4 {
			x = float64(float32(x) * float32(math.Pow10(d.multi)))
		} else {
			x *= math.Pow10(d.multi)
		}
		d.pre += d.multi
	}
	preLen := len(cFormatF(math.Abs(x), 0))
	if preLen >= maxDigits {
		d.post = 0
	} else if preLen+d.post > maxDigits {
		d.post = maxDigits - preLen
	}
	s := cFormatF(x, d.post)
	if strings.HasPrefix(s, "-") {
		return s[1:], '-'
	}
	return s, '+'
}

// cFormatF is printf("%.*f", prec, x) as PostgreSQL's own snprintf
// does it: NaN, Infinity and -Infinity spelled out.
func cFormatF(x float64, prec int) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// toNumber reads s under the picture f, as numeric with the picture's
// precision and the scale of the digits read; nil for an empty picture
// (PostgreSQL's NULL).
func toNumber(s, f string) (*apd.Decimal, error) {
	if f == "" {
		return nil, nil
	}
	nodes, d, err := parseNumFormat(f)
	if err != nil {
		return nil, err
	}
	text, scale, err := numFromChar(nodes, d, s)
	if err != nil {
		return nil, err
	}
	v, _, perr := apd.NewFromString(strings.TrimSpace(text))
	if perr != nil || strings.TrimSpace(text) == "" || v.Form != apd.Finite {
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: \"%s\"", text)
	}
	prec := d.pre + d.multi + scale
	if prec < 1 {
		prec = 1
	}
	cv, err := types.CastDecimal(types.Type{Family: types.Decimal, Precision: prec, Scale: scale}, v)
	if err != nil {
		return nil, err
	}
	r := cv.Dec()
	if d.is(nfMulti) {
		// PostgreSQL multiplies by power(10, -multi), whose scale
		// the product keeps.
		p, err := decPower([]*apd.Decimal{apd.New(10, 0), apd.New(-int64(d.multi), 0)})
		if err != nil {
			return nil, err
		}
		m := new(apd.Decimal)
		if _, err := types.DecimalContext().Mul(m, r, p); err != nil {
			return nil, decErr(err)
		}
		r = m
	}
	if r.IsZero() {
		r.Negative = false
	}
	return r, nil
}
