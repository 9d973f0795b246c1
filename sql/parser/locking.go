package parser

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// The clauses of a query that TiDB's MySQL grammar lacks or spells
// differently, taken off the token list before the rewrite (as EXPLAIN's
// options are):
//
//	SELECT ... FROM t AS OF SYSTEM TIME '-10s' WHERE ...      (CockroachDB)
//	SELECT ... FOR UPDATE OF t NOWAIT FOR SHARE OF u ...      (PostgreSQL)
//
// Both are recognised at the top level of the statement only (not inside
// parentheses): PostgreSQL applies a top-level locking clause to the
// subqueries in FROM itself, and CockroachDB allows AS OF SYSTEM TIME on
// the top-level statement only. A locking clause inside a subquery is left
// to TiDB, which reads FOR UPDATE and FOR SHARE in MySQL's shape; the
// binder refuses it.

// LockStrength is the row lock a locking clause takes, weakest first, so
// that the strongest of several clauses naming one table is the largest.
type LockStrength uint8

// The lock strengths of PostgreSQL's locking clauses.
const (
	LockNone LockStrength = iota
	LockForKeyShare
	LockForShare
	LockForNoKeyUpdate
	LockForUpdate
)

// String is the clause as PostgreSQL's messages spell it ("FOR UPDATE").
func (l LockStrength) String() string {
	switch l {
	case LockForKeyShare:
		return "FOR KEY SHARE"
	case LockForShare:
		return "FOR SHARE"
	case LockForNoKeyUpdate:
		return "FOR NO KEY UPDATE"
	case LockForUpdate:
		return "FOR UPDATE"
	}
	return "none"
}

// LockWait is what a locking clause does about a row another transaction
// holds, in the order PostgreSQL combines them (the largest wins).
type LockWait uint8

const (
	// LockWaitBlock waits for the row (the default).
	LockWaitBlock LockWait = iota
	// LockSkipLocked skips the row (SKIP LOCKED).
	LockSkipLocked
	// LockNoWait fails at once with 55P03 (NOWAIT).
	LockNoWait
)

func (w LockWait) String() string {
	switch w {
	case LockSkipLocked:
		return "SKIP LOCKED"
	case LockNoWait:
		return "NOWAIT"
	}
	return "wait"
}

// LockingClause is one FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR
// KEY SHARE [OF t, ...] [NOWAIT | SKIP LOCKED] of a query.
type LockingClause struct {
	Strength LockStrength
	// Of are the relations named after OF, as written (lowercased unless
	// quoted); empty: every table of the FROM clause.
	Of   []LockTarget
	Wait LockWait
	// Pos is the 1-based character position of FOR.
	Pos int
}

// LockTarget is one relation named in a locking clause's OF list.
type LockTarget struct {
	Name string
	Pos  int
}

// AsOfClause is CockroachDB's AS OF SYSTEM TIME expr, on a query or in
// BEGIN / SET TRANSACTION. The binder evaluates Expr (a constant, or
// follower_read_timestamp()).
type AsOfClause struct {
	Expr ast.ExprNode
	// Pos is the 1-based character position of AS.
	Pos int
}

// queryStart returns the index of a query's first token when the
// statement is a query (SELECT, WITH, VALUES, TABLE or a parenthesised
// query), optionally under EXPLAIN; ok is false for other statements.
func (s *stmtToks) queryStart() (int, bool) {
	i := 0
	if s.isWord(0, "explain") {
		i = 1
	}
	switch {
	case s.isWord(i, "select"), s.isWord(i, "with"), s.isWord(i, "values"), s.isWord(i, "table"):
		return i, true
	case s.isOp(i, "(") && s.isWord(i+1, "select"):
		return i, true
	}
	return 0, false
}

// isAsOf reports whether AS OF SYSTEM TIME starts at token i.
func (s *stmtToks) isAsOf(i int) bool {
	return s.isWord(i, "as") && s.isWord(i+1, "of") && s.isWord(i+2, "system") && s.isWord(i+3, "time")
}

// clauseAfterAsOf are the words that end an AS OF SYSTEM TIME expression
// at the top level of a query: the clauses that may follow FROM.
var clauseAfterAsOf = map[string]bool{
	"where": true, "group": true, "having": true, "window": true, "order": true, "limit": true,
	"offset": true, "fetch": true, "for": true, "union": true, "intersect": true, "except": true,
}

// queryClauses takes the locking clauses and the AS OF SYSTEM TIME clause
// off a query's top level. It returns the statement without them (token
// offsets unchanged, so positions still map to the script).
func (s *stmtToks) queryClauses() (*stmtToks, []LockingClause, *AsOfClause, error) {
	if err := s.nestedAsOf(); err != nil {
		return nil, nil, nil, err
	}
	q0, ok := s.queryStart()
	if !ok {
		return s, nil, nil, nil
	}
	var (
		locks    []LockingClause
		asOf     *AsOfClause
		cuts     [][2]int
		inFrom   bool // between a FROM and the clause after its list
		n        = s.n()
		isLockAt = func(i int) bool {
			return s.isWord(i, "for") && (s.isWord(i+1, "update") || s.isWord(i+1, "share") ||
				s.isWord(i+1, "no") || s.isWord(i+1, "key"))
		}
	)
	for i := q0; i < n; {
		switch {
		case s.isWord(i, "from"):
			inFrom = true
			i++
		case s.isKind(i, tkIdent) && clauseAfterAsOf[strings.ToLower(s.text(i))] && !isLockAt(i):
			inFrom = false
			i++
		case s.isAsOf(i):
			if asOf != nil {
				return nil, nil, nil, errAt(sqlerr.FeatureNotSupported, s.start(i),
					"AS OF SYSTEM TIME in more than one FROM clause is not supported yet")
			}
			if !inFrom {
				// CockroachDB's grammar has the clause right after a FROM
				// list only.
				return nil, nil, nil, s.errAtTok(i)
			}
			end := i + 4
			for end < n && !(s.isKind(end, tkIdent) && clauseAfterAsOf[strings.ToLower(s.text(end))]) {
				end = s.skip(end)
			}
			if end == i+4 {
				return nil, nil, nil, s.errAtTok(end)
			}
			e, err := s.exprAt(i+4, end)
			if err != nil {
				return nil, nil, nil, err
			}
			asOf = &AsOfClause{Expr: e, Pos: s.rp.pos(s.start(i))}
			cuts = append(cuts, [2]int{i, end})
			i = end
		case isLockAt(i):
			lo := i
			for isLockAt(i) {
				lc, next, err := s.lockingClause(i)
				if err != nil {
					return nil, nil, nil, err
				}
				locks = append(locks, lc)
				i = next
			}
			if i < n && !s.isWord(i, "limit") && !s.isWord(i, "offset") && !s.isWord(i, "fetch") {
				return nil, nil, nil, s.errAtTok(i)
			}
			cuts = append(cuts, [2]int{lo, i})
		default:
			i = s.skip(i)
		}
	}
	for k := len(cuts) - 1; k >= 0; k-- {
		s = s.without(cuts[k][0], cuts[k][1])
	}
	return s, locks, asOf, nil
}

// lockingClause parses one locking clause at i (the FOR) and returns the
// index after it.
func (s *stmtToks) lockingClause(i int) (LockingClause, int, error) {
	lc := LockingClause{Pos: s.rp.pos(s.start(i))}
	i++
	switch {
	case s.isWord(i, "update"):
		lc.Strength, i = LockForUpdate, i+1
	case s.isWord(i, "share"):
		lc.Strength, i = LockForShare, i+1
	case s.isWord(i, "no"):
		if !s.isWord(i+1, "key") {
			return lc, 0, s.errAtTok(i + 1)
		}
		if !s.isWord(i+2, "update") {
			return lc, 0, s.errAtTok(i + 2)
		}
		lc.Strength, i = LockForNoKeyUpdate, i+3
	case s.isWord(i, "key"):
		if !s.isWord(i+1, "share") {
			return lc, 0, s.errAtTok(i + 1)
		}
		lc.Strength, i = LockForKeyShare, i+2
	}
	if s.isWord(i, "of") {
		i++
		for {
			end, parts, ok := s.nameChain(i)
			if !ok {
				return lc, 0, s.errAtTok(i)
			}
			if len(parts) > 1 {
				// PostgreSQL's grammar takes a qualified name here and
				// refuses it when it resolves the clause.
				return lc, 0, errAt(sqlerr.SyntaxError, s.start(i), "%s must specify unqualified relation names", lc.Strength)
			}
			name := parts[0]
			if s.isKind(i, tkIdent) {
				name = strings.ToLower(name)
			}
			lc.Of = append(lc.Of, LockTarget{Name: name, Pos: s.rp.pos(s.start(i))})
			i = end
			if !s.isOp(i, ",") {
				break
			}
			i++
		}
	}
	switch {
	case s.isWord(i, "nowait"):
		lc.Wait, i = LockNoWait, i+1
	case s.isWord(i, "skip"):
		if !s.isWord(i+1, "locked") {
			return lc, 0, s.errAtTok(i + 1)
		}
		lc.Wait, i = LockSkipLocked, i+2
	}
	return lc, i, nil
}

// nestedAsOf refuses AS OF SYSTEM TIME anywhere but the top level of a
// query, as CockroachDB does (42601).
func (s *stmtToks) nestedAsOf() error {
	q0, query := s.queryStart()
	top := map[int]bool{}
	if query {
		for i := q0; i < s.n(); i = s.skip(i) {
			top[i] = true
		}
	}
	for i := 0; i+3 < s.n(); i++ {
		if s.isAsOf(i) && !top[i] {
			return errAt(sqlerr.SyntaxError, s.start(i), "AS OF SYSTEM TIME must be provided on a top-level statement")
		}
	}
	return nil
}

// exprAt parses the tokens [lo, hi) as one expression, rewritten as any
// expression is (casts, typed literals, INTERVAL '...'). Parameters are
// refused: the value must be known when the statement is bound.
func (s *stmtToks) exprAt(lo, hi int) (ast.ExprNode, error) {
	r := newRewriter(s)
	r.hi = hi
	r.syn("SELECT", lo, false, false)
	if err := r.seq(lo, hi); err != nil {
		return nil, err
	}
	if r.numParams > 0 {
		return nil, errAt(sqlerr.FeatureNotSupported, s.start(lo), "parameters in AS OF SYSTEM TIME are not supported yet")
	}
	nodes, err := parseTiDB(string(r.out.buf), 1)
	if err != nil {
		return nil, r.tidbError(err)
	}
	sel, ok := nodes[0].(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil {
		return nil, s.errAtTok(lo)
	}
	return sel.Fields.Fields[0].Expr, nil
}
