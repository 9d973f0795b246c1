package parser

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// rewriter turns the tokens of one statement into text TiDB's MySQL grammar
// accepts, keeping the meaning of the PostgreSQL/YQL spelling:
//
//   - every string literal becomes a standard '...' literal;
//   - $n becomes ? (ParamIndex remembers n);
//   - expr::type and CAST(expr AS type) become pivot_cast(expr, 'Type');
//   - YQL typed literals Date("...") and PostgreSQL's DATE '...' become
//     pivot_cast('...', 'Date');
//   - == becomes =;
//   - PostgreSQL's catalog-query spellings: a ~ b / !~ / ~* / !~* become
//     REGEXP (regexOp), OPERATOR(pg_catalog.op) the bare operator,
//     COLLATE clauses are dropped, pg_catalog.f(...) becomes f(...),
//     x::regclass (and the other object-identifier types) becomes
//     pivot_regcast(x, 'regclass'), bare session_user becomes a call, and a
//     double-quoted string after FROM/JOIN/INTO/UPDATE/TABLE is a quoted
//     table name;
//   - an empty IN list, IN (), becomes IN (pivot_empty_list());
//   - the reserved words key, index, order and group are backtick-quoted
//     where they are column names (see identText);
//   - column types in CREATE TABLE / ALTER TABLE become
//     BLOB COMMENT 'pivot:<Type>' (ddl.go).
//
// The rewriter walks the token list recursively by parenthesis groups; the
// scanner has bounded their nesting, so the recursion is bounded too.
type rewriter struct {
	s   *stmtToks
	out emitter
	// lastTok is the token emitted last, -1 after synthetic text.
	lastTok int
	// glue makes the next piece follow the previous one without a space
	// (after synthetic text ending in "(").
	glue bool
	// params[k] is the $n of the k-th '?' in the output; paramOffs[k] is
	// its byte offset in the output.
	params    []int
	paramOffs []int
	numParams int
	// alter collects ALTER TABLE's PostgreSQL-only actions (pgAlterSpec).
	alter []AlterAction
	// identities are the serial and identity columns of CREATE TABLE or
	// ALTER TABLE ... ADD (identity.go).
	identities []ColumnIdentity
	// hi is where the main statement ends: before the ON CONFLICT and
	// RETURNING clauses of a write, which emitWriteTail writes.
	hi int
}

func newRewriter(s *stmtToks) *rewriter {
	return &rewriter{s: s, lastTok: -1, hi: s.n()}
}

// emit writes text for original token i.
func (r *rewriter) emit(i int, text string) {
	s := r.s
	adjacent := r.glue || i > 0 && r.lastTok == i-1 && s.toks[i-1].end == s.toks[i].start
	r.out.write(text, i, adjacent)
	r.glue = false
	r.lastTok = i
}

// syn writes synthetic text charged to token tok. glueBefore omits the
// space before it; glueAfter omits the space after it.
func (r *rewriter) syn(text string, tok int, glueBefore, glueAfter bool) {
	r.out.write(text, tok, glueBefore || r.glue)
	r.glue = glueAfter
	r.lastTok = -1
}

// sqlQuote spells v as a standard SQL string literal, which TiDB reads
// back byte for byte in NO_BACKSLASH_ESCAPES mode.
func sqlQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// plain emits token i on its own.
func (r *rewriter) plain(i int) {
	s := r.s
	t := s.toks[i]
	switch t.kind {
	case tkString:
		r.emit(i, sqlQuote(s.strs[t.aux]))
	case tkParam:
		r.emit(i, "?")
		r.params = append(r.params, int(t.aux))
		r.paramOffs = append(r.paramOffs, len(r.out.buf)-1)
		r.numParams = max(r.numParams, int(t.aux))
	case tkIdent:
		r.emit(i, r.identText(i))
	case tkOp:
		if s.text(i) == "==" {
			r.emit(i, "=")
			return
		}
		r.emit(i, s.text(i))
	default:
		r.emit(i, s.text(i))
	}
}

// backquote quotes a bare word as a MySQL identifier.
func backquote(w string) string { return "`" + w + "`" }

// Words after which KEY and INDEX are keywords; elsewhere they are column
// names. (At the start of a table element ddl.go decides.)
var keyKeywordAfter = map[string]bool{
	"primary": true, "unique": true, "foreign": true, "fulltext": true, "spatial": true, "duplicate": true,
	"use": true, "force": true, "ignore": true, "add": true, "drop": true, "show": true, "vector": true,
	"columnar": true,
}

var indexKeywordAfter = map[string]bool{
	"primary": true, "unique": true, "foreign": true, "fulltext": true, "spatial": true, "duplicate": true,
	"use": true, "force": true, "ignore": true, "add": true, "drop": true, "show": true, "vector": true,
	"columnar": true, "create": true, "alter": true, "rename": true, "check": true,
}

func (s *stmtToks) prevWordIn(i int, set map[string]bool) bool {
	return i > 0 && s.toks[i-1].kind == tkIdent && set[strings.ToLower(s.text(i-1))]
}

// identText spells bare word i for TiDB. YQL tables commonly have columns
// named key (and sometimes index, order, group), which MySQL reserves; they
// are backtick-quoted except where they are keywords:
//
//	key    after PRIMARY, UNIQUE, FOREIGN, DUPLICATE, ADD, DROP, USE, ...
//	index  likewise, and after CREATE, ALTER, RENAME, CHECK
//	order  before BY
//	group  before BY and after WITHIN
//
// Other reserved words (desc, range, rows, ...) need backticks as in MySQL.
func (r *rewriter) identText(i int) string {
	s := r.s
	w := s.text(i)
	switch len(w) {
	case 3:
		if strings.EqualFold(w, "key") && !s.prevWordIn(i, keyKeywordAfter) {
			return backquote(w)
		}
	case 5:
		switch {
		case strings.EqualFold(w, "index") && !s.prevWordIn(i, indexKeywordAfter):
			return backquote(w)
		case strings.EqualFold(w, "order") && !s.isWord(i+1, "by"):
			return backquote(w)
		case strings.EqualFold(w, "group") && !s.isWord(i+1, "by") && !s.isWord(i-1, "within"):
			return backquote(w)
		}
	case 10:
		// A sequence's column (pg_dump reads it); in MySQL's grammar
		// the window function's keyword.
		if strings.EqualFold(w, "last_value") && !s.isOp(i+1, "(") {
			return backquote(w)
		}
	}
	return w
}

// seq emits the items of [lo, hi).
func (r *rewriter) seq(lo, hi int) error {
	for i := lo; i < hi; {
		next, err := r.item(i, hi)
		if err != nil {
			return err
		}
		if s := r.s; next > i && next+1 < hi && s.isOp(next-1, ")") && s.isOp(next, ".") && s.isKind(next+1, tkIdent) {
			// f(x).field: PostgreSQL selects a field only from a
			// parenthesised value, (f(x)).field (operand), and calls this
			// a syntax error.
			return s.errAtTok(next)
		}
		i = next
	}
	return nil
}

// notCallee are words that a parenthesised group may follow without being
// a function call: "WHERE (a)::int" casts (a), not WHERE(a).
var notCallee = map[string]bool{
	"select": true, "where": true, "and": true, "or": true, "not": true, "xor": true, "in": true, "on": true,
	"by": true, "when": true, "then": true, "else": true, "as": true, "from": true, "join": true, "having": true,
	"limit": true, "offset": true, "is": true, "like": true, "ilike": true, "between": true, "using": true,
	"set": true, "returning": true, "into": true, "values": true, "value": true, "distinct": true, "all": true,
	"any": true, "some": true, "exists": true, "union": true, "except": true, "intersect": true, "with": true,
	"case": true, "recursive": true, "over": true, "window": true, "partition": true, "default": true,
	"escape": true, "check": true, "lateral": true, "table": true, "regexp": true, "rlike": true, "div": true,
	"return": true, "end": true,
}

// labelKeywords are words MySQL reserves that PostgreSQL accepts as a
// column label after AS (rewriter.item quotes them there).
var labelKeywords = map[string]bool{
	"default": true, "desc": true, "asc": true, "order": true, "group": true, "key": true, "index": true,
	"check": true, "primary": true, "unique": true, "references": true, "user": true, "column": true, "to": true,
	"range": true, "rows": true, "keys": true, "table": true, "limit": true, "both": true, "leading": true, "trailing": true,
	"constraint": true, "foreign": true, "interval": true, "current_date": true, "current_time": true,
	"current_timestamp": true, "current_user": true, "generated": true, "stored": true, "virtual": true,
}

// valueFuncs are SQL's functions called without parentheses that MySQL's
// grammar does not know as such (it knows current_user and the clock
// functions).
var valueFuncs = map[string]bool{"session_user": true, "current_catalog": true, "current_schema": true, "current_role": true}

// arrayQuantifier reports whether ANY/SOME/ALL at i applies to an array
// (x = ANY (arr)) rather than to a subquery (x = ANY (SELECT ...)).
func (r *rewriter) arrayQuantifier(i, hi int) bool {
	s := r.s
	op := i - 1
	if op >= 3 && s.isOp(op, ")") {
		// x OPERATOR(pg_catalog.=) ANY (arr), as pg_dump -t writes it
		// (operatorCall emits the bare operator).
		open := op - 2
		if s.isOp(open, ".") && s.isWord(open-1, "pg_catalog") {
			open -= 2
		}
		if open >= 1 && s.isOp(open, "(") && s.isWord(open-1, "operator") && int(s.match[open]) == op {
			op--
		}
	}
	if i == 0 || !s.isOp(i+1, "(") || int(s.match[i+1]) >= hi || s.toks[op].kind != tkOp {
		return false
	}
	switch s.text(op) {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
	default:
		return false
	}
	first := i + 2
	for s.isOp(first, "(") {
		first++
	}
	return !(s.isWord(first, "select") || s.isWord(first, "values") || s.isWord(first, "with") || s.isWord(first, "table"))
}

// SequenceFuncPrefix and SequenceFuncs: the dialect front spells
// PostgreSQL's sequence functions nextval(...), currval(...), setval(...)
// and lastval() as pivot_nextval(...) and so on, because TiDB's grammar
// reads its own NEXTVAL(table) there. SequenceFuncs maps each spelling to
// the name a result column takes.
const SequenceFuncPrefix = "pivot_"

var SequenceFuncs = map[string]string{
	"pivot_nextval": "nextval", "pivot_currval": "currval", "pivot_setval": "setval", "pivot_lastval": "lastval",
}

// DivFunc and ModFunc are the dialect front's spellings of the functions
// div(a, b) and mod(a, b).
const (
	DivFunc = "pivot_div"
	ModFunc = "pivot_mod"
)

// ArraySubqueryFunc is the function the rewriter turns ARRAY(SELECT ...)
// into: pivot_array_subquery((SELECT ...)). The binder plans it as a
// subquery whose rows become the text form of an array.
const ArraySubqueryFunc = "pivot_array_subquery"

// SeriesFunc is the dialect front's spelling of generate_series(...) in
// FROM: the derived table (SELECT pivot_generate_series(...)), which the
// binder plans as a series of integers (MySQL's grammar has no
// functions in FROM).
const SeriesFunc = "pivot_generate_series"

// UnnestFunc and UnnestOrdinalityFunc are the dialect front's spellings
// of unnest(...) and unnest(...) WITH ORDINALITY in FROM, derived tables
// like SeriesFunc's.
const (
	UnnestFunc           = "pivot_unnest"
	UnnestOrdinalityFunc = "pivot_unnest_ordinality"
)

// NullsFirstFunc and NullsLastFunc are the marker items NULLS FIRST and
// NULLS LAST become in an ORDER BY list (see rewriter.item).
const (
	NullsFirstFunc = "pivot_nulls_first"
	NullsLastFunc  = "pivot_nulls_last"
)

// TableFunc is the dialect front's spelling of a function call in FROM
// other than generate_series and unnest: the derived table (SELECT
// pivot_table_func(f(args))), which the binder plans as the function's
// rows (bind/setfunc.go).
const TableFunc = "pivot_table_func"

// reservedTableWord are words that may follow FROM or JOIN with a "("
// without being a function call.
var reservedTableWord = map[string]bool{"lateral": true, "select": true, "values": true, "only": true, "table": true}

// fromFuncAfter are the words after which a function call is a table
// function.
var fromFuncAfter = map[string]bool{"from": true, "join": true, "lateral": true}

// tableNameAfter are the words after which only a table name can stand.
var tableNameAfter = map[string]bool{"from": true, "join": true, "into": true, "update": true, "table": true}

// item emits the item at i (an operand with its casts, or an operator or
// keyword) and returns the index after it.
func (r *rewriter) item(i, hi int) (int, error) {
	s := r.s
	t := s.toks[i]
	switch t.kind {
	case tkIdent:
		switch {
		case s.isWord(i-1, "as") && labelKeywords[strings.ToLower(s.text(i))] &&
			(i+1 >= hi || s.isOp(i+1, ",") || s.isOp(i+1, ")") || s.isWord(i+1, "from")):
			// SELECT ... AS default: PostgreSQL takes any keyword as a
			// column label after AS (SQLAlchemy's reflection names one
			// "default"); MySQL's grammar needs it quoted.
			r.emit(i, backquote(s.text(i)))
			return i + 1, nil
		case s.isWord(i, "using") && s.isKind(i+1, tkIdent) && s.isOp(i+2, "(") && s.isWord(0, "create") &&
			s.hasWordBefore("index", 4) && s.hasWordBefore("on", i):
			// CREATE INDEX ... ON t USING btree (...), as pg_dump writes
			// it: PivotDB's indexes are ordered (btree's semantics), the
			// other access methods are not there.
			if !s.isWord(i+1, "btree") {
				return 0, errAt(sqlerr.FeatureNotSupported, s.start(i+1), "index access method %q is not supported yet", strings.ToLower(s.text(i+1)))
			}
			return i + 2, nil
		case s.isWord(i, "is") && s.isWord(i+1, "distinct") && s.isWord(i+2, "from"),
			s.isWord(i, "is") && s.isWord(i+1, "not") && s.isWord(i+2, "distinct") && s.isWord(i+3, "from"):
			return r.distinctFrom(i, hi)
		case s.isWord(i, "operator") && s.isOp(i+1, "(") && int(s.match[i+1]) < hi:
			return r.operatorCall(i, hi)
		case s.isWord(i, "collate"):
			return r.collate(i, hi)
		case s.tableFuncAt(i) && s.isWord(i, "generate_subscripts") && s.isOp(i+1, "("):
			// Planned in a select list only (bind/projectset.go).
			return 0, errAt(sqlerr.FeatureNotSupported, s.start(i), "generate_subscripts() in FROM is not supported yet (call it in the select list)")
		case s.tableFuncAt(i) && s.isWord(i, "pg_options_to_table") && s.isOp(i+1, "(") && int(s.match[i+1]) < hi,
			s.tableFuncAt(i) && s.isWord(i, "pg_catalog") && s.isOp(i+1, ".") && s.isWord(i+2, "pg_options_to_table") &&
				s.isOp(i+3, "(") && int(s.match[i+3]) < hi:
			return r.optionsToTable(i, hi)
		case s.tableFuncAt(i) && s.isWord(i, "pg_partition_ancestors") && s.isOp(i+1, "(") && int(s.match[i+1]) < hi,
			s.tableFuncAt(i) && s.isWord(i, "pg_catalog") && s.isOp(i+1, ".") && s.isWord(i+2, "pg_partition_ancestors") &&
				s.isOp(i+3, "(") && int(s.match[i+3]) < hi:
			return r.partitionAncestors(i, hi)
		case s.tableFuncAt(i) && s.isWord(i, "unnest") && s.isOp(i+1, "(") && int(s.match[i+1]) < hi,
			s.tableFuncAt(i) && s.isWord(i, "pg_catalog") && s.isOp(i+1, ".") && s.isWord(i+2, "unnest") &&
				s.isOp(i+3, "(") && int(s.match[i+3]) < hi:
			// unnest(...) [WITH ORDINALITY] in FROM: (SELECT
			// pivot_unnest(...)) or pivot_unnest_ordinality, planned
			// like generate_series. psql writes pg_catalog.unnest.
			open := i + 1
			if !s.isOp(open, "(") {
				open = i + 3
			}
			end := int(s.match[open]) + 1
			fn := UnnestFunc
			if end+1 < hi && s.isWord(end, "with") && s.isWord(end+1, "ordinality") {
				fn = UnnestOrdinalityFunc
			}
			next := end
			if fn == UnnestOrdinalityFunc {
				next = end + 2
			}
			aliased := s.derivedColumnsAt(next, hi) > 0
			if aliased && !s.isWord(i-1, "lateral") {
				r.syn("LATERAL", i, false, false)
			}
			r.syn("(SELECT "+fn, i, false, true)
			if err := r.group(open); err != nil {
				return 0, err
			}
			r.syn(")", end-1, true, false)
			r.lastTok = next - 1
			if aliased {
				return r.derivedColumns(next, hi)
			}
			return next, nil
		case s.tableFuncAt(i) && s.isWord(i, "generate_series") && s.isOp(i+1, "(") && int(s.match[i+1]) < hi,
			s.tableFuncAt(i) && s.isWord(i, "pg_catalog") && s.isOp(i+1, ".") && s.isWord(i+2, "generate_series") &&
				s.isOp(i+3, "(") && int(s.match[i+3]) < hi:
			// generate_series(...) in FROM: (SELECT pivot_generate_series(...)).
			open := i + 1
			if !s.isOp(open, "(") {
				open = i + 3
			}
			end := int(s.match[open]) + 1
			aliased := s.derivedColumnsAt(end, hi) > 0
			if aliased && !s.isWord(i-1, "lateral") {
				r.syn("LATERAL", i, false, false)
			}
			r.syn("(SELECT "+SeriesFunc, i, false, true)
			if err := r.group(open); err != nil {
				return 0, err
			}
			r.syn(")", int(s.match[open]), true, false)
			if aliased {
				return r.derivedColumns(end, hi)
			}
			return end, nil
		case s.tableFuncAt(i) && s.isKind(i, tkIdent) && !reservedTableWord[strings.ToLower(s.text(i))] &&
			s.isOp(i+1, "(") && int(s.match[i+1]) < hi && !s.queryAt(i+1):
			// Another function in FROM (a SQL function of the database):
			// (SELECT pivot_table_func(f(...))), planned by the binder
			// (bind/setfunc.go).
			end := int(s.match[i+1]) + 1
			aliased := s.derivedColumnsAt(end, hi) > 0
			if aliased && !s.isWord(i-1, "lateral") {
				r.syn("LATERAL", i, false, false)
			}
			r.syn("(SELECT "+TableFunc+"(", i, false, true)
			// Quoted: the name may be a word TiDB reserves (topn).
			r.emit(i, backquote(s.text(i)))
			if err := r.group(i + 1); err != nil {
				return 0, err
			}
			r.syn("))", end-1, true, false)
			r.lastTok = end - 1
			if aliased {
				return r.derivedColumns(end, hi)
			}
			return end, nil
		case (s.isWord(i, "any") || s.isWord(i, "some") || s.isWord(i, "all")) && r.arrayQuantifier(i, hi):
			// x = ANY (array): the expression builder reads
			// x = pivot_array_any(array) (sql/expr/array.go).
			fn := "pivot_array_any"
			if s.isWord(i, "all") {
				fn = "pivot_array_all"
			}
			r.emit(i, fn)
			r.glue = true
			if err := r.group(i + 1); err != nil {
				return 0, err
			}
			return int(s.match[i+1]) + 1, nil
		case s.isWord(i, "offset") && i+1 < hi && (s.isKind(i+1, tkNumber) || s.isKind(i+1, tkParam)):
			return r.offset(i, hi), nil
		case s.isWord(i, "limit") && s.isWord(i+1, "all"):
			// LIMIT ALL is no limit.
			r.plain(i)
			r.syn(noLimit, i+1, false, false)
			return i + 2, nil
		case s.isWord(i, "nulls") && (s.isWord(i+1, "first") || s.isWord(i+1, "last")) && i > 0 && !s.isOp(i-1, ",") && !s.isOp(i-1, "("):
			// ORDER BY x [ASC|DESC] NULLS FIRST|LAST: TiDB's grammar has
			// no NULLS clause, so it becomes a marker item after the one it
			// qualifies, ORDER BY x DESC, (pivot_nulls_last()) (in
			// parentheses, which an index column list needs); the binder
			// folds the marker into the preceding sort key (and refuses
			// it anywhere else).
			fn := NullsFirstFunc
			if s.isWord(i+1, "last") {
				fn = NullsLastFunc
			}
			r.syn(", ("+fn+"())", i, true, false)
			return i + 2, nil
		case s.isWord(i, "array") && s.isOp(i+1, "(") && int(s.match[i+1]) < hi:
			// ARRAY(SELECT ...): the expression builder reads
			// pivot_array_subquery((SELECT ...)), whose value is the
			// text form of an array (sql/expr/array.go).
			first := i + 2
			for s.isOp(first, "(") {
				first++
			}
			if !(s.isWord(first, "select") || s.isWord(first, "values") || s.isWord(first, "with") || s.isWord(first, "table")) {
				// As in PostgreSQL, ARRAY( takes only a query.
				return 0, s.errAtTok(i + 2)
			}
			r.emit(i, ArraySubqueryFunc)
			r.syn("(", i+1, true, true)
			if err := r.group(i + 1); err != nil {
				return 0, err
			}
			r.syn(")", int(s.match[i+1]), true, false)
			return int(s.match[i+1]) + 1, nil
		}
		if (s.isWord(i, "rollup") || s.isWord(i, "cube")) && s.isOp(i+1, "(") && int(s.match[i+1]) < hi {
			// ROLLUP (...) and CUBE (...) in GROUP BY: pivot_rollup(...)
			// and pivot_cube(...), which the binder expands.
			fn := RollupFunc
			if s.isWord(i, "cube") {
				fn = CubeFunc
			}
			r.emit(i, fn)
			r.glue = true
			if err := r.group(i + 1); err != nil {
				return 0, err
			}
			return int(s.match[i+1]) + 1, nil
		}
		if s.isWord(i, "as") && s.isOp(i+1, "(") && dmlWords[strings.ToLower(s.text(i+2))] && s.isKind(i+2, tkIdent) && s.withAt(i) {
			// x AS (INSERT ...) in a WITH that does not head the
			// statement (the top-level one was taken apart by withDML).
			switch strings.ToLower(s.text(0)) {
			case "declare":
				// Nor does PostgreSQL run them in a cursor.
				return 0, errAt(sqlerr.FeatureNotSupported, s.start(i+2), "DECLARE CURSOR must not contain data-modifying statements in WITH")
			case "explain", "create":
				return 0, errAt(sqlerr.FeatureNotSupported, s.start(i+2), "data-modifying statements in WITH are not supported yet in %s", strings.ToUpper(s.text(0)))
			}
			return 0, errAt(sqlerr.FeatureNotSupported, s.start(i+2), "WITH clause containing a data-modifying statement must be at the top level")
		}
		if s.isWord(i, "grouping") && s.isWord(i+1, "sets") && s.isOp(i+2, "(") && int(s.match[i+2]) < hi {
			return r.groupingSets(i, hi)
		}
		if s.isWord(i, "distinct") && s.isWord(i+1, "on") && s.isOp(i+2, "(") && int(s.match[i+2]) < hi && s.isWord(i-1, "select") {
			// SELECT DISTINCT ON (a, b) x: SELECT DISTINCT
			// pivot_distinct_on(a, b), x (see DistinctOnFunc).
			r.plain(i)
			r.syn(DistinctOnFunc, i+1, false, true)
			if err := r.group(i + 2); err != nil {
				return 0, err
			}
			r.syn(",", int(s.match[i+2]), true, false)
			return int(s.match[i+2]) + 1, nil
		}
		if s.isWord(i, "values") && s.isOp(i+1, "(") && int(s.match[i+1]) < hi && s.valuesQueryAt(i) {
			return r.valuesQuery(i, hi)
		}
		if strings.EqualFold(s.text(i), "in") && s.isOp(i+1, "(") && s.isOp(i+2, ")") {
			// SQLite's empty list, x IN (): MySQL's grammar has no
			// empty list, so it is spelled IN (pivot_empty_list()),
			// which the expression builder knows (always false).
			r.plain(i)
			r.plain(i + 1)
			r.syn("pivot_empty_list()", i+1, true, true)
			r.plain(i + 2)
			return i + 3, nil
		}
		if notCallee[strings.ToLower(s.text(i))] && !r.divCall(i) {
			r.plain(i)
			return i + 1, nil
		}
		if valueFuncs[strings.ToLower(s.text(i))] && !s.isOp(i+1, "(") && !s.isOp(i+1, ".") && (i == 0 || !s.isOp(i-1, ".")) {
			// session_user is a call without parentheses in SQL.
			r.plain(i)
			r.syn("()", i, true, false)
			return i + 1, nil
		}
		return r.operand(i, hi)
	case tkString:
		if s.src[t.start] == '"' && (s.prevWordIn(i, tableNameAfter) || s.isOp(i-1, ".")) {
			// FROM "t": a double-quoted string where only a table name can
			// stand is PostgreSQL's quoted identifier (drivers quote table
			// names: pgx's CopyFrom describes SELECT ... FROM "t"), and
			// so is one after a dot, where only a name can stand
			// (SQLAlchemy writes c."oid").
			r.emit(i, backquote(strings.ReplaceAll(s.strs[t.aux], "`", "``")))
			return i + 1, nil
		}
		return r.operand(i, hi)
	case tkQuotedIdent, tkBitString, tkNumber, tkParam:
		return r.operand(i, hi)
	case tkOp:
		switch s.text(i) {
		case "(":
			if end := int(s.match[i]) + 1; end <= hi && (s.prevWordIn(i, fromFuncAfter) || i > 0 && s.isOp(i-1, ",")) && s.queryAt(i) && s.derivedColumnsAt(end, hi) > 0 {
				// (query) AS t(a, b) in FROM: see DerivedColumnsMarker.
				r.syn("LATERAL", i, false, false)
				if err := r.group(i); err != nil {
					return 0, err
				}
				return r.derivedColumns(end, hi)
			}
			return r.operand(i, hi)
		case "::":
			// A cast with nothing castable before it.
			return 0, s.errAtTok(i)
		case "@>", "<@", "&&":
			// PostgreSQL's array containment and overlap operators (&&
			// is not MySQL's AND here): a = pivot_array_contains(b), and
			// so on, which the expression builder reads like x = ANY (a).
			if !r.afterOperand(i) || i+1 >= hi {
				return 0, s.errAtTok(i)
			}
			fn := map[string]string{"@>": ArrayContainsFunc, "<@": ArrayContainedFunc, "&&": ArrayOverlapFunc}[s.text(i)]
			r.syn("= "+fn+"(", i, false, false)
			r.lastTok = i
			next, err := r.item(i+1, hi)
			if err != nil {
				return 0, err
			}
			r.syn(")", next-1, true, false)
			r.lastTok = next - 1
			return next, nil
		case "~", "!":
			if op, next := s.regexOpAt(i, hi); op != "" && r.afterOperand(i) {
				return r.regexOp(op, i, next-1, hi)
			}
		}
	}
	r.plain(i)
	return i + 1, nil
}

// fieldNameAt reports whether token i can name a field after "(expr).": a
// word, or a double-quoted identifier (which the lexer reads as a string).
func (s *stmtToks) fieldNameAt(i int) bool {
	return s.isKind(i, tkIdent) || s.isKind(i, tkQuotedIdent) || s.isKind(i, tkString) && s.src[s.toks[i].start] == '"'
}

// cast is one "::type" applied to an operand.
type cast struct {
	tok int // the "::" token
	t   types.Type
	// reg, when set, names an object-identifier type (regclass, oid, ...):
	// the cast becomes RegCastFunc.
	reg string
	// name marks a reg cast followed by a cast to text: PostgreSQL's
	// output function of the reg type renders the object's name, so the
	// cast becomes RegNameFunc (the text cast stays, a no-op or varchar(n)).
	name bool
}

// regNamed are the reg types whose casts to text name the object
// (RegNameFunc); the others (regproc, regoper, ...) cast their number.
var regNamed = map[string]bool{"regclass": true, "regtype": true, "regnamespace": true, "regrole": true}

// The dialect front's spellings of array syntax (sql/expr/array.go):
//
//	ARRAY[a, b]            pivot_array(a, b)
//	ARRAY[[1,2],[3,4]]     pivot_array(pivot_array(1,2), pivot_array(3,4))
//	a[i][j]                pivot_array_elem(a, i, j)
//	a[i:j][k]              pivot_array_slice(a, i, j, 1, k, mask)
//	a @> b, a <@ b, a && b a = pivot_array_contains(b), a = pivot_array_contained(b), a = pivot_array_overlap(b)
//
// A slice's mask has bit 2k set when the lower bound of subscript k is
// omitted (a[:j]) and bit 2k+1 when its upper bound is (a[i:]); an
// omitted bound is written as 0. A subscript without a colon in a slice
// is 1:k, as in PostgreSQL.
const (
	// FieldSelectFunc is (expr).field: pivot_field(expr, 'field').
	FieldSelectFunc = "pivot_field"

	ArrayCtorFunc      = "pivot_array"
	ArrayElemFunc      = "pivot_array_elem"
	ArraySliceFunc     = "pivot_array_slice"
	ArrayContainsFunc  = "pivot_array_contains"
	ArrayContainedFunc = "pivot_array_contained"
	ArrayOverlapFunc   = "pivot_array_overlap"
)

// operand emits the primary expression at i — a literal, a parameter, an
// identifier chain a.b.c, a parenthesised group, or a function call f(...)
// — wrapped in pivot_cast(...) once for each ::type that follows it.
func (r *rewriter) operand(i, hi int) (int, error) {
	s := r.s
	end := i + 1
	call := -1 // the '(' of a function call
	var lit typedLiteral
	isLit := false
	ctor := -1       // the ']' of ARRAY[...]
	var fields []int // the names of (expr).field selections
	switch {
	case s.isOp(i, "("):
		end = int(s.match[i]) + 1
		// (expr).field, PostgreSQL's selection of a composite value's
		// field (pgjdbc's (information_schema._pg_expandarray(a)).n):
		// pivot_field(expr, 'field'), nested for (expr).a.b.
		for end+1 < hi && s.isOp(end, ".") && s.fieldNameAt(end+1) {
			fields = append(fields, end+1)
			end += 2
		}
	case s.isWord(i, "array") && s.isOp(i+1, "["):
		ctor = s.closeBracket(i+1, hi)
		if ctor < 0 {
			return 0, s.errAtTok(i + 1)
		}
		end = ctor + 1
	case s.isKind(i, tkIdent) || s.isKind(i, tkQuotedIdent):
		for s.isOp(end, ".") && end+1 < hi &&
			(s.isKind(end+1, tkIdent) || s.isKind(end+1, tkQuotedIdent) || s.isOp(end+1, "*")) {
			end += 2
		}
		if end == i+1 {
			var err error
			lit, isLit, err = s.typedLiteralAt(i, hi)
			if err != nil {
				return 0, err
			}
		}
		if isLit {
			end = lit.end
		} else if end < hi && s.isOp(end, "(") {
			call = end
			end = int(s.match[end]) + 1
			if call == i+1 && (s.isWord(i, "char") || s.isWord(i, "character")) && !s.isOp(i-1, "::") && !s.isWord(i-1, "as") {
				// PostgreSQL's char(n) is a type name, never a function
				// (chr is): in an expression it starts a typed literal,
				// char(3) 'ab', so a call is a syntax error after it.
				return 0, s.errAtTok(end)
			}
		}
	}
	// f(...) OVER (...) or OVER w: the window is part of the operand, so
	// that a cast after it applies to the window function's value.
	// agg(...) FILTER (WHERE cond): see aggCall.
	filter := -1
	if call >= 0 && end+1 < hi && s.isWord(end, "filter") && s.isOp(end+1, "(") && int(s.match[end+1]) < hi && s.isWord(end+2, "where") {
		filter = end
		end = int(s.match[end+1]) + 1
	}
	over := -1
	if call >= 0 && end+1 < hi && s.isWord(end, "over") {
		switch {
		case s.isOp(end+1, "(") && int(s.match[end+1]) < hi:
			over = end
			end = int(s.match[end+1]) + 1
		case s.isKind(end+1, tkIdent) || s.isKind(end+1, tkQuotedIdent):
			over = end
			end += 2
		}
	}
	bodyEnd := end
	// Subscripts a[i] follow the operand (before any cast).
	var subs [][3]int // the '[', ':' (or -1) and ']' tokens
	slice := false
	for end < hi && s.isOp(end, "[") && !isLit {
		close := s.closeBracket(end, hi)
		if close < 0 {
			return 0, s.errAtTok(end)
		}
		if close == end+1 {
			return 0, s.errAtTok(close)
		}
		colon := -1
		for k := end + 1; k < close; k = s.skip(k) {
			if s.isOp(k, ":") {
				colon = k
				break
			}
			if s.isOp(k, "[") {
				k = s.closeBracket(k, close)
				if k < 0 {
					return 0, s.errAtTok(end)
				}
			}
		}
		if colon >= 0 {
			slice = true
		}
		subs = append(subs, [3]int{end, colon, close})
		end = close + 1
	}
	if len(subs) > 0 && call < 0 && ctor < 0 && !isLit && s.insertColumnAt(i) {
		return 0, errAt(sqlerr.FeatureNotSupported, s.start(subs[0][0]), "array element or slice targets in an INSERT column list are not supported yet (use UPDATE ... SET a[i] = v)")
	}
	if len(subs) > 0 && s.isOp(end, "=") && call < 0 && ctor < 0 && !isLit && s.setItemAt(i) {
		// UPDATE t SET a[i] = v (arrayassign.go).
		return r.arrayAssign(i, bodyEnd, subs, slice, end, hi)
	}
	var casts []cast
	for end < hi && s.isOp(end, "::") {
		if reg, next, ok := s.regTypeAt(end+1, hi); ok && reg == "oid" && s.isOp(next, "[") && s.isOp(next+1, "]") {
			// oid[]: the catalogs' OID lists are bigint[] (pg_dump
			// casts '{...}'::pg_catalog.oid[]).
			casts = append(casts, cast{tok: end, t: types.ArrayOf(types.TypeInt64)})
			end = next + 2
			continue
		} else if ok {
			casts = append(casts, cast{tok: end, reg: reg})
			end = next
			continue
		}
		t, next, err := s.parseTypeAt(end+1, hi)
		if err != nil {
			return 0, err
		}
		casts = append(casts, cast{tok: end, t: t})
		end = next
	}
	for k := 0; k+1 < len(casts); k++ {
		if regNamed[casts[k].reg] && casts[k+1].reg == "" && casts[k+1].t.Family == types.Utf8 {
			casts[k].name = true
		}
	}
	if n := len(casts); n > 0 && regNamed[casts[n-1].reg] && s.clientOutputItemAt(i, end, hi) {
		// A reg value the client receives is printed by the type's output
		// function: the object's name (psql's \d writes conrelid::regclass
		// for the tables of foreign keys).
		casts[n-1].name = true
	}
	for k := len(casts) - 1; k >= 0; k-- {
		switch {
		case casts[k].name:
			r.syn(RegNameFunc+"(", i, false, true)
		case casts[k].reg != "":
			r.syn(RegCastFunc+"(", i, false, true)
		default:
			r.syn(CastFunc+"(", i, false, true)
		}
	}
	switch {
	case slice:
		r.syn(ArraySliceFunc+"(", i, false, true)
	case len(subs) > 0:
		r.syn(ArrayElemFunc+"(", i, false, true)
	}
	for range fields {
		r.syn(FieldSelectFunc+"(", i, false, true)
	}
	var err error
	switch {
	case ctor >= 0:
		err = r.arrayCtor(i, i+1, ctor)
	case isLit:
		r.syn(CastFunc+"(", i, false, true)
		r.plain(lit.strTok)
		r.castTail(lit.t, i, bodyEnd-1)
	case call >= 0 && call == i+1 && s.isWord(i, "cast"):
		err = r.castCall(i)
	case call >= 0 && call == i+1 && s.isWord(i, "extract"):
		err = r.extractCall(i)
	case call >= 0:
		k := i
		// pg_catalog.f(...) is f(...): every built-in function lives in
		// pg_catalog, and psql qualifies the ones it calls.
		if call == i+3 && s.isWord(i, "pg_catalog") {
			k = i + 2
		}
		name := s.aggCallName(call)
		window := s.windowAgg(name, call, over)
		for ; k < call; k++ {
			if window && k == call-1 {
				// See aggCall: group_concat carries the window call.
				r.emit(k, "group_concat")
				continue
			}
			if name := strings.ToLower(s.text(k)); k == call-1 && s.isKind(k, tkIdent) && SequenceFuncs[SequenceFuncPrefix+name] == name {
				// nextval and its siblings are MySQL/TiDB keywords that
				// take a table name; PostgreSQL's take a value.
				r.emit(k, SequenceFuncPrefix+name)
				continue
			}
			if k == call-1 && s.isWord(k, "div") {
				// div(a, b), PostgreSQL's truncating numeric division:
				// TiDB's grammar has DIV only as an operator (a DIV b,
				// which is what a div preceded by an operand stays).
				r.emit(k, DivFunc)
				continue
			}
			if k == call-1 && s.isWord(k, "mod") && !r.afterOperand(k) {
				// mod(a, b): TiDB reads it as the operator a MOD b,
				// which would name the column ?column?, not mod.
				r.emit(k, ModFunc)
				continue
			}
			if to := sampleAggs[strings.ToLower(s.text(k))]; k == call-1 && s.isKind(k, tkIdent) && to != "" {
				// PostgreSQL's stddev and variance are the sample ones;
				// TiDB would read MySQL's population ones.
				r.emit(k, to)
				continue
			}
			if k == call-1 && s.isWord(k, "cardinality") {
				// A TiDB keyword; quoted it is a plain function name.
				r.emit(k, "`cardinality`")
				continue
			}
			r.plain(k)
		}
		if s.needsAggCall(name, call, filter, over) {
			err = r.aggCall(name, call, filter, window)
		} else {
			err = r.group(call)
		}
		if err == nil && over >= 0 {
			r.plain(over)
			if s.isOp(over+1, "(") {
				err = r.group(over + 1)
			} else {
				r.plain(over + 1)
			}
		}
	case s.isOp(i, "("):
		err = r.group(i)
	default:
		for k := i; k < bodyEnd; k++ {
			r.plain(k)
		}
	}
	if err != nil {
		return 0, err
	}
	for _, f := range fields {
		var name string
		switch s.toks[f].kind {
		case tkIdent:
			name = strings.ToLower(s.text(f))
		case tkString: // "Name": a quoted identifier (fieldNameAt)
			name = s.strs[s.toks[f].aux]
		default:
			name = s.unquoteIdent(f)
		}
		r.syn(", "+sqlQuote(name)+")", f, true, false)
		r.lastTok = f
	}
	if slice {
		mask := 0
		for k, sb := range subs {
			open, colon, close := sb[0], sb[1], sb[2]
			switch {
			case colon < 0:
				// a[k] among slices is a[1:k].
				r.syn(", 1,", open, true, false)
				if err := r.seq(open+1, close); err != nil {
					return 0, err
				}
				continue
			}
			r.syn(",", open, true, false)
			if colon == open+1 {
				mask |= 1 << (2 * k)
				r.syn("0", open, false, false)
			} else if err := r.seq(open+1, colon); err != nil {
				return 0, err
			}
			r.syn(",", colon, true, false)
			if close == colon+1 {
				mask |= 1 << (2*k + 1)
				r.syn("0", colon, false, false)
			} else if err := r.seq(colon+1, close); err != nil {
				return 0, err
			}
		}
		r.syn(fmt.Sprintf(", %d)", mask), subs[len(subs)-1][2], true, false)
	} else if len(subs) > 0 {
		for _, sb := range subs {
			r.syn(",", sb[0], true, false)
			if err := r.seq(sb[0]+1, sb[2]); err != nil {
				return 0, err
			}
		}
		r.syn(")", subs[len(subs)-1][2], true, false)
	}
	for _, c := range casts {
		if c.reg != "" {
			r.syn(",", c.tok, true, false)
			r.syn(sqlQuote(c.reg), c.tok, false, false)
			r.syn(")", c.tok, true, false)
			continue
		}
		r.castTail(c.t, c.tok, c.tok)
	}
	// Spacing after the operand follows the original text after its last
	// token, even when synthetic text was written last.
	r.lastTok = end - 1
	return end, nil
}

// arrayCtor emits the elements of ARRAY[...] (or of a bare [...] nested
// in one) between the brackets at open and close as
// pivot_array(e1, e2, ...); at is the token the call is attributed to.
func (r *rewriter) arrayCtor(at, open, close int) error {
	s := r.s
	r.syn(ArrayCtorFunc+"(", at, false, true)
	first := true
	a := open + 1
	emitElem := func(lo, hi int) error {
		if lo >= hi {
			return s.errAtTok(hi)
		}
		if !first {
			r.syn(",", lo, true, false)
		}
		first = false
		if s.isOp(lo, "[") && s.closeBracket(lo, hi) == hi-1 {
			return r.arrayCtor(lo, lo, hi-1)
		}
		return r.seq(lo, hi)
	}
	for k := open + 1; k < close; {
		switch {
		case s.isOp(k, "["):
			k = s.closeBracket(k, close) + 1
			if k <= 0 {
				return s.errAtTok(open)
			}
			continue
		case s.isOp(k, ","):
			if err := emitElem(a, k); err != nil {
				return err
			}
			a = k + 1
		}
		k = s.skip(k)
	}
	if a < close || !first {
		if err := emitElem(a, close); err != nil {
			return err
		}
	}
	r.syn(")", close, true, false)
	return nil
}

// AggDistinctFunc marks agg(DISTINCT x) for the aggregates in
// genericAggs (aggcall.go), whose DISTINCT TiDB's grammar cannot read.
const AggDistinctFunc = "pivot_agg_distinct"

// orderByIn returns the ORDER token of an ORDER BY at the top level of
// the parenthesised group opening at open, or -1.
func (s *stmtToks) orderByIn(open int) int {
	close := int(s.match[open])
	if w := open + 1; s.isWord(w, "select") || s.isWord(w, "with") || s.isWord(w, "values") || s.isWord(w, "table") {
		// INSERT INTO t (SELECT ... ORDER BY ...) is no call.
		return -1
	}
	for k := open + 1; k < close; k = s.skip(k) {
		if s.isWord(k, "order") && s.isWord(k+1, "by") {
			return k
		}
	}
	return -1
}

// closeBracket returns the index of the ']' that closes the '[' at i
// (before hi), or -1.
func (s *stmtToks) closeBracket(i, hi int) int {
	depth := 0
	for k := i; k < hi; k++ {
		switch {
		case s.isOp(k, "("):
			k = int(s.match[k])
			if k < 0 || k >= hi {
				return -1
			}
		case s.isOp(k, "["):
			depth++
		case s.isOp(k, "]"):
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// castTail closes a pivot_cast( opened earlier: ", 'Type')".
func (r *rewriter) castTail(t types.Type, typeTok, closeTok int) {
	r.syn(",", typeTok, true, false)
	r.syn(sqlQuote(typeText(t)), typeTok, false, false)
	r.syn(")", closeTok, true, false)
}

// group emits the parenthesised group opening at i.
func (r *rewriter) group(i int) error {
	close := int(r.s.match[i])
	r.plain(i)
	if err := r.seq(i+1, close); err != nil {
		return err
	}
	r.plain(close)
	return nil
}

// castCall emits CAST(expr AS type), whose '(' is at i+1, as
// pivot_cast(expr, 'Type'), so that YQL and PostgreSQL type names work.
func (r *rewriter) castCall(i int) error {
	s := r.s
	open := i + 1
	close := int(s.match[open])
	as := -1
	for k := open + 1; k < close; k = s.skip(k) {
		if s.isWord(k, "as") {
			as = k
			break
		}
	}
	if as < 0 {
		return s.errAtTok(close)
	}
	if as == open+1 {
		return s.errAtTok(as)
	}
	t, next, err := s.parseTypeAt(as+1, close)
	if err != nil {
		return err
	}
	if next != close {
		return s.errAtTok(next)
	}
	r.syn(CastFunc+"(", i, false, true)
	if err := r.seq(open+1, as); err != nil {
		return err
	}
	r.castTail(t, as+1, close)
	return nil
}

// ExtractFunc is what EXTRACT(field FROM source) becomes:
// pivot_extract('field', source) (sql/expr/func_datetime.go), since
// TiDB's grammar knows only MySQL's units and no epoch.
const ExtractFunc = "pivot_extract"

// extractCall emits EXTRACT(field FROM expr), whose '(' is at i+1, as
// pivot_extract('field', expr). The field is a word or a string.
func (r *rewriter) extractCall(i int) error {
	s := r.s
	open := i + 1
	close := int(s.match[open])
	field := open + 1
	if field >= close || !(s.isKind(field, tkIdent) || s.isKind(field, tkString)) {
		return s.errAtTok(field)
	}
	if !s.isWord(field+1, "from") {
		return s.errAtTok(field + 1)
	}
	if field+2 >= close {
		return s.errAtTok(close)
	}
	name := s.text(field)
	if s.isKind(field, tkString) {
		name = s.strs[s.toks[field].aux]
	}
	r.syn(ExtractFunc+"("+sqlQuote(strings.ToLower(name))+",", i, false, false)
	if err := r.seq(field+2, close); err != nil {
		return err
	}
	r.plain(close)
	return nil
}

// regexOpAt reads PostgreSQL's regular-expression match operators ~, !~,
// ~* and !~* (lexed as adjacent one-byte tokens) at i.
func (s *stmtToks) regexOpAt(i, hi int) (string, int) {
	op := ""
	j := i
	for j < hi && len(op) < 3 && (j == i || s.toks[j].start == s.toks[j-1].end) &&
		(s.isOp(j, "!") || s.isOp(j, "~") || s.isOp(j, "*")) {
		op += s.text(j)
		j++
	}
	for len(op) > 0 {
		switch op {
		case "~", "!~", "~*", "!~*":
			return op, i + len(op)
		}
		op = op[:len(op)-1]
	}
	return "", i
}

// afterOperand reports whether token i follows an operand, so that ~ there
// is the binary match operator and not bitwise NOT.
// divCall reports whether the div at i is PostgreSQL's function div(a,
// b) (it starts an operand) rather than the operator a DIV b.
func (r *rewriter) divCall(i int) bool {
	return r.s.isWord(i, "div") && r.s.isOp(i+1, "(") && !r.afterOperand(i)
}

func (r *rewriter) afterOperand(i int) bool {
	s := r.s
	if i == 0 {
		return false
	}
	p := i - 1
	switch s.toks[p].kind {
	case tkString, tkNumber, tkParam, tkQuotedIdent:
		return true
	case tkIdent:
		return !notCallee[strings.ToLower(s.text(p))]
	case tkOp:
		return s.isOp(p, ")") || s.isOp(p, "]")
	}
	return false
}

// regexOp emits a regular-expression match operator (tokens first..last)
// as MySQL's REGEXP, which the expression builder evaluates with
// PostgreSQL's meaning (see sql/expr), and returns the index after what it
// consumed. The case-insensitive ~* and !~* prefix the pattern with RE2's
// (?i) flag, which applies to the whole pattern from its start: the
// operand after the operator is wrapped as concat('(?i)', operand).
// REGEXP binds like a comparison, PostgreSQL's ~ a little tighter; the two
// differ only for operands with unparenthesised arithmetic or || on both
// sides of a comparison, which catalog queries do not write.
func (r *rewriter) regexOp(op string, first, last, hi int) (int, error) {
	kw := "REGEXP"
	if strings.HasPrefix(op, "!") {
		kw = "NOT REGEXP"
	}
	r.syn(kw, first, false, false)
	r.lastTok = last
	if !strings.HasSuffix(op, "*") {
		return last + 1, nil
	}
	if last+1 >= hi {
		return 0, r.s.errAtTok(last + 1)
	}
	r.syn("concat('(?i)',", last, false, false)
	next, err := r.item(last+1, hi)
	if err != nil {
		return 0, err
	}
	r.syn(")", next-1, true, false)
	r.lastTok = next - 1
	return next, nil
}

// operatorCall emits OPERATOR(schema.op), PostgreSQL's qualified operator
// syntax that psql uses (OPERATOR(pg_catalog.~)), as the bare operator.
func (r *rewriter) operatorCall(i, hi int) (int, error) {
	s := r.s
	open := i + 1
	close := int(s.match[open])
	k := open + 1
	if s.isWord(k, "pg_catalog") && s.isOp(k+1, ".") {
		k += 2
	}
	if k >= close {
		return 0, s.errAtTok(close)
	}
	if op, next := s.regexOpAt(k, close); op != "" && next == close {
		return r.regexOp(op, k, close, hi)
	}
	switch op := s.text(k); {
	case k+1 == close && s.toks[k].kind == tkOp && op != "(" && op != ")" && op != ",":
		r.plain(k)
		r.lastTok = close
		return close + 1, nil
	}
	return 0, s.errAtTok(k)
}

// collate drops a COLLATE clause. PivotDB compares strings byte by byte
// (PostgreSQL's "C" collation) whatever the clause names; psql adds
// COLLATE pg_catalog.default to its name patterns.
func (r *rewriter) collate(i, hi int) (int, error) {
	s := r.s
	j := i + 1
	// "C" is a string token in YQL's spelling; as a collation it is a name.
	if j < hi && (s.isKind(j, tkIdent) || s.isKind(j, tkQuotedIdent) || s.isKind(j, tkString)) {
		j++
		for j+1 < hi && s.isOp(j, ".") && (s.isKind(j+1, tkIdent) || s.isKind(j+1, tkQuotedIdent)) {
			j += 2
		}
		return j, nil
	}
	return 0, s.errAtTok(j)
}

// valuesQueryAt reports whether VALUES at i is a query (at the start of
// the statement, in parentheses, or an arm of a set operation) rather
// than INSERT's VALUES clause.
func (s *stmtToks) valuesQueryAt(i int) bool {
	if i == 0 || s.isOp(i-1, "(") {
		return true
	}
	return s.prevWordIn(i, setOpWords)
}

var setOpWords = map[string]bool{"union": true, "all": true, "except": true, "intersect": true, "distinct": true}

// valuesQuery emits the query VALUES (...), (...) as MySQL 8's
// VALUES ROW(...), ROW(...), which TiDB reads as a SELECT of kind
// SelectStmtKindValues.
func (r *rewriter) valuesQuery(i, hi int) (int, error) {
	s := r.s
	r.plain(i)
	k := i + 1
	for {
		r.syn("ROW", k, false, true)
		if err := r.group(k); err != nil {
			return 0, err
		}
		k = int(s.match[k]) + 1
		if !(s.isOp(k, ",") && s.isOp(k+1, "(") && int(s.match[k+1]) < hi) {
			return k, nil
		}
		r.plain(k)
		k++
	}
}

// DerivedColumnsMarker ends the column alias list of a derived table in
// FROM. MySQL's grammar takes a column alias list, (query) AS t(a, b),
// only after LATERAL, so the rewriter spells a derived table with one as
// LATERAL (query) AS t(a, b, pivot_derived_columns): the analyser drops
// the marker and knows the subquery is not a lateral one.
const DerivedColumnsMarker = "pivot_derived_columns"

// queryAt reports whether the parenthesised group at i holds a query.
func (s *stmtToks) queryAt(i int) bool {
	first := i + 1
	for s.isOp(first, "(") {
		first++
	}
	return s.isWord(first, "select") || s.isWord(first, "values") || s.isWord(first, "with") || s.isWord(first, "table")
}

// derivedColumnsAt returns the index of the "(" of a column alias list
// "[AS] alias (" at i, or 0.
func (s *stmtToks) derivedColumnsAt(i, hi int) int {
	if s.isWord(i, "as") {
		i++
	}
	if i+1 < hi && (s.isKind(i, tkIdent) && !notCallee[strings.ToLower(s.text(i))] || s.isKind(i, tkQuotedIdent)) &&
		s.isOp(i+1, "(") && int(s.match[i+1]) < hi {
		return i + 1
	}
	return 0
}

// derivedColumns emits "[AS] alias (a, b" at i, then the marker and ")".
func (r *rewriter) derivedColumns(i, hi int) (int, error) {
	s := r.s
	open := s.derivedColumnsAt(i, hi)
	if !s.isWord(i, "as") {
		r.syn("AS", i, false, false)
	}
	for k := i; k <= open; k++ {
		r.plain(k)
	}
	close := int(s.match[open])
	if err := r.seq(open+1, close); err != nil {
		return 0, err
	}
	if close > open+1 {
		r.syn(",", close, true, false)
	}
	r.syn(DerivedColumnsMarker, close, false, false)
	r.plain(close)
	return close + 1, nil
}

// DistinctOnFunc is the dialect front's spelling of DISTINCT ON (a, b):
// SELECT DISTINCT pivot_distinct_on(a, b), ... — a first select-list item
// the binder takes off and reads as the DISTINCT ON expressions.
const DistinctOnFunc = "pivot_distinct_on"

// tableFuncAt reports whether a function call at i stands where a FROM
// item does: right after FROM, JOIN or LATERAL, or after a comma of a FROM
// list.
func (s *stmtToks) tableFuncAt(i int) bool {
	if s.prevWordIn(i, fromFuncAfter) {
		return true
	}
	return i > 0 && s.isOp(i-1, ",") && s.inFromList(i-1)
}

// clauseWords end a FROM list when scanning backwards.
var clauseWords = map[string]bool{"select": true, "where": true, "group": true, "order": true, "having": true,
	"limit": true, "set": true, "values": true, "returning": true, "on": true, "using": true, "window": true}

// itemEndWords end a select-list item: after a whole item, FROM or one of
// the clauses that can follow the select list.
var itemEndWords = map[string]bool{"from": true, "where": true, "group": true, "having": true, "window": true,
	"order": true, "limit": true, "offset": true, "fetch": true, "for": true, "union": true, "except": true,
	"intersect": true}

// continueWords continue an expression after an operand: the operand is
// not a whole select-list item when one of them follows it.
var continueWords = map[string]bool{"is": true, "isnull": true, "notnull": true, "in": true, "not": true,
	"between": true, "like": true, "ilike": true, "similar": true, "and": true, "or": true, "collate": true,
	"at": true, "escape": true, "overlaps": true, "into": true}

// clientOutputItemAt reports whether the operand at [i, end) is a whole
// item of the select list of a query whose rows go to the client: a
// SELECT (or WITH ... SELECT) statement, at its outermost level, that
// neither stores its rows (SELECT INTO) nor feeds a data-modifying
// statement, and is not a set operation (whose arms' columns must keep one
// type: pg_dump unions a reg cast with OID columns). Its reg casts then print names, as PostgreSQL's output
// functions do; inside expressions, subqueries and stored rows they stay
// numbers, which compare and store as OIDs.
func (s *stmtToks) clientOutputItemAt(i, end, hi int) bool {
	if !s.isWord(0, "select") && !s.isWord(0, "with") {
		return false
	}
	if !s.isWord(i-1, "select") && !s.isWord(i-1, "distinct") && !s.isWord(i-1, "all") && !s.isOp(i-1, ",") {
		return false
	}
	switch {
	case end >= hi || s.isOp(end, ",") || s.isWord(end, "as"):
	case s.isKind(end, tkIdent) && continueWords[strings.ToLower(s.text(end))]:
		return false
	case s.isKind(end, tkIdent) || s.isKind(end, tkQuotedIdent):
		// FROM and the clauses after the list, or a bare alias.
	default:
		return false
	}
	// Back to the SELECT of this list, at the statement's outermost level.
	for k := i - 1; k >= 0; k-- {
		switch {
		case s.isOp(k, ")"):
			k = s.groupOpen(k)
		case s.isOp(k, "("):
			return false // inside a subquery, a call or a CTE's body
		case s.isWord(k, "select"):
			return s.depthAt(k) == 0 && !s.wordAtTopLevel("into", "insert", "update", "delete", "union", "except", "intersect")
		case s.isKind(k, tkIdent) && (clauseWords[strings.ToLower(s.text(k))] || itemEndWords[strings.ToLower(s.text(k))]):
			return false
		}
	}
	return false
}

// depthAt is the number of parenthesised groups around token i.
func (s *stmtToks) depthAt(i int) int {
	depth := 0
	for k := 0; k < i; k++ {
		if s.isOp(k, "(") {
			depth++
		} else if s.isOp(k, ")") {
			depth--
		}
	}
	return depth
}

// wordAtTopLevel reports whether one of words appears outside every
// parenthesised group of the statement.
func (s *stmtToks) wordAtTopLevel(words ...string) bool {
	depth := 0
	for k := range s.toks {
		switch {
		case s.isOp(k, "("):
			depth++
		case s.isOp(k, ")"):
			depth--
		case depth == 0 && s.isKind(k, tkIdent):
			for _, w := range words {
				if strings.EqualFold(s.text(k), w) {
					return true
				}
			}
		}
	}
	return false
}

// groupOpen returns the index of the '(' that the ')' at k closes (-1 when
// none does).
func (s *stmtToks) groupOpen(k int) int {
	depth := 0
	for ; k >= 0; k-- {
		if s.isOp(k, ")") {
			depth++
		} else if s.isOp(k, "(") {
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// inFromList reports whether the comma at i separates FROM items: the
// nearest clause keyword before it, at its parenthesis depth, is FROM.
func (s *stmtToks) inFromList(i int) bool {
	for k := i - 1; k >= 0; k-- {
		if s.isOp(k, ")") {
			k = s.groupOpen(k) // skip back over the group
			continue
		}
		if s.isOp(k, "(") {
			return false
		}
		if s.isKind(k, tkIdent) {
			w := strings.ToLower(s.text(k))
			if w == "from" {
				return true
			}
			if clauseWords[w] {
				return false
			}
		}
	}
	return false
}

// noLimit is the LIMIT count that stands for none (LIMIT ALL, OFFSET
// alone): the largest count the binder takes.
const noLimit = "9223372036854775807"

// offset rewrites PostgreSQL's OFFSET n [ROW|ROWS] for MySQL's grammar,
// where OFFSET is only a part of LIMIT and comes after it: OFFSET n alone
// becomes LIMIT <none> OFFSET n, and OFFSET n LIMIT m becomes LIMIT m
// OFFSET n. It returns the index after what it consumed.
func (r *rewriter) offset(i, hi int) int {
	s := r.s
	next := i + 2
	if s.isWord(next, "row") || s.isWord(next, "rows") {
		next++
	}
	switch {
	case next+1 < hi && s.isWord(next, "limit") && (s.isKind(next+1, tkNumber) || s.isKind(next+1, tkParam)):
		r.plain(next)
		r.plain(next + 1)
		next += 2
	case !s.limitBefore(i):
		r.syn("LIMIT "+noLimit, i, false, false)
	}
	r.plain(i)
	r.plain(i + 1)
	return next
}

// limitBefore reports whether a LIMIT stands before token i at its own
// parenthesis level.
func (s *stmtToks) limitBefore(i int) bool {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch {
		case s.isOp(j, ")"):
			depth++
		case s.isOp(j, "("):
			if depth == 0 {
				return false
			}
			depth--
		case depth == 0 && s.isWord(j, "limit"):
			return true
		}
	}
	return false
}

// Grouping sets. GROUPING SETS (s, ...), ROLLUP (...) and CUBE (...) in
// GROUP BY become the calls GroupingSetsFunc(...), pivot_rollup(...) and
// pivot_cube(...); a parenthesised set (a, b) or () inside GROUPING SETS
// becomes GroupingSetFunc(a, b). The binder expands them into the list
// of grouping sets.
const (
	GroupingSetsFunc = "pivot_grouping_sets"
	GroupingSetFunc  = "pivot_grouping_set"
	RollupFunc       = "pivot_rollup"
	CubeFunc         = "pivot_cube"
)

// groupingSets emits GROUPING SETS (...) at i.
func (r *rewriter) groupingSets(i, hi int) (int, error) {
	s := r.s
	open := i + 2
	close := int(s.match[open])
	r.emit(i, GroupingSetsFunc)
	r.glue = true
	r.plain(open)
	for k := open + 1; k < close; {
		end := k
		for end < close && !s.isOp(end, ",") {
			if s.isOp(end, "(") {
				end = int(s.match[end])
			}
			end++
		}
		if s.isOp(k, "(") && int(s.match[k]) == end-1 {
			r.syn(GroupingSetFunc, k, false, true)
			if err := r.group(k); err != nil {
				return 0, err
			}
		} else if err := r.seq(k, end); err != nil {
			return 0, err
		}
		if end < close {
			r.plain(end)
		}
		k = end + 1
	}
	r.plain(close)
	return close + 1, nil
}

// dmlWords start the data-modifying statements a WITH query may be.
var dmlWords = map[string]bool{"insert": true, "update": true, "delete": true, "upsert": true, "replace": true}

// distinctFrom emits a IS [NOT] DISTINCT FROM b (i is IS) with MySQL's
// NULL-safe equality: a IS NOT DISTINCT FROM b is a <=> b, and a IS
// DISTINCT FROM b is a <=> b IS FALSE. Both bind like a comparison in
// MySQL's grammar (PostgreSQL's IS binds a little looser, which matters
// only for an unparenthesised comparison beside it); IS FALSE goes after
// the right operand, which ends at the first word or operator at its
// nesting level that cannot continue an operand.
func (r *rewriter) distinctFrom(i, hi int) (int, error) {
	s := r.s
	not := s.isWord(i+1, "not")
	from := i + 2
	if not {
		from = i + 3
	}
	r.syn("<=>", i, false, false)
	r.lastTok = from
	if not {
		return from + 1, nil
	}
	end := from + 1
	for end < hi {
		if s.isOp(end, "(") || s.isOp(end, "[") {
			end = int(s.match[end]) + 1
			continue
		}
		if s.isKind(end, tkOp) && !operandOps[s.text(end)] || s.isKind(end, tkIdent) && operandEnds[strings.ToLower(s.text(end))] {
			break
		}
		end++
	}
	if end == from+1 {
		return 0, s.errAtTok(end)
	}
	if err := r.seq(from+1, end); err != nil {
		return 0, err
	}
	r.syn("IS FALSE", end-1, false, false)
	return end, nil
}

// operandOps are the operators that continue an operand (arithmetic,
// concatenation, casts, qualified names); operandEnds the words that end
// one.
var operandOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true, "||": true, "::": true,
	".": true, "^": true}

var operandEnds = map[string]bool{"and": true, "or": true, "then": true, "when": true, "else": true, "end": true,
	"from": true, "where": true, "group": true, "order": true, "limit": true, "having": true, "as": true, "is": true,
	"union": true, "except": true, "intersect": true, "on": true, "join": true, "left": true, "right": true,
	"inner": true, "cross": true, "full": true, "natural": true, "using": true, "offset": true, "window": true,
	"not": true, "in": true, "like": true, "ilike": true, "between": true, "desc": true, "asc": true,
	"nulls": true, "returning": true, "for": true, "into": true, "fetch": true}

// partitionAncestors rewrites pg_partition_ancestors(rel) [WITH
// ORDINALITY] in FROM (psql's \d asks it of every table with triggers).
// PostgreSQL lists the partition ancestors of a partition or partitioned
// table and no rows for any other relation; PivotDB's tables are cut into
// shards, never into PostgreSQL's declarative partitions, so the answer is
// no rows, after rel is resolved as regclass (an unknown name is 42P01,
// as there): LATERAL (SELECT relid [, 1 AS depth] FROM (SELECT
// pivot_regcast(rel, 'regclass') AS relid) AS pivot_ancestor WHERE relid < 0).
func (r *rewriter) partitionAncestors(i, hi int) (int, error) {
	s := r.s
	open := i + 1
	if !s.isOp(open, "(") {
		open = i + 3
	}
	close := int(s.match[open])
	next := close + 1
	ordinality := next+1 < hi && s.isWord(next, "with") && s.isWord(next+1, "ordinality")
	if ordinality {
		next += 2
	}
	if !s.isWord(i-1, "lateral") {
		r.syn("LATERAL", i, false, false)
	}
	cols := "relid"
	if ordinality {
		cols += ", 1 AS depth"
	}
	r.syn("(SELECT "+cols+" FROM (SELECT "+RegCastFunc+"(", i, false, true)
	if err := r.group(open); err != nil {
		return 0, err
	}
	// relid < 0 holds for no OID, after the cast has looked the name up.
	r.syn(", 'regclass') AS relid) AS pivot_ancestor WHERE relid < 0)", close, true, false)
	r.lastTok = next - 1
	if s.derivedColumnsAt(next, hi) > 0 {
		return r.derivedColumns(next, hi)
	}
	aliased := s.isWord(next, "as") || s.isKind(next, tkQuotedIdent) ||
		s.isKind(next, tkIdent) && !operandEnds[strings.ToLower(s.text(next))]
	if !aliased {
		r.syn("AS pg_partition_ancestors", close, false, false)
	}
	return next, nil
}

// optionsToTable emits pg_options_to_table(options) in FROM (pg_dump
// reads the options of columns, foreign tables and servers with it): the
// "name=value" elements of a text[] split at the first '=' into
// option_name and option_value, as a lateral derived table over unnest.
func (r *rewriter) optionsToTable(i, hi int) (int, error) {
	s := r.s
	open := i + 1
	if !s.isOp(open, "(") {
		open = i + 3
	}
	close := int(s.match[open])
	r.syn("LATERAL (SELECT substr(pivot_option, 1, strpos(pivot_option, '=') - 1) AS option_name, "+
		"substr(pivot_option, strpos(pivot_option, '=') + 1) AS option_value FROM LATERAL (SELECT "+UnnestFunc, i, false, true)
	if err := r.group(open); err != nil {
		return 0, err
	}
	r.syn(") AS pivot_options (pivot_option, "+DerivedColumnsMarker+"))", close, true, false)
	if !s.isWord(close+1, "as") {
		r.syn("AS pg_options_to_table", close, false, false)
	}
	return close + 1, nil
}
