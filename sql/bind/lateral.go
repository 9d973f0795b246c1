package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// LATERAL, and functions in FROM after other items (which PostgreSQL makes
// lateral implicitly: FROM t, generate_series(1, t.n)).
//
// The FROM items to the left of a lateral item are planned as one unit;
// the lateral item is planned with that unit's scope as an outer level, as
// a correlated subquery is, so its references to the left become hidden
// parameters; a planner.Apply runs it once per left row with them bound.
// Inner (comma, CROSS JOIN, JOIN ... ON) and LEFT JOIN LATERAL ... ON are
// supported; the result is one FROM item.

// isLateral reports whether a FROM item must see the items before it.
func isLateral(n ast.ResultSetNode) bool {
	ts, ok := n.(*ast.TableSource)
	if !ok {
		return false
	}
	switch src := ts.Source.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		if seriesCall(src) != nil || tableFuncCall(src) != nil {
			return true
		}
		_, lateral := columnAliases(ts)
		return lateral
	}
	return false
}

// lateralJoin plans j, whose right side is lateral. The ON condition of an
// inner join is added to ons (it is a condition on the combined item).
func (a *binder) lateralJoin(j *ast.Join, ons *[]ast.ExprNode) (*fromItem, error) {
	if j.Tp == ast.RightJoin {
		return nil, sqlerr.New(sqlerr.InvalidColumnReference, "the combining JOIN type must be INNER or LEFT for a LATERAL reference")
	}
	if j.NaturalJoin || len(j.Using) > 0 {
		return nil, sqlerr.NotSupported("NATURAL or USING with a LATERAL item")
	}
	lnode, lsc, err := a.buildFromNode(j.Left)
	if err != nil {
		return nil, err
	}
	lv := &outerLevel{sc: lsc}
	a.outer = append(a.outer, lv)
	right, err := a.fromLeaf(j.Right)
	a.outer = a.outer[:len(a.outer)-1]
	if err != nil {
		return nil, err
	}
	ap := &planner.Apply{Left: lnode, Right: right.node, Binds: lv.binds, Slots: lv.slots, Outer: j.Tp == ast.LeftJoin}
	ap.Cols = append(append([]planner.Column(nil), lnode.Columns()...), right.node.Columns()...)
	sc := &scope{cols: append(append([]scopeColumn(nil), lsc.cols...), right.sc.cols...)}
	if j.On != nil {
		if ap.Outer {
			if ap.Cond, err = a.buildCondition(sc, j.On.Expr, "JOIN/ON"); err != nil {
				return nil, err
			}
		} else {
			*ons = append(*ons, j.On.Expr)
		}
	} else if ap.Outer {
		return nil, sqlerr.New(sqlerr.SyntaxError, "an outer join requires an ON condition")
	}
	return &fromItem{node: ap, sc: sc}, nil
}
