package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// DeclareCursor is DECLARE name ... CURSOR FOR query: Query is bound like
// a SELECT; the session opens it when the statement runs.
type DeclareCursor struct {
	noRows
	*parser.CursorStmt
	Query planner.Node
}

// Fetch is FETCH or MOVE. Cols are the cursor's result columns as they
// were when the statement was bound (FETCH's rows; MOVE returns none).
type Fetch struct {
	*parser.CursorStmt
	Cols []planner.Column
}

func (f *Fetch) Columns() []planner.Column {
	if f.Kind == parser.CursorMove {
		return nil
	}
	return f.Cols
}

// CloseCursor is CLOSE name | ALL.
type CloseCursor struct {
	noRows
	*parser.CursorStmt
}

// planCursor binds a cursor statement. FETCH needs the cursor to exist
// already, since its result columns are the cursor's.
func (a *binder) planCursor(c *parser.CursorStmt) (Statement, error) {
	switch c.Kind {
	case parser.CursorDeclare:
		node, ok, err := a.buildQueryStmt(a.stmt.AST)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, sqlerr.New(sqlerr.SyntaxError, "DECLARE CURSOR needs a SELECT or VALUES query, not %s", statementName(a.stmt.AST))
		}
		if _, isSel := a.stmt.AST.(*ast.SelectStmt); isSel && a.stmt.AST.(*ast.SelectStmt).LockInfo != nil {
			return nil, sqlerr.NotSupported("DECLARE CURSOR ... FOR UPDATE/SHARE")
		}
		return &DeclareCursor{CursorStmt: c, Query: node}, nil
	case parser.CursorFetch, parser.CursorMove:
		var cols []planner.Column
		ok := false
		if a.env.Cursor != nil {
			cols, ok = a.env.Cursor(c.Name)
		}
		if !ok {
			return nil, CursorNotFound(c.Name)
		}
		return &Fetch{CursorStmt: c, Cols: cols}, nil
	case parser.CursorClose:
		return &CloseCursor{CursorStmt: c}, nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "bind: unknown cursor statement %v", c.Kind)
}

// CursorNotFound is PostgreSQL's error for a cursor name nobody declared.
func CursorNotFound(name string) error {
	return sqlerr.New(sqlerr.InvalidCursorName, "cursor \"%s\" does not exist", name)
}
