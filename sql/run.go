package sql

import (
	"context"
	"strings"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// run executes a bound statement: the one place where statements run.
// Every kind of bind.Statement has a case; the work is done in the file
// named after it (ddl.go, write.go, indexmaint.go, explain.go,
// partitions.go, users.go, session_statements.go).
func (s *Session) run(ctx context.Context, st bind.Statement, params []types.Value) (Result, error) {
	if err := s.readOnlyError(st); err != nil {
		return nil, err
	}
	if s.inTxnBlock() {
		if err := txnBlockDDL(st, !s.inBlock()); err != nil {
			return nil, err
		}
	}
	prevCtx := s.stmtCtx
	s.stmtCtx = ctx
	defer func() { s.stmtCtx = prevCtx }()
	switch st.(type) {
	case *bind.Txn, *bind.Set, *bind.Reset, *bind.ShowVar, *bind.Deallocate, *bind.Discard:
	default:
		s.queried = true
	}
	switch st := st.(type) {
	case *bind.Select:
		return s.runSelect(ctx, st, params)
	case *bind.Insert:
		return s.insert(ctx, st, params)
	case *bind.Modify:
		return s.modify(ctx, st, params)
	case *bind.Explain:
		return s.explain(ctx, st, params)
	case *bind.WithDML:
		return s.runWithDML(ctx, st, params)

	case *bind.CreateTableAs:
		return s.createTableAs(ctx, st, params)
	case *bind.CreateTable:
		return s.createTable(ctx, st)
	case *bind.DropTables:
		return s.dropTables(ctx, st)
	case *bind.Truncate:
		return s.truncate(ctx, st)
	case *bind.Lock:
		return s.runLock(ctx, st)
	case *bind.Vacuum:
		return s.vacuum(ctx, st)
	case *bind.CreateSequence:
		return s.createSequence(ctx, st)
	case *bind.AlterSequence:
		return s.alterSequence(ctx, st)
	case *bind.DropSequences:
		return s.dropSequences(ctx, st)
	case *bind.TypeDDL:
		return s.runTypeDDL(ctx, st)
	case *bind.FunctionDDL:
		return s.runFunctionDDL(ctx, st)
	case *bind.CreateDatabase:
		return s.createDatabase(ctx, st)
	case *bind.DropDatabase:
		return s.dropDatabase(ctx, st)
	case *bind.CreateView:
		return s.createView(ctx, st)
	case *bind.DropViews:
		return s.dropViews(ctx, st)
	case *bind.CreateIndex:
		return s.createIndex(ctx, st)
	case *bind.DropIndex:
		return s.dropIndex(ctx, st)
	case *bind.Reindex:
		return s.reindex(ctx, st)

	case *bind.AlterTable:
		return s.alterTable(ctx, st)
	case *bind.AlterSettings:
		return s.alterSettings(ctx, st)
	case *bind.Reshard:
		return s.reshard(ctx, st)
	case *bind.Split:
		return s.split(ctx, st)
	case *bind.ShowCreateTable:
		return s.showCreateTable(st)
	case *bind.JobStatement:
		return s.runJobStatement(st)
	case *bind.ClusterStatement:
		return s.runCluster(ctx, st)

	case *bind.User:
		return s.runUser(ctx, st)
	case *bind.RoleSetting:
		return s.runRoleSetting(st)
	case *bind.Grant:
		return s.runGrant(ctx, st)
	case *bind.AlterOwner:
		return s.alterOwner(ctx, st)
	case *bind.Comment:
		return s.comment(ctx, st)

	case *bind.Txn:
		return s.runTxn(ctx, st)
	case *bind.Set:
		return s.runSet(ctx, st)
	case *bind.Reset:
		return s.runReset(ctx, st)
	case *bind.ShowVar:
		return s.showVar(st)
	case *bind.Deallocate:
		return s.deallocate(ctx, st)
	case *bind.Discard:
		return s.discard(ctx, st)
	case *bind.ShowTables:
		return s.showTables(st)
	case *bind.ShowDatabases:
		return s.showDatabases(st)

	case *bind.Copy:
		return s.copyStatement(ctx, st)
	case *bind.DeclareCursor:
		return s.declareCursor(ctx, st, params)
	case *bind.Fetch:
		return s.fetchCursor(ctx, st)
	case *bind.CloseCursor:
		return s.closeCursor(st)
	}
	return nil, sqlerr.New(sqlerr.InternalError, "sql: no runner for bound statement %T", st)
}

// iterate starts a query plan on the session's current view.
func (s *Session) iterate(ctx context.Context, node planner.Node, params []types.Value) (exec.Iter, error) {
	reader, concurrent := s.reader()
	// The executor's context, the expression context and its sequence
	// functions in one allocation: every statement makes all three.
	c := &struct {
		ec   exec.Context
		eval expr.Context
		seqs sessionSeqs
	}{}
	s.fillEvalContext(&c.eval, &c.seqs, ctx, params)
	c.ec = exec.Context{Ctx: ctx, Eval: &c.eval, Reader: reader,
		Shards: s.e.shards, Concurrent: concurrent, RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.memLimit(),
		Scans: &s.e.tableActivity}
	return exec.Build(&c.ec, node)
}

// resultColumns describes the visible columns of a result.
func resultColumns(cols []planner.Column) []ResultColumn {
	var out []ResultColumn
	for _, c := range cols {
		if c.Hidden {
			continue
		}
		rc := ResultColumn{Name: c.Name, Type: c.Type}
		if c.Table != nil {
			rc.TableOID = uint32(c.Table.ID)
			rc.ColumnNumber = int16(c.Index + 1)
		}
		out = append(out, rc)
	}
	return out
}

// runSelect streams a query's rows without its hidden columns, which come
// last.
func (s *Session) runSelect(ctx context.Context, p *bind.Select, params []types.Value) (Result, error) {
	// The binder resolved both clauses (bind/locking.go, bind/asof.go);
	// running them needs row locks (selectlock.go) and reads at a chosen
	// timestamp (the statement's read timestamp, set from AS OF).
	if len(p.Locking) > 0 {
		if p.AsOf != nil {
			// A historical read is read-only, as in CockroachDB.
			return nil, readOnlyViolation("SELECT " + p.Locking[0].Strength.String())
		}
		return s.runLockingSelect(ctx, p, params) // selectlock.go
	}
	it, err := s.iterate(ctx, p.Node, params)
	if err != nil {
		return nil, err
	}
	// No closures for next and close: they were two of a point SELECT's
	// allocations. rowsResult reads it directly (selectIt).
	cols := p.Columns()
	return &rowsResult{query: cols, visible: planner.VisibleCount(cols), selectIt: it, wireIt: it}, nil
}

// showRows returns the rows of a SHOW statement.
func showRows(st bind.Statement, rows [][]types.Value) *rowsResult {
	return staticRows(resultColumns(st.Columns()), rows, "SHOW")
}

// showTables lists the tables of the session's database.
func (s *Session) showTables(st *bind.ShowTables) (Result, error) {
	var rows [][]types.Value
	for _, t := range s.catalogSnap().Tables(s.db.ID) {
		name := t.Name
		if bind.IsTempName(name) {
			// Only the session's own temporary tables, by their names.
			if !strings.HasPrefix(name, s.tempPrefix) {
				continue
			}
			name = strings.TrimPrefix(name, s.tempPrefix)
		}
		rows = append(rows, []types.Value{types.NewUtf8(name)})
	}
	return showRows(st, rows), nil
}

// showDatabases lists the databases.
func (s *Session) showDatabases(st *bind.ShowDatabases) (Result, error) {
	var rows [][]types.Value
	for _, d := range s.catalogSnap().Databases() {
		rows = append(rows, []types.Value{types.NewUtf8(d.Name)})
	}
	return showRows(st, rows), nil
}
