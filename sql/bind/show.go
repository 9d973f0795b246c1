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

// planExplain binds the statement whose plan EXPLAIN renders: a query, or
// an INSERT, UPDATE or DELETE (EXPLAIN ANALYZE runs it, as PostgreSQL
// does).
func (a *binder) planExplain(n *ast.ExplainStmt) (Statement, error) {
	o := a.stmt.Explain
	if n.Format != "" && !strings.EqualFold(n.Format, "row") {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN FORMAT = %q is not supported yet: use EXPLAIN (FORMAT JSON)", n.Format)
	}
	ex := &Explain{Analyze: n.Analyze || o != nil && o.Analyze}
	if o != nil {
		ex.Verbose, ex.JSON = o.Verbose, o.Format == "json"
		ex.Costs = o.Costs != nil && *o.Costs
		if o.Timing != nil && !ex.Analyze {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "EXPLAIN option TIMING requires ANALYZE")
		}
	}
	ex.Timing, ex.Summary = ex.Analyze, ex.Analyze
	if o != nil && o.Timing != nil {
		ex.Timing = *o.Timing
	}
	if o != nil && o.Summary != nil {
		ex.Summary = *o.Summary
	}
	switch st := n.Stmt.(type) {
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		var (
			w   Statement
			err error
		)
		switch st := st.(type) {
		case *ast.InsertStmt:
			w, err = a.planInsert(st)
		case *ast.UpdateStmt:
			w, err = a.planUpdate(st)
		case *ast.DeleteStmt:
			w, err = a.planDelete(st)
		}
		if err != nil {
			return nil, err
		}
		switch w := w.(type) {
		case *Insert:
			ex.Write, ex.Node = w, w.Source
		case *Modify:
			ex.Write, ex.Node = w, w.Scan
		default:
			// A write through a CTE (WITH ... INSERT) binds to WithDML.
			return nil, sqlerr.NotSupported("EXPLAIN of this statement")
		}
		return ex, nil
	}
	node, ok, err := a.buildQueryStmt(n.Stmt)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sqlerr.NotSupported("EXPLAIN of this statement")
	}
	ex.Node = node
	return ex, nil
}
