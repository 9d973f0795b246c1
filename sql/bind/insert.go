package bind

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// planInsert binds INSERT, UPSERT and REPLACE: the table, its target
// columns, the source rows, and the defaults and computed columns that
// complete each row.
func (a *binder) planInsert(n *ast.InsertStmt) (Statement, error) {
	t, err := a.insertTable(n)
	if err != nil {
		return nil, err
	}
	p := &Insert{Table: t, Mode: ModeInsert}
	switch {
	case a.stmt.Upsert:
		p.Mode = ModeUpsert
	case n.IsReplace:
		p.Mode = ModeReplace
	}
	need := acl.Insert
	if p.Mode != ModeInsert {
		need |= acl.Update // UPSERT and REPLACE overwrite existing rows
	}
	if err := a.requireTable(t, need); err != nil {
		return nil, err
	}

	if p.Target, err = insertTarget(t, n.Columns); err != nil {
		return nil, err
	}
	if p.Source, p.Target, err = a.insertSource(n, t, p.Target); err != nil {
		return nil, err
	}
	if err := a.identityAlwaysWrites(n, t, p.Target); err != nil {
		return nil, err
	}
	if p.Computed, p.Checks, p.FK, err = a.rowRules(t); err != nil {
		return nil, err
	}
	if p.Defaults, err = a.columnDefaults(t); err != nil {
		return nil, err
	}
	if oc := a.stmt.OnConflict; oc != nil {
		if p.Mode != ModeInsert {
			return nil, sqlerr.New(sqlerr.SyntaxError, "ON CONFLICT is only allowed on INSERT, not on %s", p.Mode.Verb())
		}
		if p.Conflict, err = a.conflictClause(n, t, oc); err != nil {
			return nil, err
		}
	}
	// ON CONFLICT DO UPDATE updates rows (RETURNING's SELECT privilege is
	// checked by returning).
	if p.Conflict != nil && p.Conflict.Update {
		if err := a.requireTable(t, acl.Update); err != nil {
			return nil, err
		}
	}
	if p.Returning, err = a.returning(t, tableScope(t, "")); err != nil {
		return nil, err
	}
	return p, nil
}

// insertTable resolves the table INSERT writes, refusing MySQL's forms.
func (a *binder) insertTable(n *ast.InsertStmt) (*catalog.Table, error) {
	switch {
	case n.OnDuplicate != nil && a.stmt.OnConflict == nil:
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
	return a.lookupTable(tn)
}

// insertTarget resolves the target columns: the listed ones, or every
// visible column in order. Computed columns cannot be written.
func insertTarget(t *catalog.Table, listed []*ast.ColumnName) ([]int, error) {
	var target []int
	if len(listed) == 0 {
		for i, c := range t.Columns {
			if !c.Hidden && c.Computed == "" {
				target = append(target, i)
			}
		}
		return target, nil
	}
	seen := map[int]bool{}
	for _, c := range listed {
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
		target = append(target, i)
	}
	return target, nil
}

// insertSource binds the rows to insert: a query, or a VALUES list whose
// items take the types of their target columns. Without a column list a
// source of N < len(target) values writes the first N target columns, as
// in PostgreSQL (the others get their defaults); it returns the target
// columns it writes.
func (a *binder) insertSource(n *ast.InsertStmt, t *catalog.Table, target []int) (planner.Node, []int, error) {
	implicit := len(n.Columns) == 0
	if n.Select == nil {
		var lens []int
		if lits := a.stmt.Values; lits != nil {
			lens = make([]int, len(lits.Ends))
			for r := range lits.Ends {
				lens[r] = len(lits.Row(r))
			}
		} else {
			lens = make([]int, len(n.Lists))
			for i, l := range n.Lists {
				lens[i] = len(l)
			}
		}
		target, err := valuesTarget(lens, target, implicit)
		if err != nil {
			return nil, nil, err
		}
		var node planner.Node
		if a.stmt.Values != nil {
			node, err = a.insertLiterals(a.stmt.Values, t, target)
		} else {
			node, err = a.insertValues(n.Lists, t, target)
		}
		return node, target, err
	}
	if sel, isSelect := n.Select.(*ast.SelectStmt); isSelect && sel.Kind == ast.SelectStmtKindValues {
		return nil, nil, sqlerr.NotSupported("VALUES statement as INSERT source")
	}
	node, ok, err := a.buildQueryStmt(n.Select)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, sqlerr.NotSupported("this INSERT source")
	}
	got := planner.VisibleCount(node.Columns())
	if implicit && got < len(target) {
		target = target[:got]
	}
	if got != len(target) {
		return nil, nil, insertArityError(got, len(target))
	}
	return node, target, nil
}

// valuesTarget checks the lengths of INSERT's VALUES lists (lens) against
// the target columns as PostgreSQL does, row by row: each list as long as
// the first (42601 "VALUES lists must all be the same length"), none
// longer than the targets, and none shorter when the columns were listed.
// It returns the columns the rows write: the first len(lens[0]) targets
// when none were listed.
func valuesTarget(lens []int, target []int, implicit bool) ([]int, error) {
	for _, n := range lens {
		switch {
		case n != lens[0]:
			return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length")
		case n > len(target) || (!implicit && n < len(target)):
			return nil, insertArityError(n, len(target))
		}
	}
	if implicit && len(lens) > 0 {
		target = target[:lens[0]]
	}
	return target, nil
}

// insertValues binds INSERT ... VALUES (...), ...; DEFAULT stands for the
// column's default.
func (a *binder) insertValues(lists [][]ast.ExprNode, t *catalog.Table, target []int) (planner.Node, error) {
	rows := make([][]expr.Expr, len(lists))
	for r, list := range lists {
		if len(list) != len(target) {
			return nil, insertArityError(len(list), len(target))
		}
		rows[r] = make([]expr.Expr, len(list))
		for i, item := range list {
			col := t.Columns[target[i]]
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
	cols := make([]planner.Column, len(target))
	for i, ti := range target {
		cols[i] = planner.Column{Name: t.Columns[ti].Name, Type: t.Columns[ti].Type}
	}
	return &planner.Values{Rows: rows, Cols: cols}, nil
}

// insertLiterals is insertValues for the rows the dialect front read
// without TiDB's parser (parser.Statement.Values): the same expressions,
// built by one expression builder straight from the literals.
func (a *binder) insertLiterals(lits *parser.LiteralRows, t *catalog.Table, target []int) (planner.Node, error) {
	if a.fnArgs != nil {
		// A set-returning function's body is a query; an INSERT never
		// gets here from one.
		return nil, sqlerr.New(sqlerr.InternalError, "bind: literal VALUES in a function body")
	}
	b := a.builder(nil, nil)
	rows := make([][]expr.Expr, len(lits.Ends))
	for r := range lits.Ends {
		list := lits.Row(r)
		if len(list) != len(target) {
			return nil, insertArityError(len(list), len(target))
		}
		rows[r] = make([]expr.Expr, len(list))
		for i := range list {
			item := &list[i]
			col := t.Columns[target[i]]
			if item.Kind == parser.LitDefault {
				d, err := a.columnDefault(col)
				if err != nil {
					return nil, err
				}
				rows[r][i] = d
				continue
			}
			if item.Kind == parser.LitParam && item.Cast == "" {
				// hintParam's rule for a bare parameter.
				n := int(item.Int)
				for len(b.ParamTypes) < n {
					b.ParamTypes = append(b.ParamTypes, types.TypeUnknown)
				}
				if f := b.ParamTypes[n-1].Family; f == types.Unknown || f == types.Null {
					b.ParamTypes[n-1] = col.Type
				}
			}
			e, err := b.BuildLiteral(item, lits.Position, types.TypeUtf8)
			a.params = b.ParamTypes
			if err != nil {
				return nil, err
			}
			rows[r][i] = e
		}
	}
	cols := make([]planner.Column, len(target))
	for i, ti := range target {
		cols[i] = planner.Column{Name: t.Columns[ti].Name, Type: t.Columns[ti].Type}
	}
	return &planner.Values{Rows: rows, Cols: cols}, nil
}

// columnDefaults builds the DEFAULT of every column that has one (nil for
// the others).
func (a *binder) columnDefaults(t *catalog.Table) ([]expr.Expr, error) {
	defaults := make([]expr.Expr, len(t.Columns))
	for i, c := range t.Columns {
		if c.Default != "" {
			d, err := a.columnDefault(c)
			if err != nil {
				return nil, err
			}
			defaults[i] = d
		}
	}
	return defaults, nil
}

func insertArityError(got, want int) error {
	if got > want {
		return sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	return sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
}

// columnDefault builds a column's DEFAULT expression (NULL when none).
func (a *binder) columnDefault(c catalog.Column) (expr.Expr, error) {
	if c.Default == "" {
		return expr.NullOf(c.Type), nil
	}
	n, err := parseStoredExpr(c.Default)
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

// identityAlwaysWrites refuses values for GENERATED ALWAYS identity
// columns: only DEFAULT may be written there (428C9).
func (a *binder) identityAlwaysWrites(n *ast.InsertStmt, t *catalog.Table, target []int) error {
	for i, ti := range target {
		col := t.Columns[ti]
		if col.Identity != catalog.IdentityAlways {
			continue
		}
		if n.Select != nil {
			return identityAlwaysError(col.Name, false)
		}
		if lits := a.stmt.Values; lits != nil {
			for r := range lits.Ends {
				if row := lits.Row(r); i < len(row) && row[i].Kind != parser.LitDefault {
					return identityAlwaysError(col.Name, false)
				}
			}
			continue
		}
		for _, list := range n.Lists {
			if i >= len(list) {
				continue // the arity error comes later
			}
			if _, ok := list[i].(*ast.DefaultExpr); !ok {
				return identityAlwaysError(col.Name, false)
			}
		}
	}
	return nil
}
