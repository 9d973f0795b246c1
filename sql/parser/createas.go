package parser

import "strings"

// withData takes the trailing WITH DATA / WITH NO DATA off a CREATE TABLE
// ... AS query, which TiDB's grammar lacks; noData reports WITH NO DATA.
func (s *stmtToks) withData() (out *stmtToks, noData bool) {
	n := s.n()
	if n < 4 || !s.isWord(0, "create") || !s.isWord(n-1, "data") || !s.hasWordBefore("table", 5) || !s.hasWordBefore("as", n) {
		return s, false
	}
	if s.isWord(n-2, "with") {
		return s.without(n-2, n), false
	}
	if n >= 5 && s.isWord(n-2, "no") && s.isWord(n-3, "with") {
		return s.without(n-3, n), true
	}
	return s, false
}

// tempTable takes PostgreSQL's temporary-table words off a CREATE TABLE,
// which TiDB's grammar spells differently: CREATE [GLOBAL | LOCAL]
// {TEMP | TEMPORARY} TABLE ... [ON COMMIT {PRESERVE ROWS | DELETE ROWS |
// DROP}]. temp reports the TEMP word; onCommit is the ON COMMIT action as
// written, lower case ("" when none).
func (s *stmtToks) tempTable() (out *stmtToks, temp bool, onCommit string) {
	if s.n() < 4 || !s.isWord(0, "create") {
		return s, false, ""
	}
	i := 1
	for i < 3 && (s.isWord(i, "global") || s.isWord(i, "local")) {
		i++
	}
	if !s.isWord(i, "temp") && !s.isWord(i, "temporary") || !s.isWord(i+1, "table") {
		return s, false, ""
	}
	out = s.without(1, i+1)
	n := out.n()
	switch {
	case n > 4 && out.isWord(n-4, "on") && out.isWord(n-3, "commit") && out.isWord(n-1, "rows") &&
		(out.isWord(n-2, "preserve") || out.isWord(n-2, "delete")):
		onCommit = strings.ToLower(out.text(n-2)) + " rows"
		out = out.without(n-4, n)
	case n > 3 && out.isWord(n-3, "on") && out.isWord(n-2, "commit") && out.isWord(n-1, "drop"):
		onCommit = "drop"
		out = out.without(n-3, n)
	}
	return out, true, onCommit
}
