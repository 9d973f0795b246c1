package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/pivotdb/pivotdb/sql/types"
)

// The variance and standard deviation aggregates: var_samp, var_pop,
// stddev_samp, stddev_pop (PostgreSQL's variance and stddev are the
// sample ones; the dialect front spells them so, as TiDB's grammar would
// read them as MySQL's population ones). Integer and float inputs give
// Double, computed with Welford's method; Decimal inputs give Decimal,
// computed exactly from the sums with PostgreSQL's division scale. The
// sample forms are NULL for fewer than two inputs; every form is NULL
// without input.

type varAgg struct {
	samp, sqrt bool
	n          int64
	// Welford's running mean and sum of squared deviations (float input).
	mean, m2 float64
	// Exact sums (Decimal input).
	dec        bool
	sum, sumSq apd.Decimal
}

func newVarAgg(name string, dec bool) *varAgg {
	return &varAgg{samp: name == "var_samp" || name == "stddev_samp", sqrt: name == "stddev_samp" || name == "stddev_pop", dec: dec}
}

func (a *varAgg) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	a.n++
	if a.dec {
		d := v.AsDecimal()
		ctx := types.DecimalContext()
		if _, err := ctx.Add(&a.sum, &a.sum, d); err != nil {
			return decErr(err)
		}
		sq := new(apd.Decimal)
		if _, err := ctx.Mul(sq, d, d); err != nil {
			return decErr(err)
		}
		if _, err := ctx.Add(&a.sumSq, &a.sumSq, sq); err != nil {
			return decErr(err)
		}
		return nil
	}
	var x float64
	switch f := v.Family(); {
	case f.IsInteger():
		x = float64(v.Int())
		if f.IsUnsigned() {
			x = float64(v.Uint())
		}
	case f.IsFloat():
		x = v.Float()
	default:
		x, _ = v.AsDecimal().Float64()
	}
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
	return nil
}

func (a *varAgg) Result() (types.Value, error) {
	if a.n == 0 || a.samp && a.n == 1 {
		return types.NullValue, nil
	}
	div := a.n
	if a.samp {
		div--
	}
	if !a.dec {
		r := math.Max(a.m2/float64(div), 0)
		if a.sqrt {
			r = math.Sqrt(r)
		}
		return types.NewDouble(r), nil
	}
	// (n·Σx² − (Σx)²) / (n·div)
	ctx := types.DecimalContext()
	num, t := new(apd.Decimal), new(apd.Decimal)
	if _, err := ctx.Mul(num, apd.New(a.n, 0), &a.sumSq); err != nil {
		return types.Value{}, decErr(err)
	}
	if _, err := ctx.Mul(t, &a.sum, &a.sum); err != nil {
		return types.Value{}, decErr(err)
	}
	if _, err := ctx.Sub(num, num, t); err != nil {
		return types.Value{}, decErr(err)
	}
	if num.Negative {
		num.SetInt64(0)
	}
	q, err := decQuo(num, apd.New(a.n*div, 0))
	if err != nil {
		return types.Value{}, err
	}
	if a.sqrt {
		scale := int(-q.Exponent)
		r := new(apd.Decimal)
		c := *ctx
		c.Precision = uint32(max(int(q.NumDigits()), 1) + scale + 8)
		if _, err := c.Sqrt(r, q); err != nil {
			return types.Value{}, decErr(err)
		}
		if q, err = decRound(r, max(scale, 0)); err != nil {
			return types.Value{}, err
		}
	}
	return types.NewDecimal(q), nil
}
