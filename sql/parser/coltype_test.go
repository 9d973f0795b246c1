package parser

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestTypeTextRoundTrip checks that every type spelled by typeText parses
// back to itself, which both the column marker and pivot_cast rely on.
func TestTypeTextRoundTrip(t *testing.T) {
	var all []types.Type
	for f := types.Bool; f <= types.Interval; f++ {
		all = append(all, types.T(f))
	}
	all = append(all, types.Type{Family: types.Decimal, Precision: 22, Scale: 9},
		types.Type{Family: types.Decimal, Precision: 1}, types.Type{Family: types.Utf8, Width: 255})
	for _, typ := range all {
		got, err := types.ParseTypeName(typeText(typ))
		if err != nil || got != typ {
			t.Errorf("%v: %q parses to %v, %v", typ, typeText(typ), got, err)
		}
	}
}

func TestCastTarget(t *testing.T) {
	stmts, err := Parse("SELECT pivot_cast(a, 'Uint64'), pivot_cast(a), pivot_cast(a, 5), pivot_cast(a, 'no such'), other(a)")
	if err != nil {
		t.Fatal(err)
	}
	fields := stmts[0].AST.(*ast.SelectStmt).Fields.Fields
	call := func(i int) *ast.FuncCallExpr { return fields[i].Expr.(*ast.FuncCallExpr) }

	expr, typ, ok, err := CastTarget(call(0))
	if !ok || err != nil || typ != types.TypeUint64 || expr.(*ast.ColumnNameExpr).Name.Name.O != "a" {
		t.Errorf("valid cast: %v %v %v %v", expr, typ, ok, err)
	}
	for i, code := range []string{sqlerr.SyntaxError, sqlerr.SyntaxError, sqlerr.UndefinedObject} {
		if _, _, ok, err := CastTarget(call(i + 1)); !ok || sqlerr.Code(err) != code {
			t.Errorf("field %d: ok=%v err=%v, want code %s", i+1, ok, err, code)
		}
	}
	if _, _, ok, err := CastTarget(call(4)); ok || err != nil {
		t.Errorf("other function: ok=%v err=%v", ok, err)
	}
}

func TestColumnTypeWithoutMarker(t *testing.T) {
	// A column definition TiDB parsed from its own text has no marker.
	stmts, err := Parse("CREATE TABLE t (a Int32)")
	if err != nil {
		t.Fatal(err)
	}
	col := stmts[0].AST.(*ast.CreateTableStmt).Cols[0]
	if len(col.Options) != 0 {
		t.Errorf("marker comment left in options: %v", col.Options)
	}
	col.Tp.SetElems(nil)
	if _, err := ColumnType(col); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("got %v", err)
	}
	if _, err := ColumnType(nil); sqlerr.Code(err) != sqlerr.InternalError {
		t.Errorf("nil: got %v", err)
	}
}
