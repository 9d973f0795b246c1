package parser

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Parse splits a script into statements and parses each one. It returns
// the statements in order, none for a script of only whitespace and
// comments. On error it returns no statements: like PostgreSQL, a syntax
// error anywhere rejects the whole script before any of it runs.
//
// Every error is a *sqlerr.Error with a SQLSTATE; syntax errors (42601)
// read `syntax error at or near "x"` or `syntax error at end of input` and
// carry the 1-based character position in sql.
func Parse(sql string) ([]Statement, error) { return ParseDialect(sql, DialectYQL) }

// Dialect is the session's sql_dialect as far as parsing is concerned: it
// decides whether "..." is a string (yql) or a quoted identifier
// (postgresql). Everything else the two dialects spell alike, so YQL-only
// syntax (UPSERT, REPLACE, backticks, WITH (...) settings, YQL type names)
// parses in both.
type Dialect uint8

const (
	DialectYQL Dialect = iota
	DialectPostgreSQL
)

// ParseDialect is Parse in the given dialect.
func ParseDialect(sql string, d Dialect) ([]Statement, error) { return parseScript(sql, d, false) }

// ParseFullPath is ParseDialect without the literal-VALUES fast path
// (values.go): every statement is TiDB's. Tests compare the two.
func ParseFullPath(sql string, d Dialect) ([]Statement, error) { return parseScript(sql, d, true) }

func parseScript(sql string, d Dialect, fullPath bool) ([]Statement, error) {
	if len(sql) >= math.MaxInt32 {
		return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "statement too long")
	}
	sc := &scanner{lex: lexer{src: sql, pgIdents: d == DialectPostgreSQL}, rp: runePos{src: sql}, fullPath: fullPath}
	var out []Statement
	for {
		st, err := sc.next()
		if err != nil {
			return nil, finishError(sql, err)
		}
		if st == nil {
			return out, nil
		}
		if st.n() == 0 {
			continue
		}
		stmt, err := buildStatement(st)
		if err != nil {
			return nil, finishError(sql, err)
		}
		out = append(out, stmt)
	}
}

// buildStatement parses one statement: the YQL-only and session statements
// here, everything else by TiDB after the rewrite.
func buildStatement(s *stmtToks) (Statement, error) {
	first, last := s.toks[0], s.toks[s.n()-1]
	stmt := Statement{Text: s.src[first.start:last.end], Offset: int(first.start)}
	s, ex, err := s.explainOptions()
	if err != nil {
		return Statement{}, err
	}
	stmt.Explain = ex
	if rest, dml, ok, err := s.withDML(); ok || err != nil {
		if err != nil {
			return Statement{}, err
		}
		if ex != nil {
			return Statement{}, errAt(sqlerr.FeatureNotSupported, s.start(0), "EXPLAIN of data-modifying statements in WITH is not supported yet")
		}
		main, err := buildStatement(rest)
		if err != nil {
			return Statement{}, err
		}
		if main.WithDML != nil {
			return Statement{}, errAt(sqlerr.SyntaxError, rest.start(0), "syntax error at or near \"WITH\"")
		}
		main.Text, main.Offset, main.WithDML = stmt.Text, stmt.Offset, dml
		return main, nil
	}
	s, stmt.NoData = s.withData()
	s, stmt.Temp, stmt.OnCommit = s.tempTable()
	if text, ok, err := s.createDatabaseOptions(); ok {
		if err != nil {
			return Statement{}, err
		}
		sts, err := Parse(text)
		if err != nil || len(sts) != 1 {
			return Statement{}, errAt(sqlerr.SyntaxError, s.start(0), "syntax error in CREATE DATABASE")
		}
		st := sts[0]
		st.Text, st.Offset = stmt.Text, stmt.Offset
		st.Position = func(int) int { return 0 }
		return st, nil
	}
	if text, ok, err := s.selectInto(); ok {
		if err != nil {
			return Statement{}, err
		}
		sts, err := Parse(text)
		if err != nil {
			// Re-spelled, the statement's positions are not the
			// client's: report the error without one.
			e := *sqlerr.As(err)
			e.Position = 0
			return Statement{}, &e
		}
		if len(sts) != 1 {
			return Statement{}, errAt(sqlerr.SyntaxError, s.start(0), "SELECT ... INTO must be one statement")
		}
		st := sts[0]
		st.Text, st.Offset = stmt.Text, stmt.Offset
		st.Position = func(int) int { return 0 }
		return st, nil
	}
	if s.isKind(0, tkIdent) {
		handled := true
		switch strings.ToLower(s.text(0)) {
		case "set":
			stmt.Set, stmt.Txn, handled, err = s.parseSet()
		case "show":
			if stmt.Job, handled, err = s.parseJob(); handled || err != nil {
				break
			}
			stmt.Show, handled = s.parseShow()
		case "cancel", "pause", "resume":
			stmt.Job, handled, err = s.parseJob()
		case "reset":
			stmt.Reset, err = s.parseReset()
		case "deallocate":
			stmt.Deallocate, err = s.parseDeallocate()
		case "discard":
			stmt.Discard, err = s.parseDiscard()
		case "declare":
			return s.parseDeclare(stmt)
		case "fetch":
			stmt.Cursor, err = s.parseFetch(false)
		case "move":
			stmt.Cursor, err = s.parseFetch(true)
		case "close":
			stmt.Cursor, err = s.parseClose()
		case "begin", "start", "commit", "end", "abort", "rollback", "savepoint", "release":
			stmt.Txn, handled, err = s.parseTxn()
		case "create", "drop", "reindex":
			if stmt.Sequence, handled, err = s.sequenceStatement(); handled || err != nil {
				break
			}
			if stmt.Type, handled, err = s.typeStatement(); handled || err != nil {
				break
			}
			if stmt.Function, handled, err = s.functionStatement(); handled || err != nil {
				break
			}
			stmt.User, handled, err = s.parseUser()
			if !handled && err == nil {
				var ist Statement
				if ist, handled, err = s.indexStatement(); handled && err == nil {
					ist.Text, ist.Offset = stmt.Text, stmt.Offset
					stmt = ist
				}
			}
		case "comment":
			stmt.Comment, err = s.parseComment()
		case "truncate":
			stmt.Truncate, err = s.parseTruncate()
		case "lock":
			stmt.Lock, err = s.parseLock()
		case "vacuum", "analyze", "analyse":
			stmt.Vacuum, err = s.parseVacuum()
		case "grant", "revoke":
			stmt.Grant, err = s.parseGrant()
		case "copy":
			if ex != nil {
				return Statement{}, s.errAtTok(0)
			}
			return s.parseCopy(stmt)
		case "alter":
			if stmt.Cluster, handled, err = s.parseCluster(); handled || err != nil {
				break
			}
			if stmt.Sequence, handled, err = s.sequenceStatement(); handled || err != nil {
				break
			}
			if stmt.Type, handled, err = s.typeStatement(); handled || err != nil {
				break
			}
			var ist Statement
			if ist, handled, err = s.indexStatement(); handled && err == nil {
				ist.Text, ist.Offset = stmt.Text, stmt.Offset
				stmt = ist
				break
			}
			if handled {
				break
			}
			stmt.RoleSetting, handled, err = s.parseRoleSetting()
			if handled || err != nil {
				break
			}
			stmt.User, handled, err = s.parseUser()
			if !handled && err == nil {
				stmt.AlterOwner, handled, err = s.parseAlterOwner()
			}
			if !handled && err == nil {
				stmt.Settings, handled, err = s.alterSettings()
			}
			if !handled && err == nil {
				stmt.Reshard, handled, err = s.reshard()
			}
		default:
			handled = false
		}
		if err != nil {
			return Statement{}, err
		}
		if handled {
			return stmt, nil
		}
	}
	return tidbStatement(s, stmt)
}

// tidbStatement rewrites the statement and has TiDB parse the result.
func tidbStatement(s *stmtToks, stmt Statement) (Statement, error) {
	s, locking, asOf, err := s.queryClauses()
	if err != nil {
		return Statement{}, err
	}
	stmt.Locking, stmt.AsOf = locking, asOf
	tail, err := s.findWriteTail()
	if err != nil {
		return Statement{}, err
	}
	r := newRewriter(s)
	if tail != nil {
		r.hi = tail.cut
	}
	// The literal-VALUES fast path (values.go): TiDB reads VALUES ().
	values, lits, fast := s.literalValues(r.hi)
	if fast {
		r.hi = values + 1
	}
	ok, with, err := r.createTable()
	if !ok {
		ok, err = r.alterAddIndex()
	}
	if !ok {
		ok, err = r.alterTable()
	}
	if !ok {
		ok, err = r.insertOr()
	}
	if !ok {
		ok, err = r.upsertStatement()
		stmt.Upsert = ok
	}
	if !ok {
		err = r.seq(0, r.hi)
	}
	if err == nil && fast {
		r.syn("()", values+1, false, false)
		for _, l := range lits.Items {
			if l.Kind == LitParam {
				r.numParams = max(r.numParams, int(l.Int))
			}
		}
	}
	count := 1
	if err == nil && tail != nil {
		count, err = r.emitWriteTail(tail)
	}
	if err != nil {
		return Statement{}, err
	}
	text := string(r.out.buf)
	nodes, err := parseTiDB(text, count)
	if err != nil {
		return Statement{}, r.tidbError(err)
	}
	node := nodes[0]
	for _, n := range nodes {
		orderParams(n, r.paramOffs)
	}
	markColumns(node)
	if tail != nil {
		if err := attachWriteTail(&stmt, tail, nodes[1:], s); err != nil {
			return Statement{}, err
		}
	}
	stmt.AST = node
	stmt.TiDBText = text
	stmt.Position = func(off int) int {
		// An AST node's offset in the rewritten text → the token it came
		// from → its 1-based character position in the client's script.
		tok := r.out.tokenAt(off)
		if tok < 0 {
			return 0
		}
		return s.rp.pos(s.start(tok))
	}
	stmt.With = with
	stmt.Alter = r.alter
	stmt.Identities = r.identities
	stmt.Values = lits
	stmt.NumParams = r.numParams
	stmt.ParamIndex = r.params
	return stmt, nil
}

// TiDB parsers are reused; one holds its last input and AST until the
// next use, so parsers that read huge statements are dropped instead.
var tidbParsers = sync.Pool{New: func() any { return parser.New() }}

const maxPooledInput = 1 << 20

// parseTiDB parses one rewritten statement with TiDB's parser: want
// statements (more than one when the rewriter put the tail clauses of a
// write in statements of their own, see emitWriteTail).
func parseTiDB(text string, want int) (nodes []ast.StmtNode, err error) {
	p := tidbParsers.Get().(*parser.Parser)
	defer func() {
		if rec := recover(); rec != nil {
			// A bug in TiDB's parser; the parser's state is unknown, so it
			// is not reused.
			nodes, err = nil, &sqlerr.Error{Code: sqlerr.InternalError,
				Message: fmt.Sprintf("parser: TiDB parser panicked: %v", rec)}
			return
		}
		if len(text) <= maxPooledInput {
			tidbParsers.Put(p)
		}
	}()
	p.SetSQLMode(mysql.ModeNoBackslashEscapes | mysql.ModePipesAsConcat | mysql.ModeIgnoreSpace)
	stmts, _, err := p.ParseSQL(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) != want {
		return nil, &sqlerr.Error{Code: sqlerr.InternalError,
			Message: fmt.Sprintf("parser: TiDB read %d statements, not %d", len(stmts), want)}
	}
	// The slice belongs to the parser, which goes back to the pool.
	return append([]ast.StmtNode(nil), stmts...), nil
}

// paramOrderer numbers parameter markers by their position among all
// markers of the rewritten text (TiDB's parser leaves Order at 0).
type paramOrderer struct{ offs []int }

func (v *paramOrderer) Enter(n ast.Node) (ast.Node, bool) {
	if pm, ok := n.(*test_driver.ParamMarkerExpr); ok {
		if k := sort.SearchInts(v.offs, pm.Offset); k < len(v.offs) && v.offs[k] == pm.Offset {
			pm.SetOrder(k)
		}
	}
	return n, false
}

func (v *paramOrderer) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func orderParams(node ast.StmtNode, offs []int) {
	if len(offs) > 0 {
		node.Accept(&paramOrderer{offs: offs})
	}
}

// markColumns moves the type marker of every column definition from its
// COMMENT option (always the first option, right after BLOB) into the
// column's FieldType, where ColumnType finds it.
func markColumns(node ast.StmtNode) {
	switch n := node.(type) {
	case *ast.CreateTableStmt:
		for _, c := range n.Cols {
			moveMarker(c)
		}
	case *ast.AlterTableStmt:
		for _, spec := range n.Specs {
			for _, c := range spec.NewColumns {
				moveMarker(c)
			}
		}
	}
}

func moveMarker(c *ast.ColumnDef) {
	if len(c.Options) == 0 || c.Options[0].Tp != ast.ColumnOptionComment || c.Tp == nil {
		return
	}
	v, ok := c.Options[0].Expr.(ast.ValueExpr)
	if !ok || !strings.HasPrefix(v.GetString(), markerPrefix) {
		return
	}
	c.Tp.SetElems([]string{v.GetString()})
	c.Options = slices.Delete(c.Options, 0, 1)
}
