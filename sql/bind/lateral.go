package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// LATERAL, and functions in FROM after other items (which PostgreSQL makes
// lateral implicitly: FROM t, generate_series(1, t.n)).
//
// The FROM items to the left of a lateral item are bound first and the
// lateral item is bound with their scope as an outer level, as a
// correlated subquery is, so its references to the left become hidden
// parameters. When it makes none (generate_series(1, 32) after catalog
// tables, as pgjdbc's getImportedKeys writes it) it is an ordinary item of
// the inner-join group: the WHERE equalities between it and the other
// items become hash-join keys, instead of a planner.Apply running it once
// per row of a cross product of everything to its left. Otherwise the
// items to its left are planned as one unit and a planner.Apply runs the
// lateral item once per left row with the parameters bound. Inner (comma,
// CROSS JOIN, JOIN ... ON) and LEFT JOIN LATERAL ... ON are supported; in
// an outer or NATURAL/USING join an item that names no column at all is
// planned as an ordinary join (flattenFrom).

// isLateral reports whether a FROM item may see the items before it.
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

// flattenLateral adds the items of j, whose right side may be lateral, to
// the inner-join group being collected (flattenFrom): the items of its left
// side and the right item when the right side does not read the left, else
// one item that applies the right side to each row of the left. The ON
// condition of an inner join is added to ons (it is a condition on the
// group).
func (a *binder) flattenLateral(j *ast.Join, items *[]*fromItem, ons *[]ast.ExprNode) error {
	if j.Tp == ast.RightJoin {
		return sqlerr.New(sqlerr.InvalidColumnReference, "the combining JOIN type must be INNER or LEFT for a LATERAL reference")
	}
	if j.NaturalJoin || len(j.Using) > 0 {
		return sqlerr.NotSupported("NATURAL or USING with a LATERAL item")
	}
	var litems []*fromItem
	var lons []ast.ExprNode
	if err := a.flattenFrom(j.Left, &litems, &lons); err != nil {
		return err
	}
	lsc := &scope{}
	for _, it := range litems {
		lsc.cols = append(lsc.cols, it.sc.cols...)
	}
	lv := &outerLevel{sc: lsc}
	a.outer = append(a.outer, lv)
	right, err := a.fromLeaf(j.Right)
	a.outer = a.outer[:len(a.outer)-1]
	if err != nil {
		return err
	}
	outer := j.Tp == ast.LeftJoin
	if outer && j.On == nil {
		return sqlerr.New(sqlerr.SyntaxError, "an outer join requires an ON condition")
	}
	if len(lv.binds) == 0 && !outer {
		// Nothing to the left is read: an ordinary join item.
		*items = append(append(*items, litems...), right)
		*ons = append(*ons, lons...)
		if j.On != nil {
			*ons = append(*ons, j.On.Expr)
		}
		return nil
	}
	lnode, lsc, err := a.joinGroup(litems, lons, nil)
	if err != nil {
		return err
	}
	ap := &planner.Apply{Left: lnode, Right: right.node, Binds: lv.binds, Slots: lv.slots, Outer: outer}
	ap.Cols = append(append([]planner.Column(nil), lnode.Columns()...), right.node.Columns()...)
	sc := &scope{cols: append(append([]scopeColumn(nil), lsc.cols...), right.sc.cols...)}
	if j.On != nil {
		if outer {
			if ap.Cond, err = a.buildCondition(sc, j.On.Expr, "JOIN/ON"); err != nil {
				return err
			}
		} else {
			*ons = append(*ons, j.On.Expr)
		}
	}
	*items = append(*items, &fromItem{node: ap, sc: sc})
	return nil
}
