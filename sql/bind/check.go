package bind

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// CHECK constraints (catalog.Check): stored as SQL text over the table's
// columns, bound for every write (Insert.Checks, Modify.Checks) and for
// ALTER TABLE's validation of stored rows.

// addCheck adds a CHECK constraint to t, named as PostgreSQL names it when
// unnamed: t_col_check (the column it is declared on, or the only column
// it uses), t_check otherwise, with a number added to make the
// name unique. It returns the name.
func (a *binder) addCheck(t *catalog.Table, name string, n ast.ExprNode, onColumn string, notValid bool) (string, error) {
	text := restore(n)
	if name == "" {
		// PostgreSQL names it after its column when it uses exactly one.
		col := onColumn
		if col == "" {
			var used []string
			n.Accept(&columnNames{fn: func(c *ast.ColumnNameExpr) {
				if !slices.ContainsFunc(used, func(u string) bool { return strings.EqualFold(u, c.Name.Name.O) }) {
					used = append(used, c.Name.Name.O)
				}
			}})
			if len(used) == 1 {
				col = used[0]
			}
		}
		base := t.Name
		if col != "" {
			base += "_" + col
		}
		name = base + "_check"
		for k := 1; t.Check(name) != nil; k++ {
			name = fmt.Sprintf("%s_check%d", base, k)
		}
	} else if t.Check(name) != nil || t.Index(name) != nil || strings.EqualFold(name, t.Name+"_pkey") {
		return "", sqlerr.New(sqlerr.DuplicateObject, "constraint %q for relation %q already exists", name, t.Name)
	}
	if _, err := a.checkExpr(t, text); err != nil {
		return "", err
	}
	t.Checks = append(t.Checks, catalog.Check{Name: name, Expr: text, NotValid: notValid})
	return name, nil
}

// checkExpr binds the text of a CHECK constraint over t's row: a boolean,
// deterministic expression without parameters or subqueries.
func (a *binder) checkExpr(t *catalog.Table, text string) (expr.Expr, error) {
	n, err := parseExpr(text)
	if err != nil {
		return nil, err
	}
	var sub bool
	n.Accept(&subqueryFinder{found: &sub})
	if sub {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot use subquery in check constraint")
	}
	e, err := a.buildStored(tableScope(t, ""), n)
	if err != nil {
		return nil, err
	}
	if expr.HasParams(e) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "parameters in a check constraint are not supported")
	}
	if !expr.IsDeterministic(e) {
		return nil, sqlerr.New(sqlerr.InvalidObjectDefinition, "the expression of a check constraint must be deterministic")
	}
	if f := e.Type().Family; f != types.Bool && f != types.Null && f != types.Unknown {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of CHECK must be type boolean, not type %s", e.Type())
	}
	return e, nil
}

// checkExprs binds every CHECK constraint of t (nil when it has none).
func (a *binder) checkExprs(t *catalog.Table) ([]Check, error) {
	var out []Check
	for _, c := range t.Checks {
		e, err := a.checkExpr(t, c.Expr)
		if err != nil {
			return nil, err
		}
		out = append(out, Check{Name: c.Name, Expr: e})
	}
	return out, nil
}

// subqueryFinder notes whether an expression has a subquery.
type subqueryFinder struct{ found *bool }

func (v *subqueryFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.SubqueryExpr); ok {
		*v.found = true
		return n, true
	}
	return n, false
}

func (v *subqueryFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// rowRules binds what every write of table t applies to a row it stores:
// its computed columns, its CHECK constraints and its foreign keys (INSERT
// and UPDATE share them).
func (a *binder) rowRules(t *catalog.Table) (computed []expr.Expr, checks []Check, fk *FKGraph, err error) {
	if computed, err = a.computedExprs(t); err != nil {
		return nil, nil, nil, err
	}
	if checks, err = a.checkExprs(t); err != nil {
		return nil, nil, nil, err
	}
	if fk, err = a.fkGraph(t); err != nil {
		return nil, nil, nil, err
	}
	return computed, checks, fk, nil
}
