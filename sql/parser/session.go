package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Session statements in PostgreSQL syntax, which drivers send and TiDB's
// grammar does not have (or has in MySQL's shape): SET, SHOW, RESET,
// DEALLOCATE, DISCARD. Forms that are clearly MySQL's (SET @x = 1, SET
// GLOBAL x = 1, SHOW TABLES, SHOW CREATE TABLE t) are left to TiDB.

// atEnd reports whether i is past the statement's last token.
func (s *stmtToks) atEnd(i int) bool { return i >= s.n() }

// varName parses a possibly dotted variable name at i and returns it
// lowercased.
func (s *stmtToks) varName(i int) (string, int, bool) {
	if s.isKind(i, tkString) {
		return strings.ToLower(s.strs[s.toks[i].aux]), i + 1, true
	}
	end, parts, ok := s.nameChain(i)
	if !ok {
		return "", i, false
	}
	return strings.ToLower(strings.Join(parts, ".")), end, true
}

// parseSet parses SET statements; ok is false for forms left to TiDB.
// SET TRANSACTION and SET SESSION CHARACTERISTICS are transaction
// statements (txn.go).
func (s *stmtToks) parseSet() (sv *SetVar, txn *TxnStmt, ok bool, err error) {
	switch {
	case s.isWord(1, "transaction"):
		switch {
		case s.isWord(2, "snapshot"):
			return nil, nil, true, errAt(sqlerr.FeatureNotSupported, s.start(2), "SET TRANSACTION SNAPSHOT is not supported yet")
		case s.atEnd(2):
			// PostgreSQL's grammar needs at least one mode.
			return nil, nil, true, s.errAtTok(2)
		}
		txn, err = s.txnModes(&TxnStmt{Kind: TxnSetCharacteristics}, 2)
		return nil, txn, true, err
	case s.isWord(1, "session") && s.isWord(2, "characteristics"):
		if !s.isWord(3, "as") {
			return nil, nil, true, s.errAtTok(3)
		}
		if !s.isWord(4, "transaction") || s.atEnd(5) {
			return nil, nil, true, s.errAtTok(max(4, min(5, s.n())))
		}
		txn, err = s.txnModes(&TxnStmt{Kind: TxnSetCharacteristics, Session: true}, 5)
		return nil, txn, true, err
	}
	sv = &SetVar{}
	i := 1
	if (s.isWord(i, "session") || s.isWord(i, "local")) && (s.isKind(i+1, tkIdent) || s.isKind(i+1, tkString)) {
		sv.Local = s.isWord(i, "local")
		i++
	}
	switch {
	case s.isWord(i, "time") && s.isWord(i+1, "zone"):
		sv.Name = "timezone"
		i += 2
		switch {
		case s.isWord(i, "local") || s.isWord(i, "default"):
			sv.Default = true
			i++
		case s.isWord(i, "interval"):
			return nil, nil, true, errAt(sqlerr.FeatureNotSupported, s.start(i), "SET TIME ZONE INTERVAL is not supported")
		default:
			v, next, err := s.setValue(i)
			if err != nil {
				return nil, nil, true, err
			}
			sv.Values, i = []string{v}, next
		}
	case s.isWord(i, "names") && !s.isOp(i+1, "=") && !s.isWord(i+1, "to"):
		sv.Name = "client_encoding"
		i++
		if s.isWord(i, "default") {
			sv.Default = true
			i++
		} else {
			v, next, err := s.setValue(i)
			if err != nil {
				return nil, nil, true, err
			}
			sv.Values, i = []string{v}, next
		}
	default:
		name, next, named := s.varName(i)
		if !named || !s.isOp(next, "=") && !s.isWord(next, "to") {
			// SET @x = 1, SET GLOBAL x = 1, SET ROLE ...: MySQL's.
			return nil, nil, false, nil
		}
		sv.Name = name
		i = next + 1
		if s.isWord(i, "default") && s.atEnd(i+1) {
			sv.Default = true
			i++
			break
		}
		for {
			v, next, err := s.setValue(i)
			if err != nil {
				return nil, nil, true, err
			}
			sv.Values = append(sv.Values, v)
			i = next
			if !s.isOp(i, ",") {
				break
			}
			i++
		}
	}
	if !s.atEnd(i) {
		return nil, nil, true, s.errAtTok(i)
	}
	return sv, nil, true, nil
}

// setValue parses one SET value: a word, a string or a signed number.
func (s *stmtToks) setValue(i int) (string, int, error) {
	switch {
	case s.isKind(i, tkIdent) || s.isKind(i, tkNumber):
		return s.text(i), i + 1, nil
	case s.isKind(i, tkQuotedIdent):
		return s.unquoteIdent(i), i + 1, nil
	case s.isKind(i, tkString):
		return s.strs[s.toks[i].aux], i + 1, nil
	case (s.isOp(i, "-") || s.isOp(i, "+")) && s.isKind(i+1, tkNumber):
		v := s.text(i + 1)
		if s.isOp(i, "-") {
			v = "-" + v
		}
		return v, i + 2, nil
	}
	return "", i, s.errAtTok(i)
}

// tidbShowWords are one-word SHOW statements of MySQL, which TiDB parses.
var tidbShowWords = map[string]bool{
	"tables": true, "databases": true, "schemas": true, "warnings": true, "errors": true, "variables": true,
	"status": true, "processlist": true, "engines": true, "charset": true, "collation": true, "grants": true,
	"privileges": true, "triggers": true, "events": true, "plugins": true, "profiles": true, "bindings": true,
}

// specialNames are PostgreSQL's multiword spellings of variable names in
// SHOW and RESET.
func (s *stmtToks) specialName(i int) (string, int) {
	switch {
	case s.isWord(i, "time") && s.isWord(i+1, "zone"):
		return "timezone", i + 2
	case s.isWord(i, "transaction") && s.isWord(i+1, "isolation") && s.isWord(i+2, "level"):
		return "transaction_isolation", i + 3
	case s.isWord(i, "session") && s.isWord(i+1, "authorization"):
		return "session_authorization", i + 2
	}
	return "", i
}

// parseShow parses SHOW name / SHOW ALL; ok is false for MySQL's SHOW
// statements (SHOW TABLES, SHOW CREATE TABLE t, ...).
func (s *stmtToks) parseShow() (*ShowVar, bool) {
	if s.isWord(1, "all") && s.atEnd(2) {
		return &ShowVar{All: true}, true
	}
	if name, next := s.specialName(1); name != "" && s.atEnd(next) {
		return &ShowVar{Name: name}, true
	}
	name, next, ok := s.varName(1)
	if !ok || !s.atEnd(next) || tidbShowWords[name] {
		return nil, false
	}
	return &ShowVar{Name: name}, true
}

// parseReset parses RESET name / RESET ALL.
func (s *stmtToks) parseReset() (*ResetVar, error) {
	if s.isWord(1, "all") && s.atEnd(2) {
		return &ResetVar{All: true}, nil
	}
	if name, next := s.specialName(1); name != "" {
		if !s.atEnd(next) {
			return nil, s.errAtTok(next)
		}
		return &ResetVar{Name: name}, nil
	}
	name, next, ok := s.varName(1)
	if !ok {
		return nil, s.errAtTok(1)
	}
	if !s.atEnd(next) {
		return nil, s.errAtTok(next)
	}
	return &ResetVar{Name: name}, nil
}

// objectName reads the name of a prepared statement or savepoint: a bare
// word lowercased as PostgreSQL folds identifiers, a quoted name as
// written.
func (s *stmtToks) objectName(i int) (string, bool) {
	switch {
	case s.isKind(i, tkIdent):
		return strings.ToLower(s.text(i)), true
	case s.isKind(i, tkQuotedIdent):
		return s.unquoteIdent(i), true
	case s.isKind(i, tkString):
		return s.strs[s.toks[i].aux], true
	}
	return "", false
}

// parseDeallocate parses DEALLOCATE [PREPARE] name | ALL.
func (s *stmtToks) parseDeallocate() (*Deallocate, error) {
	i := 1
	if s.isWord(i, "prepare") && !s.atEnd(i+1) {
		i++
	}
	d := &Deallocate{}
	if s.isWord(i, "all") {
		d.All = true
	} else {
		name, ok := s.objectName(i)
		if !ok {
			return nil, s.errAtTok(i)
		}
		d.Name = name
	}
	if !s.atEnd(i + 1) {
		return nil, s.errAtTok(i + 1)
	}
	return d, nil
}

// parseDiscard parses DISCARD ALL | PLANS | SEQUENCES | TEMP | TEMPORARY.
func (s *stmtToks) parseDiscard() (*Discard, error) {
	var target string
	switch {
	case s.isWord(1, "all"), s.isWord(1, "plans"), s.isWord(1, "sequences"), s.isWord(1, "temp"):
		target = strings.ToLower(s.text(1))
	case s.isWord(1, "temporary"):
		target = "temp"
	default:
		return nil, s.errAtTok(1)
	}
	if !s.atEnd(2) {
		return nil, s.errAtTok(2)
	}
	return &Discard{Target: target}, nil
}
