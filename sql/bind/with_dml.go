package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Data-modifying statements in WITH (parser.WithDML): each query is bound
// as the statement it is, in the order written, and its name is put in
// scope for the queries after it and the main statement as a relation of
// its RETURNING columns. Reading it is a planner.Generate over the rows
// the query returned, which the session stores in DMLQuery.Rows when it
// runs the queries, before the main statement starts (sql/with_dml.go):
// each query runs exactly once, referenced or not, as in PostgreSQL.

// WithDML is a statement headed by data-modifying WITH queries.
type WithDML struct {
	Queries []*DMLQuery
	Main    Statement
}

func (p *WithDML) Columns() []planner.Column { return p.Main.Columns() }

// DMLQuery is one data-modifying WITH query.
type DMLQuery struct {
	Name string
	// Plan is the *Insert or *Modify.
	Plan Statement
	// Rows are its RETURNING rows (visible columns only), set by the
	// session each time the statement runs.
	Rows [][]types.Value
}

// dmlCTE is a data-modifying WITH query in scope (cteDef.dml).
type dmlCTE struct {
	q    *DMLQuery
	cols []planner.Column // nil: no RETURNING
	// names are the column names the WITH gave, if any.
	names []string
}

// planWithDML binds the data-modifying queries, then the main statement.
func (a *binder) planWithDML() (Statement, error) {
	st := a.stmt
	out := &WithDML{}
	seen := map[string]bool{}
	saved := a.ctes
	defer func() { a.ctes, a.stmt = saved, st }()
	for k := range st.WithDML {
		w := &st.WithDML[k]
		name := strings.ToLower(w.Name)
		if seen[name] {
			return nil, sqlerr.New(sqlerr.DuplicateAlias, "WITH query name %q specified more than once", w.Name)
		}
		seen[name] = true
		// The WITH's other queries are visible to this one (all of
		// them: PostgreSQL lets it see only those written before it).
		a.stmt = st
		pop := func() {}
		if with := topWith(st.AST); with != nil {
			var err error
			if pop, err = a.pushWith(with); err != nil {
				return nil, err
			}
		}
		a.stmt = &w.Stmt
		plan, err := a.plan()
		pop()
		if err != nil {
			return nil, err
		}
		switch plan.(type) {
		case *Insert, *Modify:
		default:
			return nil, sqlerr.NotSupported("this statement in WITH")
		}
		q := &DMLQuery{Name: w.Name, Plan: plan}
		out.Queries = append(out.Queries, q)
		d := &dmlCTE{q: q, names: w.Cols}
		for _, c := range plan.Columns() {
			if !c.Hidden {
				d.cols = append(d.cols, planner.Column{Name: c.Name, Type: c.Type})
			}
		}
		a.ctes = append(a.ctes, &cteDef{name: name, dml: d})
	}
	a.stmt = st
	if with := topWith(st.AST); with != nil {
		for _, c := range with.CTEs {
			if seen[c.Name.L] {
				return nil, sqlerr.New(sqlerr.DuplicateAlias, "WITH query name %q specified more than once", c.Name.O)
			}
		}
	}
	main := *st
	main.WithDML = nil
	a.stmt = &main
	plan, err := a.plan()
	if err != nil {
		return nil, err
	}
	out.Main = plan
	return out, nil
}

// topWith is the WITH clause that heads a statement, if any.
func topWith(n ast.StmtNode) *ast.WithClause {
	switch n := n.(type) {
	case *ast.SelectStmt:
		return n.With
	case *ast.SetOprStmt:
		return n.With
	case *ast.UpdateStmt:
		return n.With
	case *ast.DeleteStmt:
		return n.With
	}
	return nil
}

// dmlSource plans a reference to a data-modifying WITH query.
func (a *binder) dmlSource(def *cteDef, alias string) (planner.Node, *scope, error) {
	d := def.dml
	if d.cols == nil {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "WITH query %q does not have a RETURNING clause", d.q.Name)
	}
	if len(d.names) > len(d.cols) {
		return nil, nil, sqlerr.New(sqlerr.InvalidColumnReference, "WITH query %q has %d columns available but %d columns specified", d.q.Name, len(d.cols), len(d.names))
	}
	if alias == "" {
		alias = d.q.Name
	}
	q, width := d.q, len(d.cols)
	node := &planner.Generate{Name: "WITH " + d.q.Name, Cols: d.cols, Rows: func() ([][]types.Value, error) {
		out := make([][]types.Value, len(q.Rows))
		for i, r := range q.Rows {
			out[i] = r[:width:width]
		}
		return out, nil
	}}
	n, sc := derivedTable(node, alias, d.names)
	return n, sc, nil
}
