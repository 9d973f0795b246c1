package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/pgcopy"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Copy is COPY ... FROM STDIN or COPY ... TO STDOUT. FROM is bound as the
// INSERT it is (Insert without a Source: the rows come from the client),
// so defaults, computed columns, CHECK constraints, foreign keys and the
// INSERT privilege apply as for INSERT; TO is bound as its query.
type Copy struct {
	noRows
	Stmt    *parser.CopyStmt
	Options *pgcopy.Options
	// Names and Types are the COPY's columns, in order.
	Names []string
	Types []types.Type
	// Relation names the COPY in errors' CONTEXT ("COPY t, line 3").
	Relation string
	// Insert is COPY FROM's write (Source is nil).
	Insert *Insert
	// Query is COPY TO's query.
	Query planner.Node
}

// planCopy binds COPY.
func (a *binder) planCopy(c *parser.CopyStmt) (Statement, error) {
	if err := a.copyTarget(c); err != nil {
		return nil, err
	}
	p := &Copy{Stmt: c}
	if c.From {
		if c.Where {
			return nil, sqlerr.NotSupported("COPY FROM ... WHERE")
		}
		tn := &ast.TableName{Name: ast.NewCIStr(c.Table[len(c.Table)-1])}
		if len(c.Table) == 2 {
			tn.Schema = ast.NewCIStr(c.Table[0])
		}
		if _, isView := a.snap.View(a.env.Database.ID, tn.Name.O); isView {
			return nil, sqlerr.New(sqlerr.WrongObjectType, "cannot copy to view \"%s\"", tn.Name.O)
		}
		t, err := a.lookupTable(tn)
		if err != nil {
			return nil, err
		}
		if err := a.requireTable(t, acl.Insert); err != nil {
			return nil, err
		}
		ins := &Insert{Table: t, Mode: ModeInsert}
		var listed []*ast.ColumnName
		for _, name := range c.Columns {
			listed = append(listed, &ast.ColumnName{Name: ast.NewCIStr(name)})
		}
		if ins.Target, err = insertTarget(t, listed); err != nil {
			return nil, err
		}
		if ins.Computed, ins.Checks, ins.FK, err = a.rowRules(t); err != nil {
			return nil, err
		}
		if ins.Defaults, err = a.columnDefaults(t); err != nil {
			return nil, err
		}
		for _, ti := range ins.Target {
			p.Names = append(p.Names, t.Columns[ti].Name)
			p.Types = append(p.Types, t.Columns[ti].Type)
		}
		p.Insert, p.Relation = ins, t.Name
	} else {
		if c.Table != nil {
			name := c.Table[len(c.Table)-1]
			if _, isView := a.snap.View(a.env.Database.ID, name); isView {
				return nil, &sqlerr.Error{Code: sqlerr.WrongObjectType, Message: "cannot copy from view \"" + name + "\"",
					Hint: "Try the COPY (SELECT ...) TO variant."}
			}
			p.Relation = name
		}
		query := a.stmt.AST
		if c.Table != nil && c.Columns == nil {
			// Without a column list COPY TO copies every column but the
			// computed (generated) ones, as PostgreSQL does.
			if q, err := a.copyAllColumns(c); err != nil {
				return nil, err
			} else if q != nil {
				query = q
			}
		}
		node, ok, err := a.buildQueryStmt(query)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, sqlerr.NotSupported("COPY (%s) TO", statementName(query))
		}
		if sel, isSel := a.stmt.AST.(*ast.SelectStmt); isSel && sel.LockInfo != nil && c.Table == nil {
			return nil, sqlerr.NotSupported("COPY (SELECT ... FOR UPDATE/SHARE) TO")
		}
		p.Query = node
		for _, col := range node.Columns() {
			if col.Hidden {
				continue
			}
			p.Names = append(p.Names, col.Name)
			p.Types = append(p.Types, col.Type)
		}
	}
	var err error
	if p.Options, err = pgcopy.ParseOptions(c.Options, c.From, p.Names); err != nil {
		return nil, err
	}
	return p, nil
}

// copyTarget refuses COPY to or from a server file or program: 42501 for
// a role that PostgreSQL would refuse too (only superusers and members of
// pg_read_server_files, pg_write_server_files, pg_execute_server_program
// may), 0A000 for a superuser, because PivotDB does not read or write the
// server's files on a client's behalf: the data travels over the
// connection (COPY ... FROM STDIN, psql's \copy).
func (a *binder) copyTarget(c *parser.CopyStmt) error {
	if c.Target == parser.CopyStdio {
		return nil
	}
	hint := "Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone."
	if !a.access().Superuser() {
		var msg string
		switch {
		case c.Target == parser.CopyProgram:
			msg = "must be superuser or have privileges of the pg_execute_server_program role to COPY to or from an external program"
		case c.From:
			msg = "must be superuser or have privileges of the pg_read_server_files role to COPY from a file"
		default:
			msg = "must be superuser or have privileges of the pg_write_server_files role to COPY to a file"
		}
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: msg, Hint: hint}
	}
	what := "COPY FROM a server file"
	switch {
	case c.Target == parser.CopyProgram:
		what = "COPY to or from PROGRAM"
	case !c.From:
		what = "COPY TO a server file"
	}
	e := sqlerr.NotSupported("%s", what)
	e.Hint = "Use COPY ... FROM STDIN / TO STDOUT (psql's \\copy), which moves the data over the connection."
	return e
}

// copyAllColumns is the query of COPY t TO without a column list when t
// has computed columns: SELECT of the others (nil: SELECT * will do).
func (a *binder) copyAllColumns(c *parser.CopyStmt) (ast.StmtNode, error) {
	tn := &ast.TableName{Name: ast.NewCIStr(c.Table[len(c.Table)-1])}
	if len(c.Table) == 2 {
		tn.Schema = ast.NewCIStr(c.Table[0])
	}
	t, err := a.lookupTable(tn)
	if err != nil {
		return nil, nil // SELECT * reports it
	}
	var cols []string
	computed := false
	for _, col := range t.Columns {
		switch {
		case col.Hidden:
		case col.Computed != "":
			computed = true
		default:
			cols = append(cols, "`"+strings.ReplaceAll(col.Name, "`", "``")+"`")
		}
	}
	if !computed {
		return nil, nil
	}
	from := "`" + strings.ReplaceAll(tn.Name.O, "`", "``") + "`"
	if tn.Schema.O != "" {
		from = "`" + strings.ReplaceAll(tn.Schema.O, "`", "``") + "`." + from
	}
	sts, err := parser.Parse("SELECT " + strings.Join(cols, ", ") + " FROM " + from)
	if err != nil {
		return nil, err
	}
	return sts[0].AST, nil
}
