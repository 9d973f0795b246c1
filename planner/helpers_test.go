package planner

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// testTable is a table for range tests: the key columns first, in key
// order, then the other columns; computed columns with their built
// expressions, as the SQL layer hands them to CompileRanges.
type testTable struct {
	t        *catalog.Table
	computed map[int]expr.Expr
}

// scope resolves column names of a testTable for the expression Builder.
type scope struct{ cols []catalog.Column }

func (s scope) ResolveColumn(table, name string) (int, types.Type, error) {
	for i, c := range s.cols {
		if strings.EqualFold(c.Name, name) {
			return i, c.Type, nil
		}
	}
	return 0, types.Type{}, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name)
}

// newTestTable builds a table from column specs "name type" or
// "name type AS expression" (computed); keys are the key columns in key
// order, cols the others.
func newTestTable(keys, cols []string) (*testTable, error) {
	t := &catalog.Table{ID: 42, Name: "t"}
	exprs := map[int]string{}
	for i, spec := range append(append([]string(nil), keys...), cols...) {
		spec = strings.TrimSpace(spec)
		var computed string
		if at := strings.Index(strings.ToLower(spec), " as "); at >= 0 {
			spec, computed = spec[:at], strings.TrimSpace(spec[at+4:])
		}
		name, typName, ok := strings.Cut(spec, " ")
		if !ok {
			return nil, fmt.Errorf("column spec %q: want \"name type\"", spec)
		}
		typ, err := types.ParseTypeName(strings.TrimSpace(typName))
		if err != nil {
			return nil, err
		}
		t.Columns = append(t.Columns, catalog.Column{ID: i + 1, Name: name, Type: typ, Computed: computed})
		if computed != "" {
			exprs[i] = computed
		}
		if i < len(keys) {
			t.PrimaryKey = append(t.PrimaryKey, i)
		}
	}
	t.NextColumnID = len(t.Columns) + 1
	tt := &testTable{t: t, computed: map[int]expr.Expr{}}
	for i, text := range exprs {
		e, err := tt.buildSelectItem(text)
		if err != nil {
			return nil, fmt.Errorf("computed column %s: %w", t.Columns[i].Name, err)
		}
		tt.computed[i] = e
	}
	return tt, nil
}

func (tt *testTable) builder(stmt parser.Statement) *expr.Builder {
	return &expr.Builder{Scope: scope{cols: tt.t.Columns}, ParamIndex: stmt.ParamIndex}
}

// buildSelectItem builds `SELECT text FROM t`'s expression.
func (tt *testTable) buildSelectItem(text string) (expr.Expr, error) {
	stmts, err := parser.Parse("SELECT " + text + " FROM t")
	if err != nil {
		return nil, err
	}
	sel := stmts[0].AST.(*ast.SelectStmt)
	return tt.builder(stmts[0]).Build(sel.Fields.Fields[0].Expr)
}

// buildWhere builds the condition of `SELECT * FROM t WHERE pred` with the
// project's real front (dialect rewrite, TiDB parser, expr.Builder).
func (tt *testTable) buildWhere(pred string) (expr.Expr, error) {
	stmts, err := parser.Parse("SELECT * FROM t WHERE " + pred)
	if err != nil {
		return nil, err
	}
	sel := stmts[0].AST.(*ast.SelectStmt)
	return tt.builder(stmts[0]).BuildBool(sel.Where, "WHERE")
}

// buildParams turns SQL literals into parameter values; string literals
// stay untyped, as text-format parameters arrive.
func buildParams(lits []string) ([]types.Value, error) {
	if len(lits) == 0 {
		return nil, nil
	}
	stmts, err := parser.Parse("SELECT " + strings.Join(lits, ", "))
	if err != nil {
		return nil, err
	}
	sel := stmts[0].AST.(*ast.SelectStmt)
	b := &expr.Builder{}
	out := make([]types.Value, len(sel.Fields.Fields))
	for i, f := range sel.Fields.Fields {
		e, err := b.BuildUntyped(f.Expr)
		if err != nil {
			return nil, err
		}
		c, ok := e.(*expr.Const)
		if !ok {
			return nil, fmt.Errorf("parameter %q is not a constant", lits[i])
		}
		out[i] = c.Value
	}
	return out, nil
}

// uniformShardStarts returns the start keys of n uniform shards of the
// table (design §5: pivots on the first key column, Uint64 or Int64).
func uniformShardStarts(t *catalog.Table, n int) [][]byte {
	f := t.Columns[t.PrimaryKey[0]].Type.Family
	starts := [][]byte{storage.TablePrefix(t.ID)}
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for i := 1; i < n; i++ {
		p := new(big.Int).Mul(two64, big.NewInt(int64(i)))
		p.Div(p, big.NewInt(int64(n)))
		var v types.Value
		if f == types.Int64 {
			p.Sub(p, new(big.Int).Lsh(big.NewInt(1), 63))
			v = types.NewInt64(p.Int64())
		} else {
			v = types.NewUint64(p.Uint64())
		}
		starts = append(starts, rowenc.EncodeKeyPrefix(t, []types.Value{v}))
	}
	return starts
}
