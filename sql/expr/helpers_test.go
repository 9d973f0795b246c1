package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// testCol is one column of the fixture row every test expression sees.
type testCol struct {
	table, name string
	typ         types.Type
	val         types.Value
}

func mustDec(s string) types.Value {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return types.NewDecimal(d)
}

func mustParse(t types.Type, s string) types.Value {
	v, err := types.ParseText(t, s)
	if err != nil {
		panic(err)
	}
	return v
}

// fixture is the test table: t1 holds most columns, t2 shares the column
// name a with t1 (for ambiguity).
var fixture = []testCol{
	{"t1", "i", types.TypeInt64, types.NewInt64(7)},
	{"t1", "j", types.TypeInt64, types.NewInt64(-7)},
	{"t1", "u", types.TypeUint64, types.NewUint64(18446744073709551615)},
	{"t1", "u1", types.TypeUint64, types.NewUint64(1)},
	{"t1", "i32", types.TypeInt32, types.NewInt(types.Int32, 2)},
	{"t1", "u8", types.T(types.Uint8), types.NewUint(types.Uint8, 200)},
	{"t1", "f", types.TypeDouble, types.NewDouble(1.5)},
	{"t1", "r", types.T(types.Float), types.NewFloat(2.5)},
	{"t1", "d", types.TypeDecimal, mustDec("10.25")},
	{"t1", "d52", types.Type{Family: types.Decimal, Precision: 5, Scale: 2}, mustDec("1.50")},
	{"t1", "s", types.TypeUtf8, types.NewUtf8("hello")},
	{"t1", "vc", types.Type{Family: types.Utf8, Width: 3}, types.NewUtf8("abc")},
	{"t1", "b", types.TypeString, types.NewString("bytes")},
	{"t1", "js", types.T(types.Json), types.NewJson(`{"a":1}`)},
	{"t1", "ts", types.TypeTimestamp, mustParse(types.TypeTimestamp, "2024-01-01 00:00:00")},
	{"t1", "dt", types.T(types.Date), mustParse(types.T(types.Date), "2024-01-31")},
	{"t1", "dtm", types.T(types.Datetime), mustParse(types.T(types.Datetime), "2024-01-01 12:00:00")},
	{"t1", "iv", types.TypeInterval, mustParse(types.TypeInterval, "PT1H")},
	{"t1", "bo", types.TypeBool, types.NewBool(true)},
	{"t1", "n", types.TypeInt64, types.NullValue},
	{"t1", "ns", types.TypeUtf8, types.NullValue},
	{"t1", "nb", types.TypeBool, types.NullValue},
	{"t1", "k", types.TypeInt64, types.NewInt64(20)},
	{"t1", "l", types.TypeInt64, types.NewInt64(5)},
	{"t1", "big", types.TypeInt64, types.NewInt64(9223372036854775807)},
	{"t1", "small", types.TypeInt64, types.NewInt64(-9223372036854775808)},
	{"t1", "a", types.TypeInt64, types.NewInt64(1)},
	{"t2", "a", types.TypeInt64, types.NewInt64(2)},
	{"t2", "zero", types.TypeInt64, types.NewInt64(0)},
}

type fixtureScope struct{ cols []testCol }

func (s fixtureScope) ResolveColumn(table, name string) (int, types.Type, error) {
	found := -1
	for i, c := range s.cols {
		if !strings.EqualFold(c.name, name) || (table != "" && !strings.EqualFold(c.table, table)) {
			continue
		}
		if found >= 0 {
			return 0, types.Type{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", name)
		}
		found = i
	}
	if found < 0 {
		return 0, types.Type{}, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name)
	}
	return found, s.cols[found].typ, nil
}

func fixtureRow() Row {
	row := make(Row, len(fixture))
	for i, c := range fixture {
		row[i] = c.val
	}
	return row
}

func newParser() *parser.Parser {
	p := parser.New()
	p.SetSQLMode(mysql.ModeNoBackslashEscapes | mysql.ModePipesAsConcat)
	return p
}

// parseExpr parses "SELECT <sql>" and returns the expression, numbering
// its parameter markers in text order.
func parseExpr(p *parser.Parser, sql string) (ast.ExprNode, error) {
	stmts, _, err := p.Parse("SELECT "+sql, "", "")
	if err != nil {
		return nil, err
	}
	sel := stmts[0].(*ast.SelectStmt)
	numberParams(sel)
	return sel.Fields.Fields[0].Expr, nil
}

func newTestBuilder() *Builder {
	return &Builder{Scope: fixtureScope{fixture}}
}

// testNow is the statement time of the tests.
var testNow = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)

func formatValue(v types.Value, t types.Type) string {
	return fmt.Sprintf("%s : %s", v.String(), t)
}

func formatErr(err error) string {
	e := sqlerr.As(err)
	return fmt.Sprintf("error %s: %s", e.Code, e.Message)
}

// evalSQL builds and evaluates sql over the fixture row.
func evalSQL(sql string, params ...types.Value) (types.Value, Expr, error) {
	n, err := parseExpr(newParser(), sql)
	if err != nil {
		return types.Value{}, nil, err
	}
	b := newTestBuilder()
	e, err := b.Build(n)
	if err != nil {
		return types.Value{}, nil, err
	}
	v, err := e.Eval(&Context{Now: testNow, Params: params}, fixtureRow())
	return v, e, err
}
