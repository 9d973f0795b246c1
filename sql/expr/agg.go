package expr

import (
	"math/big"
	"slices"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Aggregates. NULL inputs are ignored (count(*) counts rows); with no
// non-NULL input every aggregate but count and total returns NULL.
// DISTINCT drops repeated inputs first, with types.AppendGroupKey's notion
// of equality (so 1 and 1.0 are the same input).
//
// Result types:
//
//	count(*), count(x), count_if(c)    Int64
//	sum of Int8, Int16, Int32          Int64 (PostgreSQL: sum(int2/int4)
//	                                   is bigint; 22003 when the sum does
//	                                   not fit; it is accumulated in 128
//	                                   bits, so only the final value
//	                                   matters)
//	sum of Int64                       Decimal (PostgreSQL: sum(int8) is
//	                                   numeric, so it never overflows)
//	sum of unsigned integers           Uint64 (YDB; 22003 likewise)
//	sum of Float/Double, Decimal,      Double, Decimal, Interval
//	Interval
//	avg of integers or floats          Double (YQL and SQLite; exact sum,
//	                                   one division)
//	avg of Decimal, Interval           Decimal (PostgreSQL's scale), Interval
//	total(x)                           Double, 0 for no input (SQLite)
//	min, max                           the argument's type
//	group_concat(x [, sep]),           Utf8 (String for String input);
//	string_agg(x, sep)                 sep defaults to ","
//	bool_and, bool_or, every           Bool
//	var_samp, var_pop, stddev_samp,    Double, Decimal for Decimal input
//	stddev_pop                         (agg_var.go)

// AggFunc accumulates one group.
type AggFunc interface {
	// Add feeds one input value. For count(*) the value is ignored.
	Add(v types.Value) error
	// Result returns the aggregate of the values added so far. It may be
	// called again after more Adds (window functions keep a running
	// aggregate); values it returned earlier must not change.
	Result() (types.Value, error)
}

// AggSpec describes one aggregate call; New makes an accumulator per group.
type AggSpec struct {
	Name     string // canonical lower-case name
	Distinct bool
	Star     bool // count(*)
	Arg      Expr // nil for count(*)
	Typ      types.Type
	// Separator joins group_concat and string_agg values.
	Separator string
	// Order is the call's ORDER BY (aggorder.go): the inputs are fed to
	// the accumulator in this order.
	Order []AggOrder
	// Filter is FILTER (WHERE ...) of array_agg (see aggorder.go); the
	// FILTER of the other aggregates is folded into Arg.
	Filter Expr
	// GroupingMasks, for grouping(...) (Name "grouping"), is its value in
	// each grouping set of the Aggregate node; it reads no input.
	GroupingMasks []int64
}

var aggNames = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "total": true,
	"group_concat": true, "string_agg": true, "bool_and": true, "bool_or": true,
	"every": true, "count_if": true, "array_agg": true,
	"var_samp": true, "var_pop": true, "stddev_samp": true, "stddev_pop": true,
}

// IsAggregate reports whether name (lower case) is an aggregate function.
func IsAggregate(name string) bool { return aggNames[name] }

// NewAggSpec validates an aggregate call and computes its result type.
func NewAggSpec(name string, distinct, star bool, arg Expr) (*AggSpec, error) {
	name = strings.ToLower(name)
	if name == "every" {
		name = "bool_and"
	}
	s := &AggSpec{Name: name, Distinct: distinct, Star: star, Arg: arg, Separator: ","}
	if !IsAggregate(name) {
		return nil, sqlerr.New(codeUndefinedFunction, "function %s does not exist", name)
	}
	if star {
		if name != "count" || distinct {
			return nil, sqlerr.New(sqlerr.SyntaxError, "%s(*) is not allowed", name)
		}
		s.Arg = nil
		s.Typ = types.TypeInt64
		return s, nil
	}
	if arg == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s() requires an argument", name)
	}
	t := arg.Type()
	f := t.Family
	bad := func() (*AggSpec, error) {
		return nil, funcNotExist(name, []types.Type{t})
	}
	switch name {
	case "count":
		s.Typ = types.TypeInt64
	case "count_if":
		if f != types.Bool && f != types.Null {
			return bad()
		}
		s.Typ = types.TypeInt64
	case "sum":
		switch {
		case f.IsUnsigned():
			s.Typ = types.TypeUint64
		case f == types.Int64:
			s.Typ = types.TypeDecimal
		case f.IsInteger(), f == types.Null:
			s.Typ = types.TypeInt64
		case f.IsFloat():
			s.Typ = types.TypeDouble
		case f == types.Decimal, f == types.Interval:
			s.Typ = types.T(f)
		default:
			return bad()
		}
	case "avg":
		switch {
		case f.IsInteger(), f.IsFloat(), f == types.Null:
			s.Typ = types.TypeDouble
		case f == types.Decimal, f == types.Interval:
			s.Typ = types.T(f)
		default:
			return bad()
		}
	case "var_samp", "var_pop", "stddev_samp", "stddev_pop":
		switch {
		case f.IsInteger(), f.IsFloat(), f == types.Null:
			s.Typ = types.TypeDouble
		case f == types.Decimal:
			s.Typ = types.TypeDecimal
		default:
			return bad()
		}
	case "total":
		if !f.IsNumeric() && f != types.Null {
			return bad()
		}
		s.Typ = types.TypeDouble
	case "min", "max":
		if f == types.Json {
			return bad()
		}
		s.Typ = t
		if f == types.Unknown {
			s.Typ = types.TypeUtf8
		}
	case "group_concat", "string_agg":
		s.Typ = types.TypeUtf8
		if f == types.String {
			s.Typ = types.TypeString
		}
	case "bool_and", "bool_or":
		if f != types.Bool && f != types.Null {
			return bad()
		}
		s.Typ = types.TypeBool
	case "array_agg":
		switch f {
		case types.Unknown, types.Null:
			s.Typ = types.ArrayOf(types.TypeUtf8)
		default:
			s.Typ = types.ArrayOf(t)
		}
	}
	return s, nil
}

func (s *AggSpec) String() string {
	if s.Star {
		return s.Name + "(*)"
	}
	d := ""
	if s.Distinct {
		d = "DISTINCT "
	}
	sep := ""
	if s.Name == "string_agg" {
		sep = ", " + quoteString(s.Separator)
	}
	f := ""
	if s.Filter != nil {
		f = " FILTER (WHERE " + s.Filter.String() + ")"
	}
	return s.Name + "(" + d + s.Arg.String() + sep + s.orderString() + ")" + f
}

// New returns an empty accumulator.
func (s *AggSpec) New() AggFunc {
	if len(s.Order) > 0 {
		// DISTINCT with ORDER BY: the ORDER BY keys are arguments
		// (PostgreSQL's rule, checked by the binder), so dropping
		// repeated inputs before sorting loses nothing; the inner
		// accumulator does it.
		inner := *s
		inner.Order = nil
		if s.Distinct && (s.Name == "array_agg" || s.Name == "string_agg") {
			// Sorted by the ORDER BY, not by the values.
			inner.Distinct = false
			return &orderedAgg{spec: &inner, keys: s.Order, distinct: true}
		}
		return &orderedAgg{spec: &inner, keys: s.Order}
	}
	var a AggFunc
	switch s.Name {
	case "count":
		a = &countAgg{star: s.Star}
	case "count_if":
		a = &countAgg{onlyTrue: true}
	case "sum", "avg", "total":
		a = &sumAgg{kind: s.Name, typ: s.Typ.Family}
	case "var_samp", "var_pop", "stddev_samp", "stddev_pop":
		a = newVarAgg(s.Name, s.Typ.Family == types.Decimal)
	case "min":
		a = &minMaxAgg{sign: -1}
	case "max":
		a = &minMaxAgg{sign: 1}
	case "group_concat", "string_agg":
		a = &concatAgg{sep: s.Separator, bytes: s.Typ.Family == types.String}
	case "bool_and":
		a = &boolAgg{and: true}
	case "bool_or":
		a = &boolAgg{}
	case "array_agg":
		a = &arrayAgg{elem: s.Typ.ElemType(), nested: s.Arg != nil && s.Arg.Type().Family == types.Array}
	}
	if s.Distinct {
		switch s.Name {
		case "array_agg", "string_agg":
			// The order of the inputs shows in the result: PostgreSQL
			// sorts them for DISTINCT, so they go in sorted (NULL last;
			// array_agg keeps one NULL).
			spec := *s
			spec.Distinct = false
			return &sortedDistinctAgg{spec: &spec, seen: map[string]struct{}{}, keepNull: s.Name == "array_agg"}
		}
		a = &distinctAgg{inner: a, seen: map[string]struct{}{}}
	}
	return a
}

type distinctAgg struct {
	inner AggFunc
	seen  map[string]struct{}
	buf   []byte
}

func (a *distinctAgg) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	a.buf = types.AppendGroupKey(a.buf[:0], v)
	if _, dup := a.seen[string(a.buf)]; dup {
		return nil
	}
	a.seen[string(a.buf)] = struct{}{}
	return a.inner.Add(v)
}

func (a *distinctAgg) Result() (types.Value, error) { return a.inner.Result() }

type countAgg struct {
	star, onlyTrue bool
	n              int64
}

func (a *countAgg) Add(v types.Value) error {
	switch {
	case a.star:
		a.n++
	case a.onlyTrue:
		if !v.IsNull() && v.Bool() {
			a.n++
		}
	case !v.IsNull():
		a.n++
	}
	return nil
}

func (a *countAgg) Result() (types.Value, error) { return types.NewInt64(a.n), nil }

// sumAgg serves sum, avg and total: integers accumulate exactly in 128
// bits, floats in float64, decimals and intervals exactly.
type sumAgg struct {
	kind string
	typ  types.Family // result family
	n    int64
	ints i128
	f    float64
	dec  *apd.Decimal
	// isInt/isDec/isFloat record the input kind (fixed by the first value).
	isInt, isDec, isFloat, isInterval bool
	// months and days of an interval sum (PostgreSQL adds the fields
	// apart); the microseconds go to ints.
	months, days int64
}

func (a *sumAgg) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	a.n++
	switch f := v.Family(); {
	case f.IsInteger():
		a.isInt = true
		a.ints.add(v)
	case f == types.Interval:
		a.isInterval = true
		m, d, us := v.IntervalParts()
		a.months += int64(m)
		a.days += int64(d)
		a.ints.add(types.NewInt64(us))
	case f.IsFloat():
		a.isFloat = true
		a.f += v.Float()
	default:
		a.isDec = true
		if a.dec == nil {
			a.dec = new(apd.Decimal)
		}
		if _, err := types.DecimalContext().Add(a.dec, a.dec, v.AsDecimal()); err != nil {
			return decErr(err)
		}
	}
	return nil
}

func (a *sumAgg) Result() (types.Value, error) {
	if a.n == 0 {
		if a.kind == "total" {
			return types.NewDouble(0), nil
		}
		return types.NullValue, nil
	}
	switch {
	case a.kind == "total":
		return types.NewDouble(a.float()), nil
	case a.isInterval && (a.months != 0 || a.days != 0):
		us, ok := a.ints.value(types.Int64)
		if !ok {
			return types.Value{}, intervalOutOfRange()
		}
		sum, err := types.MakeInterval(a.months, a.days, us.Int())
		if err != nil || a.kind != "avg" {
			return sum, err
		}
		return types.DivInterval(sum, float64(a.n))
	case a.isInterval && a.kind == "avg":
		if us, ok := a.ints.value(types.Int64); ok {
			// interval_div rounds to the microsecond.
			return types.DivInterval(types.NewInterval(us.Int()), float64(a.n))
		}
		sum := a.ints.big()
		sum.Quo(sum, big.NewInt(a.n))
		if !sum.IsInt64() {
			return types.Value{}, intervalOutOfRange()
		}
		return types.NewInterval(sum.Int64()), nil
	case a.isInterval:
		sum := a.ints.big()
		if a.kind == "avg" {
			sum.Quo(sum, big.NewInt(a.n))
		}
		if !sum.IsInt64() {
			return types.Value{}, intervalOutOfRange()
		}
		return types.NewInterval(sum.Int64()), nil
	case a.kind == "avg" && a.isDec:
		q, err := decQuo(a.dec, apd.New(a.n, 0))
		if err != nil {
			return types.Value{}, err
		}
		return types.NewDecimal(q), nil
	case a.kind == "avg":
		return types.NewDouble(a.float() / float64(a.n)), nil
	case a.isInt && a.typ == types.Decimal:
		if v, ok := a.ints.value(types.Int64); ok {
			// Most sums fit in 64 bits: no big.Int on the way.
			return types.NewDecimal(apd.New(v.Int(), 0)), nil
		}
		return types.NewDecimal(apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(a.ints.big()), 0)), nil
	case a.isInt:
		v, ok := a.ints.value(a.typ)
		if !ok {
			return types.Value{}, intOutOfRange(a.typ)
		}
		return v, nil
	case a.isFloat:
		return types.NewDouble(a.f), nil
	}
	// A copy: Result may be called again after more Adds (a window
	// function's running sum), which change a.dec in place.
	return types.NewDecimal(new(apd.Decimal).Set(a.dec)), nil
}

func (a *sumAgg) float() float64 {
	switch {
	case a.isInt:
		return a.ints.float()
	case a.isDec:
		f, _ := a.dec.Float64()
		return f
	}
	return a.f
}

func (x i128) big() *big.Int {
	r := big.NewInt(x.hi)
	r.Lsh(r, 64)
	return r.Add(r, new(big.Int).SetUint64(x.lo))
}

type minMaxAgg struct {
	sign int
	best types.Value
}

func (a *minMaxAgg) Add(v types.Value) error {
	if !v.IsNull() && (a.best.IsNull() || types.Compare(v, a.best)*a.sign > 0) {
		a.best = v
	}
	return nil
}

func (a *minMaxAgg) Result() (types.Value, error) { return a.best, nil }

type concatAgg struct {
	sep   string
	bytes bool
	sb    strings.Builder
	any   bool
}

func (a *concatAgg) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if a.any {
		a.sb.WriteString(a.sep)
	}
	a.any = true
	if a.sb.Len() > maxStringLen {
		return tooLong()
	}
	a.sb.WriteString(textOf(v))
	return nil
}

func (a *concatAgg) Result() (types.Value, error) {
	if !a.any {
		return types.NullValue, nil
	}
	return strValue(a.bytes, a.sb.String()), nil
}

type boolAgg struct {
	and, any, acc bool
}

func (a *boolAgg) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if !a.any {
		a.any, a.acc = true, v.Bool()
		return nil
	}
	if a.and {
		a.acc = a.acc && v.Bool()
	} else {
		a.acc = a.acc || v.Bool()
	}
	return nil
}

func (a *boolAgg) Result() (types.Value, error) {
	if !a.any {
		return types.NullValue, nil
	}
	return types.NewBool(a.acc), nil
}

// sortedDistinctAgg is DISTINCT for aggregates whose result shows the
// input order: the distinct inputs are fed in sorted order to a fresh
// accumulator each time the result is asked for.
type sortedDistinctAgg struct {
	spec     *AggSpec
	seen     map[string]struct{}
	buf      []byte
	vals     []types.Value
	keepNull bool
}

func (a *sortedDistinctAgg) Add(v types.Value) error {
	if v.IsNull() && !a.keepNull {
		return nil
	}
	a.buf = types.AppendGroupKey(a.buf[:0], v)
	if _, dup := a.seen[string(a.buf)]; dup {
		return nil
	}
	a.seen[string(a.buf)] = struct{}{}
	a.vals = append(a.vals, v)
	return nil
}

func (a *sortedDistinctAgg) Result() (types.Value, error) {
	vals := append([]types.Value(nil), a.vals...)
	slices.SortStableFunc(vals, func(x, y types.Value) int {
		switch {
		case x.IsNull() && y.IsNull():
			return 0
		case x.IsNull():
			return 1
		case y.IsNull():
			return -1
		}
		return types.Compare(x, y)
	})
	inner := a.spec.New()
	for _, v := range vals {
		if err := inner.Add(v); err != nil {
			return types.Value{}, err
		}
	}
	return inner.Result()
}

// AggDistinctFunc is parser.AggDistinctFunc: the marker of agg(DISTINCT x).
const AggDistinctFunc = "pivot_agg_distinct"

// arrayAgg is array_agg: every input, NULLs included, in input order;
// NULL for no input. Array inputs make an array of one more dimension
// (2202E unless they all have the same dimensions).
type arrayAgg struct {
	elem   types.Type
	nested bool
	vals   []types.Value
}

func (a *arrayAgg) Add(v types.Value) error {
	if a.nested && v.IsNull() {
		return sqlerr.New(sqlerr.NullValueNotAllowed, "cannot accumulate null arrays")
	}
	a.vals = append(a.vals, v)
	return nil
}

func (a *arrayAgg) Result() (types.Value, error) {
	if len(a.vals) == 0 {
		return types.NullValue, nil
	}
	if a.nested {
		for _, v := range a.vals {
			if len(v.ArrayDims()) == 0 {
				return types.Value{}, sqlerr.New(sqlerr.ArraySubscriptError, "cannot accumulate empty arrays")
			}
		}
	}
	// The slice's length is fixed in the value; later Adds append beyond
	// it, so a result returned earlier never changes.
	return MakeArray(a.elem, a.vals[:len(a.vals):len(a.vals)], a.nested)
}

// BuildAgg builds an aggregate call: an *ast.AggregateFuncExpr, or an
// *ast.FuncCallExpr of an aggregate TiDB does not know (total,
// string_agg, bool_and, ...). The argument is built with b, whose Scope
// must be the aggregation's input; b.Replace should not substitute
// aggregates there (nested aggregates are an error).
func (b *Builder) BuildAgg(n ast.ExprNode) (*AggSpec, error) {
	var (
		name     string
		args     []ast.ExprNode
		distinct bool
	)
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		name, args, distinct = strings.ToLower(x.F), x.Args, x.Distinct
		if x.Order != nil {
			return nil, b.withPos(notSupported("ORDER BY inside "+name+"()"), n)
		}
	case *ast.FuncCallExpr:
		name, args = x.FnName.L, x.Args
		if len(args) > 1 {
			// agg(DISTINCT x), spelled agg(pivot_agg_distinct(), x) by
			// the dialect front.
			if m, ok := args[0].(*ast.FuncCallExpr); ok && m.FnName.L == AggDistinctFunc && len(m.Args) == 0 {
				distinct, args = true, args[1:]
			}
		}
	default:
		return nil, sqlerr.New(sqlerr.InternalError, "expr: %T is not an aggregate call", n)
	}
	if !IsAggregate(name) {
		return nil, b.withPos(sqlerr.NotSupported("aggregate function %s", name), n)
	}
	sep := ""
	hasSep := false
	if (name == "group_concat" || name == "string_agg") && len(args) == 2 {
		v, ok := args[1].(*test_driver.ValueExpr)
		s, isStr := any(nil), false
		if ok {
			s = v.GetValue()
			_, isStr = s.(string)
		}
		if !isStr {
			return nil, b.withPos(notSupported("a non-constant separator in "+name+"()"), args[1])
		}
		sep, hasSep = s.(string), true
		args = args[:1]
	}
	if len(args) != 1 {
		return nil, b.withPos(sqlerr.New(codeUndefinedFunction, "function %s with %d arguments does not exist", name, len(args)), n)
	}
	// count(*) reaches here as count(1); any non-NULL constant counts rows.
	if name == "count" && !distinct {
		if v, ok := args[0].(*test_driver.ValueExpr); ok && v.GetValue() != nil {
			return NewAggSpec(name, false, true, nil)
		}
	}
	arg, err := b.BuildUntyped(args[0])
	if err != nil {
		return nil, err
	}
	target := types.TypeUtf8
	switch name {
	case "sum", "avg", "total", "var_samp", "var_pop", "stddev_samp", "stddev_pop":
		target = types.TypeDouble
	case "bool_and", "bool_or", "every", "count_if":
		target = types.TypeBool
	}
	if arg, err = b.resolve(arg, target); err != nil {
		return nil, b.withPos(err, args[0])
	}
	s, err := NewAggSpec(name, distinct, false, arg)
	if err != nil {
		return nil, b.withPos(err, n)
	}
	if hasSep {
		s.Separator = sep
	}
	return s, nil
}
