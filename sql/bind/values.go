package bind

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// buildValues plans VALUES (...), (...) used as a query (alone, in FROM,
// as a set operation's arm, as a WITH query): a Values node whose columns
// are named column1, column2, ... and typed, as in a UNION, with the
// common type of each column's values (text for only literals and NULLs).
// ORDER BY and LIMIT apply as on a set operation's result.
func (a *binder) buildValues(sel *ast.SelectStmt) (planner.Node, error) {
	if len(sel.Lists) == 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES needs at least one row")
	}
	width := len(sel.Lists[0].Values)
	rows := make([][]expr.Expr, len(sel.Lists))
	for i, list := range sel.Lists {
		if len(list.Values) != width {
			return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length")
		}
		for _, v := range list.Values {
			e, err := a.buildMode(nil, v, nil, true)
			if err != nil {
				return nil, err
			}
			rows[i] = append(rows[i], e)
		}
	}
	cols := make([]planner.Column, width)
	b := &expr.Builder{}
	for c := range cols {
		ts := make([]types.Type, len(rows))
		for i := range rows {
			ts[i] = rows[i][c].Type()
		}
		t, err := expr.CommonType("VALUES", ts...)
		if err != nil {
			return nil, err
		}
		if f := t.Family; f == types.Null || f == types.Unknown {
			t = types.TypeUtf8
		}
		cols[c] = planner.Column{Name: fmt.Sprintf("column%d", c+1), Type: t}
		for i := range rows {
			e := rows[i][c]
			if e.Type() == t {
				continue
			}
			if f := e.Type().Family; f == types.Unknown || f == types.Null {
				e, err = expr.NewCast(e, t)
			} else {
				e, err = b.Coerce(e, t)
			}
			if err != nil {
				return nil, err
			}
			rows[i][c] = e
		}
	}
	return a.setOpOrderLimit(&planner.Values{Rows: rows, Cols: cols}, sel.OrderBy, sel.Limit)
}
