package expr

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Decimal arithmetic follows PostgreSQL's numeric: +, - and * are exact
// (up to types.DecimalContext's 1000 digits), / rounds to the scale
// PostgreSQL's select_div_scale picks (at least 16 significant digits, at
// least the scale of either operand), and % is exact.

const (
	decMinSigDigits = 16
	decMaxScale     = 1000
)

func decErr(err error) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
}

// scale returns the number of digits after the decimal point of d (0 for
// integers written with a positive exponent).
func scale(d *apd.Decimal) int {
	if d.Exponent < 0 {
		return int(-d.Exponent)
	}
	return 0
}

// pgWeight returns PostgreSQL's base-10000 weight of a non-zero d and the
// value of its first base-10000 digit.
func pgWeight(d *apd.Decimal) (weight int, first int64) {
	adj := int(d.Exponent) + int(d.NumDigits()) - 1 // floor(log10 |d|)
	weight = floorDivInt(adj, 4)
	// The first base-10000 group holds the decimal digits with exponents
	// 4*weight .. 4*weight+3, i.e. the leading adj-4*weight+1 digits.
	lead := adj - 4*weight + 1
	s := d.Coeff.String()
	if len(s) > lead {
		s = s[:lead]
	}
	for _, c := range s {
		first = first*10 + int64(c-'0')
	}
	for i := len(s); i < lead; i++ {
		first *= 10
	}
	return weight, first
}

func floorDivInt(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// divScale is PostgreSQL's select_div_scale.
func divScale(x, y *apd.Decimal) int {
	// A zero has weight 0 and first digit 0 (as in PostgreSQL, where
	// 0 / 3 has scale 20).
	var w1, w2 int
	var f1, f2 int64
	if !x.IsZero() {
		w1, f1 = pgWeight(x)
	}
	if !y.IsZero() {
		w2, f2 = pgWeight(y)
	}
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := decMinSigDigits - qweight*4
	rscale = max(rscale, scale(x), scale(y), 0)
	return min(rscale, decMaxScale)
}

// decQuo divides with PostgreSQL's result scale; y must not be zero.
func decQuo(x, y *apd.Decimal) (*apd.Decimal, error) {
	rscale := divScale(x, y)
	// Enough precision for every integer digit of the quotient plus rscale
	// fraction digits plus guard digits, then round half away from zero.
	intDigits := int(x.Exponent) + int(x.NumDigits()) - (int(y.Exponent) + int(y.NumDigits())) + 2
	prec := max(intDigits, 0) + rscale + 4
	ctx := *types.DecimalContext()
	ctx.Precision = uint32(prec)
	ctx.Rounding = apd.RoundDown
	q := new(apd.Decimal)
	if _, err := ctx.Quo(q, x, y); err != nil {
		return nil, decErr(err)
	}
	return decRound(q, rscale)
}

// decRound rounds d half away from zero to s digits after the point.
func decRound(d *apd.Decimal, s int) (*apd.Decimal, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	ctx := *types.DecimalContext()
	ctx.Rounding = apd.RoundHalfUp
	need := int(d.Exponent) + int(d.NumDigits()) + s + 1
	ctx.Precision = uint32(max(need, int(ctx.Precision)))
	r := new(apd.Decimal)
	if _, err := ctx.Quantize(r, d, -int32(s)); err != nil {
		return nil, decErr(err)
	}
	return r, nil
}

// decTrunc truncates d toward zero to s digits after the point.
func decTrunc(d *apd.Decimal, s int) (*apd.Decimal, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	ctx := *types.DecimalContext()
	ctx.Rounding = apd.RoundDown
	need := int(d.Exponent) + int(d.NumDigits()) + s + 1
	ctx.Precision = uint32(max(need, int(ctx.Precision)))
	r := new(apd.Decimal)
	if _, err := ctx.Quantize(r, d, -int32(s)); err != nil {
		return nil, decErr(err)
	}
	return r, nil
}

// decArith computes x op y for Add, Sub, Mul, Div, Mod, IntDiv; division
// by zero yields ok=false (NULL).
func decArith(op ArithOp, x, y *apd.Decimal) (r *apd.Decimal, ok bool, err error) {
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return decArithSpecial(op, x, y)
	}
	ctx := types.DecimalContext()
	r = new(apd.Decimal)
	switch op {
	case Add:
		_, err = ctx.Add(r, x, y)
	case Sub:
		_, err = ctx.Sub(r, x, y)
	case Mul:
		_, err = ctx.Mul(r, x, y)
	case Div, Mod, IntDiv:
		if y.IsZero() {
			return nil, false, nil
		}
		switch op {
		case Div:
			r, err = decQuo(x, y)
			return r, err == nil, err
		case Mod:
			_, err = ctx.Rem(r, x, y)
		case IntDiv:
			_, err = ctx.QuoInteger(r, x, y)
		}
	}
	if err != nil {
		return nil, false, decErr(err)
	}
	return r, true, nil
}

// decArithSpecial is decArith with a NaN or infinite operand, by
// PostgreSQL's rules: NaN in, NaN out; Inf - Inf, Inf * 0, Inf / Inf and
// Inf % x are NaN (not errors); x / Inf is 0 and x % Inf is x. Division
// and modulo by zero stay ok=false (NULL, or 22012 where strict).
func decArithSpecial(op ArithOp, x, y *apd.Decimal) (*apd.Decimal, bool, error) {
	nan := &apd.Decimal{Form: apd.NaN}
	inf := func(neg bool) *apd.Decimal { return &apd.Decimal{Form: apd.Infinite, Negative: neg} }
	if x.Form == apd.NaN || y.Form == apd.NaN {
		return nan, true, nil
	}
	xInf, yInf := x.Form == apd.Infinite, y.Form == apd.Infinite
	switch op {
	case Add, Sub:
		yNeg := y.Negative != (op == Sub)
		switch {
		case xInf && yInf && x.Negative != yNeg:
			return nan, true, nil
		case xInf:
			return inf(x.Negative), true, nil
		}
		return inf(yNeg), true, nil
	case Mul:
		if (xInf && y.Sign() == 0) || (yInf && x.Sign() == 0) {
			return nan, true, nil
		}
		return inf(x.Negative != y.Negative), true, nil
	case Div, IntDiv:
		switch {
		case y.Form == apd.Finite && y.Sign() == 0:
			return nil, false, nil
		case xInf && yInf:
			return nan, true, nil
		case xInf:
			return inf(x.Negative != y.Negative), true, nil
		}
		return apd.New(0, 0), true, nil
	case Mod:
		switch {
		case y.Form == apd.Finite && y.Sign() == 0:
			return nil, false, nil
		case xInf:
			return nan, true, nil
		}
		return x, true, nil
	}
	return nan, true, nil
}
