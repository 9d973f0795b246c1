package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Index statements that TiDB's MySQL grammar does not read, parsed here:
//
//	DROP INDEX [IF EXISTS] name [ON table]      -- PostgreSQL and SQLite spelling
//	REINDEX [INDEX | TABLE] name                -- rebuild an index, or every index of a table
//
// CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON t (cols) goes to TiDB.
// Statements PivotDB chooses not to support (triggers) are recognised here
// so that they fail with 0A000 when run, not with a syntax error.

// DropIndex is DROP INDEX [IF EXISTS] name [ON table].
type DropIndex struct {
	Name     string
	IfExists bool
}

// Reindex is REINDEX [INDEX | TABLE] name. Kind is "index", "table", or ""
// when the name may be either (SQLite's REINDEX name).
type Reindex struct {
	Name string
	Kind string
}

// Unsupported is a statement PivotDB recognises but does not run; What
// names it for the 0A000 error.
type Unsupported struct {
	What string
}

// indexStatement parses the statements above; ok is false for others.
func (s *stmtToks) indexStatement() (st Statement, ok bool, err error) {
	switch {
	case s.isWord(0, "create") && (s.isWord(1, "trigger") ||
		(s.isWord(1, "temp") || s.isWord(1, "temporary") || s.isWord(1, "or")) && s.hasWordBefore("trigger", 5)):
		return Statement{Unsupported: &Unsupported{What: "CREATE TRIGGER"}}, true, nil
	case s.isWord(0, "drop") && s.isWord(1, "trigger"):
		return Statement{Unsupported: &Unsupported{What: "DROP TRIGGER"}}, true, nil
	case s.isWord(0, "drop") && s.isWord(1, "index"):
		d := &DropIndex{}
		i := 2
		if s.isWord(i, "concurrently") {
			i++
		}
		if s.isWord(i, "if") && s.isWord(i+1, "exists") {
			d.IfExists = true
			i += 2
		}
		end, parts, named := s.nameChain(i)
		if !named {
			return Statement{}, true, s.errAtTok(i)
		}
		d.Name = parts[len(parts)-1]
		if s.isWord(end, "on") {
			if _, end, err = s.tableName(end + 1); err != nil {
				return Statement{}, true, err
			}
		}
		if end != s.n() {
			return Statement{}, true, s.errAtTok(end)
		}
		return Statement{DropIndex: d}, true, nil
	case s.isWord(0, "reindex"):
		r := &Reindex{}
		i := 1
		if s.isWord(i, "index") || s.isWord(i, "table") {
			if s.isKind(i+1, tkIdent) || s.isKind(i+1, tkQuotedIdent) {
				r.Kind = strings.ToLower(s.text(i))
				i++
			}
		}
		end, parts, named := s.nameChain(i)
		if !named {
			return Statement{}, true, s.errAtTok(i)
		}
		if end != s.n() {
			return Statement{}, true, s.errAtTok(end)
		}
		r.Name = parts[len(parts)-1]
		return Statement{Reindex: r}, true, nil
	}
	return Statement{}, false, nil
}

// hasWordBefore reports whether word w is among the first n tokens.
func (s *stmtToks) hasWordBefore(w string, n int) bool {
	for i := 0; i < n && i < s.n(); i++ {
		if s.isWord(i, w) {
			return true
		}
	}
	return false
}

// yqlIndex rewrites YQL's index element of CREATE TABLE,
//
//	INDEX name GLOBAL [UNIQUE] [SYNC] ON (cols)
//
// into TiDB's [UNIQUE] INDEX `name` (cols). ok is false when [a, b) has
// another shape. ASYNC (and LOCAL) indexes and COVER columns fail with
// 0A000: every index is maintained synchronously and covers nothing.
func (r *rewriter) yqlIndex(a, b int) (ok bool, err error) {
	s := r.s
	if !s.isWord(a, "index") || !(s.isKind(a+1, tkIdent) || s.isKind(a+1, tkQuotedIdent)) {
		return false, nil
	}
	i := a + 2
	unique := false
	var unsupported string
	for ; i < b && !s.isWord(i, "on"); i++ {
		switch {
		case s.isWord(i, "global"), s.isWord(i, "sync"):
		case s.isWord(i, "unique"):
			unique = true
		case s.isWord(i, "local"), s.isWord(i, "async"):
			unsupported = strings.ToUpper(s.text(i))
		default:
			return false, nil
		}
	}
	if i == a+2 || !s.isWord(i, "on") || !s.isOp(i+1, "(") {
		return false, nil
	}
	close := int(s.match[i+1])
	if close+1 < b {
		if s.isWord(close+1, "cover") {
			unsupported = "COVER"
		} else {
			return true, s.errAtTok(close + 1)
		}
	}
	if unsupported != "" {
		return true, sqlerr.NotSupported("%s in an index (indexes are GLOBAL SYNC without COVER)", unsupported)
	}
	if unique {
		r.syn("UNIQUE", a, false, false)
	}
	r.emit(a, "INDEX")
	r.emit(a+1, backquote(s.unquoteIdent(a+1)))
	return true, r.columnList(i + 1)
}
