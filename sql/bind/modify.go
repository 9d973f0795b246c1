package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func (a *binder) modifyTarget(refs *ast.TableRefsClause) (*planner.Scan, *scope, error) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return nil, nil, sqlerr.NotSupported("multi-table UPDATE and DELETE")
	}
	ts, ok := refs.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, nil, sqlerr.NotSupported("UPDATE or DELETE of this target")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, nil, sqlerr.NotSupported("UPDATE or DELETE of this target")
	}
	t, err := a.lookupTable(tn)
	if err != nil {
		return nil, nil, err
	}
	cols := make([]planner.Column, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = planner.Column{Name: c.Name, Type: c.Type, Table: t, Index: i}
	}
	return &planner.Scan{Table: t, Cols: cols}, tableScope(t, ts.AsName.O), nil
}

func (a *binder) planWhere(scan *planner.Scan, sc *scope, where ast.ExprNode) error {
	if where == nil {
		return nil
	}
	cond, err := a.buildCondition(sc, where, "WHERE")
	if err != nil {
		return err
	}
	return a.setScanCondition(scan, cond)
}

// setScanCondition makes cond the scan's filter and compiles its key
// ranges, computed key columns included.
func (a *binder) setScanCondition(scan *planner.Scan, cond expr.Expr) error {
	scan.Filter = cond
	computed, err := a.computedExprs(scan.Table)
	if err != nil {
		return err
	}
	var byIndex map[int]expr.Expr
	for i, e := range computed {
		if e != nil {
			if byIndex == nil {
				byIndex = map[int]expr.Expr{}
			}
			byIndex[i] = e
		}
	}
	scan.Ranges = planner.CompileRanges(scan.Table, cond, byIndex)
	scan.Index, scan.IndexEntries, scan.IndexRanges = nil, nil, nil
	if !a.setting("enable_indexscan") {
		return nil // SET enable_indexscan = off: the primary key's ranges only
	}
	if ic, ok := planner.ChooseIndex(scan.Table, cond, scan.Ranges); ok {
		scan.Index, scan.IndexEntries, scan.IndexRanges = ic.Index, ic.Entries, ic.Ranges
	}
	return nil
}

func (a *binder) planUpdate(n *ast.UpdateStmt) (Statement, error) {
	if n.Order != nil || n.Limit != nil {
		return nil, sqlerr.NotSupported("UPDATE with ORDER BY or LIMIT")
	}
	scan, sc, err := a.modifyTarget(n.TableRefs)
	if err != nil {
		return nil, err
	}
	need := acl.Update
	values := []ast.Node{n.Where}
	for _, as := range n.List {
		values = append(values, as.Expr)
	}
	if readsColumns(values...) {
		need |= acl.Select
	}
	if err := a.requireTable(scan.Table, need); err != nil {
		return nil, err
	}
	p := &Modify{Scan: scan, Update: true}
	t := scan.Table
	if p.Assign, p.Values, err = a.assignments(t, sc, n.List); err != nil {
		return nil, err
	}
	if err := a.planWhere(scan, sc, n.Where); err != nil {
		return nil, err
	}
	if p.Computed, p.Checks, p.FK, err = a.rowRules(t); err != nil {
		return nil, err
	}
	if p.Returning, err = a.returning(t, sc); err != nil {
		return nil, err
	}
	return p, nil
}

// assignments binds the SET list of UPDATE (or of ON CONFLICT DO UPDATE):
// the columns assigned and their new values, expressions over sc.
func (a *binder) assignments(t *catalog.Table, sc *scope, list []*ast.Assignment) (assign []int, values []expr.Expr, err error) {
	seen := map[int]bool{}
	// subscripted[i] is the index in values of column i's assignment when
	// it sets elements (SET a[1] = x, a[2] = y): later ones apply to its
	// result, as in PostgreSQL.
	subscripted := map[int]int{}
	for _, as := range list {
		if as.Column.Table.O != "" && !strings.EqualFold(as.Column.Table.O, t.Name) {
			return nil, nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s.%s\" of relation %q does not exist",
				as.Column.Table.O, as.Column.Name.O, t.Name)
		}
		i := t.ColumnIndex(as.Column.Name.O)
		if i < 0 || t.Columns[i].Hidden {
			return nil, nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", as.Column.Name.O, t.Name)
		}
		elem := isArrayAssign(as)
		// The array an element assignment changes is the target row's
		// column, whatever else the scope has (ON CONFLICT's EXCLUDED
		// has the same names).
		var targetCol replaceFn
		if elem {
			target := as.Expr.(*ast.FuncCallExpr).Args[0]
			col := &expr.ColumnRef{Index: i, Name: t.Columns[i].Name, Typ: t.Columns[i].Type}
			targetCol = func(n ast.ExprNode) (expr.Expr, bool, error) {
				if n == target {
					return col, true, nil
				}
				return nil, false, nil
			}
		}
		if prev, ok := subscripted[i]; ok && elem {
			e, err := a.build(sc, as.Expr, targetCol)
			if err != nil {
				return nil, nil, err
			}
			aa, ok := e.(*expr.ArrayAssign)
			if !ok {
				return nil, nil, sqlerr.New(sqlerr.InternalError, "bind: %s built as %T", parser.ArrayAssignFunc, e)
			}
			aa.Arr = values[prev]
			values[prev] = aa
			continue
		}
		if seen[i] {
			return nil, nil, sqlerr.New(sqlerr.SyntaxError, "multiple assignments to same column %q", as.Column.Name.O)
		}
		if elem {
			subscripted[i] = len(values)
		}
		if t.Columns[i].Computed != "" {
			return nil, nil, computedWriteError(t.Columns[i].Name)
		}
		seen[i] = true
		var e expr.Expr
		_, isDefault := as.Expr.(*ast.DefaultExpr)
		if t.Columns[i].Identity == catalog.IdentityAlways && !isDefault {
			return nil, nil, identityAlwaysError(t.Columns[i].Name, true)
		}
		if isDefault {
			if e, err = a.columnDefault(t.Columns[i]); err != nil {
				return nil, nil, err
			}
		} else {
			a.hintParam(as.Expr, t.Columns[i].Type)
			if e, err = a.build(sc, as.Expr, targetCol); err != nil {
				return nil, nil, err
			}
		}
		assign = append(assign, i)
		values = append(values, e)
	}
	return assign, values, nil
}

func (a *binder) planDelete(n *ast.DeleteStmt) (Statement, error) {
	if n.IsMultiTable || n.Order != nil || n.Limit != nil {
		return nil, sqlerr.NotSupported("DELETE with several tables, ORDER BY or LIMIT")
	}
	scan, sc, err := a.modifyTarget(n.TableRefs)
	if err != nil {
		return nil, err
	}
	need := acl.Delete
	if readsColumns(n.Where) {
		need |= acl.Select
	}
	if err := a.requireTable(scan.Table, need); err != nil {
		return nil, err
	}
	if err := a.planWhere(scan, sc, n.Where); err != nil {
		return nil, err
	}
	fk, err := a.fkGraph(scan.Table)
	if err != nil {
		return nil, err
	}
	ret, err := a.returning(scan.Table, sc)
	if err != nil {
		return nil, err
	}
	return &Modify{Scan: scan, FK: fk, Returning: ret}, nil
}

// isArrayAssign reports whether as is SET a[...] = v, which the dialect
// front spells SET a = pivot_array_assign(a, ...).
func isArrayAssign(as *ast.Assignment) bool {
	call, ok := as.Expr.(*ast.FuncCallExpr)
	if !ok || call.FnName.L != parser.ArrayAssignFunc || len(call.Args) == 0 {
		return false
	}
	c, ok := call.Args[0].(*ast.ColumnNameExpr)
	return ok && strings.EqualFold(c.Name.Name.O, as.Column.Name.O)
}
