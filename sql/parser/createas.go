package parser

// withData takes the trailing WITH DATA / WITH NO DATA off a CREATE TABLE
// ... AS query, which TiDB's grammar lacks; noData reports WITH NO DATA.
func (s *stmtToks) withData() (out *stmtToks, noData bool) {
	n := s.n()
	if n < 4 || !s.isWord(0, "create") || !s.isWord(n-1, "data") {
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
