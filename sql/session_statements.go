package sql

import (
	"context"
	"strings"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

func (s *Session) runTxn(ctx context.Context, p *bind.Txn) (Result, error) {
	st := p.TxnStmt
	if st.Chain {
		return s.endAndChain(ctx, p)
	}
	switch st.Kind {
	case parser.TxnSavepoint, parser.TxnRelease, parser.TxnRollbackTo:
		return s.runSavepoint(st)
	case parser.TxnSetCharacteristics:
		if st.Session {
			if err := s.setSessionCharacteristics(p); err != nil {
				return nil, err
			}
			return &tagResult{tag: "SET"}, nil
		}
		if !s.inBlock() {
			// As in PostgreSQL: the modes apply to this statement's own
			// transaction, which ends with it.
			s.notice("WARNING", sqlerr.NoActiveSQLTransaction, "SET TRANSACTION can only be used in transaction blocks")
		}
		if err := s.applyTxnModes(p); err != nil {
			return nil, err
		}
		return &tagResult{tag: "SET"}, nil
	case parser.TxnBegin:
		if s.inBlock() {
			s.notice("WARNING", sqlerr.ActiveSQLTransaction, "there is already a transaction in progress")
			if err := s.applyTxnModes(p); err != nil {
				return nil, err
			}
			return &tagResult{tag: "BEGIN"}, nil
		}
		s.vars.BeginTxn()
		if err := s.applyTxnModes(p); err != nil {
			s.vars.EndTxn()
			return nil, err
		}
		// BEGIN inside an implicit transaction turns it into a block that
		// keeps the cycle's earlier writes, as in PostgreSQL.
		if s.txn == nil {
			s.txn = s.beginTxn()
		}
		if err := s.blockTxn(); err != nil {
			s.vars.EndTxn()
			return nil, err
		}
		s.implicit = false
		return &tagResult{tag: "BEGIN"}, nil
	case parser.TxnCommit:
		if !s.inBlock() {
			s.notice("WARNING", sqlerr.NoActiveSQLTransaction, "there is no transaction in progress")
			return &tagResult{tag: "COMMIT"}, nil
		}
		t, failed := s.txn, s.failed
		s.leaveBlock()
		if failed {
			// COMMIT of a failed block rolls back, as in PostgreSQL.
			s.endTxnCursors(ctx, false)
			s.rollbackTxn(t)
			s.endTransaction(false)
			return &tagResult{tag: "ROLLBACK"}, nil
		}
		// Held cursors read their rows while the block's view is open.
		if err := s.endTxnCursors(ctx, true); err != nil {
			s.rollbackTxn(t)
			return nil, err
		}
		if err := s.commitTxn(t); err != nil {
			s.endTransaction(false)
			return nil, err
		}
		s.endTransaction(true)
		return &tagResult{tag: "COMMIT"}, nil
	case parser.TxnRollback:
		if !s.inBlock() {
			s.notice("WARNING", sqlerr.NoActiveSQLTransaction, "there is no transaction in progress")
			return &tagResult{tag: "ROLLBACK"}, nil
		}
		s.endTxnCursors(ctx, false)
		t := s.txn
		s.leaveBlock()
		s.rollbackTxn(t)
		s.endTransaction(false)
		return &tagResult{tag: "ROLLBACK"}, nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "sql: unknown transaction statement %v", p.Kind)
}

// endAndChain is COMMIT AND CHAIN / ROLLBACK AND CHAIN: the block ends,
// and a new one starts at once with the same characteristics, as in
// PostgreSQL (also when the commit of a failed block rolled it back).
func (s *Session) endAndChain(ctx context.Context, p *bind.Txn) (Result, error) {
	if !s.inBlock() {
		what := "COMMIT"
		if p.Kind == parser.TxnRollback {
			what = "ROLLBACK"
		}
		return nil, sqlerr.New(sqlerr.NoActiveSQLTransaction, "%s AND CHAIN can only be used in transaction blocks", what)
	}
	chars := map[string]string{}
	for _, name := range []string{"transaction_isolation", "transaction_read_only", "transaction_deferrable"} {
		chars[name], _ = s.vars.Get(name)
	}
	end := *p.TxnStmt
	end.Chain = false
	res, err := s.runTxn(ctx, &bind.Txn{TxnStmt: &end})
	if err != nil {
		return nil, err
	}
	s.vars.BeginTxn()
	for name, v := range chars {
		if err := s.vars.Set(name, v); err != nil {
			s.vars.EndTxn()
			return nil, err
		}
	}
	s.txn = s.beginTxn()
	if err := s.blockTxn(); err != nil {
		// Nothing is locked yet: only a store error gets here.
		t := s.txn
		s.leaveBlock()
		s.rollbackTxn(t)
		return nil, err
	}
	s.implicit = false
	return res, nil
}

func (s *Session) runSet(ctx context.Context, p *bind.Set) (Result, error) {
	if p.Local {
		return nil, sqlerr.NotSupported("SET LOCAL")
	}
	value := strings.Join(p.Values, ", ")
	if name := strings.ToLower(p.Name); sessionvars.TxnSetting(name) {
		if p.Default {
			return nil, cannotReset(name)
		}
		if err := s.setTxnVar(name, value); err != nil {
			return nil, err
		}
		return &tagResult{tag: "SET"}, nil
	}
	if p.Default {
		if err := s.vars.Reset(p.Name); err != nil {
			return nil, err
		}
		return &tagResult{tag: "SET"}, nil
	}
	if err := s.staleSetting(strings.ToLower(p.Name), strings.ToLower(value)); err != nil {
		return nil, err
	}
	if err := s.vars.Set(p.Name, value); err != nil {
		return nil, err
	}
	name := strings.ToLower(p.Name)
	if v, err := s.vars.Get(name); err == nil {
		if n := sessionvars.Notice(name, v); n != "" {
			s.notice("NOTICE", sqlerr.SuccessfulCompletion, "%s", n)
		}
	}
	return &tagResult{tag: "SET"}, nil
}

func (s *Session) runReset(ctx context.Context, p *bind.Reset) (Result, error) {
	if sessionvars.TxnSetting(p.Name) {
		return nil, cannotReset(p.Name)
	}
	if p.All {
		s.vars.ResetAll()
	} else if err := s.vars.Reset(p.Name); err != nil {
		return nil, err
	}
	return &tagResult{tag: "RESET"}, nil
}

func (s *Session) deallocate(ctx context.Context, p *bind.Deallocate) (Result, error) {
	if p.All {
		return &tagResult{tag: "DEALLOCATE ALL"}, nil
	}
	return nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", p.Name)
}

func (s *Session) discard(ctx context.Context, p *bind.Discard) (Result, error) {
	switch p.Target {
	case "sequences":
		// Forget currval and lastval, as PostgreSQL does.
		s.seqs.reset()
		return &tagResult{tag: "DISCARD SEQUENCES"}, nil
	case "all":
	default:
		return nil, sqlerr.NotSupported("DISCARD %s", strings.ToUpper(p.Target))
	}
	if s.inTxnBlock() {
		return nil, sqlerr.New(sqlerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
	}
	s.vars.ResetAll()
	s.seqs.reset()
	s.closeCursors(func(*cursor) bool { return true })
	return &tagResult{tag: "DISCARD ALL"}, nil
}

// showVar is SHOW name / SHOW ALL.
func (s *Session) showVar(st *bind.ShowVar) (Result, error) {
	if !st.All {
		v, err := s.vars.Get(st.Name)
		if err != nil {
			return nil, err
		}
		return showRows(st, [][]types.Value{{types.NewUtf8(v)}}), nil
	}
	names := sessionvars.Names()
	rows := make([][]types.Value, len(names))
	for i, n := range names {
		val, _ := s.vars.Get(n)
		rows[i] = []types.Value{types.NewUtf8(sessionvars.DisplayName(n)), types.NewUtf8(val)}
	}
	return showRows(st, rows), nil
}

// runSavepoint runs SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO
// [SAVEPOINT] in a transaction block (txn.Txn keeps the savepoints). ROLLBACK
// TO also ends the failed state of a block, which is how psql's
// ON_ERROR_ROLLBACK and ORMs' nested transactions recover from an error.
func (s *Session) runSavepoint(st *parser.TxnStmt) (Result, error) {
	verb := map[parser.TxnKind]string{parser.TxnSavepoint: "SAVEPOINT", parser.TxnRelease: "RELEASE SAVEPOINT",
		parser.TxnRollbackTo: "ROLLBACK TO SAVEPOINT"}[st.Kind]
	if !s.inBlock() {
		return nil, sqlerr.New(sqlerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks", verb)
	}
	switch st.Kind {
	case parser.TxnSavepoint:
		if err := s.txn.Savepoint(st.Savepoint); err != nil {
			return nil, err
		}
		s.runSavepointDDL("savepoint", st.Savepoint)
		s.savepointLocks(st.Savepoint)
		return &tagResult{tag: "SAVEPOINT"}, nil
	case parser.TxnRelease:
		if err := s.txn.ReleaseSavepoint(st.Savepoint); err != nil {
			return nil, err
		}
		s.runSavepointDDL("release", st.Savepoint)
		s.rollbackLocksTo(st.Savepoint, true)
		return &tagResult{tag: "RELEASE"}, nil
	default:
		if err := s.txn.RollbackToSavepoint(st.Savepoint); err != nil {
			return nil, err
		}
		s.runSavepointDDL("rollback", st.Savepoint)
		s.rollbackLocksTo(st.Savepoint, false)
		s.failed = false
		return &tagResult{tag: "ROLLBACK"}, nil
	}
}
