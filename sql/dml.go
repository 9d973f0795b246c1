package sql

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func (a *analyser) planInsert(n *ast.InsertStmt) (bind.Statement, error) {
	switch {
	case n.OnDuplicate != nil:
		return nil, sqlerr.NotSupported("INSERT ... ON DUPLICATE KEY UPDATE (use UPSERT)")
	case n.Setlist:
		return nil, sqlerr.NotSupported("INSERT ... SET")
	case n.IgnoreErr:
		return nil, sqlerr.NotSupported("INSERT IGNORE")
	case len(n.PartitionNames) > 0:
		return nil, sqlerr.NotSupported("INSERT into named partitions")
	}
	ts, ok := n.Table.TableRefs.Left.(*ast.TableSource)
	if !ok || n.Table.TableRefs.Right != nil {
		return nil, sqlerr.NotSupported("INSERT into this target")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, sqlerr.NotSupported("INSERT into this target")
	}
	t, err := a.lookupTable(tn)
	if err != nil {
		return nil, err
	}
	p := &bind.Insert{Table: t, Mode: bind.ModeInsert}
	switch {
	case a.stmt.Upsert:
		p.Mode = bind.ModeUpsert
	case n.IsReplace:
		p.Mode = bind.ModeReplace
	}

	// Target columns: the listed ones, or every visible column in order.
	if len(n.Columns) > 0 {
		seen := map[int]bool{}
		for _, c := range n.Columns {
			i := t.ColumnIndex(c.Name.O)
			if i < 0 || t.Columns[i].Hidden {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", c.Name.O, t.Name)
			}
			if seen[i] {
				return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", c.Name.O)
			}
			if t.Columns[i].Computed != "" {
				return nil, computedWriteError(t.Columns[i].Name)
			}
			seen[i] = true
			p.Target = append(p.Target, i)
		}
	} else {
		for i, c := range t.Columns {
			if !c.Hidden && c.Computed == "" {
				p.Target = append(p.Target, i)
			}
		}
	}

	if n.Select != nil {
		switch src := n.Select.(type) {
		case *ast.SelectStmt:
			if src.Kind == ast.SelectStmtKindValues {
				return nil, sqlerr.NotSupported("VALUES statement as INSERT source")
			}
			node, err := a.buildSelect(src)
			if err != nil {
				return nil, err
			}
			if got := len(resultColumns(node.Columns())); got != len(p.Target) {
				return nil, insertArityError(got, len(p.Target))
			}
			p.Source = node
		case *ast.SetOprStmt:
			node, err := a.buildSetOpr(src)
			if err != nil {
				return nil, err
			}
			if got := len(resultColumns(node.Columns())); got != len(p.Target) {
				return nil, insertArityError(got, len(p.Target))
			}
			p.Source = node
		default:
			return nil, sqlerr.NotSupported("this INSERT source")
		}
	} else {
		rows := make([][]expr.Expr, len(n.Lists))
		for r, list := range n.Lists {
			if len(list) != len(p.Target) {
				return nil, insertArityError(len(list), len(p.Target))
			}
			rows[r] = make([]expr.Expr, len(list))
			for i, item := range list {
				col := t.Columns[p.Target[i]]
				if _, ok := item.(*ast.DefaultExpr); ok {
					d, err := a.columnDefault(col)
					if err != nil {
						return nil, err
					}
					rows[r][i] = d
					continue
				}
				a.hintParam(item, col.Type)
				e, err := a.build(nil, item, nil)
				if err != nil {
					return nil, err
				}
				rows[r][i] = e
			}
		}
		cols := make([]planner.Column, len(p.Target))
		for i, ti := range p.Target {
			cols[i] = planner.Column{Name: t.Columns[ti].Name, Type: t.Columns[ti].Type}
		}
		p.Source = &planner.Values{Rows: rows, Cols: cols}
	}

	var err2 error
	if p.Computed, err2 = a.computedExprs(t); err2 != nil {
		return nil, err2
	}
	p.Defaults = make([]expr.Expr, len(t.Columns))
	for i, c := range t.Columns {
		if c.Default != "" {
			d, err := a.columnDefault(c)
			if err != nil {
				return nil, err
			}
			p.Defaults[i] = d
		}
	}
	return p, nil
}

func insertArityError(got, want int) error {
	if got > want {
		return sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	return sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
}

// columnDefault builds a column's DEFAULT expression (NULL when none).
func (a *analyser) columnDefault(c catalog.Column) (expr.Expr, error) {
	if c.Default == "" {
		return expr.NullOf(c.Type), nil
	}
	n, err := parseExpr(c.Default)
	if err != nil {
		return nil, err
	}
	return a.buildStored(nil, n)
}

// computedWriteError refuses a value for a computed column: writers never
// supply one (YTsaurus), the server computes it.
func computedWriteError(col string) error {
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
		Message: fmt.Sprintf("cannot write a value into computed column %q", col),
		Detail:  "Computed columns are computed from the other columns on every write."}
}

func (a *analyser) modifyTarget(refs *ast.TableRefsClause) (*planner.Scan, *scope, error) {
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

func (a *analyser) planWhere(scan *planner.Scan, sc *scope, where ast.ExprNode) error {
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
func (a *analyser) setScanCondition(scan *planner.Scan, cond expr.Expr) error {
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
	if ic, ok := planner.ChooseIndex(scan.Table, cond, scan.Ranges); ok {
		scan.Index, scan.IndexEntries, scan.IndexRanges = ic.Index, ic.Entries, ic.Ranges
	}
	return nil
}

func (a *analyser) planUpdate(n *ast.UpdateStmt) (bind.Statement, error) {
	if n.Order != nil || n.Limit != nil {
		return nil, sqlerr.NotSupported("UPDATE with ORDER BY or LIMIT")
	}
	scan, sc, err := a.modifyTarget(n.TableRefs)
	if err != nil {
		return nil, err
	}
	p := &bind.Modify{Scan: scan, Update: true}
	t := scan.Table
	seen := map[int]bool{}
	for _, as := range n.List {
		i := t.ColumnIndex(as.Column.Name.O)
		if i < 0 || t.Columns[i].Hidden {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", as.Column.Name.O, t.Name)
		}
		if seen[i] {
			return nil, sqlerr.New(sqlerr.SyntaxError, "multiple assignments to same column %q", as.Column.Name.O)
		}
		if t.Columns[i].Computed != "" {
			return nil, computedWriteError(t.Columns[i].Name)
		}
		seen[i] = true
		var e expr.Expr
		if _, ok := as.Expr.(*ast.DefaultExpr); ok {
			if e, err = a.columnDefault(t.Columns[i]); err != nil {
				return nil, err
			}
		} else {
			a.hintParam(as.Expr, t.Columns[i].Type)
			if e, err = a.build(sc, as.Expr, nil); err != nil {
				return nil, err
			}
		}
		p.Assign = append(p.Assign, i)
		p.Values = append(p.Values, e)
	}
	if err := a.planWhere(scan, sc, n.Where); err != nil {
		return nil, err
	}
	if p.Computed, err = a.computedExprs(t); err != nil {
		return nil, err
	}
	return p, nil
}

func (a *analyser) planDelete(n *ast.DeleteStmt) (bind.Statement, error) {
	if n.IsMultiTable || n.Order != nil || n.Limit != nil {
		return nil, sqlerr.NotSupported("DELETE with several tables, ORDER BY or LIMIT")
	}
	scan, sc, err := a.modifyTarget(n.TableRefs)
	if err != nil {
		return nil, err
	}
	if err := a.planWhere(scan, sc, n.Where); err != nil {
		return nil, err
	}
	return &bind.Modify{Scan: scan}, nil
}
