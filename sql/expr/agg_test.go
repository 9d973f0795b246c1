package expr

import (
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

func runAgg(t *testing.T, spec *AggSpec, vals ...types.Value) (types.Value, error) {
	t.Helper()
	a := spec.New()
	for _, v := range vals {
		if err := a.Add(v); err != nil {
			return types.Value{}, err
		}
	}
	return a.Result()
}

func TestAggregates(t *testing.T) {
	i32 := &ColumnRef{Name: "x", Typ: types.TypeInt32}
	i64 := &ColumnRef{Name: "x", Typ: types.TypeInt64}
	u64 := &ColumnRef{Name: "x", Typ: types.TypeUint64}
	dbl := &ColumnRef{Name: "x", Typ: types.TypeDouble}
	dec := &ColumnRef{Name: "x", Typ: types.TypeDecimal}
	txt := &ColumnRef{Name: "x", Typ: types.TypeUtf8}
	ivl := &ColumnRef{Name: "x", Typ: types.TypeInterval}
	bl := &ColumnRef{Name: "x", Typ: types.TypeBool}
	I, N := types.NewInt64, types.NullValue
	I32 := func(i int64) types.Value { return types.NewInt(types.Int32, i) }
	const maxI = 9223372036854775807
	for _, tc := range []struct {
		name     string
		distinct bool
		star     bool
		arg      Expr
		in       []types.Value
		want     string // Value.String() or error code
		typ      types.Type
	}{
		{"count", false, true, nil, []types.Value{I(1), N, N}, "3", types.TypeInt64},
		{"count", false, false, i64, []types.Value{I(1), N, I(1)}, "2", types.TypeInt64},
		{"count", true, false, i64, []types.Value{I(1), N, I(1), I(2)}, "2", types.TypeInt64},
		{"count", false, false, i64, nil, "0", types.TypeInt64},
		// sum(int4) is bigint, sum(int8) numeric, as in PostgreSQL.
		{"sum", false, false, i32, []types.Value{I32(1), N, I32(2)}, "3", types.TypeInt64},
		{"sum", false, false, i32, []types.Value{I32(2147483647), I32(2147483647)}, "4294967294", types.TypeInt64},
		{"sum", false, false, i64, []types.Value{I(1), N, I(2)}, "3", types.TypeDecimal},
		{"sum", false, false, i64, nil, "NULL", types.TypeDecimal},
		{"sum", false, false, i64, []types.Value{N}, "NULL", types.TypeDecimal},
		{"sum", true, false, i64, []types.Value{I(2), I(2), I(3)}, "5", types.TypeDecimal},
		{"sum", false, false, i64, []types.Value{I(maxI), I(maxI), I(-maxI)}, "9223372036854775807", types.TypeDecimal},
		{"sum", false, false, i64, []types.Value{I(maxI), I(1)}, "9223372036854775808", types.TypeDecimal},
		{"sum", false, false, i64, []types.Value{I(-maxI), I(-maxI), I(-2)}, "-18446744073709551616", types.TypeDecimal},
		{"sum", false, false, u64, []types.Value{types.NewUint64(1 << 63), types.NewUint64(1<<63 - 1)}, "18446744073709551615", types.TypeUint64},
		{"sum", false, false, u64, []types.Value{types.NewUint64(1 << 63), types.NewUint64(1 << 63)}, "22003", types.TypeUint64},
		{"sum", false, false, dbl, []types.Value{types.NewDouble(0.5), types.NewDouble(0.25)}, "0.75", types.TypeDouble},
		{"sum", false, false, dec, []types.Value{mustDec("0.1"), mustDec("0.2")}, "0.3", types.TypeDecimal},
		{"sum", false, false, ivl, []types.Value{types.NewInterval(3600e6), types.NewInterval(1800e6)}, "01:30:00", types.TypeInterval},
		{"sum", false, false, txt, nil, "42883", types.Type{}},
		{"avg", false, false, i64, []types.Value{I(1), I(2), N}, "1.5", types.TypeDouble},
		{"avg", false, false, i64, []types.Value{I(maxI), I(maxI)}, "9.223372036854776e+18", types.TypeDouble},
		{"avg", false, false, i64, nil, "NULL", types.TypeDouble},
		{"avg", false, false, dec, []types.Value{mustDec("1"), mustDec("2")}, "1.5000000000000000", types.TypeDecimal},
		{"avg", false, false, ivl, []types.Value{types.NewInterval(3600e6), types.NewInterval(0)}, "00:30:00", types.TypeInterval},
		{"total", false, false, i64, nil, "0", types.TypeDouble},
		{"total", false, false, i64, []types.Value{I(1), I(2)}, "3", types.TypeDouble},
		{"min", false, false, i64, []types.Value{I(3), N, I(-1), I(2)}, "-1", types.TypeInt64},
		{"max", false, false, txt, []types.Value{types.NewUtf8("b"), types.NewUtf8("c"), N}, `"c"`, types.TypeUtf8},
		{"max", false, false, i64, []types.Value{N}, "NULL", types.TypeInt64},
		{"group_concat", false, false, txt, []types.Value{types.NewUtf8("a"), N, types.NewUtf8("b")}, `"a,b"`, types.TypeUtf8},
		{"group_concat", true, false, i64, []types.Value{I(1), I(1), I(2)}, `"1,2"`, types.TypeUtf8},
		{"bool_and", false, false, bl, []types.Value{types.NewBool(true), N, types.NewBool(false)}, "f", types.TypeBool},
		{"bool_or", false, false, bl, []types.Value{types.NewBool(false), N, types.NewBool(true)}, "t", types.TypeBool},
		{"every", false, false, bl, []types.Value{types.NewBool(true)}, "t", types.TypeBool},
		{"count_if", false, false, bl, []types.Value{types.NewBool(true), N, types.NewBool(false), types.NewBool(true)}, "2", types.TypeInt64},
		{"median", false, false, i64, nil, "42883", types.Type{}},
	} {
		spec, err := NewAggSpec(tc.name, tc.distinct, tc.star, tc.arg)
		var got string
		if err == nil {
			var v types.Value
			v, err = runAgg(t, spec, tc.in...)
			got = v.String()
			if err == nil && spec.Typ != tc.typ {
				t.Errorf("%s: type %v, want %v", tc.name, spec.Typ, tc.typ)
			}
		}
		if err != nil {
			got = sqlerr.Code(err)
		}
		if got != tc.want {
			t.Errorf("%s(distinct=%v) over %v = %s, want %s", tc.name, tc.distinct, tc.in, got, tc.want)
		}
	}
}

func TestBuildAgg(t *testing.T) {
	p := newParser()
	for _, tc := range []struct{ sql, want string }{
		{"count(*)", "count(*) : Int64"},
		{"COUNT(DISTINCT i)", "count(DISTINCT i) : Int64"},
		{"sum(i + 1)", "sum(i + 1) : Decimal"},
		{"sum(i32)", "sum(i32) : Int64"},
		{"avg(i)", "avg(i) : Double"},
		{"avg(d)", "avg(d) : Decimal"},
		{"max(s)", "max(s) : Utf8"},
		{"group_concat(s)", "group_concat(s) : Utf8"},
		{"group_concat(s SEPARATOR '|')", "group_concat(s) : Utf8 sep=|"},
		{"total(i)", "total(i) : Double"},
		{"string_agg(s, ';')", "string_agg(s, ';') : Utf8 sep=;"},
		{"bool_and(i > 1)", "bool_and(i > 1) : Bool"},
		{"sum(s)", "error 42883: function sum(text) does not exist"},
		{"sum(nosuch)", `error 42703: column "nosuch" does not exist`},
		{"lower(s)", "error XX000: expr: *ast.FuncCallExpr is not an aggregate call"},
	} {
		n, err := parseExpr(p, tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		b := newTestBuilder()
		var got string
		var spec *AggSpec
		if f, ok := n.(*ast.FuncCallExpr); ok && !IsAggregate(f.FnName.L) {
			err = sqlerr.New(sqlerr.InternalError, "expr: %T is not an aggregate call", n)
		} else {
			spec, err = b.BuildAgg(n)
		}
		if err != nil {
			got = formatErr(err)
		} else {
			got = spec.String() + " : " + spec.Typ.String()
			if spec.Separator != "," {
				got += " sep=" + spec.Separator
			}
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.sql, got, tc.want)
		}
	}
	// Evaluate a group through the spec's argument, as the executor does.
	n, _ := parseExpr(p, "sum(DISTINCT k / 3)")
	spec, err := newTestBuilder().BuildAgg(n)
	if err != nil {
		t.Fatal(err)
	}
	acc := spec.New()
	for _, k := range []int64{3, 4, 5, 9, 0} {
		row := fixtureRow()
		row[22] = types.NewInt64(k) // k
		v, err := spec.Arg.Eval(&Context{}, row)
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := acc.Result(); v.String() != "4" || !strings.HasPrefix(spec.String(), "sum(DISTINCT") {
		t.Errorf("sum(DISTINCT k / 3) = %s", v)
	}
}
