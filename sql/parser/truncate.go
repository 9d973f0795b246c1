package parser

import "github.com/pivotdb/pivotdb/sql/sqlerr"

// Truncate is PostgreSQL's TRUNCATE [TABLE] [ONLY] name [*] [, ...]
// [RESTART IDENTITY | CONTINUE IDENTITY] [CASCADE | RESTRICT]. TiDB's
// grammar reads one table only, so it is parsed here.
type Truncate struct {
	// Tables are the names as written, each [schema.]name.
	Tables [][]string
	// RestartIdentity resets the sequences owned by the tables' columns.
	RestartIdentity bool
	// Cascade also truncates the tables whose foreign keys reference the
	// tables named, and theirs in turn.
	Cascade bool
}

// parseTruncate parses TRUNCATE; the first token is TRUNCATE.
func (s *stmtToks) parseTruncate() (*Truncate, error) {
	t := &Truncate{}
	i := 1
	if s.isWord(i, "table") {
		i++
	}
	i, tables, err := s.relationList(i)
	if err != nil {
		return nil, err
	}
	t.Tables = tables
	switch {
	case s.isWord(i, "restart") && s.isWord(i+1, "identity"):
		t.RestartIdentity = true
		i += 2
	case s.isWord(i, "continue") && s.isWord(i+1, "identity"):
		i += 2
	}
	switch {
	case s.isWord(i, "cascade"):
		t.Cascade = true
		i++
	case s.isWord(i, "restrict"):
		i++
	}
	if i < s.n() {
		return nil, s.errAtTok(i)
	}
	if len(t.Tables) == 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "TRUNCATE needs a table")
	}
	return t, nil
}

// relationList parses the relation list LOCK and TRUNCATE share from token
// i on: names (at most schema.table), each with PostgreSQL's optional ONLY
// before and * after (which change nothing here: PivotDB has no table
// inheritance), separated by commas.
func (s *stmtToks) relationList(i int) (next int, tables [][]string, err error) {
	for {
		if s.isWord(i, "only") {
			i++
		}
		end, parts, ok := s.nameChain(i)
		if !ok || len(parts) > 2 {
			return 0, nil, s.errAtTok(i)
		}
		tables = append(tables, parts)
		i = end
		if s.isOp(i, "*") {
			i++
		}
		if !s.isOp(i, ",") {
			return i, tables, nil
		}
		i++
	}
}
