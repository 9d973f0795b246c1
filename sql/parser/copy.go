package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// CopyStmt is PostgreSQL's COPY:
//
//	COPY table [(col, ...)] FROM {STDIN | 'file' | PROGRAM 'cmd'} [[WITH] (option, ...)] [WHERE ...]
//	COPY {table [(col, ...)] | (query)} TO {STDOUT | 'file' | PROGRAM 'cmd'} [[WITH] (option, ...)]
//
// and the older option spellings pg_dump and psql still send: [WITH]
// [BINARY] [DELIMITER [AS] 'c'] [NULL [AS] 'n'] [CSV [HEADER] [QUOTE [AS]
// 'q'] [ESCAPE [AS] 'e'] [FORCE QUOTE cols | *] [FORCE NOT NULL cols]],
// and COPY BINARY table. The parser only collects the options; the binder
// checks them (sql/pgcopy.ParseOptions), because their meaning depends on
// the format and the direction.
//
// For COPY (query) TO and COPY table TO, the Statement's AST is the query
// (a table is read as SELECT cols FROM table), as for DECLARE CURSOR.
type CopyStmt struct {
	// Table is the [schema.]name of the table; nil for COPY (query).
	Table []string
	// Columns are the listed columns (nil: all of them).
	Columns []string
	// From: COPY ... FROM; else COPY ... TO.
	From bool
	// Target is where the data goes or comes from.
	Target CopyTarget
	// Path is the file name or the program of CopyFile and CopyProgram.
	Path string
	// Options are the options in the order written.
	Options []CopyOption
	// Where: COPY FROM ... WHERE condition was written (not supported).
	Where bool
}

// CopyTarget is where COPY reads or writes.
type CopyTarget uint8

const (
	CopyStdio   CopyTarget = iota // STDIN / STDOUT: the client, over the protocol
	CopyFile                      // a file on the server
	CopyProgram                   // a program run on the server
)

// CopyOption is one option of COPY, in either syntax.
type CopyOption struct {
	// Name is lowercased, in the new syntax's spelling: format, header,
	// delimiter, null, quote, escape, force_quote, force_not_null,
	// force_null, encoding, freeze, default, oids; unknown names as
	// written, for the binder's error.
	Name string
	// Pos is the 1-based character position of the option's name.
	Pos int
	// Value is the option's argument as written ("" when it has none):
	// the decoded string of a string literal, an identifier or number
	// as written, lowercased for identifiers.
	Value    string
	HasValue bool
	// List is the column list of force_quote, force_not_null and
	// force_null; Star is FORCE_QUOTE *.
	List []string
	Star bool
}

// parseCopy parses COPY; the first token is COPY.
func (s *stmtToks) parseCopy(stmt Statement) (Statement, error) {
	c := &CopyStmt{}
	i := 1
	if s.isWord(i, "binary") {
		// COPY BINARY t ...: the oldest spelling of FORMAT binary.
		c.Options = append(c.Options, CopyOption{Name: "format", Pos: s.rp.pos(s.start(i)), Value: "binary", HasValue: true})
		i++
	}
	queryLo, queryHi := -1, -1
	if s.isOp(i, "(") {
		queryLo, queryHi = i+1, int(s.match[i])
		if queryHi <= queryLo {
			return Statement{}, s.errAtTok(queryLo)
		}
		i = queryHi + 1
	} else {
		end, parts, ok := s.copyName(i)
		if !ok || len(parts) > 2 {
			return Statement{}, s.errAtTok(i)
		}
		c.Table = parts
		i = end
		if s.isOp(i, "(") {
			close := int(s.match[i])
			for _, el := range s.split(i+1, close) {
				name, ok := s.copyIdent(el[0])
				if !ok || el[1] != el[0]+1 {
					return Statement{}, s.errAtTok(el[0])
				}
				c.Columns = append(c.Columns, name)
			}
			if len(c.Columns) == 0 {
				return Statement{}, s.errAtTok(i + 1)
			}
			i = close + 1
		}
	}
	switch {
	case s.isWord(i, "from"):
		c.From = true
	case s.isWord(i, "to"):
	default:
		return Statement{}, s.errAtTok(i)
	}
	if c.From && queryLo >= 0 {
		return Statement{}, s.errAtTok(i)
	}
	i++
	switch {
	case c.From && s.isWord(i, "stdin"), !c.From && s.isWord(i, "stdout"):
		i++
	case s.isWord(i, "program") && s.isKind(i+1, tkString):
		c.Target, c.Path = CopyProgram, s.strs[s.toks[i+1].aux]
		i += 2
	case s.isKind(i, tkString) && s.src[s.toks[i].start] != '"':
		c.Target, c.Path = CopyFile, s.strs[s.toks[i].aux]
		i++
	default:
		return Statement{}, s.errAtTok(i)
	}
	var err error
	if i, err = s.copyOptions(c, i); err != nil {
		return Statement{}, err
	}
	if c.From && s.isWord(i, "where") {
		c.Where = true
		i = s.n()
	}
	if i < s.n() {
		return Statement{}, s.errAtTok(i)
	}

	stmt.Copy = c
	if c.From {
		return stmt, nil
	}
	var q Statement
	if queryLo >= 0 {
		if !s.isWord(queryLo, "select") && !s.isWord(queryLo, "values") && !s.isWord(queryLo, "with") &&
			!s.isWord(queryLo, "table") && !s.isOp(queryLo, "(") {
			if s.isWord(queryLo, "insert") || s.isWord(queryLo, "update") || s.isWord(queryLo, "delete") || s.isWord(queryLo, "upsert") {
				return Statement{}, errAt(sqlerr.FeatureNotSupported, s.start(queryLo), "COPY (%s ...) TO is not supported yet", strings.ToUpper(s.text(queryLo)))
			}
			return Statement{}, s.errAtTok(queryLo)
		}
		if q, err = tidbStatement(s.slice(queryLo, queryHi), Statement{}); err != nil {
			return Statement{}, err
		}
	} else {
		// COPY t TO reads SELECT cols FROM t. The names are quoted, so they
		// reach the catalog as the client wrote them.
		var b strings.Builder
		b.WriteString("SELECT ")
		if c.Columns == nil {
			b.WriteString("*")
		}
		for k, col := range c.Columns {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(backquote(strings.ReplaceAll(col, "`", "``")))
		}
		b.WriteString(" FROM ")
		for k, part := range c.Table {
			if k > 0 {
				b.WriteString(".")
			}
			b.WriteString(backquote(strings.ReplaceAll(part, "`", "``")))
		}
		sts, err := Parse(b.String())
		if err != nil {
			e := *sqlerr.As(err)
			e.Position = 0
			return Statement{}, &e
		}
		q = sts[0]
		q.Position = func(int) int { return 0 }
	}
	q.Text, q.Offset = stmt.Text, stmt.Offset
	q.Copy = c
	return q, nil
}

// slice is the statement made of the tokens [lo, hi).
func (s *stmtToks) slice(lo, hi int) *stmtToks {
	t := s.tail(lo)
	t.toks = t.toks[:hi-lo]
	t.match = t.match[:hi-lo]
	return t
}

// copyIdent reads a column or table name: a bare word, a quoted identifier,
// or a "double-quoted" one in the yql dialect, where clients' quoted names
// (pgx's CopyFrom quotes every name) lex as strings.
func (s *stmtToks) copyIdent(i int) (string, bool) {
	switch {
	case s.isKind(i, tkIdent), s.isKind(i, tkQuotedIdent):
		return s.unquoteIdent(i), true
	case s.isKind(i, tkString) && s.src[s.toks[i].start] == '"':
		return s.strs[s.toks[i].aux], true
	}
	return "", false
}

// copyName reads [schema.]name with copyIdent's names.
func (s *stmtToks) copyName(i int) (end int, parts []string, ok bool) {
	name, ok := s.copyIdent(i)
	if !ok || s.isWord(i, "from") || s.isWord(i, "to") {
		return i, nil, false
	}
	parts = []string{name}
	end = i + 1
	for s.isOp(end, ".") {
		name, ok := s.copyIdent(end + 1)
		if !ok {
			return end, nil, false
		}
		parts = append(parts, name)
		end += 2
	}
	return end, parts, true
}

// copyOptions reads the options after the target: [WITH] (option, ...) or
// the old syntax's words. It returns the index after them.
func (s *stmtToks) copyOptions(c *CopyStmt, i int) (int, error) {
	with := s.isWord(i, "with")
	if with {
		i++
	}
	if s.isOp(i, "(") {
		close := int(s.match[i])
		for _, el := range s.split(i+1, close) {
			if err := s.copyNewOption(c, el[0], el[1]); err != nil {
				return 0, err
			}
		}
		return close + 1, nil
	}
	if with && i >= s.n() {
		return 0, s.errAtTok(i)
	}
	return s.copyOldOptions(c, i)
}

// copyNewOption reads one "name [value]" of the parenthesised list.
func (s *stmtToks) copyNewOption(c *CopyStmt, a, b int) error {
	if a >= b || !s.isKind(a, tkIdent) {
		return s.errAtTok(a)
	}
	o := CopyOption{Name: strings.ToLower(s.text(a)), Pos: s.rp.pos(s.start(a))}
	switch k := a + 1; {
	case k == b:
	case s.isOp(k, "(") && int(s.match[k]) == b-1:
		for _, el := range s.split(k+1, b-1) {
			name, ok := s.copyIdent(el[0])
			if !ok || el[1] != el[0]+1 {
				return s.errAtTok(el[0])
			}
			o.List = append(o.List, name)
		}
		if o.List == nil {
			return s.errAtTok(k + 1)
		}
	case s.isOp(k, "*") && k+1 == b:
		o.Star = true
	case k+1 == b && (s.isKind(k, tkString) || s.isKind(k, tkIdent) || s.isKind(k, tkNumber) || s.isKind(k, tkQuotedIdent)):
		o.HasValue = true
		switch {
		case s.isKind(k, tkString):
			o.Value = s.strs[s.toks[k].aux]
		case s.isKind(k, tkIdent):
			o.Value = strings.ToLower(s.text(k))
		case s.isKind(k, tkQuotedIdent):
			o.Value = s.unquoteIdent(k)
		default:
			o.Value = s.text(k)
		}
	case s.isOp(k, "-") && k+2 == b && s.isKind(k+1, tkNumber):
		o.HasValue, o.Value = true, "-"+s.text(k+1)
	default:
		return s.errAtTok(k)
	}
	c.Options = append(c.Options, o)
	return nil
}

// copyOldOptions reads the options of the syntax before PostgreSQL 9.0,
// which pg_dump (WITH CSV HEADER in its docs), psql's \copy and old
// scripts use.
func (s *stmtToks) copyOldOptions(c *CopyStmt, i int) (int, error) {
	str := func(k int) (string, int, bool) {
		if s.isWord(k, "as") {
			k++
		}
		if s.isKind(k, tkString) {
			return s.strs[s.toks[k].aux], k + 1, true
		}
		return "", k, false
	}
	cols := func(k int) ([]string, int, error) {
		var out []string
		for {
			name, ok := s.copyIdent(k)
			if !ok {
				return nil, k, s.errAtTok(k)
			}
			out = append(out, name)
			k++
			if !s.isOp(k, ",") {
				return out, k, nil
			}
			k++
		}
	}
	for i < s.n() {
		pos := s.rp.pos(s.start(i))
		add := func(name, val string, has bool) {
			c.Options = append(c.Options, CopyOption{Name: name, Pos: pos, Value: val, HasValue: has})
		}
		switch {
		case s.isWord(i, "binary"):
			add("format", "binary", true)
			i++
		case s.isWord(i, "csv"):
			add("format", "csv", true)
			i++
		case s.isWord(i, "header"):
			add("header", "", false)
			i++
		case s.isWord(i, "oids"):
			add("oids", "", false)
			i++
		case s.isWord(i, "freeze"):
			add("freeze", "", false)
			i++
		case s.isWord(i, "delimiter"), s.isWord(i, "null"), s.isWord(i, "quote"), s.isWord(i, "escape"), s.isWord(i, "encoding"):
			name := strings.ToLower(s.text(i))
			v, next, ok := str(i + 1)
			if !ok {
				return 0, s.errAtTok(next)
			}
			add(name, v, true)
			i = next
		case s.isWord(i, "force") && s.isWord(i+1, "quote"):
			o := CopyOption{Name: "force_quote", Pos: pos}
			if s.isOp(i+2, "*") {
				o.Star = true
				i += 3
			} else {
				list, next, err := cols(i + 2)
				if err != nil {
					return 0, err
				}
				o.List, i = list, next
			}
			c.Options = append(c.Options, o)
		case s.isWord(i, "force") && s.isWord(i+1, "not") && s.isWord(i+2, "null"):
			list, next, err := cols(i + 3)
			if err != nil {
				return 0, err
			}
			c.Options = append(c.Options, CopyOption{Name: "force_not_null", Pos: pos, List: list})
			i = next
		case s.isWord(i, "force") && s.isWord(i+1, "null"):
			list, next, err := cols(i + 2)
			if err != nil {
				return 0, err
			}
			c.Options = append(c.Options, CopyOption{Name: "force_null", Pos: pos, List: list})
			i = next
		default:
			return i, nil
		}
	}
	return i, nil
}
