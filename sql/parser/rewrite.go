package parser

import (
	"strings"

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
}

func newRewriter(s *stmtToks) *rewriter {
	return &rewriter{s: s, lastTok: -1}
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

// item emits the item at i (an operand with its casts, or an operator or
// keyword) and returns the index after it.
func (r *rewriter) item(i, hi int) (int, error) {
	s := r.s
	t := s.toks[i]
	switch t.kind {
	case tkIdent:
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
		if notCallee[strings.ToLower(s.text(i))] {
			r.plain(i)
			return i + 1, nil
		}
		return r.operand(i, hi)
	case tkQuotedIdent, tkString, tkBitString, tkNumber, tkParam:
		return r.operand(i, hi)
	case tkOp:
		switch s.text(i) {
		case "(":
			return r.operand(i, hi)
		case "::":
			// A cast with nothing castable before it.
			return 0, s.errAtTok(i)
		}
	}
	r.plain(i)
	return i + 1, nil
}

// cast is one "::type" applied to an operand.
type cast struct {
	tok int // the "::" token
	t   types.Type
}

// operand emits the primary expression at i — a literal, a parameter, an
// identifier chain a.b.c, a parenthesised group, or a function call f(...)
// — wrapped in pivot_cast(...) once for each ::type that follows it.
func (r *rewriter) operand(i, hi int) (int, error) {
	s := r.s
	end := i + 1
	call := -1 // the '(' of a function call
	var lit typedLiteral
	isLit := false
	switch {
	case s.isOp(i, "("):
		end = int(s.match[i]) + 1
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
		}
	}
	bodyEnd := end
	var casts []cast
	for end < hi && s.isOp(end, "::") {
		t, next, err := s.parseTypeAt(end+1, hi)
		if err != nil {
			return 0, err
		}
		casts = append(casts, cast{tok: end, t: t})
		end = next
	}
	for range casts {
		r.syn(CastFunc+"(", i, false, true)
	}
	var err error
	switch {
	case isLit:
		r.syn(CastFunc+"(", i, false, true)
		r.plain(lit.strTok)
		r.castTail(lit.t, i, bodyEnd-1)
	case call >= 0 && call == i+1 && s.isWord(i, "cast"):
		err = r.castCall(i)
	case call >= 0:
		for k := i; k < call; k++ {
			r.plain(k)
		}
		err = r.group(call)
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
	for _, c := range casts {
		r.castTail(c.t, c.tok, c.tok)
	}
	// Spacing after the operand follows the original text after its last
	// token, even when synthetic text was written last.
	r.lastTok = end - 1
	return end, nil
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
