package parser

// ViewQueryText returns the query of a CREATE VIEW statement as written:
// the text after the AS that follows the view's name and column list
// (pg_get_viewdef shows it; PivotDB keeps a view's definition as its
// text, not as a parse tree). ok is false when def is no CREATE VIEW.
func ViewQueryText(def string, d Dialect) (string, bool) {
	sc := &scanner{lex: lexer{src: def, pgIdents: d == DialectPostgreSQL}, rp: runePos{src: def}}
	s, err := sc.next()
	if err != nil || s == nil || !s.isWord(0, "create") {
		return "", false
	}
	for i := 1; i < s.n(); i = s.skip(i) {
		if s.isWord(i, "view") {
			// The name, an optional (columns) list and optional WITH
			// (options), then AS.
			for j := i + 1; j < s.n(); j = s.skip(j) {
				if s.isWord(j, "as") {
					if j+1 >= s.n() {
						return "", false
					}
					return s.src[s.start(j+1):s.toks[s.n()-1].end], true
				}
			}
			return "", false
		}
	}
	return "", false
}
