package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// orderItem is one ORDER BY item with the place of its NULLs decided.
type orderItem struct {
	*ast.ByItem
	nullsFirst bool
}

// orderItems reads an ORDER BY list: the dialect front writes NULLS FIRST
// and NULLS LAST as marker items (pivot_nulls_first()) after the item they
// qualify; an item without one gets the dialect's default
// (planner.NullsDefault).
func (a *binder) orderItems(items []*ast.ByItem) ([]orderItem, error) {
	out := make([]orderItem, 0, len(items))
	explicit := false
	for _, it := range items {
		if first, ok := nullsMarker(it.Expr); ok {
			if len(out) == 0 || explicit {
				return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"NULLS\"")
			}
			out[len(out)-1].nullsFirst = first
			explicit = true
			continue
		}
		out = append(out, orderItem{ByItem: it, nullsFirst: planner.NullsDefault(it.Desc, a.pg())})
		explicit = false
	}
	return out, nil
}

// nullsMarker recognises the NULLS FIRST/LAST marker item.
func nullsMarker(n ast.ExprNode) (first, ok bool) {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	call, isCall := n.(*ast.FuncCallExpr)
	if !isCall || len(call.Args) != 0 {
		return false, false
	}
	switch call.FnName.L {
	case expr.NullsFirstFunc:
		return true, true
	case expr.NullsLastFunc:
		return false, true
	}
	return false, false
}
