package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Data-modifying statements in WITH: WITH x AS (INSERT | UPDATE | DELETE |
// UPSERT | REPLACE ... RETURNING ...) main. TiDB's grammar has no such
// CTE, so the statement is taken apart here: each data-modifying query
// becomes a Statement of its own in WithDML (in the order written), and
// the rest (main, with what remains of the WITH clause) is parsed as the
// statement. The binder gives each one's RETURNING rows the CTE's name
// (sql/bind/with_dml.go). As in PostgreSQL such a query is allowed only in
// the WITH clause that heads the statement: anywhere else the rewriter
// fails with 0A000 (rewriter.item).

// WithDML is one data-modifying query of a statement's top-level WITH.
type WithDML struct {
	// Name is the query's name as written (unquoted); Cols its column
	// names, nil when not given.
	Name string
	Cols []string
	// Stmt is the INSERT, UPDATE, DELETE, UPSERT or REPLACE.
	Stmt Statement
}

// withDML splits the data-modifying queries off a statement that starts
// with WITH. ok is false when it has none: the statement is left alone.
func (s *stmtToks) withDML() (rest *stmtToks, dml []WithDML, ok bool, err error) {
	if !s.isWord(0, "with") {
		return s, nil, false, nil
	}
	i := 1
	if s.isWord(i, "recursive") {
		i++
	}
	// cut are the token ranges [lo, hi) of the data-modifying queries,
	// each with a comma that separated it from its neighbour.
	var cut [][2]int
	total := 0
	for {
		if i >= s.n() || !(s.isKind(i, tkIdent) || s.isKind(i, tkQuotedIdent)) {
			return s, nil, false, nil
		}
		begin := i
		w := WithDML{Name: s.unquoteIdent(i)}
		i++
		if s.isOp(i, "(") {
			close := int(s.match[i])
			if close < 0 {
				return s, nil, false, nil
			}
			for j := i + 1; j < close; j++ {
				if !s.isOp(j, ",") {
					w.Cols = append(w.Cols, s.unquoteIdent(j))
				}
			}
			i = close + 1
		}
		if !s.isWord(i, "as") {
			return s, nil, false, nil
		}
		i++
		if s.isWord(i, "not") {
			i++
		}
		if s.isWord(i, "materialized") {
			i++
		}
		if !s.isOp(i, "(") || s.match[i] < 0 {
			return s, nil, false, nil
		}
		open, close := i, int(s.match[i])
		total++
		i = close + 1
		if close > open+1 && s.isKind(open+1, tkIdent) && dmlWords[strings.ToLower(s.text(open+1))] {
			body := s.without(close, s.n()).without(0, open+1)
			body.semi = s.start(close)
			w.Stmt, err = buildStatement(body)
			if err != nil {
				return s, nil, false, err
			}
			dml = append(dml, w)
			cut = append(cut, [2]int{begin, i})
		}
		if !s.isOp(i, ",") {
			break
		}
		i++
	}
	if len(dml) == 0 {
		return s, nil, false, nil
	}
	if i >= s.n() {
		return s, nil, false, errAt(sqlerr.SyntaxError, s.start(i), "syntax error at end of input")
	}
	if len(dml) == total {
		// Every query of the WITH modifies data: main is left alone.
		return s.without(0, i), dml, true, nil
	}
	rest = s
	for k := len(cut) - 1; k >= 0; k-- {
		lo, hi := cut[k][0], cut[k][1]
		if rest.isOp(hi, ",") {
			hi++ // "x AS (...)," before another query
		} else {
			lo-- // ", x AS (...)" after one
		}
		rest = rest.without(lo, hi)
	}
	return rest, dml, true, nil
}

// withAt reports whether a WITH comes before token i: "x AS (INSERT" is
// then a data-modifying query in a WITH clause.
func (s *stmtToks) withAt(i int) bool {
	for j := 0; j < i; j++ {
		if s.isWord(j, "with") {
			return true
		}
	}
	return false
}
