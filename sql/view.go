package sql

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// maxViewDepth bounds views defined over views. A cycle cannot be created
// directly (a view's query must plan when it is created), but dropping and
// re-creating views can make one; the bound turns it into an error.
const maxViewDepth = 32

// createViewPlan runs CREATE VIEW. The query is planned once here so that
// a view that could not be used is rejected; the catalog keeps the
// statement's text.
type createViewPlan struct {
	name string
	text string
}

func (a *analyser) planCreateView(n *ast.CreateViewStmt) (statementPlan, error) {
	if n.OrReplace {
		return nil, sqlerr.NotSupported("CREATE OR REPLACE VIEW")
	}
	if schema := n.ViewName.Schema.O; schema != "" && !strings.EqualFold(schema, a.s.db.Name) && !strings.EqualFold(schema, "public") {
		return nil, sqlerr.NotSupported("creating a view in another database (%s)", schema)
	}
	if a.stmt.NumParams > 0 {
		return nil, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $1 in a view definition")
	}
	if _, err := a.viewQuery(n); err != nil {
		return nil, err
	}
	return &createViewPlan{name: n.ViewName.Name.O, text: a.stmt.Text}, nil
}

func (p *createViewPlan) columns() []ResultColumn { return nil }

func (p *createViewPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		if relationExists(ch.Snapshot(), s.db.ID, p.name) {
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", p.name)
		}
		ch.PutView(&catalog.View{ID: ch.NewID(), DatabaseID: s.db.ID, Name: p.name, Definition: p.text})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "CREATE VIEW"}, nil
}

// dropViewPlan runs DROP VIEW [IF EXISTS] name, ...
type dropViewPlan struct{ stmt *ast.DropTableStmt }

func (p *dropViewPlan) columns() []ResultColumn { return nil }

func (p *dropViewPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		for _, tn := range p.stmt.Tables {
			if schema := tn.Schema.O; schema != "" && !strings.EqualFold(schema, s.db.Name) && !strings.EqualFold(schema, "public") {
				return sqlerr.NotSupported("dropping a view of another database (%s)", schema)
			}
			v, ok := ch.Snapshot().View(s.db.ID, tn.Name.O)
			if ok {
				ch.DropView(v)
				continue
			}
			if _, isTable := ch.Snapshot().Table(s.db.ID, tn.Name.O); isTable {
				return sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", tn.Name.O)
			}
			if p.stmt.IfExists {
				s.notice("NOTICE", sqlerr.UndefinedTable, "view %q does not exist, skipping", tn.Name.O)
				continue
			}
			return sqlerr.New(sqlerr.UndefinedTable, "view %q does not exist", tn.Name.O)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "DROP VIEW"}, nil
}

// viewSource plans a view named in FROM as a derived table; ok is false
// when there is no such view.
func (a *analyser) viewSource(tn *ast.TableName, alias string) (planner.Node, *scope, bool, error) {
	if schema := tn.Schema.O; schema != "" && !strings.EqualFold(schema, a.s.db.Name) && !strings.EqualFold(schema, "public") {
		return nil, nil, false, nil
	}
	v, ok := a.snap.View(a.s.db.ID, tn.Name.O)
	if !ok {
		return nil, nil, false, nil
	}
	if a.viewDepth >= maxViewDepth {
		return nil, nil, true, sqlerr.New(sqlerr.InvalidObjectDefinition, "views nested too deeply (a view refers to itself?) at %q", v.Name)
	}
	stmts, err := parser.Parse(v.Definition)
	if err != nil || len(stmts) != 1 {
		return nil, nil, true, sqlerr.New(sqlerr.InternalError, "view %q: stored definition does not parse: %v", v.Name, err)
	}
	cv, ok := stmts[0].AST.(*ast.CreateViewStmt)
	if !ok {
		return nil, nil, true, sqlerr.New(sqlerr.InternalError, "view %q: stored definition is not CREATE VIEW", v.Name)
	}
	if alias == "" {
		alias = v.Name
	}
	// The view is planned by this analyser, so that anything numbered per
	// statement (parameter types, subqueries' hidden parameters) is shared
	// with the query using it; only the statement (for ParamIndex and
	// error positions) is the view's own. A view has no parameters.
	saved := a.stmt
	a.stmt = &stmts[0]
	a.viewDepth++
	node, err := a.viewQuery(cv)
	a.viewDepth--
	a.stmt = saved
	if err != nil {
		return nil, nil, true, err
	}
	var names []string
	for _, c := range cv.Cols {
		names = append(names, c.O)
	}
	node, sc := derivedTable(node, alias, names)
	return node, sc, true, nil
}

// viewQuery plans a view's query, checking its column list.
func (a *analyser) viewQuery(n *ast.CreateViewStmt) (planner.Node, error) {
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
