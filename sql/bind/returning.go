package bind

import (
	"strings"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Returning is the RETURNING list of a write: expressions over the table's
// row as written (INSERT, UPSERT, REPLACE, UPDATE: the new row; DELETE: the
// row deleted), one result row per row written.
type Returning struct {
	Exprs []expr.Expr
	Cols  []planner.Column
}

// returning binds the statement's RETURNING list against the row of table
// t (nil when there is none). sc resolves the table's columns by name.
func (a *binder) returning(t *catalog.Table, sc *scope) (*Returning, error) {
	fields := a.stmt.Returning
	if fields == nil {
		return nil, nil
	}
	if err := a.requireTable(t, acl.Select); err != nil {
		return nil, err
	}
	if hasAggregate(fields, nil) {
		return nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in RETURNING")
	}
	r := &Returning{}
	for _, f := range fields {
		if w := f.WildCard; w != nil {
			if w.Table.O != "" && !strings.EqualFold(w.Table.O, sc.cols[0].table) {
				return nil, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", w.Table.O)
			}
			for i, c := range t.Columns {
				if c.Hidden {
					continue
				}
				r.Exprs = append(r.Exprs, &expr.ColumnRef{Index: i, Name: c.Name, Typ: c.Type})
				r.Cols = append(r.Cols, planner.Column{Name: c.Name, Type: c.Type, Table: t, Index: i})
			}
			continue
		}
		e, err := a.build(sc, f.Expr, nil)
		if err != nil {
			return nil, err
		}
		col := planner.Column{Name: outputName(f), Type: e.Type()}
		if ref, ok := e.(*expr.ColumnRef); ok && ref.Index < len(t.Columns) {
			// A plain column keeps its table and attribute number, which
			// drivers read from RowDescription (pgjdbc's getGeneratedKeys).
			col.Table, col.Index = t, ref.Index
		}
		r.Exprs = append(r.Exprs, e)
		r.Cols = append(r.Cols, col)
	}
	return r, nil
}

// Columns describes the rows RETURNING produces (nil without RETURNING).
func (r *Returning) Columns() []planner.Column {
	if r == nil {
		return nil
	}
	return r.Cols
}
