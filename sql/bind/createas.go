package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// CreateTableAs is CREATE TABLE name AS query [WITH [NO] DATA]: Create
// makes a table with the query's columns and a hidden key, then (unless
// NoData) Query's rows are inserted into it.
type CreateTableAs struct {
	noRows
	Create *CreateTable
	Query  planner.Node
	NoData bool
}

// planCreateTableAs binds CREATE TABLE ... AS: the table's columns are
// the query's visible columns, named and typed as the query gives them
// (a column of unknown type, such as a bare NULL, is text, as in
// PostgreSQL); the table gets PivotDB's hidden random key, so its rows
// spread over the shards. YQL's WITH (...) settings apply as for any
// CREATE TABLE.
func (a *binder) planCreateTableAs(n *ast.CreateTableStmt) (Statement, error) {
	if len(n.Cols) > 0 || len(n.Constraints) > 0 {
		return nil, sqlerr.NotSupported("column definitions in CREATE TABLE ... AS")
	}
	query, ok, err := a.buildQueryStmt(n.Select)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sqlerr.NotSupported("this query in CREATE TABLE ... AS")
	}
	def := &ast.CreateTableStmt{Table: n.Table, IfNotExists: n.IfNotExists}
	t := &catalog.Table{DatabaseID: a.env.Database.ID, Name: n.Table.Name.O}
	seen := map[string]bool{}
	for _, c := range query.Columns() {
		if c.Hidden {
			continue
		}
		key := strings.ToLower(c.Name)
		if seen[key] {
			return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", c.Name)
		}
		seen[key] = true
		typ := c.Type
		if typ.Family == types.Unknown || typ.Family == types.Null {
			typ = types.TypeUtf8
		}
		if typ.Family == types.Record {
			// A query's records have no storage (types/record.go).
			return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "column %q has pseudo-type record", c.Name)
		}
		t.NextColumnID++
		t.Columns = append(t.Columns, catalog.Column{ID: t.NextColumnID, Name: c.Name, Type: typ})
	}
	ct, err := a.finishCreateTable(def, &tableDef{t: t, computed: map[int]ast.ExprNode{}})
	if err != nil {
		return nil, err
	}
	return &CreateTableAs{Create: ct, Query: query, NoData: a.stmt.NoData}, nil
}
