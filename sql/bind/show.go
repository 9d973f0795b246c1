package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// planShowVar is SHOW name / SHOW ALL.
func (a *binder) planShowVar(st *parser.ShowVar) (Statement, error) {
	if st.All {
		return &ShowVar{All: true}, nil
	}
	name := strings.ToLower(st.Name)
	if !sessionvars.Known(name) {
		return nil, sessionvars.Unknown(st.Name)
	}
	return &ShowVar{Name: name}, nil
}

// planShow handles the MySQL-style SHOW statements TiDB parses.
func (a *binder) planShow(n *ast.ShowStmt) (Statement, error) {
	switch n.Tp {
	case ast.ShowCreateTable:
		t, err := a.lookupTable(n.Table)
		if err != nil {
			return nil, err
		}
		return &ShowCreateTable{Table: t}, nil
	case ast.ShowTables:
		return &ShowTables{}, nil
	case ast.ShowDatabases:
		return &ShowDatabases{}, nil
	}
	return nil, sqlerr.NotSupported("this SHOW statement")
}

// planExplain binds the query whose plan EXPLAIN renders.
func (a *binder) planExplain(n *ast.ExplainStmt) (Statement, error) {
	o := a.stmt.Explain
	if n.Analyze || o != nil && o.Analyze {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"EXPLAIN ANALYZE is not supported yet: EXPLAIN shows the plan with its key ranges and shards, without running it")
	}
	if n.Format != "" && !strings.EqualFold(n.Format, "row") {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN FORMAT = %q is not supported yet: use EXPLAIN (FORMAT JSON)", n.Format)
	}
	node, ok, err := a.buildQueryStmt(n.Stmt)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sqlerr.NotSupported("EXPLAIN of this statement")
	}
	ex := &Explain{Node: node}
	if o != nil {
		ex.Verbose, ex.JSON = o.Verbose, o.Format == "json"
		ex.Costs = o.Costs != nil && *o.Costs
	}
	return ex, nil
}
