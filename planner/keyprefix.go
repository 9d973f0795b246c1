package planner

import (
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
)

// KeyPrefix finds equalities `keycol = constant-or-parameter` among the
// top-level conjuncts of cond and returns the values fixing the longest
// prefix of the primary key (nil if the first key column is not fixed).
// The filter stays applied in full, so this only narrows the read.
func KeyPrefix(t *catalog.Table, cond expr.Expr) []expr.Expr {
	fixed := map[int]expr.Expr{}
	var visit func(e expr.Expr)
	visit = func(e expr.Expr) {
		switch e := e.(type) {
		case *expr.And:
			visit(e.L)
			visit(e.R)
		case *expr.Compare:
			if e.Op != expr.EQ {
				return
			}
			col, val := e.L, e.R
			if _, ok := col.(*expr.ColumnRef); !ok {
				col, val = val, col
			}
			ref, ok := col.(*expr.ColumnRef)
			if !ok || !expr.IsRowIndependent(val) || !expr.IsDeterministic(val) {
				return
			}
			if _, seen := fixed[ref.Index]; !seen {
				fixed[ref.Index] = val
			}
		}
	}
	visit(cond)
	var prefix []expr.Expr
	for _, k := range t.PrimaryKey {
		v, ok := fixed[k]
		if !ok {
			break
		}
		prefix = append(prefix, v)
	}
	return prefix
}
