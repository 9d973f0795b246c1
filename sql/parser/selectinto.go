package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// selectInto recognises PostgreSQL's SELECT list INTO [TEMP] [TABLE] name
// FROM ..., which creates a table as CREATE [TEMP] TABLE name AS SELECT
// list FROM ... does, and returns that statement's text (ok false for any other
// statement). TiDB's grammar reads SELECT ... INTO as MySQL's variables
// and files, so the statement is re-spelled and parsed again.
func (s *stmtToks) selectInto() (text string, ok bool, err error) {
	if s.n() < 4 || !s.isWord(0, "select") {
		return "", false, nil
	}
	into := -1
	for i := 1; i < s.n(); i = s.skip(i) {
		if s.isWord(i, "into") {
			into = i
			break
		}
		if s.isWord(i, "from") || s.isWord(i, "union") || s.isWord(i, "where") {
			return "", false, nil
		}
	}
	if into < 0 {
		return "", false, nil
	}
	i := into + 1
	create := "CREATE TABLE "
	switch {
	case s.isWord(i, "temp") || s.isWord(i, "temporary"):
		create = "CREATE TEMP TABLE "
		i++
	case s.isWord(i, "unlogged"):
		return "", true, errAt(sqlerr.FeatureNotSupported, s.start(i), "unlogged tables are not supported yet")
	}
	if s.isWord(i, "table") {
		i++
	}
	end, _, named := s.nameChain(i)
	if !named {
		return "", true, s.errAtTok(i)
	}
	if strings.EqualFold(s.text(i), "outfile") || strings.EqualFold(s.text(i), "dumpfile") {
		return "", false, nil
	}
	rest := ""
	if end < s.n() {
		rest = s.src[s.start(end):s.toks[s.n()-1].end]
	}
	name := s.src[s.start(i):s.toks[end-1].end]
	return create + name + " AS " + s.src[s.start(0):s.toks[into-1].end] + " " + rest, true, nil
}
