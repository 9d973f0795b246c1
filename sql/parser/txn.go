package parser

import "strings"

// Transaction control in PostgreSQL's syntax (BEGIN ISOLATION LEVEL ...,
// END, ABORT, AND CHAIN), parsed here so that every spelling a driver
// sends ends in one TxnStmt.

// parseTxn parses a transaction statement; ok is false when the statement
// is not one.
func (s *stmtToks) parseTxn() (txn *TxnStmt, ok bool, err error) {
	if !s.isKind(0, tkIdent) {
		return nil, false, nil
	}
	optWork := func(i int) int {
		if s.isWord(i, "work") || s.isWord(i, "transaction") {
			return i + 1
		}
		return i
	}
	switch strings.ToLower(s.text(0)) {
	case "begin":
		txn, err = s.txnModes(&TxnStmt{Kind: TxnBegin}, optWork(1))
	case "start":
		if !s.isWord(1, "transaction") {
			return nil, true, s.errAtTok(1)
		}
		txn, err = s.txnModes(&TxnStmt{Kind: TxnBegin}, 2)
	case "commit", "end":
		txn, err = s.txnEnd(&TxnStmt{Kind: TxnCommit}, optWork(1))
	case "abort":
		txn, err = s.txnEnd(&TxnStmt{Kind: TxnRollback}, optWork(1))
	case "rollback":
		i := optWork(1)
		if !s.isWord(i, "to") {
			txn, err = s.txnEnd(&TxnStmt{Kind: TxnRollback}, i)
			break
		}
		i++
		if s.isWord(i, "savepoint") && !s.atEnd(i+1) {
			i++
		}
		txn, err = s.savepoint(TxnRollbackTo, i)
	case "savepoint":
		txn, err = s.savepoint(TxnSavepoint, 1)
	case "release":
		i := 1
		if s.isWord(i, "savepoint") && !s.atEnd(i+1) {
			i++
		}
		txn, err = s.savepoint(TxnRelease, i)
	default:
		return nil, false, nil
	}
	return txn, true, err
}

// savepoint parses the savepoint name at i, which ends the statement.
func (s *stmtToks) savepoint(kind TxnKind, i int) (*TxnStmt, error) {
	name, ok := s.objectName(i)
	if !ok {
		return nil, s.errAtTok(i)
	}
	if !s.atEnd(i + 1) {
		return nil, s.errAtTok(i + 1)
	}
	return &TxnStmt{Kind: kind, Savepoint: name}, nil
}

// txnEnd parses [AND [NO] CHAIN] at i, which ends the statement.
func (s *stmtToks) txnEnd(txn *TxnStmt, i int) (*TxnStmt, error) {
	if s.isWord(i, "and") {
		switch {
		case s.isWord(i+1, "chain"):
			txn.Chain = true
			i += 2
		case s.isWord(i+1, "no") && s.isWord(i+2, "chain"):
			i += 3
		default:
			return nil, s.errAtTok(i + 1)
		}
	}
	if !s.atEnd(i) {
		return nil, s.errAtTok(i)
	}
	return txn, nil
}

// txnModes parses transaction modes from i to the end of the statement:
//
//	ISOLATION LEVEL {SERIALIZABLE | REPEATABLE READ | READ COMMITTED | READ UNCOMMITTED}
//	READ WRITE | READ ONLY
//	[NOT] DEFERRABLE
//	AS OF SYSTEM TIME expr        (CockroachDB's)
//
// separated by optional commas.
func (s *stmtToks) txnModes(txn *TxnStmt, i int) (*TxnStmt, error) {
	for !s.atEnd(i) {
		switch {
		case s.isWord(i, "isolation"):
			if !s.isWord(i+1, "level") {
				return nil, s.errAtTok(i + 1)
			}
			i += 2
			switch {
			case s.isWord(i, "serializable"):
				txn.Isolation = "serializable"
				i++
			case s.isWord(i, "repeatable") && s.isWord(i+1, "read"):
				txn.Isolation = "repeatable read"
				i += 2
			case s.isWord(i, "read") && s.isWord(i+1, "committed"):
				txn.Isolation = "read committed"
				i += 2
			case s.isWord(i, "read") && s.isWord(i+1, "uncommitted"):
				txn.Isolation = "read uncommitted"
				i += 2
			case s.isWord(i, "repeatable") || s.isWord(i, "read"):
				return nil, s.errAtTok(i + 1)
			default:
				return nil, s.errAtTok(i)
			}
		case s.isWord(i, "read") && s.isWord(i+1, "write"):
			txn.Access = AccessReadWrite
			i += 2
		case s.isWord(i, "read") && s.isWord(i+1, "only"):
			txn.Access = AccessReadOnly
			i += 2
		case s.isWord(i, "read"):
			return nil, s.errAtTok(i + 1)
		case s.isWord(i, "deferrable"):
			txn.Deferrable = Deferrable
			i++
		case s.isWord(i, "not") && s.isWord(i+1, "deferrable"):
			txn.Deferrable = NotDeferrable
			i += 2
		case s.isAsOf(i):
			// CockroachDB's mode: the expression runs to the next mode.
			end := i + 4
			for end < s.n() && !s.isOp(end, ",") && !s.isWord(end, "isolation") && !s.isWord(end, "read") &&
				!s.isWord(end, "deferrable") && !(s.isWord(end, "not") && s.isWord(end+1, "deferrable")) {
				end = s.skip(end)
			}
			if end == i+4 {
				return nil, s.errAtTok(end)
			}
			e, err := s.exprAt(i+4, end)
			if err != nil {
				return nil, err
			}
			txn.AsOf = &AsOfClause{Expr: e, Pos: s.rp.pos(s.start(i))}
			i = end
		default:
			return nil, s.errAtTok(i)
		}
		if s.isOp(i, ",") && !s.atEnd(i+1) {
			i++
		}
	}
	return txn, nil
}
