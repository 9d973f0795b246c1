package expr

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

func mustParseExpr(t *testing.T, sql string) ast.ExprNode {
	t.Helper()
	n, err := parseExpr(newParser(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestDepthLimit(t *testing.T) {
	sql := "1" + strings.Repeat(" + 1", MaxDepth+10)
	_, err := newTestBuilder().Build(mustParseExpr(t, sql))
	if sqlerr.Code(err) != sqlerr.StatementTooComplex {
		t.Fatalf("got %v, want 54001", err)
	}
	sql = "1" + strings.Repeat(" + 1", MaxDepth/2)
	e, err := newTestBuilder().Build(mustParseExpr(t, sql))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := e.Eval(&Context{}, nil); v.Int() != MaxDepth/2+1 {
		t.Fatalf("got %v", v)
	}
}

func TestScopeErrors(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"a", "42702"},
		{"t1.a", "00000"},
		{"t2.a + 1", "00000"},
		{"nosuch", "42703"},
		{"t3.i", "42703"},
		{"T1.I", "00000"},
	} {
		_, err := newTestBuilder().Build(mustParseExpr(t, tc.sql))
		if got := sqlerr.Code(err); got != tc.want {
			t.Errorf("%s: got %s (%v), want %s", tc.sql, got, err, tc.want)
		}
	}
	// Without a scope every column is unknown.
	_, err := (&Builder{}).Build(mustParseExpr(t, "i + 1"))
	if sqlerr.Code(err) != sqlerr.UndefinedColumn {
		t.Errorf("nil scope: %v", err)
	}
}

func TestErrorPosition(t *testing.T) {
	b := newTestBuilder()
	b.Position = func(offset int) int { return offset + 1 }
	// "SELECT i + nosuch": nosuch starts at offset 11.
	_, err := b.Build(mustParseExpr(t, "i + nosuch"))
	if e := sqlerr.As(err); e.Code != sqlerr.UndefinedColumn || e.Position != 12 {
		t.Fatalf("got %+v", e)
	}
	_, err = b.Build(mustParseExpr(t, "i = s"))
	if e := sqlerr.As(err); e.Code != sqlerr.UndefinedFunction || e.Position != 8 {
		t.Fatalf("got %+v", e)
	}
}

func TestReplaceAndSubqueryHooks(t *testing.T) {
	b := newTestBuilder()
	b.Replace = func(n ast.ExprNode) (Expr, bool, error) {
		if a, ok := n.(*ast.AggregateFuncExpr); ok && a.F == "count" {
			return &ColumnRef{Index: 0, Name: "count(*)", Typ: types.TypeInt64}, true, nil
		}
		return nil, false, nil
	}
	e, err := b.Build(mustParseExpr(t, "count(*) + 1"))
	if err != nil || e.String() != "count(*) + 1" {
		t.Fatalf("got %v, %v", e, err)
	}
	_, err = b.Build(mustParseExpr(t, "sum(i)"))
	if sqlerr.Code(err) != sqlerr.GroupingError {
		t.Fatalf("sum without Replace: %v", err)
	}
	for _, sql := range []string{"i IN (SELECT 1)", "EXISTS (SELECT 1)", "(SELECT 1) + 1", "i = ANY (SELECT 1)", "(i, k) = (SELECT 1, 2)"} {
		_, err := newTestBuilder().Build(mustParseExpr(t, sql))
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s without hook: %v", sql, err)
		}
		b := newTestBuilder()
		var seen []string
		b.Subquery = func(n ast.ExprNode) (Expr, error) {
			seen = append(seen, fmt.Sprintf("%T", n))
			if _, ok := n.(*ast.SubqueryExpr); ok {
				return &Const{Value: types.NewInt64(1)}, nil
			}
			return &Const{Value: types.NewBool(true)}, nil
		}
		e, err := b.Build(mustParseExpr(t, sql))
		if err != nil || len(seen) != 1 {
			t.Errorf("%s with hook: %v %v", sql, err, seen)
			continue
		}
		t.Logf("%s -> %s via %v", sql, e, seen)
	}
}

func TestParamIndexAndValues(t *testing.T) {
	// The dialect front turned "$2 = k AND s = $1" into "? = k AND s = ?"
	// with ParamIndex [2, 1].
	b := newTestBuilder()
	b.ParamIndex = []int{2, 1}
	e, err := b.BuildBool(mustParseExpr(t, "? = k AND s = ?"), "WHERE")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.String(); got != "($2 = k) AND (s = $1)" {
		t.Fatalf("got %s", got)
	}
	if b.ParamTypes[0] != types.TypeUtf8 || b.ParamTypes[1] != types.TypeInt64 {
		t.Fatalf("param types %v", b.ParamTypes)
	}
	row := fixtureRow()
	for _, tc := range []struct {
		params []types.Value
		want   string
	}{
		{[]types.Value{types.NewUtf8("hello"), types.NewInt64(20)}, "t"},
		{[]types.Value{types.NewUnknown("hello"), types.NewUnknown("20")}, "t"},
		{[]types.Value{types.NewUnknown("hello"), types.NewUnknown(" 21")}, "f"},
		{[]types.Value{types.NewUnknown("hello"), types.NewUnknown("x")}, "22P02"},
		{[]types.Value{types.NewUnknown("hello"), types.NewInt(types.Int32, 20)}, "t"},
		{[]types.Value{types.NullValue, types.NewInt64(20)}, "NULL"},
		{[]types.Value{types.NewUtf8("hello")}, "42P02"},
	} {
		v, err := e.Eval(&Context{Params: tc.params}, row)
		got := v.String()
		if err != nil {
			got = sqlerr.Code(err)
		}
		if got != tc.want {
			t.Errorf("params %v: got %s, want %s", tc.params, got, tc.want)
		}
	}
	// An untyped parameter alone is text, as PostgreSQL types SELECT $1.
	b = newTestBuilder()
	e, err = b.Build(mustParseExpr(t, "?"))
	if err != nil || e.Type() != types.TypeUtf8 || b.ParamTypes[0] != types.TypeUtf8 {
		t.Fatalf("SELECT $1: %v %v %v", e, err, b.ParamTypes)
	}
}

func TestBuildAssign(t *testing.T) {
	i32 := types.TypeInt32
	date := types.T(types.Date)
	vc3 := types.Type{Family: types.Utf8, Width: 3}
	for _, tc := range []struct {
		sql  string
		typ  types.Type
		want string
	}{
		{"'2024-01-01'", date, "2024-01-01"},
		{"'abc'", i32, "22P02"},
		{"i", i32, "7"},
		{"big", i32, "22003"},
		{"s", i32, "42804"},
		{"300", types.T(types.Uint8), "22003"},
		{"NULL", i32, "NULL"},
		{"'abcd'", vc3, "22001"},
		{"'abc'", vc3, `"abc"`},
		{"i", vc3, `"7"`},
		{"12345", vc3, "22001"},
		{"2.5", i32, "3"},
		{"ts", date, "2024-01-01"},
		{"dt", types.TypeInterval, "42804"},
		{"?", date, "NULL"},
		{"1.234", types.Type{Family: types.Decimal, Precision: 4, Scale: 2}, "1.23"},
	} {
		b := newTestBuilder()
		e, err := b.BuildAssign(mustParseExpr(t, tc.sql), tc.typ, "c")
		var got string
		if err == nil {
			var v types.Value
			v, err = e.Eval(&Context{Params: []types.Value{types.NullValue}}, fixtureRow())
			got = v.String()
			if err == nil && !v.IsNull() && v.Family() != tc.typ.Family {
				t.Errorf("%s: family %v, want %v", tc.sql, v.Family(), tc.typ.Family)
			}
		}
		if err != nil {
			got = sqlerr.Code(err)
		}
		if got != tc.want {
			t.Errorf("%s as %v: got %s (%v), want %s", tc.sql, tc.typ, got, err, tc.want)
		}
	}
}

func TestCommonType(t *testing.T) {
	T := types.T
	for _, tc := range []struct {
		in   []types.Type
		want string
	}{
		{[]types.Type{types.TypeInt32, types.TypeInt64}, "Int64"},
		{[]types.Type{T(types.Int8), T(types.Int16)}, "Int16"},
		{[]types.Type{T(types.Uint8), T(types.Int8)}, "Int16"},
		{[]types.Type{T(types.Uint32), types.TypeInt32}, "Int64"},
		{[]types.Type{types.TypeUint64, types.TypeInt64}, "Decimal"},
		{[]types.Type{types.TypeUint64, T(types.Uint8)}, "Uint64"},
		{[]types.Type{types.TypeInt64, types.TypeDecimal}, "Decimal"},
		{[]types.Type{types.TypeDecimal, T(types.Float)}, "Double"},
		{[]types.Type{types.TypeNull, types.TypeUnknown}, "Utf8"},
		{[]types.Type{types.TypeNull}, "Null"},
		{[]types.Type{types.TypeUnknown, types.TypeInt32}, "Int32"},
		{[]types.Type{T(types.Date), types.TypeTimestamp}, "Timestamp"},
		{[]types.Type{types.TypeUtf8, types.TypeString}, "String"},
		{[]types.Type{{Family: types.Utf8, Width: 3}, {Family: types.Utf8, Width: 3}}, "Utf8(3)"},
		{[]types.Type{{Family: types.Utf8, Width: 3}, {Family: types.Utf8, Width: 4}}, "Utf8"},
		{[]types.Type{{Family: types.Utf8, Width: 3}, types.TypeUnknown}, "Utf8"},
		{[]types.Type{types.TypeInt64, types.TypeUtf8}, "42804"},
		{[]types.Type{types.TypeBool, types.TypeInt64}, "42804"},
	} {
		got, err := CommonType("UNION", tc.in...)
		s := got.String()
		if err != nil {
			s = sqlerr.Code(err)
		}
		if s != tc.want {
			t.Errorf("%v: got %s, want %s", tc.in, s, tc.want)
		}
	}
}

func TestNodesForThePlanner(t *testing.T) {
	k := &ColumnRef{Index: 22, Name: "k", Typ: types.TypeInt64}
	// NewFunc builds a function outside a Builder, as the planner does
	// for computed columns.
	f, err := NewFunc("FARM_HASH", []Expr{k})
	if err != nil {
		t.Fatal(err)
	}
	fn := f.(*Func)
	if fn.Name != "farm_hash" || !fn.Deterministic || fn.Type() != types.TypeUint64 {
		t.Fatalf("got %+v", fn)
	}
	v, _ := fn.Eval(&Context{}, fixtureRow())
	if v.Uint() != FarmHash([]types.Value{types.NewInt64(20)}) {
		t.Fatalf("farm_hash(k) = %v", v)
	}
	// A Func written as a literal binds at evaluation.
	lit := &Func{Name: "abs", Args: []Expr{NewConst(types.NewInt64(-3))}, Typ: types.TypeInt64, Deterministic: true}
	if v, err := lit.Eval(&Context{}, nil); err != nil || v.Int() != 3 {
		t.Fatalf("literal abs: %v %v", v, err)
	}
	r, _ := NewFunc("random", nil)
	if IsDeterministic(r) || IsDeterministic(&Compare{Op: LT, L: r, R: k}) || !IsDeterministic(f) {
		t.Fatal("IsDeterministic")
	}
	p := &Param{N: 1, Typ: types.TypeInt64}
	if !IsRowIndependent(&Arith{Op: Add, L: p, R: NewConst(types.NewInt64(1)), Typ: types.TypeInt64}) ||
		IsRowIndependent(f) || !HasParams(&Not{E: &IsNull{E: p}}) {
		t.Fatal("IsRowIndependent/HasParams")
	}
	// Transform remaps column indexes.
	e, err := newTestBuilder().BuildBool(mustParseExpr(t, "k = 20 AND l IN (1, 2, 3, 4, 5, 6, 7, 8, 9) AND s LIKE 'h%'"), "WHERE")
	if err != nil {
		t.Fatal(err)
	}
	moved, err := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColumnRef); ok {
			c2 := *c
			c2.Index = map[string]int{"k": 0, "l": 1, "s": 2}[c.Name]
			return &c2, nil
		}
		return x, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err = moved.Eval(&Context{}, Row{types.NewInt64(20), types.NewInt64(9), types.NewUtf8("hi")})
	if err != nil || !v.Bool() || moved.String() != e.String() {
		t.Fatalf("transformed: %v %v %s", v, err, moved)
	}
	if v, _ := e.Eval(&Context{}, fixtureRow()); !v.Bool() {
		t.Fatal("the original tree changed")
	}
	var cols []string
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*ColumnRef); ok {
			cols = append(cols, c.Name)
		}
		return true
	})
	if strings.Join(cols, ",") != "k,l,s" {
		t.Fatalf("walk: %v", cols)
	}
	for _, tc := range []struct {
		pattern, prefix string
		only            bool
	}{
		{"abc%", "abc", true},
		{"abc%%", "abc", true},
		{"abc%d", "abc", false},
		{"ab_c", "ab", false},
		{`a\%b%`, "a%b", true},
		{"abc", "abc", false},
		{"%", "", true},
	} {
		p, only := LikePrefix(tc.pattern, '\\')
		if p != tc.prefix || only != tc.only {
			t.Errorf("LikePrefix(%q) = %q, %v", tc.pattern, p, only)
		}
	}
}

func TestConcurrentEval(t *testing.T) {
	e, err := newTestBuilder().Build(mustParseExpr(t,
		"CASE WHEN s LIKE 'h%' AND i IN (1, 2, 3, 4, 5, 6, 7, 8) THEN farm_hash(k, s) % 10 ELSE 0 END"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := &Context{}
	want, _ := e.Eval(ctx, fixtureRow())
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				if v, err := e.Eval(ctx, fixtureRow()); err != nil || types.Compare(v, want) != 0 {
					t.Errorf("got %v %v", v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
