package planner

import (
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// This file turns one comparison of a key column with a value into the
// column's segments, converting the value to the column's type exactly
// (design §6: a constant of another type is never rounded into a wrong
// bound).

// locKind says how a value relates to the values a column can hold.
type locKind uint8

const (
	// locExact: the column holds a value equal to v (loc.v, of the
	// column's family).
	locExact locKind = iota
	// locGap: no column value equals v; loc.below and loc.above are the
	// nearest column values around it (either may be missing when v lies
	// beyond the type's range): int_col vs 2.5 lies between 2 and 3.
	locGap
	// locBetween: no column value equals v, and v itself (loc.v) is used
	// as the position (a decimal with more digits than the column's scale,
	// a timestamp against a date column).
	locBetween
	// locFail: the value cannot be placed among the column's values; the
	// comparison is not turned into a range.
	locFail
)

type loc struct {
	kind         locKind
	v            types.Value
	below, above *types.Value
}

// locate places the non-NULL value v among the values of a key column of
// type t, agreeing with types.Compare (which is what the filter uses).
func locate(t types.Type, v types.Value) loc {
	f, vf := t.Family, v.Family()
	switch {
	case f.IsInteger():
		return locateInt(f, v)
	case f == types.Bool:
		if vf == types.Bool {
			return loc{kind: locExact, v: v}
		}
	case f == types.Decimal:
		return locateDecimal(t, v)
	case f == types.Utf8 || f == types.String:
		// Utf8 and String share their key encoding and compare bytewise.
		if vf.IsStringLike() || vf == types.Unknown {
			switch {
			case vf == f:
				return loc{kind: locExact, v: v}
			case f == types.Utf8:
				return loc{kind: locExact, v: types.NewUtf8(v.Str())}
			}
			return loc{kind: locExact, v: types.NewString(v.Str())}
		}
	case f.IsTime():
		if vf == types.Unknown {
			c, err := types.Cast(v, t)
			if err != nil {
				return loc{kind: locFail}
			}
			v, vf = c, c.Family()
		}
		if !vf.IsTime() {
			break
		}
		// Times of every family are keyed by microseconds, so a value of
		// another time family is a valid position even when the column
		// cannot hold it.
		if c, err := types.Cast(v, t); err == nil && types.Compare(c, v) == 0 {
			return loc{kind: locExact, v: c}
		}
		return loc{kind: locBetween, v: v}
	}
	return loc{kind: locFail}
}

func gap(below, above *types.Value) loc { return loc{kind: locGap, below: below, above: above} }

// intBounds returns the smallest and largest value of an integer family.
func intBounds(f types.Family) (lo, hi types.Value) {
	min, max := types.IntRange(f)
	if f.IsUnsigned() {
		return types.NewUint(f, 0), types.NewUint(f, max)
	}
	return types.NewInt(f, min), types.NewInt(f, int64(max))
}

func locateInt(f types.Family, v types.Value) loc {
	if v.Family() == f {
		return loc{kind: locExact, v: v}
	}
	lo, hi := intBounds(f)
	min, max := types.IntRange(f)
	vf := v.Family()
	switch {
	case vf.IsUnsigned():
		u := v.Uint()
		if u > max {
			return gap(&hi, nil)
		}
		if f.IsUnsigned() {
			return loc{kind: locExact, v: types.NewUint(f, u)}
		}
		return loc{kind: locExact, v: types.NewInt(f, int64(u))}
	case vf.IsInteger() || vf == types.Bool:
		i := v.Int()
		switch {
		case i < min:
			return gap(nil, &lo)
		case i > 0 && uint64(i) > max:
			return gap(&hi, nil)
		case f.IsUnsigned():
			return loc{kind: locExact, v: types.NewUint(f, uint64(i))}
		}
		return loc{kind: locExact, v: types.NewInt(f, i)}
	case vf.IsFloat():
		x := v.Float()
		switch {
		case math.IsNaN(x) || math.IsInf(x, 1):
			// types.Compare puts NaN above every number, as PostgreSQL.
			return gap(&hi, nil)
		case math.IsInf(x, -1):
			return gap(nil, &lo)
		}
		// types.Compare compares an integer with a float through the
		// float's shortest decimal rendering when either is not exact in a
		// float64, and as floats otherwise; both agree with comparing
		// against that decimal, so use it.
		return locateIntDecimal(f, v.AsDecimal(), lo, hi)
	case vf == types.Decimal:
		d := v.Dec()
		switch d.Form {
		case apd.Finite:
			return locateIntDecimal(f, d, lo, hi)
		case apd.Infinite:
			if d.Negative {
				return gap(nil, &lo)
			}
			return gap(&hi, nil)
		}
	}
	return loc{kind: locFail}
}

// locateIntDecimal places a finite decimal among the values of an integer
// family: exactly when it is integral and in range, else between its floor
// and ceiling (clamped to the range).
func locateIntDecimal(f types.Family, d *apd.Decimal, lo, hi types.Value) loc {
	if d.Cmp(lo.AsDecimal()) < 0 {
		return gap(nil, &lo)
	}
	if d.Cmp(hi.AsDecimal()) > 0 {
		return gap(&hi, nil)
	}
	ctx := types.DecimalContext()
	var fl, ce apd.Decimal
	if _, err := ctx.Floor(&fl, d); err != nil {
		return loc{kind: locFail}
	}
	if _, err := ctx.Ceil(&ce, d); err != nil {
		return loc{kind: locFail}
	}
	flv, ok1 := decimalToInt(f, &fl)
	cev, ok2 := decimalToInt(f, &ce)
	if !ok1 || !ok2 {
		return loc{kind: locFail}
	}
	if fl.Cmp(&ce) == 0 {
		return loc{kind: locExact, v: flv}
	}
	below, above := flv, cev
	// The floor of a value above lo is at least lo, and the ceiling of a
	// value below hi at most hi, so both are in range.
	return gap(&below, &above)
}

// decimalToInt converts an integral decimal within f's range to a value of f.
func decimalToInt(f types.Family, d *apd.Decimal) (types.Value, bool) {
	if i, err := d.Int64(); err == nil {
		v, err := types.IntToFamily(f, i)
		return v, err == nil
	}
	u, err := strconv.ParseUint(d.Text('f'), 10, 64)
	if err != nil {
		return types.Value{}, false
	}
	v, err := types.UintToFamily(f, u)
	return v, err == nil
}

func locateDecimal(t types.Type, v types.Value) loc {
	vf := v.Family()
	if !vf.IsNumeric() {
		return loc{kind: locFail}
	}
	if vf.IsFloat() && (math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0)) {
		return loc{kind: locFail}
	}
	d := v.AsDecimal()
	if d.Form != apd.Finite {
		return loc{kind: locFail}
	}
	dv := types.NewDecimal(d)
	if t.Precision == 0 {
		return loc{kind: locExact, v: dv}
	}
	// A Decimal(p,s) column holds values rounded to s digits: a constant
	// with more digits (or out of its precision) equals none of them but is
	// still a valid position, since the key encoding normalises decimals.
	if r, err := types.CastDecimal(t, d); err == nil && r.Dec().Cmp(d) == 0 {
		return loc{kind: locExact, v: r}
	}
	return loc{kind: locBetween, v: dv}
}

// compareSegs returns the segments of a column of type t on which
// `column op v` is TRUE (negNullSafe: `column IS DISTINCT FROM v`), or
// ok=false when v cannot be placed among the column's values.
func compareSegs(t types.Type, op expr.CmpOp, negNullSafe bool, v types.Value) (segs []seg, ok bool) {
	all := []seg{{lo: negInf, hi: posInf}}
	nonNull := []seg{{lo: afterNull, hi: posInf}}
	if v.IsNull() {
		switch {
		case op == expr.NullSafeEQ && negNullSafe:
			return nonNull, true
		case op == expr.NullSafeEQ:
			return []seg{pointSeg(types.NullValue, nil)}, true
		}
		// Every other comparison with NULL is NULL, never TRUE.
		return nil, true
	}
	l := locate(t, v)
	if l.kind == locFail {
		return nil, false
	}
	exact := l.kind == locExact
	switch op {
	case expr.EQ, expr.NullSafeEQ:
		switch {
		case op == expr.NullSafeEQ && negNullSafe && exact:
			return mkSegs(seg{lo: negInf, hi: before(l.v)}, seg{lo: after(l.v), hi: posInf}), true
		case op == expr.NullSafeEQ && negNullSafe:
			return all, true
		case exact:
			return []seg{pointSeg(l.v, nil)}, true
		}
		return nil, true
	case expr.NE:
		if exact {
			return mkSegs(seg{lo: afterNull, hi: before(l.v)}, seg{lo: after(l.v), hi: posInf}), true
		}
		return nonNull, true
	case expr.LT, expr.LE:
		var hi cut
		switch {
		case exact && op == expr.LT:
			hi = before(l.v)
		case exact:
			hi = after(l.v)
		case l.kind == locBetween:
			hi = before(l.v)
		case l.below == nil:
			return nil, true
		default:
			hi = after(*l.below)
		}
		return mkSegs(seg{lo: afterNull, hi: hi}), true
	case expr.GT, expr.GE:
		var lo cut
		switch {
		case exact && op == expr.GT:
			lo = after(l.v)
		case exact:
			lo = before(l.v)
		case l.kind == locBetween:
			lo = after(l.v)
		case l.above == nil:
			return nil, true
		default:
			lo = before(*l.above)
		}
		return mkSegs(seg{lo: lo, hi: posInf}), true
	}
	return nil, false
}

// mkSegs keeps the non-empty segments.
func mkSegs(ss ...seg) []seg {
	out := ss[:0]
	for _, s := range ss {
		if compareCuts(s.lo, s.hi) < 0 {
			out = append(out, s)
		}
	}
	return out
}
