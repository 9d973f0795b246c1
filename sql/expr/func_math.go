package expr

import (
	"math"
	"math/rand/v2"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Numeric functions. abs, sign, round, trunc, floor and ceil keep the kind
// of their argument (integers give Int64 or Uint64, Decimal gives Decimal,
// floating point gives Double); the transcendental functions compute in
// float64 and return Double, except for numeric arguments, which take
// their numeric forms (func_numeric.go). Domain errors (sqrt(-1), ln(0))
// are errors with PostgreSQL's codes, not NULLs.

func init() {
	register(&funcDef{1, 1, buildAbs}, "abs")
	register(&funcDef{1, 1, buildSign}, "sign")
	register(&funcDef{1, 2, buildRounding(roundHalf)}, "round")
	register(&funcDef{1, 2, buildRounding(roundTrunc)}, "trunc", "truncate")
	register(&funcDef{1, 1, buildRounding(roundFloor)}, "floor")
	register(&funcDef{1, 1, buildRounding(roundCeil)}, "ceil", "ceiling")
	register(&funcDef{2, 2, buildMod}, "mod", parser.ModFunc)
	register(&funcDef{1, 1, numericOr(floatFunc(sqrtF), decSqrt, false)}, "sqrt")
	register(&funcDef{1, 1, floatFunc(cbrtF)}, "cbrt")
	register(&funcDef{1, 1, numericOr(floatFunc(expF), decExp, false)}, "exp")
	register(&funcDef{1, 1, numericOr(floatFunc(lnF), decLn, false)}, "ln")
	register(&funcDef{1, 1, numericOr(floatFunc(log10F), decLog10, false)}, "log10")
	register(&funcDef{1, 2, buildLog}, "log")
	register(&funcDef{2, 2, buildPower}, "power", "pow")
	register(&funcDef{1, 1, buildScale("scale")}, "scale")
	register(&funcDef{1, 1, buildScale("min")}, "min_scale")
	register(&funcDef{1, 1, buildScale("trim")}, "trim_scale")
	register(&funcDef{2, 2, numericOr(nil, decDiv, true)}, "div", parser.DivFunc)
	register(&funcDef{1, 1, buildFactorial}, "factorial")
	register(&funcDef{2, 2, buildGcdLcm(false)}, "gcd")
	register(&funcDef{2, 2, buildGcdLcm(true)}, "lcm")
	register(&funcDef{2, 4, buildWidthBucket}, "width_bucket")
	register(&funcDef{2, 2, floatFunc2(func(y, x float64) (float64, error) { return math.Atan2(y, x), nil })}, "atan2")
	for name, f := range map[string]func(float64) float64{
		"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "asin": math.Asin, "acos": math.Acos,
		"atan": math.Atan, "degrees": func(x float64) float64 { return x * 180 / math.Pi },
		"radians": func(x float64) float64 { return x * math.Pi / 180 },
		"cot":     func(x float64) float64 { return 1 / math.Tan(x) },
	} {
		register(&funcDef{1, 1, floatFunc(func(x float64) (float64, error) { return f(x), nil })}, name)
	}
	register(&funcDef{0, 0, func(_ *Builder, name string, args []Expr) (Expr, error) {
		return newFunc(name, types.TypeDouble, args, true, func(*Context, []types.Value) (types.Value, error) {
			return types.NewDouble(math.Pi), nil
		}), nil
	}}, "pi")
	register(&funcDef{0, 0, func(_ *Builder, name string, args []Expr) (Expr, error) {
		f := newFunc(name, types.TypeDouble, args, true, func(*Context, []types.Value) (types.Value, error) {
			return types.NewDouble(rand.Float64()), nil
		})
		f.Deterministic = false
		return f, nil
	}}, "random", "rand")
}

// numResult is the result type of abs/round/... on an argument of type t.
func numResult(t types.Type) types.Type {
	switch f := t.Family; {
	case f.IsUnsigned():
		return types.TypeUint64
	case f.IsInteger():
		return types.TypeInt64
	case f.IsFloat():
		return types.TypeDouble
	case f == types.Decimal:
		return types.TypeDecimal
	}
	return types.TypeDouble
}

func buildAbs(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.numArg(args, 0, types.TypeDecimal); err != nil {
		return nil, err
	}
	// abs keeps an integer's family, as PostgreSQL's abs(int2/int4/int8)
	// do: abs(-32768::int2) is 22003 "smallint out of range".
	t := numResult(args[0].Type())
	if f := args[0].Type().Family; f.IsInteger() {
		t = types.T(f)
	}
	return newFunc(name, t, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		v := a[0]
		switch f := v.Family(); {
		case f.IsInteger():
			x := smFromValue(v)
			r, ok := smNorm(false, x.mag).toFamily(f)
			if !ok {
				return types.Value{}, intOutOfRange(f)
			}
			return r, nil
		case f.IsFloat():
			return types.NewDouble(math.Abs(v.Float())), nil
		}
		return types.NewDecimal(new(apd.Decimal).Abs(v.Dec())), nil
	}), nil
}

func buildSign(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.numArg(args, 0, types.TypeDecimal); err != nil {
		return nil, err
	}
	t := numResult(args[0].Type())
	if t.Family == types.Uint64 {
		t = types.TypeInt64
	}
	return newFunc(name, t, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		v := a[0]
		var s int
		switch f := v.Family(); {
		case f.IsUnsigned():
			if v.Uint() > 0 {
				s = 1
			}
		case f.IsInteger():
			s = int(min(max(v.Int(), -1), 1))
		case f.IsFloat():
			switch x := v.Float(); {
			case math.IsNaN(x):
				return types.NewDouble(x), nil
			case x > 0:
				s = 1
			case x < 0:
				s = -1
			}
			return types.NewDouble(float64(s)), nil
		default:
			return types.NewDecimal(apd.New(int64(v.Dec().Sign()), 0)), nil
		}
		return types.NewInt64(int64(s)), nil
	}), nil
}

type roundMode uint8

const (
	roundHalf roundMode = iota // half away from zero
	roundTrunc
	roundFloor
	roundCeil
)

func buildRounding(mode roundMode) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := b.numArg(args, 0, types.TypeDecimal); err != nil {
			return nil, err
		}
		if len(args) == 2 {
			if err := b.intArg(args, 1); err != nil {
				return nil, err
			}
		}
		res := numResult(args[0].Type())
		return newFunc(name, res, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			digits := int64(0)
			if len(a) == 2 {
				digits = a[1].Int()
				if a[1].Family().IsUnsigned() && a[1].Uint() > math.MaxInt32 {
					digits = math.MaxInt32
				}
			}
			return roundValue(mode, a[0], max(min(digits, decMaxScale), -decMaxScale), res.Family)
		}), nil
	}
}

func roundValue(mode roundMode, v types.Value, digits int64, res types.Family) (types.Value, error) {
	f := v.Family()
	switch {
	case f.IsInteger():
		if digits >= 0 {
			if f.IsUnsigned() {
				return types.NewUint64(v.Uint()), nil
			}
			return types.NewInt64(v.Int()), nil
		}
		d, err := roundDecimal(mode, v.AsDecimal(), int(digits))
		if err != nil {
			return types.Value{}, err
		}
		r, err := types.Cast(types.NewDecimal(d), types.T(res))
		if err != nil {
			return types.Value{}, intOutOfRange(res)
		}
		return r, nil
	case f.IsFloat():
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return types.NewDouble(x), nil
		}
		if digits == 0 {
			switch mode {
			case roundHalf:
				// PostgreSQL's round(float8) is rint(): half to even
				// (round(2.5::float8) is 2, round(-0.5::float8) -0),
				// unlike round(numeric), which goes away from zero.
				return types.NewDouble(math.RoundToEven(x)), nil
			case roundTrunc:
				return types.NewDouble(math.Trunc(x)), nil
			case roundFloor:
				return types.NewDouble(math.Floor(x)), nil
			}
			return types.NewDouble(math.Ceil(x)), nil
		}
		// Round the shortest decimal rendering of x, so round(2.675, 2)
		// is 2.68 as the user reads the number, not 2.67 as its binary
		// approximation would give.
		d := new(apd.Decimal)
		if _, err := d.SetFloat64(x); err != nil {
			return types.NewDouble(x), nil
		}
		r, err := roundDecimal(mode, d, int(digits))
		if err != nil {
			return types.Value{}, err
		}
		y, _ := r.Float64()
		return types.NewDouble(y), nil
	}
	d, err := roundDecimal(mode, v.Dec(), int(digits))
	if err != nil {
		return types.Value{}, err
	}
	return types.NewDecimal(d), nil
}

func roundDecimal(mode roundMode, d *apd.Decimal, digits int) (*apd.Decimal, error) {
	switch mode {
	case roundHalf:
		return decRound(d, digits)
	case roundTrunc:
		return decTrunc(d, digits)
	}
	if d.Form != apd.Finite {
		return d, nil
	}
	r := new(apd.Decimal)
	ctx := types.DecimalContext()
	var err error
	if mode == roundFloor {
		_, err = ctx.Floor(r, d)
	} else {
		_, err = ctx.Ceil(r, d)
	}
	if err != nil {
		return nil, decErr(err)
	}
	return r, nil
}

func buildMod(b *Builder, _ string, args []Expr) (Expr, error) {
	return b.arithExprs(Mod, args[0], args[1])
}

// floatFunc defines a function of one float64.
func floatFunc(f func(float64) (float64, error)) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := b.numArg(args, 0, types.TypeDouble); err != nil {
			return nil, err
		}
		return newFunc(name, types.TypeDouble, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := f(a[0].AsFloat())
			if err != nil {
				return types.Value{}, err
			}
			return types.NewDouble(x), nil
		}), nil
	}
}

func floatFunc2(f func(x, y float64) (float64, error)) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		for i := range args {
			if err := b.numArg(args, i, types.TypeDouble); err != nil {
				return nil, err
			}
		}
		return newFunc(name, types.TypeDouble, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := f(a[0].AsFloat(), a[1].AsFloat())
			if err != nil {
				return types.Value{}, err
			}
			return types.NewDouble(x), nil
		}), nil
	}
}

func floatOverflow(x, y float64) error {
	if math.IsInf(y, 0) && !math.IsInf(x, 0) {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	return nil
}

func sqrtF(x float64) (float64, error) {
	if x < 0 {
		return 0, sqlerr.New(codeInvalidArgumentForPow, "cannot take square root of a negative number")
	}
	return math.Sqrt(x), nil
}

// cbrtFactor is glibc's factor table: 2^(k/3) for k = -2..2. The
// quotients are taken in float64 at run time, as C does: Go's untyped
// constant division would be exact and round differently.
var cbrtFactor = func() [5]float64 {
	cbrt2, sqrCbrt2 := 1.2599210498948731648, 1.5874010519681994748
	return [5]float64{1.0 / sqrCbrt2, 1.0 / cbrt2, 1.0, cbrt2, sqrCbrt2}
}()

// cbrtF is PostgreSQL's cbrt, which calls the C library's cbrt. glibc's
// (sysdeps/ieee754/dbl-64/s_cbrt.c) is not correctly rounded: it gives
// 3.0000000000000004 for 27, where Go's math.Cbrt gives 3. PostgreSQL's
// answers are the reference, so this is glibc's algorithm, step by step:
// a polynomial first guess for the mantissa in [0.5, 1), one Halley step,
// the exponent's remainder applied as a factor of 2^(1/3) or 2^(2/3).
// Each product is rounded to float64 on its own (the float64 conversions
// stop the compiler from fusing multiply-adds), as in C on x86-64.
func cbrtF(x float64) (float64, error) {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x, nil
	}
	factor := &cbrtFactor
	xm, xe := math.Frexp(math.Abs(x))
	u := float64(0.784932344976639262 - float64(0.145263899385486377*xm))
	u = float64(-1.83469277483613086 + float64(u*xm))
	u = float64(2.44693122563534430 + float64(u*xm))
	u = float64(-2.11499494167371287 + float64(u*xm))
	u = float64(1.50819193781584896 + float64(u*xm))
	u = float64(0.354895765043919860 + float64(u*xm))
	t2 := float64(float64(u*u) * u)
	ym := float64(float64(u*float64(t2+float64(2.0*xm))) / float64(float64(2.0*t2)+xm))
	ym = float64(ym * factor[2+xe%3])
	return math.Copysign(math.Ldexp(ym, xe/3), x), nil
}

func expF(x float64) (float64, error) {
	y := math.Exp(x)
	return y, floatOverflow(x, y)
}

func checkLogArg(x float64) error {
	switch {
	case x == 0:
		return sqlerr.New(codeInvalidArgumentForLog, "cannot take logarithm of zero")
	case x < 0:
		return sqlerr.New(codeInvalidArgumentForLog, "cannot take logarithm of a negative number")
	}
	return nil
}

func lnF(x float64) (float64, error) {
	if err := checkLogArg(x); err != nil {
		return 0, err
	}
	return math.Log(x), nil
}

func log10F(x float64) (float64, error) {
	if err := checkLogArg(x); err != nil {
		return 0, err
	}
	return math.Log10(x), nil
}

// buildLog is PostgreSQL's log: log(x) is the base-10 logarithm, log(b, x)
// the base-b one, which PostgreSQL has in numeric only. Since float8 casts
// to numeric only by assignment, not implicitly, PostgreSQL finds no
// log(double precision, ...) and answers 42883; so does PivotDB.
func buildLog(b *Builder, name string, args []Expr) (Expr, error) {
	if len(args) == 1 {
		return numericOr(floatFunc(log10F), decLog10, false)(b, name, args)
	}
	if hasFloat(args) {
		return nil, funcNotExistHint(name, exprTypes(args))
	}
	return numericOr(nil, decLog, true)(b, name, args)
}

// buildPower is power(x, y) and x ^ y.
func buildPower(b *Builder, name string, args []Expr) (Expr, error) {
	return numericOr(floatFunc2(powF), decPower, false)(b, name, args)
}

func powF(x, y float64) (float64, error) {
	switch {
	case x == 0 && y < 0:
		return 0, sqlerr.New(codeInvalidArgumentForPow, "zero raised to a negative power is undefined")
	case x < 0 && y != math.Trunc(y):
		return 0, sqlerr.New(codeInvalidArgumentForPow, "a negative number raised to a non-integer power yields a complex result")
	}
	r := math.Pow(x, y)
	if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	return r, nil
}
