package bind

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PrimaryKeyArbiter stands for the primary key in Conflict.Arbiters.
const PrimaryKeyArbiter = -1

// Conflict is INSERT ... ON CONFLICT: what a proposed row that conflicts
// with an existing row on one of the arbiters does instead of failing.
type Conflict struct {
	// Arbiters are the unique constraints that decide a conflict:
	// PrimaryKeyArbiter or an index of Table.Indexes (all of them UNIQUE).
	// A conflict on any other unique index still fails with 23505.
	Arbiters []int
	// Update is DO UPDATE (else DO NOTHING).
	Update bool
	// Assign and Values are DO UPDATE's SET list: Values are evaluated on
	// the existing row followed by the proposed row (EXCLUDED), so column
	// i of the table is input i and EXCLUDED's is input len(Columns)+i.
	Assign []int
	Values []expr.Expr
	// Where is DO UPDATE's condition over the same input (nil: none); a
	// conflicting row that fails it is left alone, like DO NOTHING.
	Where expr.Expr
}

// conflictClause binds ON CONFLICT for an INSERT into t.
func (a *binder) conflictClause(n *ast.InsertStmt, t *catalog.Table, oc *parser.OnConflict) (*Conflict, error) {
	c := &Conflict{Update: oc.Update}
	var err error
	if c.Arbiters, err = conflictArbiters(t, oc); err != nil {
		return nil, err
	}
	if !oc.Update {
		return c, nil
	}
	// The existing row is named after the table; the proposed row is
	// EXCLUDED.
	sc := tableScope(t, "")
	ex := tableScope(t, "excluded")
	sc.cols = append(sc.cols, ex.cols...)
	if c.Assign, c.Values, err = a.assignments(t, sc, n.OnDuplicate); err != nil {
		return nil, err
	}
	if oc.Where != nil {
		if c.Where, err = a.buildCondition(sc, oc.Where, "WHERE"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// conflictArbiters resolves the conflict target: the unique constraint
// whose columns are exactly the listed ones, or the one named, or (for a
// bare DO NOTHING) every unique constraint of the table.
func conflictArbiters(t *catalog.Table, oc *parser.OnConflict) ([]int, error) {
	hasKey := t.HiddenKeyColumn() < 0
	switch {
	case oc.Constraint != "":
		if hasKey && strings.EqualFold(oc.Constraint, t.Name+"_pkey") {
			return []int{PrimaryKeyArbiter}, nil
		}
		for i, ix := range t.Indexes {
			if ix.Unique && strings.EqualFold(ix.Name, oc.Constraint) {
				return []int{i}, nil
			}
		}
		return nil, sqlerr.New(sqlerr.UndefinedObject, "constraint %q for table %q does not exist", oc.Constraint, t.Name)
	case len(oc.Columns) > 0:
		var cols []int
		for _, name := range oc.Columns {
			i := t.ColumnIndex(name)
			if i < 0 || t.Columns[i].Hidden {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name)
			}
			if !slices.Contains(cols, i) {
				cols = append(cols, i)
			}
		}
		if hasKey && sameSet(cols, t.PrimaryKey) {
			return []int{PrimaryKeyArbiter}, nil
		}
		for i, ix := range t.Indexes {
			if ix.Unique && sameSet(cols, ix.Columns) {
				return []int{i}, nil
			}
		}
		return nil, sqlerr.New(sqlerr.InvalidColumnReference,
			"there is no unique or exclusion constraint matching the ON CONFLICT specification")
	}
	var all []int
	if hasKey {
		all = append(all, PrimaryKeyArbiter)
	}
	for i, ix := range t.Indexes {
		if ix.Unique {
			all = append(all, i)
		}
	}
	return all, nil
}

// sameSet reports whether a and b hold the same column indexes (each
// holds distinct ones).
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
