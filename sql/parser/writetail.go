package parser

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// OnConflict is PostgreSQL's INSERT ... ON CONFLICT clause. TiDB's grammar
// has no such clause: the rewriter cuts it off and hands TiDB only the
// parts it can parse. The DO UPDATE SET list becomes MySQL's ON DUPLICATE
// KEY UPDATE list of the INSERT (ast.InsertStmt.OnDuplicate), which is
// where the binder reads it when OnConflict is set; EXCLUDED.c there is an
// ordinary qualified column name.
type OnConflict struct {
	// Columns is the conflict target (a, b) as written; Constraint the
	// name after ON CONSTRAINT. Both are empty for a bare ON CONFLICT DO
	// NOTHING, which applies to every unique constraint.
	Columns    []string
	Constraint string
	// Update is set for DO UPDATE (else DO NOTHING).
	Update bool
	// Where is the condition of DO UPDATE ... WHERE (nil: none).
	Where ast.ExprNode
	// Pos is the 1-based character position of ON CONFLICT.
	Pos int
}

// writeTail describes the clauses after the body of a write statement
// that TiDB's grammar lacks: ON CONFLICT and RETURNING. Token ranges are
// [lo, hi); -1 means absent.
type writeTail struct {
	cut int // the first token of the tail: the main statement ends here

	conflict           int // the ON of ON CONFLICT
	columns            []string
	constraint         string
	update             bool
	setLo, setHi       int // DO UPDATE SET list
	whereLo, whereHi   int // DO UPDATE ... WHERE condition
	returning          int // the RETURNING word
	returnLo, returnHi int
}

// findWriteTail finds ON CONFLICT and RETURNING at the top level of an
// INSERT, UPSERT, REPLACE, UPDATE or DELETE; nil when there are none.
func (s *stmtToks) findWriteTail() (*writeTail, error) {
	insert := s.isWord(0, "insert")
	if !insert && !s.isWord(0, "upsert") && !s.isWord(0, "replace") && !s.isWord(0, "update") && !s.isWord(0, "delete") {
		return nil, nil
	}
	t := &writeTail{cut: -1, conflict: -1, setLo: -1, whereLo: -1, returning: -1}
	n := s.n()
	for i := 1; i < n; i = s.skip(i) {
		switch {
		case s.isWord(i, "returning"):
			t.returning, t.returnLo, t.returnHi = i, i+1, n
			if t.returnLo == n {
				return nil, s.errAtTok(n)
			}
		case insert && t.conflict < 0 && s.isWord(i, "on") && s.isWord(i+1, "conflict"):
			t.conflict = i
		}
		if t.returning >= 0 {
			break
		}
	}
	switch {
	case t.conflict >= 0:
		t.cut = t.conflict
	case t.returning >= 0:
		t.cut = t.returning
	default:
		return nil, nil
	}
	if t.conflict >= 0 {
		hi := n
		if t.returning >= 0 {
			hi = t.returning
		}
		if err := s.parseConflict(t, hi); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// parseConflict reads ON CONFLICT [(cols) | ON CONSTRAINT name]
// DO NOTHING | DO UPDATE SET ... [WHERE ...] in [t.conflict, hi).
func (s *stmtToks) parseConflict(t *writeTail, hi int) error {
	i := t.conflict + 2
	switch {
	case s.isOp(i, "(") && int(s.match[i]) < hi:
		close := int(s.match[i])
		for _, el := range s.split(i+1, close) {
			if el[1]-el[0] != 1 || !(s.isKind(el[0], tkIdent) || s.isKind(el[0], tkQuotedIdent)) {
				if el[0] == el[1] {
					return s.errAtTok(el[1])
				}
				return errAt(sqlerr.FeatureNotSupported, s.start(el[0]),
					"ON CONFLICT with an expression or collation in the conflict target is not supported yet")
			}
			t.columns = append(t.columns, s.unquoteIdent(el[0]))
		}
		i = close + 1
		if s.isWord(i, "where") {
			return errAt(sqlerr.FeatureNotSupported, s.start(i),
				"ON CONFLICT with a partial index predicate is not supported yet")
		}
	case s.isWord(i, "on"):
		if !s.isWord(i+1, "constraint") {
			return s.errAtTok(i + 1)
		}
		if !s.isKind(i+2, tkIdent) && !s.isKind(i+2, tkQuotedIdent) {
			return s.errAtTok(i + 2)
		}
		t.constraint = s.unquoteIdent(i + 2)
		i += 3
	}
	if !s.isWord(i, "do") {
		return s.errAtTok(i)
	}
	switch {
	case s.isWord(i+1, "nothing"):
		if i+2 < hi {
			return s.errAtTok(i + 2)
		}
	case s.isWord(i+1, "update"):
		if !s.isWord(i+2, "set") {
			return s.errAtTok(i + 2)
		}
		if t.columns == nil && t.constraint == "" {
			return &sqlerr.Error{Code: sqlerr.SyntaxError,
				Message:  "ON CONFLICT DO UPDATE requires inference specification or constraint name",
				Hint:     "For example, ON CONFLICT (column_name).",
				Position: -(s.start(i+1) + 1)}
		}
		t.update = true
		t.setLo, t.setHi = i+3, hi
		for k := i + 3; k < hi; k = s.skip(k) {
			if s.isWord(k, "where") {
				t.setHi, t.whereLo, t.whereHi = k, k+1, hi
				break
			}
		}
		if t.setLo == t.setHi {
			return s.errAtTok(t.setHi)
		}
		if t.whereLo == t.whereHi {
			return s.errAtTok(t.whereHi)
		}
	default:
		return s.errAtTok(i + 1)
	}
	return nil
}

// emitWriteTail writes the tail after the main statement: the DO UPDATE
// SET list as ON DUPLICATE KEY UPDATE, then the DO UPDATE condition and
// the RETURNING list as statements of their own ("; SELECT 1 FROM DUAL
// WHERE cond", "; SELECT list FROM DUAL") that TiDB parses in the same
// call, so that parameter markers and positions stay in one text. It
// returns how many statements the text holds.
func (r *rewriter) emitWriteTail(t *writeTail) (int, error) {
	s := r.s
	count := 1
	if t.update {
		r.syn("ON DUPLICATE KEY UPDATE", t.conflict, false, false)
		if err := r.seq(t.setLo, t.setHi); err != nil {
			return 0, err
		}
	}
	if t.whereLo >= 0 {
		r.syn("; SELECT 1 FROM DUAL WHERE", t.whereLo-1, true, false)
		if err := r.seq(t.whereLo, t.whereHi); err != nil {
			return 0, err
		}
		count++
	}
	if t.returning >= 0 {
		r.syn("; SELECT", t.returning, true, false)
		for k, el := range s.split(t.returnLo, t.returnHi) {
			if k > 0 {
				r.plain(el[0] - 1) // the comma
			}
			if el[1]-el[0] == 1 && s.isKind(el[0], tkString) && s.src[s.toks[el[0]].start] == '"' {
				// RETURNING "id": a lone double-quoted string is a quoted
				// column name here (pgjdbc's getGeneratedKeys quotes the
				// key columns it asks for), not a constant.
				r.emit(el[0], backquote(strings.ReplaceAll(s.strs[s.toks[el[0]].aux], "`", "``")))
				continue
			}
			if el[0] == el[1] {
				return 0, s.errAtTok(el[1])
			}
			if err := r.seq(el[0], el[1]); err != nil {
				return 0, err
			}
		}
		r.syn("FROM DUAL", t.returnHi-1, false, false)
		count++
	}
	return count, nil
}

// attachWriteTail moves the extra statements of emitWriteTail into stmt.
func attachWriteTail(stmt *Statement, t *writeTail, extra []ast.StmtNode, s *stmtToks) error {
	k := 0
	if t.conflict >= 0 {
		oc := &OnConflict{Columns: t.columns, Constraint: t.constraint, Update: t.update, Pos: s.rp.pos(s.start(t.conflict))}
		if t.whereLo >= 0 {
			sel, ok := extra[k].(*ast.SelectStmt)
			if !ok || sel.Where == nil {
				return sqlerr.New(sqlerr.InternalError, "parser: ON CONFLICT condition parsed as %T", extra[k])
			}
			oc.Where = sel.Where
			k++
		}
		stmt.OnConflict = oc
	}
	if t.returning >= 0 {
		sel, ok := extra[k].(*ast.SelectStmt)
		if !ok || sel.Fields == nil {
			return sqlerr.New(sqlerr.InternalError, "parser: RETURNING list parsed as %T", extra[k])
		}
		stmt.Returning = sel.Fields.Fields
	}
	return nil
}
