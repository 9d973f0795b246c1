package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// maxViewDepth bounds views defined over views. A cycle cannot be created
// directly (a view's query must plan when it is created), but dropping and
// re-creating views can make one; the bound turns it into an error.
const maxViewDepth = 32

func (a *binder) planCreateView(n *ast.CreateViewStmt) (Statement, error) {
	if n.OrReplace {
		return nil, sqlerr.NotSupported("CREATE OR REPLACE VIEW")
	}
	if schema := n.ViewName.Schema.O; schema != "" && !strings.EqualFold(schema, a.env.Database.Name) && !strings.EqualFold(schema, "public") {
		return nil, sqlerr.NotSupported("creating a view in another database (%s)", schema)
	}
	if a.stmt.NumParams > 0 {
		return nil, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $1 in a view definition")
	}
	if _, err := a.viewQuery(n); err != nil {
		return nil, err
	}
	cv := &CreateView{Name: n.ViewName.Name.O, Text: a.stmt.Text}
	if a.pg() {
		cv.Dialect = sessionvars.DialectPostgreSQL
	}
	return cv, nil
}

// viewSource plans a view named in FROM as a derived table; ok is false
// when there is no such view.
func (a *binder) viewSource(tn *ast.TableName, alias string) (planner.Node, *scope, bool, error) {
	if schema := tn.Schema.O; schema != "" && !strings.EqualFold(schema, a.env.Database.Name) && !strings.EqualFold(schema, "public") {
		return nil, nil, false, nil
	}
	v, ok := a.snap.View(a.env.Database.ID, tn.Name.O)
	if !ok {
		return nil, nil, false, nil
	}
	if err := a.requireView(v, acl.Select); err != nil {
		return nil, nil, true, err
	}
	if a.onRelation != nil {
		a.onRelation(LockRelation{View: v, Role: a.access().Role()})
	}
	if a.viewDepth >= maxViewDepth {
		return nil, nil, true, sqlerr.New(sqlerr.InvalidObjectDefinition, "views nested too deeply (a view refers to itself?) at %q", v.Name)
	}
	if alias == "" {
		alias = v.Name
	}
	node, names, err := a.planView(v)
	if err != nil {
		return nil, nil, true, err
	}
	node, sc := derivedTable(node, alias, names)
	return node, sc, true, nil
}

// planView plans a view's query; names is its column list, if it has one.
func (a *binder) planView(v *catalog.View) (planner.Node, []string, error) {
	d := parser.DialectYQL
	if v.Dialect == sessionvars.DialectPostgreSQL {
		d = parser.DialectPostgreSQL
	}
	stmts, err := parser.ParseDialect(v.Definition, d)
	if err != nil || len(stmts) != 1 {
		return nil, nil, sqlerr.New(sqlerr.InternalError, "view %q: stored definition does not parse: %v", v.Name, err)
	}
	cv, ok := stmts[0].AST.(*ast.CreateViewStmt)
	if !ok {
		return nil, nil, sqlerr.New(sqlerr.InternalError, "view %q: stored definition is not CREATE VIEW", v.Name)
	}
	// The view is planned by this binder, so that anything numbered per
	// statement (parameter types, subqueries' hidden parameters) is shared
	// with the query using it; only the statement (for ParamIndex and
	// error positions) is the view's own. A view has no parameters.
	// Nor does a view see the queries around its use: its names resolve
	// in its own FROM clause only.
	// Its tables are read with its owner's privileges.
	saved, savedOuter, savedAs := a.stmt, a.outer, a.checkAs
	a.stmt, a.outer, a.checkAs = &stmts[0], nil, v.OwnerName()
	a.viewDepth++
	node, err := a.viewQuery(cv)
	a.viewDepth--
	a.stmt, a.outer, a.checkAs = saved, savedOuter, savedAs
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, c := range cv.Cols {
		names = append(names, c.O)
	}
	return node, names, nil
}

// viewColumns is a view's result columns as its readers see them (the
// rows pg_attribute lists for it). It plans the view with a binder of its
// own: it is called when a catalog statement's rows are computed, after
// this binder has finished. Privileges are not checked (PostgreSQL lists
// the columns of views one cannot read).
func (a *binder) viewColumns(v *catalog.View) ([]planner.Column, error) {
	b := &binder{env: a.env, snap: a.snap, stmt: a.stmt}
	node, names, err := b.planView(v)
	if err != nil {
		return nil, err
	}
	node, _ = derivedTable(node, v.Name, names)
	return node.Columns(), nil
}

// viewQuery plans a view's query, checking its column list.
func (a *binder) viewQuery(n *ast.CreateViewStmt) (planner.Node, error) {
	rs, ok := n.Select.(ast.ResultSetNode)
	if !ok {
		return nil, sqlerr.NotSupported("this view query")
	}
	node, err := a.fromQuery(rs)
	if err != nil {
		return nil, err
	}
	visible := 0
	for _, c := range node.Columns() {
		if !c.Hidden {
			visible++
		}
	}
	if len(n.Cols) > visible {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE VIEW specifies more column names than columns")
	}
	return node, nil
}
