package sql

import (
	"context"
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// createTableAs runs CREATE TABLE ... AS query: the table is created (a
// schema change, committed on its own like every other), then the query's
// rows are inserted as INSERT INTO t SELECT would. If the insert fails the
// new table is dropped again, so a failed CREATE TABLE AS leaves no table
// behind. The command tag is PostgreSQL's: SELECT n.
func (s *Session) createTableAs(ctx context.Context, p *bind.CreateTableAs, params []types.Value) (Result, error) {
	existed := s.catalogSnap().RelationExists(s.db.ID, p.Create.Table.Name)
	if _, err := s.createTable(ctx, p.Create); err != nil {
		return nil, err
	}
	if existed {
		// IF NOT EXISTS found the name taken (createTable said so in a
		// NOTICE): the existing table is left alone, as in PostgreSQL.
		return &tagResult{tag: "CREATE TABLE AS"}, nil
	}
	t, ok := s.catalogSnap().Table(s.db.ID, p.Create.Table.Name)
	if !ok {
		return nil, sqlerr.New(sqlerr.InternalError, "table %q vanished after CREATE TABLE AS", p.Create.Table.Name)
	}
	if p.NoData {
		return &tagResult{tag: "CREATE TABLE AS"}, nil
	}
	target := make([]int, 0, len(t.Columns))
	for i, c := range t.Columns {
		if !c.Hidden {
			target = append(target, i)
		}
	}
	ins := &bind.Insert{Table: t, Mode: bind.ModeInsert, Target: target, Source: p.Query,
		Defaults: make([]expr.Expr, len(t.Columns)), Computed: make([]expr.Expr, len(t.Columns))}
	res, err := s.insert(ctx, ins, params)
	if err != nil {
		drop := &bind.DropTables{Tables: []*ast.TableName{{Name: ast.NewCIStr(t.Name)}}, IfExists: true}
		if _, derr := s.dropTables(ctx, drop); derr != nil {
			return nil, fmt.Errorf("%w (and dropping the new table failed: %v)", err, derr)
		}
		return nil, err
	}
	var n int64
	if _, err := fmt.Sscanf(res.Tag(), "INSERT 0 %d", &n); err != nil {
		return nil, sqlerr.New(sqlerr.InternalError, "CREATE TABLE AS: unexpected insert tag %q", res.Tag())
	}
	return &tagResult{tag: fmt.Sprintf("SELECT %d", n)}, nil
}
