package sql

import (
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txnmode"
)

// A transaction's characteristics (isolation level, READ ONLY,
// DEFERRABLE) are the session's transaction_* settings, as in PostgreSQL:
// BEGIN's modes, SET TRANSACTION and SET transaction_isolation = ... change
// them for the open block, SET SESSION CHARACTERISTICS and the
// default_transaction_* settings for the blocks to come. txnMode reads
// them; it is the one value the transaction core acts on.

// txnMode is the current transaction's characteristics: the open block's,
// or outside a block those of the statement's own transaction.
//
// Issue 16's MVCC core reads it where a transaction begins (beginTxn) and
// at a block's first statement, to choose the snapshot and conflict rules;
// until then only READ COMMITTED can be chosen (txnmode.Implemented).
func (s *Session) txnMode() txnmode.Mode {
	m := s.vars.TxnMode()
	if s.staleReadOnly() {
		m.ReadOnly = true // follower.go
	}
	return m
}

// leaveBlock forgets the open transaction block: its transaction, its
// failed state and its characteristics.
func (s *Session) leaveBlock() {
	s.txn, s.failed = nil, false
	s.vars.EndTxn()
	s.queried = false
	s.transactionDone()
}

// applyTxnModes applies the modes of BEGIN or SET TRANSACTION to the open
// block (outside one, only checks them).
func (s *Session) applyTxnModes(p *bind.Txn) error {
	st := p.TxnStmt
	if st.Isolation != "" {
		if err := s.setTxnVar("transaction_isolation", st.Isolation); err != nil {
			return err
		}
	}
	switch st.Access {
	case parser.AccessReadOnly:
		if err := s.setTxnVar("transaction_read_only", "on"); err != nil {
			return err
		}
	case parser.AccessReadWrite:
		if err := s.setTxnVar("transaction_read_only", "off"); err != nil {
			return err
		}
	}
	switch st.Deferrable {
	case parser.Deferrable:
		if err := s.setTxnVar("transaction_deferrable", "on"); err != nil {
			return err
		}
	case parser.NotDeferrable:
		if err := s.setTxnVar("transaction_deferrable", "off"); err != nil {
			return err
		}
	}
	if p.AsOf != nil {
		return s.beginAsOf(p)
	}
	return nil
}

// setTxnVar sets one of the open transaction's characteristics with
// PostgreSQL's rules (check_transaction_isolation and its siblings in
// variable.c): the isolation level and DEFERRABLE may change only before
// the block's first query, and a read-only block may not become read-write
// after it (25001). Outside a block the value is only checked: it would
// apply to the statement's own transaction, which ends with it.
func (s *Session) setTxnVar(name, value string) error {
	norm, err := sessionvars.Validate(name, value)
	if err != nil {
		return err
	}
	if !s.vars.InTxn() {
		return nil
	}
	if err := s.asOfReadWrite(name, norm); err != nil {
		return err
	}
	cur, _ := s.vars.Get(name)
	if s.queried {
		switch {
		case name == "transaction_isolation" && norm != cur:
			return sqlerr.New(sqlerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		case name == "transaction_read_only" && norm == "off" && cur == "on":
			return sqlerr.New(sqlerr.ActiveSQLTransaction, "transaction read-write mode must be set before any query")
		case name == "transaction_deferrable":
			return sqlerr.New(sqlerr.ActiveSQLTransaction, "SET TRANSACTION [NOT] DEFERRABLE must be called before any query")
		}
	}
	return s.vars.Set(name, norm)
}

// setSessionCharacteristics is SET SESSION CHARACTERISTICS AS TRANSACTION:
// the default_transaction_* settings.
func (s *Session) setSessionCharacteristics(p *bind.Txn) error {
	st := p.TxnStmt
	if p.AsOf != nil {
		return sqlerr.NotSupported("SET SESSION CHARACTERISTICS ... AS OF SYSTEM TIME")
	}
	set := func(name, value string) error { return s.vars.Set(name, value) }
	if st.Isolation != "" {
		if err := set("default_transaction_isolation", st.Isolation); err != nil {
			return err
		}
	}
	if st.Access != parser.AccessDefault {
		if err := set("default_transaction_read_only", onOff(st.Access == parser.AccessReadOnly)); err != nil {
			return err
		}
	}
	if st.Deferrable != parser.DeferrableDefault {
		return set("default_transaction_deferrable", onOff(st.Deferrable == parser.Deferrable))
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// cannotReset is PostgreSQL's error for RESET of a transaction
// characteristic (they change with SET TRANSACTION, or end with the
// block).
func cannotReset(name string) error {
	return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be reset", name)
}

// readOnlyError refuses a statement that writes in a read-only
// transaction with PostgreSQL's 25006 and its name of the command; nil
// when st may run. As in PostgreSQL, writes to the session's temporary
// tables are allowed, DDL is not (of temporary tables neither), and
// REINDEX, RESHARD and SPLIT, which change how data is stored but not
// what it is, are allowed.
func (s *Session) readOnlyError(st bind.Statement) error {
	if !s.txnMode().ReadOnly {
		return nil
	}
	if cmd := writeCommand(st); cmd != "" {
		return readOnlyViolation(cmd)
	}
	return nil
}

func readOnlyViolation(cmd string) error {
	return sqlerr.New(sqlerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", cmd)
}

// writeCommand names a statement that changes data or schema as
// PostgreSQL's command tags do; "" for one that does not.
func writeCommand(st bind.Statement) string {
	switch st := st.(type) {
	case *bind.Select:
		if len(st.Locking) > 0 {
			return "SELECT " + st.Locking[0].Strength.String()
		}
	case *bind.Insert:
		if !bind.IsTempName(st.Table.Name) {
			return st.Mode.Verb()
		}
	case *bind.Modify:
		if !bind.IsTempName(st.Scan.Table.Name) {
			if st.Update {
				return "UPDATE"
			}
			return "DELETE"
		}
	case *bind.Copy:
		if st.Stmt.From && !bind.IsTempName(st.Insert.Table.Name) {
			return "COPY FROM"
		}
	case *bind.WithDML:
		for _, q := range st.Queries {
			if cmd := writeCommand(q.Plan); cmd != "" {
				return cmd
			}
		}
		return writeCommand(st.Main)
	case *bind.Explain:
		// EXPLAIN ANALYZE runs the statement; PostgreSQL names it.
		if st.Analyze && st.Write != nil {
			return writeCommand(st.Write)
		}
	case *bind.CreateTableAs:
		return "CREATE TABLE AS"
	case *bind.CreateTable:
		return "CREATE TABLE"
	case *bind.DropTables:
		return "DROP TABLE"
	case *bind.Truncate:
		return "TRUNCATE TABLE"
	case *bind.Lock:
		// Modes up to ROW EXCLUSIVE may be taken in a read-only
		// transaction, as in PostgreSQL (pg_dump takes ACCESS SHARE).
		if lockModeByName[st.Mode] > lockModeByName["row exclusive"] {
			return "LOCK TABLE"
		}
	case *bind.CreateSequence:
		return "CREATE SEQUENCE"
	case *bind.AlterSequence:
		return "ALTER SEQUENCE"
	case *bind.DropSequences:
		return "DROP SEQUENCE"
	case *bind.FunctionDDL:
		if st.Drop {
			return "DROP FUNCTION"
		}
		return "CREATE FUNCTION"
	case *bind.TypeDDL:
		switch st.Kind {
		case parser.TypeCreateEnum:
			return "CREATE TYPE"
		case parser.TypeDrop:
			return "DROP TYPE"
		}
		return "ALTER TYPE"
	case *bind.CreateDatabase:
		return "CREATE DATABASE"
	case *bind.DropDatabase:
		return "DROP DATABASE"
	case *bind.CreateView:
		return "CREATE VIEW"
	case *bind.DropViews:
		return "DROP VIEW"
	case *bind.CreateIndex:
		return "CREATE INDEX"
	case *bind.DropIndex:
		return "DROP INDEX"
	case *bind.AlterTable, *bind.AlterSettings:
		return "ALTER TABLE"
	case *bind.User:
		what := "USER"
		if st.Role {
			what = "ROLE"
		}
		switch st.Kind {
		case parser.UserCreate:
			return "CREATE " + what
		case parser.UserAlter:
			return "ALTER " + what
		}
		return "DROP " + what
	case *bind.RoleSetting:
		if st.Role == "" && !st.AllRoles {
			return "ALTER DATABASE"
		}
		return "ALTER ROLE"
	case *bind.Grant:
		if st.Revoke {
			return "REVOKE"
		}
		return "GRANT"
	case *bind.Comment:
		return "COMMENT"
	case *bind.AlterOwner:
		switch st.Kind {
		case "view":
			return "ALTER VIEW"
		case "database":
			return "ALTER DATABASE"
		}
		return "ALTER TABLE"
	}
	return ""
}
