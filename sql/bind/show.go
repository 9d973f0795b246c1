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
	if n.Analyze {
		return nil, sqlerr.NotSupported("EXPLAIN ANALYZE")
	}
	node, ok, err := a.buildQueryStmt(n.Stmt)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sqlerr.NotSupported("EXPLAIN of this statement")
	}
	return &Explain{Node: node}, nil
}
