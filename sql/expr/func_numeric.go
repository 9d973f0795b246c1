package expr

import (
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The numeric forms of the transcendental functions (sqrt, exp, ln, log,
// log10, power and the postgresql dialect's ^), with PostgreSQL's result
// scales (its numeric.c): each picks a scale giving at least 16
// significant digits and not less than its inputs' scales, computes with
// guard digits and rounds half away from zero to it, so that sqrt(2.0)
// is 1.414213562373095 and 2::numeric ^ 10 is 1024.0000000000000000, as
// there. The functions of numeric scale (scale, min_scale, trim_scale),
// div, gcd, lcm, factorial and width_bucket are here too.
//
// Which form a call takes follows PostgreSQL's function resolution: an
// argument of type numeric and none of a floating-point type pick the
// numeric form; integers alone pick double precision (the preferred type
// of the numeric category), as sqrt(2) is 1.4142135623730951 there.

const (
	// decMaxResultScale is PostgreSQL's NUMERIC_MAX_RESULT_SCALE.
	decMaxResultScale = 2000
	// decMaxWeightDigits bounds the integer digits of a result (numeric
	// holds up to 131072 of them).
	decMaxWeightDigits = 131072
	// decGuard are the extra digits computed beyond those kept.
	decGuard = 10
)

// builderFn builds a function call.
type builderFn func(b *Builder, name string, args []Expr) (Expr, error)

// numericCall reports whether PostgreSQL resolves a call of a function
// with float8 and numeric forms on args to the numeric one.
func numericCall(args []Expr) bool {
	dec := false
	for _, a := range args {
		switch f := a.Type().Family; {
		case f.IsFloat():
			return false
		case f == types.Decimal:
			dec = true
		}
	}
	return dec
}

// numericOr builds the numeric form df of a function when numericCall
// says so (always), and the floating-point form fb otherwise.
func numericOr(fb builderFn, df func(a []*apd.Decimal) (*apd.Decimal, error), always bool) builderFn {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if !always && !numericCall(args) || always && fb != nil && hasFloat(args) {
			return fb(b, name, args)
		}
		for i := range args {
			if err := b.numArg(args, i, types.TypeDecimal); err != nil {
				return nil, err
			}
		}
		return newFunc(name, types.TypeDecimal, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			ds := make([]*apd.Decimal, len(a))
			for i, v := range a {
				ds[i] = v.AsDecimal()
			}
			r, err := df(ds)
			if err != nil {
				return types.Value{}, err
			}
			return types.NewDecimal(r), nil
		}), nil
	}
}

func hasFloat(args []Expr) bool {
	for _, a := range args {
		if a.Type().Family.IsFloat() {
			return true
		}
	}
	return false
}

// decCtx is a context of precision p that rounds half away from zero.
func decCtx(p int) *apd.Context {
	c := *types.DecimalContext()
	c.Precision = uint32(max(p, 1))
	c.Rounding = apd.RoundHalfUp
	return &c
}

// clampScale bounds a result scale as PostgreSQL does (0 to 1000).
func clampScale(s int) int { return min(max(s, 0), decMaxScale) }

// decAdj is floor(log10 |d|) of a non-zero finite d.
func decAdj(d *apd.Decimal) int { return int(d.Exponent) + int(d.NumDigits()) - 1 }

// decZero is zero shown with scale s.
func decZero(s int) *apd.Decimal { return apd.New(0, -int32(s)) }

var (
	decNaN  = &apd.Decimal{Form: apd.NaN}
	decPInf = &apd.Decimal{Form: apd.Infinite}
	decNInf = &apd.Decimal{Form: apd.Infinite, Negative: true}
	decOne  = apd.New(1, 0)
)

func errLogZero() error {
	return sqlerr.New(codeInvalidArgumentForLog, "cannot take logarithm of zero")
}

func errLogNegative() error {
	return sqlerr.New(codeInvalidArgumentForLog, "cannot take logarithm of a negative number")
}

func errOverflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
}

// pgDigits returns d's base-10000 weight and its first two base-10000
// digits (the second 0 when d has one), as PostgreSQL stores numeric.
func pgDigits(d *apd.Decimal) (weight int, d0, d1 int64, n int) {
	adj := decAdj(d)
	weight = floorDivInt(adj, 4)
	// The digits from exponent 4*weight+3 down, in groups of four.
	s := d.Coeff.String()
	lead := adj - 4*weight + 1 // digits of the first group
	pad := func(x string, k int) string {
		for len(x) < k {
			x += "0"
		}
		return x
	}
	group := func(from, k int) (int64, bool) {
		if from >= len(s) {
			return 0, false
		}
		g := s[from:min(from+k, len(s))]
		g = pad(g, k)
		var v int64
		for _, c := range g {
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	d0, _ = group(0, lead)
	n = 1
	// Trailing zero groups do not count as digits in PostgreSQL.
	rest := s[min(lead, len(s)):]
	for len(rest) > 0 && rest[len(rest)-1] == '0' {
		rest = rest[:len(rest)-1]
	}
	if len(rest) > 0 {
		d1, _ = group(lead, 4)
		n = 2
	}
	return weight, d0, d1, n
}

// estimateLnDweight is PostgreSQL's estimate_ln_dweight: the decimal
// weight of ln(d) for d > 0.
func estimateLnDweight(d *apd.Decimal) int {
	if d.Sign() <= 0 {
		return 0
	}
	if d.Cmp(apd.New(9, -1)) >= 0 && d.Cmp(apd.New(11, -1)) <= 0 {
		// Near 1: ln(1+x) ~= x.
		x := new(apd.Decimal)
		if _, err := decCtx(1100).Sub(x, d, decOne); err != nil || x.IsZero() {
			return 0
		}
		return decAdj(x)
	}
	weight, d0, d1, n := pgDigits(d)
	digits := float64(d0)
	dweight := weight * 4
	if n > 1 {
		digits = digits*10000 + float64(d1)
		dweight -= 4
	}
	lnVar := math.Log(digits) + float64(dweight)*2.302585092994046
	return int(math.Log10(math.Abs(lnVar)))
}

// decSqrt is sqrt(numeric).
func decSqrt(a []*apd.Decimal) (*apd.Decimal, error) {
	x := a[0]
	switch {
	case x.Form == apd.NaN:
		return decNaN, nil
	case x.Sign() < 0:
		return nil, sqlerr.New(codeInvalidArgumentForPow, "cannot take square root of a negative number")
	case x.Form == apd.Infinite:
		return decPInf, nil
	}
	w := 0
	if !x.IsZero() {
		w, _, _, _ = pgDigits(x)
	}
	// C's division truncates toward zero, as Go's does.
	sweight := (w+1)*4/2 - 1
	rscale := clampScale(max(decMinSigDigits-sweight, scale(x)))
	if x.IsZero() {
		return decZero(rscale), nil
	}
	intDigits := max(decAdj(x)/2+1, 1)
	return roundGuarded(rscale, func(guard int) (*apd.Decimal, error) {
		r := new(apd.Decimal)
		_, err := decCtx(intDigits+rscale+guard).Sqrt(r, x)
		return r, err
	})
}

// decExp is exp(numeric).
func decExp(a []*apd.Decimal) (*apd.Decimal, error) {
	x := a[0]
	switch {
	case x.Form == apd.NaN:
		return decNaN, nil
	case x.Form == apd.Infinite && x.Negative:
		return apd.New(0, 0), nil
	case x.Form == apd.Infinite:
		return decPInf, nil
	}
	f, _ := x.Float64()
	val := f * 0.434294481903252 // the result's decimal weight
	val = min(max(val, -decMaxResultScale), decMaxResultScale)
	rscale := clampScale(max(decMinSigDigits-int(val), scale(x)))
	return decExpScaled(x, val, rscale)
}

// roundGuarded rounds what compute gives, computed with guard digits
// beyond rscale, half away from zero to rscale digits. When the digits
// past rscale are within the guard's error of exactly half, rounding them
// could go either way, so it computes again with more guard digits (as
// exact rounding needs).
func roundGuarded(rscale int, compute func(guard int) (*apd.Decimal, error)) (*apd.Decimal, error) {
	var r *apd.Decimal
	for guard := decGuard; ; guard *= 4 {
		var err error
		if r, err = compute(guard); err != nil {
			return nil, decErr(err)
		}
		if guard >= 640 || !nearHalf(r, rscale) {
			break
		}
	}
	return decRound(r, rscale)
}

// nearHalf reports whether the digits of d past rscale read 5000...0xx or
// 4999...9xx: too close to half a unit of rscale to round safely.
func nearHalf(d *apd.Decimal, rscale int) bool {
	if d.Form != apd.Finite {
		return false
	}
	k := -int(d.Exponent) - rscale // digits past rscale
	if k < 3 {
		return false
	}
	c := d.Coeff.String()
	for len(c) < k {
		c = "0" + c
	}
	dropped := c[len(c)-k:]
	body := dropped[1 : k-2]
	switch dropped[0] {
	case '5':
		return strings.Trim(body, "0") == ""
	case '4':
		return strings.Trim(body, "9") == ""
	}
	return false
}

// decExpScaled is e^x rounded to rscale digits, val being the decimal
// weight of the result (roughly).
func decExpScaled(x *apd.Decimal, val float64, rscale int) (*apd.Decimal, error) {
	if val >= decMaxWeightDigits {
		return nil, errOverflow()
	}
	if val < -float64(rscale)-2 {
		return decZero(rscale), nil
	}
	return roundGuarded(rscale, func(guard int) (*apd.Decimal, error) {
		r := new(apd.Decimal)
		_, err := decCtx(max(int(val), 0)+1+rscale+guard).Exp(r, x)
		return r, err
	})
}

// checkLogArgDec fails on logarithms of zero and negative numbers.
func checkLogArgDec(x *apd.Decimal) error {
	switch {
	case x.Form == apd.NaN:
		return nil
	case x.Sign() < 0:
		return errLogNegative()
	case x.IsZero():
		return errLogZero()
	}
	return nil
}

// decLn is ln(numeric).
func decLn(a []*apd.Decimal) (*apd.Decimal, error) {
	x := a[0]
	if err := checkLogArgDec(x); err != nil {
		return nil, err
	}
	switch x.Form {
	case apd.NaN:
		return decNaN, nil
	case apd.Infinite:
		return decPInf, nil
	}
	rscale := clampScale(max(decMinSigDigits-estimateLnDweight(x), scale(x)))
	return decLnScaled(x, rscale)
}

// decLnScaled is ln(x) rounded to rscale digits.
func decLnScaled(x *apd.Decimal, rscale int) (*apd.Decimal, error) {
	// ln of a numeric has at most 6 integer digits.
	return roundGuarded(rscale, func(guard int) (*apd.Decimal, error) {
		r := new(apd.Decimal)
		_, err := decCtx(7+rscale+guard).Ln(r, x)
		return r, err
	})
}

// decLog10 is log(numeric) and log10(numeric): log(10, x).
func decLog10(a []*apd.Decimal) (*apd.Decimal, error) {
	return decLog([]*apd.Decimal{apd.New(10, 0), a[0]})
}

// decLog is log(b, x), PostgreSQL's log_var.
func decLog(a []*apd.Decimal) (*apd.Decimal, error) {
	base, x := a[0], a[1]
	if base.Form != apd.Finite || x.Form != apd.Finite {
		if base.Form == apd.NaN || x.Form == apd.NaN {
			return decNaN, nil
		}
		switch {
		case base.Sign() < 0 || x.Sign() < 0:
			return nil, errLogNegative()
		case base.IsZero() || x.IsZero():
			return nil, errLogZero()
		case base.Form == apd.Infinite && x.Form == apd.Infinite:
			return decNaN, nil // Inf/Inf
		case base.Form == apd.Infinite:
			return apd.New(0, 0), nil
		}
		return decPInf, nil
	}
	if err := checkLogArgDec(base); err != nil {
		return nil, err
	}
	if err := checkLogArgDec(x); err != nil {
		return nil, err
	}
	if base.Cmp(decOne) == 0 {
		return nil, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	}
	resultDweight := estimateLnDweight(x) - estimateLnDweight(base)
	rscale := clampScale(max(decMinSigDigits-resultDweight, scale(base), scale(x)))
	// Both logarithms to enough digits for rscale digits of their
	// quotient, whatever its weight.
	return roundGuarded(rscale, func(guard int) (*apd.Decimal, error) {
		prec := rscale + max(resultDweight, 0) + 2*guard + max(-estimateLnDweight(base), 0)
		c := decCtx(prec + 8)
		lb, lx := new(apd.Decimal), new(apd.Decimal)
		if _, err := c.Ln(lb, base); err != nil {
			return nil, err
		}
		if _, err := c.Ln(lx, x); err != nil {
			return nil, err
		}
		q := new(apd.Decimal)
		_, err := c.Quo(q, lx, lb)
		return q, err
	})
}

// decIsInteger reports whether a finite d has no fraction.
func decIsInteger(d *apd.Decimal) bool {
	if d.Exponent >= 0 || d.IsZero() {
		return true
	}
	frac := new(apd.Decimal)
	d.Modf(new(apd.Decimal), frac)
	return frac.IsZero()
}

// decIsOdd reports whether an integral d is odd.
func decIsOdd(d *apd.Decimal) bool {
	i := new(apd.Decimal)
	d.Modf(i, new(apd.Decimal))
	rem := new(apd.Decimal)
	if _, err := decCtx(1100).Rem(rem, i, apd.New(2, 0)); err != nil {
		return false
	}
	return !rem.IsZero()
}

// decPower is power(numeric, numeric) and numeric ^ numeric, with
// PostgreSQL's numeric_power and power_var rules.
func decPower(a []*apd.Decimal) (*apd.Decimal, error) {
	x, y := a[0], a[1]
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return decPowerSpecial(x, y)
	}
	if x.IsZero() && y.Sign() < 0 {
		return nil, sqlerr.New(codeInvalidArgumentForPow, "zero raised to a negative power is undefined")
	}
	if decIsInteger(y) {
		if n, err := y.Int64(); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
			return decPowerInt(x, n)
		}
	}
	if x.IsZero() {
		return decZero(decMinSigDigits), nil
	}
	neg := false
	base := x
	if x.Sign() < 0 {
		if !decIsInteger(y) {
			return nil, sqlerr.New(codeInvalidArgumentForPow, "a negative number raised to a non-integer power yields a complex result")
		}
		neg = decIsOdd(y)
		base = new(apd.Decimal).Abs(x)
	}
	// The result's weight from a low-precision exp * ln(base).
	lnDweight := estimateLnDweight(base)
	lb := new(apd.Decimal)
	if _, err := decCtx(max(8-lnDweight, 0)+8).Ln(lb, base); err != nil {
		return nil, decErr(err)
	}
	lbf, _ := lb.Float64()
	yf, _ := y.Float64()
	val := lbf * yf
	if math.Abs(val) > decMaxResultScale*3.01 {
		if val > 0 {
			return nil, errOverflow()
		}
		return decZero(decMaxScale), nil
	}
	val *= 0.434294481903252
	rscale := clampScale(max(decMinSigDigits-int(val), scale(base), scale(y)))
	// e^(y * ln(base)), ln(base) to enough digits for the result's.
	sig := max(rscale+int(val), 0)
	prod := new(apd.Decimal)
	c := decCtx(sig - lnDweight + 8 + decGuard + 8)
	if _, err := c.Ln(lb, base); err != nil {
		return nil, decErr(err)
	}
	if _, err := c.Mul(prod, lb, y); err != nil {
		return nil, decErr(err)
	}
	r, err := decExpScaled(prod, val, rscale)
	if err != nil {
		return nil, err
	}
	if neg && !r.IsZero() {
		r.Negative = true
	}
	return r, nil
}

// decPowerInt is PostgreSQL's power_var_int: x to an integer power, to
// the scale of x but at least 16 digits.
func decPowerInt(x *apd.Decimal, n int64) (*apd.Decimal, error) {
	rscale := clampScale(max(decMinSigDigits, scale(x)))
	switch {
	case n == 0:
		// 0 ^ 0 is 1 too, as SQL:2003 wants.
		return decRound(apd.New(1, 0), rscale)
	case x.IsZero():
		return decZero(rscale), nil
	}
	// log10 of the result, to check the bounds first.
	f := float64(n) * (math.Log10(decMantissa(x)) + float64(decAdj(x)))
	if f > decMaxWeightDigits {
		return nil, errOverflow()
	}
	if f+1 < -float64(rscale) {
		return decZero(rscale), nil
	}
	absN := n
	if absN < 0 {
		absN = -absN
	}
	return roundGuarded(rscale, func(guard int) (*apd.Decimal, error) {
		digits := max(int(f), 0) + 1 + rscale + guard + int(math.Log(float64(absN))) + 8
		r := new(apd.Decimal)
		_, err := decCtx(digits).Pow(r, x, apd.New(n, 0))
		return r, err
	})
}

// decMantissa is |d| / 10^decAdj(d), in [1, 10).
func decMantissa(d *apd.Decimal) float64 {
	m := new(apd.Decimal).Set(d)
	m.Negative = false
	m.Exponent = -int32(m.NumDigits() - 1)
	f, _ := m.Float64()
	return f
}

// decPowerSpecial is power with a NaN or infinite argument, by POSIX's
// pow(3) rules as PostgreSQL applies them.
func decPowerSpecial(x, y *apd.Decimal) (*apd.Decimal, error) {
	if x.Form == apd.NaN {
		if y.Form == apd.Finite && y.IsZero() {
			return apd.New(1, 0), nil
		}
		return decNaN, nil
	}
	if y.Form == apd.NaN {
		if x.Form == apd.Finite && x.Cmp(decOne) == 0 {
			return apd.New(1, 0), nil
		}
		return decNaN, nil
	}
	sx, sy := x.Sign(), y.Sign()
	if sx == 0 && sy < 0 {
		return nil, sqlerr.New(codeInvalidArgumentForPow, "zero raised to a negative power is undefined")
	}
	if sx < 0 && y.Form == apd.Finite && !decIsInteger(y) {
		return nil, sqlerr.New(codeInvalidArgumentForPow, "a negative number raised to a non-integer power yields a complex result")
	}
	if x.Form == apd.Finite && x.Cmp(decOne) == 0 {
		return apd.New(1, 0), nil
	}
	if sy == 0 {
		return apd.New(1, 0), nil
	}
	if y.Form == apd.Infinite {
		absGtOne := true
		if x.Form == apd.Finite {
			if x.Cmp(apd.New(-1, 0)) == 0 {
				return apd.New(1, 0), nil
			}
			absGtOne = new(apd.Decimal).Abs(x).Cmp(decOne) > 0
		}
		if absGtOne == (sy > 0) {
			return decPInf, nil
		}
		return apd.New(0, 0), nil
	}
	if !x.Negative {
		if sy > 0 {
			return decPInf, nil
		}
		return apd.New(0, 0), nil
	}
	// x is -Infinity, y finite and not zero.
	if sy < 0 {
		return apd.New(0, 0), nil
	}
	if decIsInteger(y) && decIsOdd(y) {
		return decNInf, nil
	}
	return decPInf, nil
}

// buildScale is scale(numeric), min_scale(numeric) (minimal: the digits
// after the point once trailing zeros go) and trim_scale(numeric); NaN
// and the infinities have no scale (NULL), and trim_scale keeps them.
func buildScale(kind string) builderFn {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := b.numArg(args, 0, types.TypeDecimal); err != nil {
			return nil, err
		}
		t := types.TypeInt32
		if kind == "trim" {
			t = types.TypeDecimal
		}
		return newFunc(name, t, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			d := a[0].AsDecimal()
			if d.Form != apd.Finite {
				if kind == "trim" {
					return types.NewDecimal(d), nil
				}
				return types.NullValue, nil
			}
			if kind == "scale" {
				return types.NewInt(types.Int32, int64(scale(d))), nil
			}
			r := trimScale(d)
			if kind == "trim" {
				return types.NewDecimal(r), nil
			}
			return types.NewInt(types.Int32, int64(scale(r))), nil
		}), nil
	}
}

// trimScale is d without trailing zeros after the point.
func trimScale(d *apd.Decimal) *apd.Decimal {
	r := new(apd.Decimal).Set(d)
	if r.IsZero() {
		return apd.New(0, 0)
	}
	ten := apd.NewBigInt(10)
	q, m := new(apd.BigInt), new(apd.BigInt)
	for r.Exponent < 0 {
		q.QuoRem(&r.Coeff, ten, m)
		if m.Sign() != 0 {
			break
		}
		r.Coeff.Set(q)
		r.Exponent++
	}
	return r
}

// decDiv is div(numeric, numeric): the quotient truncated toward zero.
func decDiv(a []*apd.Decimal) (*apd.Decimal, error) {
	x, y := a[0], a[1]
	if x.Form == apd.NaN || y.Form == apd.NaN {
		return decNaN, nil
	}
	if y.Form == apd.Finite && y.IsZero() {
		return nil, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	}
	switch {
	case x.Form == apd.Infinite && y.Form == apd.Infinite:
		return decNaN, nil
	case x.Form == apd.Infinite:
		if x.Negative != y.Negative {
			return decNInf, nil
		}
		return decPInf, nil
	case y.Form == apd.Infinite:
		return apd.New(0, 0), nil
	}
	r := new(apd.Decimal)
	c := decCtx(max(decAdj(x)-decAdj(y)+2, 1) + decGuard)
	if _, err := c.QuoInteger(r, x, y); err != nil {
		return nil, decErr(err)
	}
	// QuoInteger keeps no fraction digits; its exponent is 0 or above.
	return decTrunc(r, 0)
}

// decFactorial is factorial(bigint), numeric as in PostgreSQL.
func buildFactorial(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.intArg(args, 0); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeDecimal, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		n := a[0].Int()
		switch {
		case n < 0:
			return types.Value{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "factorial of a negative number is undefined")
		case n <= 1:
			return types.NewDecimal(apd.New(1, 0)), nil
		case n > 32177:
			return types.Value{}, errOverflow()
		}
		r := new(apd.BigInt).SetInt64(1)
		m := new(apd.BigInt)
		for i := int64(2); i <= n; i++ {
			r.Mul(r, m.SetInt64(i))
		}
		return types.NewDecimal(apd.NewWithBigInt(r, 0)), nil
	}), nil
}

// buildGcdLcm is gcd and lcm of integers (of their common type, 22003
// when the result does not fit) or of numerics (scale of the larger input
// scale).
func buildGcdLcm(lcm bool) builderFn {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		for i := range args {
			if err := b.numArg(args, i, types.TypeInt64); err != nil {
				return nil, err
			}
		}
		t, err := b.commonArgs(name, args, 0)
		if err != nil {
			return nil, err
		}
		if t.Family.IsFloat() {
			return nil, errSignature
		}
		if t.Family == types.Null {
			t = types.TypeInt32
		}
		return newFunc(name, t, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			x, y := a[0].AsDecimal(), a[1].AsDecimal()
			if t.Family == types.Decimal && (x.Form != apd.Finite || y.Form != apd.Finite) {
				if x.Form == apd.NaN || y.Form == apd.NaN {
					return types.NewDecimal(decNaN), nil
				}
				return types.Value{}, sqlerr.New(sqlerr.InvalidParameterValue, "cannot compute %s of infinity", map[bool]string{false: "greatest common divisor", true: "least common multiple"}[lcm])
			}
			s := max(scale(x), scale(y))
			// Scale both to integers, take the gcd of the coefficients.
			xi, yi := decScaledInt(x, s), decScaledInt(y, s)
			g := new(apd.BigInt).GCD(nil, nil, xi, yi)
			r := g
			if lcm {
				if xi.Sign() == 0 || yi.Sign() == 0 {
					r = new(apd.BigInt)
				} else {
					r = new(apd.BigInt).Quo(xi, g)
					r.Mul(r, yi)
					r.Abs(r)
				}
			}
			d := apd.NewWithBigInt(r, -int32(s))
			if t.Family == types.Decimal {
				return types.NewDecimal(d), nil
			}
			v, err := types.Cast(types.NewDecimal(d), t)
			if err != nil {
				return types.Value{}, intOutOfRange(t.Family)
			}
			return v, nil
		}), nil
	}
}

// decScaledInt is |d| * 10^s as an integer (d has at most s fraction
// digits).
func decScaledInt(d *apd.Decimal, s int) *apd.BigInt {
	r := new(apd.BigInt).Abs(&d.Coeff)
	shift := int(d.Exponent) + s
	if shift > 0 {
		p := new(apd.BigInt).Exp(apd.NewBigInt(10), apd.NewBigInt(int64(shift)), nil)
		r.Mul(r, p)
	}
	return r
}

// buildWidthBucket is width_bucket(operand, low, high, count): the bucket
// of operand among count equal-width buckets from low to high (0 below,
// count+1 at or above), in numeric or double precision by the arguments'
// types as in PostgreSQL.
func buildWidthBucket(b *Builder, name string, args []Expr) (Expr, error) {
	switch len(args) {
	case 2:
		return buildWidthBucketArray(b, name, args)
	case 3:
		return nil, errSignature
	}
	dec := numericCall(args[:3])
	t := types.TypeDouble
	if dec {
		t = types.TypeDecimal
	}
	for i := 0; i < 3; i++ {
		if err := b.numArg(args, i, t); err != nil {
			return nil, err
		}
	}
	if err := b.intArg(args, 3); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeInt32, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		count := a[3].Int()
		if a[3].Family().IsUnsigned() && a[3].Uint() > math.MaxInt32 || count > math.MaxInt32 || count < math.MinInt32 {
			return types.Value{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
		}
		if count <= 0 {
			return types.Value{}, errWidthBucket("count must be greater than zero")
		}
		var r int64
		var err error
		if dec {
			r, err = widthBucketDec(a[0].AsDecimal(), a[1].AsDecimal(), a[2].AsDecimal(), count)
		} else {
			r, err = widthBucketFloat(a[0].AsFloat(), a[1].AsFloat(), a[2].AsFloat(), count)
		}
		if err != nil {
			return types.Value{}, err
		}
		if r > math.MaxInt32 {
			return types.Value{}, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
		}
		return types.NewInt(types.Int32, r), nil
	}), nil
}

func errWidthBucket(msg string) error {
	return sqlerr.New("2201G", "%s", msg) // invalid_argument_for_width_bucket_function
}

func widthBucketFloat(x, lo, hi float64, count int64) (int64, error) {
	if math.IsNaN(x) || math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, errWidthBucket("operand, lower bound, and upper bound cannot be NaN")
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, errWidthBucket("lower and upper bounds must be finite")
	}
	switch {
	case lo < hi:
		if x < lo {
			return 0, nil
		}
		if x >= hi {
			return count + 1, nil
		}
		return int64(float64(count)*(x-lo)/(hi-lo)) + 1, nil
	case lo > hi:
		if x > lo {
			return 0, nil
		}
		if x <= hi {
			return count + 1, nil
		}
		return int64(float64(count)*(lo-x)/(lo-hi)) + 1, nil
	}
	return 0, errWidthBucket("lower bound cannot equal upper bound")
}

func widthBucketDec(x, lo, hi *apd.Decimal, count int64) (int64, error) {
	if x.Form == apd.NaN || lo.Form == apd.NaN || hi.Form == apd.NaN {
		return 0, errWidthBucket("operand, lower bound, and upper bound cannot be NaN")
	}
	if lo.Form != apd.Finite || hi.Form != apd.Finite {
		return 0, errWidthBucket("lower and upper bounds must be finite")
	}
	reversed := false
	switch lo.Cmp(hi) {
	case 0:
		return 0, errWidthBucket("lower bound cannot equal upper bound")
	case -1:
		if x.Cmp(lo) < 0 {
			return 0, nil
		}
		if x.Cmp(hi) >= 0 {
			return count + 1, nil
		}
	case 1:
		if x.Cmp(lo) > 0 {
			return 0, nil
		}
		if x.Cmp(hi) <= 0 {
			return count + 1, nil
		}
		reversed = true
	}
	// PostgreSQL's compute_bucket: (x - lo) * count / (hi - lo), the
	// division at its usual scale, plus one, floored.
	c := types.DecimalContext()
	num, den := new(apd.Decimal), new(apd.Decimal)
	var err error
	if !reversed {
		_, err = c.Sub(num, x, lo)
		if err == nil {
			_, err = c.Sub(den, hi, lo)
		}
	} else {
		_, err = c.Sub(num, lo, x)
		if err == nil {
			_, err = c.Sub(den, lo, hi)
		}
	}
	if err == nil {
		_, err = c.Mul(num, num, apd.New(count, 0))
	}
	if err != nil {
		return 0, decErr(err)
	}
	q, err := decQuo(num, den)
	if err != nil {
		return 0, err
	}
	if _, err := c.Add(q, q, decOne); err != nil {
		return 0, decErr(err)
	}
	if _, err := c.Floor(q, q); err != nil {
		return 0, decErr(err)
	}
	return q.Int64()
}

// buildWidthBucketArray is width_bucket(operand, thresholds): how many of
// the thresholds, which must be sorted ascending, are at most operand (a
// binary search, as PostgreSQL's, so unsorted thresholds give what it
// gives).
func buildWidthBucketArray(b *Builder, name string, args []Expr) (Expr, error) {
	if _, err := b.arrayAndElem(args, 1, 0); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeInt32, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		x, arr := a[0], a[1]
		if len(arr.ArrayDims()) > 1 {
			return types.Value{}, sqlerr.New("2202E", "thresholds must be one-dimensional array")
		}
		elems := arr.ArrayElems()
		for _, e := range elems {
			if e.IsNull() {
				return types.Value{}, sqlerr.New(sqlerr.NullValueNotAllowed, "thresholds array must not contain NULLs")
			}
		}
		lo, hi := 0, len(elems)
		for lo < hi {
			mid := (lo + hi) / 2
			if types.Compare(x, elems[mid]) < 0 {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return types.NewInt(types.Int32, int64(lo)), nil
	}), nil
}
