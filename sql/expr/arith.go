package expr

import (
	"math"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// ArithOp is a binary arithmetic operator.
type ArithOp uint8

const (
	Add ArithOp = iota
	Sub
	Mul
	Div
	Mod
	// IntDiv is MySQL's DIV: the quotient truncated to an integer.
	IntDiv
)

var arithOpNames = [...]string{Add: "+", Sub: "-", Mul: "*", Div: "/", Mod: "%", IntDiv: "DIV"}

func (op ArithOp) String() string { return arithOpNames[op] }

// Arith is L op R. Typ is the result type decided by ArithType; Eval
// dispatches on it:
//
//	integers        exact integer arithmetic in the family inttypes.go
//	                decides, 22003 when the result does not fit it; /
//	                truncates toward zero, % has the sign of the dividend
//	Double          IEEE arithmetic on the operands converted to float64
//	Decimal         apd arithmetic (decimal.go)
//	Interval        interval ± interval, interval * or / number,
//	                time - time
//	Date/Timestamp  time ± interval, date ± integer days
//
// Division or modulo by zero is NULL for every type (design §3.1; SQLite
// and YQL agree), never an error — unless Strict (sql_dialect postgresql),
// when it is 22012 "division by zero" as in PostgreSQL.
type Arith struct {
	Op     ArithOp
	L, R   Expr
	Typ    types.Type
	Strict bool
}

// NewArith type-checks L op R and returns the node, or 42883 when the
// operator does not exist for the operand types.
func NewArith(op ArithOp, l, r Expr) (*Arith, error) {
	t, ok := ArithType(op, l.Type(), r.Type())
	if !ok {
		if op == Add && l.Type().Family == types.Time && r.Type().Family == types.Time {
			// PostgreSQL casts a time to interval implicitly, so time +
			// interval and interval + time both apply: ambiguous, not
			// missing.
			return nil, opNotUnique(op.String(), l.Type(), r.Type())
		}
		return nil, opNotExist(op.String(), l.Type(), r.Type())
	}
	return &Arith{Op: op, L: l, R: r, Typ: t}, nil
}

func (e *Arith) Type() types.Type { return e.Typ }

func (e *Arith) String() string {
	return operand(e.L) + " " + e.Op.String() + " " + operand(e.R)
}

func (e *Arith) Eval(c *Context, row Row) (types.Value, error) {
	l, err := e.L.Eval(c, row)
	if err != nil || l.IsNull() {
		return types.NullValue, err
	}
	r, err := e.R.Eval(c, row)
	if err != nil || r.IsNull() {
		return types.NullValue, err
	}
	if e.Strict && (e.Op == Div || e.Op == Mod || e.Op == IntDiv) && isZero(r) && !isNaNDecimal(l) {
		return types.NullValue, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	}
	return arithIn(e.Op, l, r, e.Typ.Family, c.zone())
}

// isNaNDecimal reports whether v is numeric NaN, which PostgreSQL
// divides by zero without an error (NaN / 0 is NaN).
func isNaNDecimal(v types.Value) bool {
	return v.Family() == types.Decimal && v.Dec().Form == apd.NaN
}

// isZero reports whether a numeric divisor is zero (either sign for
// floating point).
func isZero(v types.Value) bool {
	f := v.Family()
	switch {
	case f.IsInteger():
		return smFromValue(v).mag == 0
	case f.IsFloat():
		return v.AsFloat() == 0
	case f == types.Decimal:
		return v.AsDecimal().IsZero()
	}
	return false
}

// ArithType returns the result type of l op r, or false when there is no
// such operator. Unknown operands must have been resolved by the caller; a
// Null operand takes the other operand's type.
func ArithType(op ArithOp, l, r types.Type) (types.Type, bool) {
	lf, rf := l.Family, r.Family
	if lf == types.Null && rf == types.Null {
		return types.TypeNull, true
	}
	if lf == types.Null {
		lf = rf
	}
	if rf == types.Null {
		rf = lf
	}
	if t, valid, ok := timeOfDayArithType(op, lf, rf); ok {
		return t, valid
	}
	switch {
	case lf.IsNumeric() && rf.IsNumeric():
		if op == IntDiv {
			if lf.IsUnsigned() && rf.IsUnsigned() {
				return types.TypeUint64, true
			}
			return types.TypeInt64, true
		}
		return numericResult(lf, rf), true
	case lf == types.Interval && rf == types.Interval:
		return types.TypeInterval, op == Add || op == Sub
	case lf == types.Interval && rf.IsNumeric():
		return types.TypeInterval, op == Mul || op == Div
	case lf.IsNumeric() && rf == types.Interval:
		return types.TypeInterval, op == Mul
	case lf.IsTime() && rf == types.Interval:
		return timeResult(lf), op == Add || op == Sub
	case lf == types.Interval && rf.IsTime():
		return timeResult(rf), op == Add
	case lf.IsTime() && rf.IsTime():
		return types.TypeInterval, op == Sub
	case lf == types.Date && rf.IsInteger():
		return types.T(types.Date), op == Add || op == Sub
	case lf.IsInteger() && rf == types.Date:
		return types.T(types.Date), op == Add
	}
	return types.Type{}, false
}

// numericResult is the family of arithmetic on two numeric families:
// floating point wins (Double, also for Float op Float, so that results
// keep double precision), then Decimal, then integers by intResult
// (inttypes.go): PostgreSQL's widths, YDB-like rules for unsigned.
func numericResult(a, b types.Family) types.Type {
	switch {
	case a.IsFloat() || b.IsFloat():
		return types.TypeDouble
	case a == types.Decimal || b == types.Decimal:
		return types.TypeDecimal
	}
	return types.T(intResult(a, b))
}

func arith(op ArithOp, l, r types.Value, res types.Family) (types.Value, error) {
	return arithIn(op, l, r, res, time.UTC)
}

// arithIn is arith in a session's time zone: a timestamptz ± an interval
// with months or days moves the wall clock in that zone.
func arithIn(op ArithOp, l, r types.Value, res types.Family, zone *time.Location) (types.Value, error) {
	lf, rf := l.Family(), r.Family()
	if v, ok, err := timeOfDayArith(op, l, r); ok {
		return v, err
	}
	switch {
	case res.IsInteger():
		if !lf.IsInteger() || !rf.IsInteger() {
			// IntDiv of non-integers: truncate the exact quotient.
			return intDivNonInt(l, r, res)
		}
		return intArith(op, l, r, res)
	case res == types.Double || res == types.Float:
		return floatArith(op, l.AsFloat(), r.AsFloat())
	case res == types.Decimal:
		d, ok, err := decArith(op, l.AsDecimal(), r.AsDecimal())
		if err != nil || !ok {
			return types.NullValue, err
		}
		return types.NewDecimal(d), nil
	case res == types.Interval:
		return intervalArith(op, l, r)
	case res == types.Timestamp || res == types.TimestampTZ || res == types.Date:
		return timeArith(op, l, r, zone)
	}
	return types.Value{}, sqlerr.New(sqlerr.InternalError, "expr: arithmetic %v %s %v with result %v", lf, op, rf, res)
}

func intArith(op ArithOp, l, r types.Value, res types.Family) (types.Value, error) {
	a, b := smFromValue(l), smFromValue(r)
	var x smInt
	ok := true
	switch op {
	case Add:
		x, ok = smAdd(a, b)
	case Sub:
		x, ok = smSub(a, b)
	case Mul:
		x, ok = smMul(a, b)
	case Div, IntDiv:
		if b.mag == 0 {
			return types.NullValue, nil
		}
		x = smQuo(a, b)
	case Mod:
		if b.mag == 0 {
			return types.NullValue, nil
		}
		x = smRem(a, b)
	}
	if ok {
		var v types.Value
		if v, ok = x.toFamily(res); ok {
			return v, nil
		}
	}
	return types.Value{}, intOutOfRange(res)
}

func intDivNonInt(l, r types.Value, res types.Family) (types.Value, error) {
	if l.Family().IsFloat() || r.Family().IsFloat() {
		b := r.AsFloat()
		if b == 0 {
			return types.NullValue, nil
		}
		q := math.Trunc(l.AsFloat() / b)
		v, err := types.Cast(types.NewDouble(q), types.T(res))
		if err != nil {
			return types.Value{}, intOutOfRange(res)
		}
		return v, nil
	}
	d, ok, err := decArith(IntDiv, l.AsDecimal(), r.AsDecimal())
	if err != nil || !ok {
		return types.NullValue, err
	}
	v, err := types.Cast(types.NewDecimal(d), types.T(res))
	if err != nil {
		return types.Value{}, intOutOfRange(res)
	}
	return v, nil
}

func floatArith(op ArithOp, a, b float64) (types.Value, error) {
	var x float64
	switch op {
	case Add:
		x = a + b
	case Sub:
		x = a - b
	case Mul:
		x = a * b
	case Div:
		if b == 0 {
			return types.NullValue, nil
		}
		x = a / b
	case Mod:
		if b == 0 {
			return types.NullValue, nil
		}
		x = math.Mod(a, b)
	}
	return types.NewDouble(x), nil
}

const microsPerDay = 86400 * 1e6

func intervalOutOfRange() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
}

func timestampOutOfRange() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
}

// checkedMicros adds or subtracts microsecond counts, failing on overflow.
func checkedMicros(op ArithOp, a, b int64) (int64, bool) {
	sa, sb := smFromValue(types.NewInt64(a)), smFromValue(types.NewInt64(b))
	if op == Sub {
		sb = smNorm(!sb.neg, sb.mag)
	}
	x, ok := smAdd(sa, sb)
	if !ok {
		return 0, false
	}
	v, ok := x.toFamily(types.Int64)
	return v.Int(), ok
}

func intervalArith(op ArithOp, l, r types.Value) (types.Value, error) {
	lf, rf := l.Family(), r.Family()
	switch {
	case lf == types.Interval && rf == types.Interval:
		sign := int64(1)
		if op == Sub {
			sign = -1
		}
		return types.AddIntervals(l, r, sign)
	case lf.IsTime() && rf.IsTime():
		if l.IsInfiniteTime() || r.IsInfiniteTime() {
			return types.Value{}, types.InfiniteSubtractError("timestamps")
		}
		m, ok := checkedMicros(Sub, l.Micros(), r.Micros())
		if !ok {
			return types.Value{}, intervalOutOfRange()
		}
		// PostgreSQL's timestamp_mi: whole days as days, the rest as
		// time (justify_hours), so '2024-01-02' - '2024-01-01 12:00' is
		// '12:00:00' and a two-day gap prints '2 days'.
		return types.JustifyHours(types.NewInterval(m))
	}
	// Interval times or divided by a number.
	iv, n := l, r
	if rf == types.Interval {
		iv, n = r, l
	}
	f := n.AsFloat()
	if op == Div {
		if f == 0 {
			return types.NullValue, nil
		}
		return types.DivInterval(iv, f)
	}
	if months, days, us := iv.IntervalParts(); months == 0 && days == 0 && n.Family().IsInteger() {
		// Exact for microseconds alone (YQL's Interval).
		v, err := intArith(Mul, types.NewInt64(us), n, types.Int64)
		if err != nil {
			return types.Value{}, intervalOutOfRange()
		}
		return types.NewInterval(v.Int()), nil
	}
	return types.MulInterval(iv, f)
}

func timeArith(op ArithOp, l, r types.Value, zone *time.Location) (types.Value, error) {
	lf, rf := l.Family(), r.Family()
	if lf == types.Interval {
		// interval + time
		l, r, lf, rf = r, l, rf, lf
	}
	if rf == types.Interval {
		if l.IsInfiniteTime() {
			// ±infinity plus anything stays itself, as in PostgreSQL.
			if lf == types.TimestampTZ {
				return types.NewTimestampTZ(l.Micros()), nil
			}
			return types.NewTimestamp(l.Micros()), nil
		}
		sign := int64(1)
		if op == Sub {
			sign = -1
		}
		loc := time.UTC
		if lf == types.TimestampTZ {
			loc = zone
		}
		m, err := types.AddIntervalMicros(l.Micros(), r, sign, loc)
		if err != nil {
			return types.Value{}, err
		}
		if types.IsInfinite(m) {
			return types.Value{}, timestampOutOfRange()
		}
		if lf == types.TimestampTZ {
			return types.NewTimestampTZ(m), nil
		}
		return types.NewTimestamp(m), nil
	}
	// Date ± integer days.
	d, n := l, r
	if lf != types.Date {
		d, n = r, l
	}
	if d.IsInfiniteTime() {
		return d, nil
	}
	v, err := intArith(op, types.NewInt64(d.Int()), n, types.Int64)
	if err != nil || v.Int() > math.MaxInt64/int64(microsPerDay) || v.Int() < math.MinInt64/int64(microsPerDay) {
		return types.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range")
	}
	return types.NewDate(v.Int()), nil
}

// UnaryOp is a unary arithmetic operator.
type UnaryOp uint8

const (
	Neg UnaryOp = iota
	Plus
)

// Unary is -E or +E. Negating an integer keeps a signed integer's family
// (-(-2^31) on Int32 is 22003, as in PostgreSQL) and gives an unsigned one
// the signed family twice as wide (negResult); +E is E.
type Unary struct {
	Op  UnaryOp
	E   Expr
	Typ types.Type
}

// UnaryType returns the result type of op applied to t.
func UnaryType(op UnaryOp, t types.Type) (types.Type, bool) {
	f := t.Family
	switch {
	case f == types.Null:
		return types.TypeNull, true
	case op == Plus && (f.IsNumeric() || f == types.Interval):
		return t, true
	case f.IsInteger():
		return types.T(negResult(f)), true
	case f.IsFloat():
		return types.TypeDouble, true
	case f == types.Decimal:
		return types.TypeDecimal, true
	case f == types.Interval:
		return types.TypeInterval, true
	}
	return types.Type{}, false
}

func (e *Unary) Type() types.Type { return e.Typ }

func (e *Unary) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil || v.IsNull() || e.Op == Plus {
		return v, err
	}
	f := v.Family()
	switch {
	case f.IsInteger():
		return intArith(Sub, types.NewInt64(0), v, e.Typ.Family)
	case f.IsFloat():
		return types.NewDouble(-v.Float()), nil
	case f == types.Decimal:
		d := v.Dec()
		if d.IsZero() {
			return v, nil
		}
		return types.NewDecimal(new(apd.Decimal).Neg(d)), nil
	case f == types.Interval:
		return types.NegateInterval(v)
	}
	return types.Value{}, opNotExist1("-", types.T(f))
}

func (e *Unary) String() string {
	if e.Op == Plus {
		return "+" + operand(e.E)
	}
	return "-" + operand(e.E)
}

// timeResult is the type of a time ± interval: timestamptz stays
// timestamptz (months and days move the wall clock in the session's time
// zone, the rest is added to the instant, as in PostgreSQL), every other
// time becomes a timestamp.
func timeResult(f types.Family) types.Type {
	if f == types.TimestampTZ {
		return types.TypeTimestampTZ
	}
	return types.TypeTimestamp
}
