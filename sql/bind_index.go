package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func (a *analyser) planCreateIndex(n *ast.CreateIndexStmt) (bind.Statement, error) {
	switch n.KeyType {
	case ast.IndexKeyTypeNone, ast.IndexKeyTypeUnique:
	default:
		return nil, sqlerr.NotSupported("this kind of index")
	}
	if _, err := a.lookupTable(n.Table); err != nil {
		return nil, err
	}
	spec, err := bind.IndexSpecOf(n.IndexName, n.KeyType == ast.IndexKeyTypeUnique, n.IndexPartSpecifications, n.IndexOption)
	if err != nil {
		return nil, err
	}
	return &bind.CreateIndex{Table: n.Table.Name.O, Spec: spec, IfNotExists: n.IfNotExists}, nil
}
