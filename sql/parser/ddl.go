package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// DDL rewriting: column types and the YQL parts of CREATE TABLE.
//
// TiDB knows neither YQL's type names (Uint64, Utf8, Interval) nor their
// exact semantics, so every column type is handed to it as
//
//	name BLOB COMMENT 'pivot:<Type>'
//
// where <Type> is the type parsed by types.ParseTypeName and spelled by
// typeText. After parsing, Parse moves the marker out of the COMMENT into
// the column's FieldType (see markColumns) so that a user's own COMMENT is
// the only comment option left; ColumnType reads the type back.
//
// Column names in a column definition and in the column lists of keys are
// always backtick-quoted, so that any reserved word works there.

// columnOptionWords start column options; a column definition that starts
// its type with one of them has no type.
var columnOptionWords = map[string]bool{
	"not": true, "null": true, "default": true, "primary": true, "unique": true, "as": true, "generated": true,
	"comment": true, "references": true, "check": true, "constraint": true, "collate": true, "key": true,
}

// constraintWords start a table element that is not a column definition.
var constraintWords = map[string]bool{
	"primary": true, "unique": true, "constraint": true, "foreign": true, "check": true, "fulltext": true,
	"spatial": true,
}

// nameChain returns the index after an identifier chain a.b.c at i, and
// its parts; ok is false when there is no identifier at i.
func (s *stmtToks) nameChain(i int) (end int, parts []string, ok bool) {
	if !s.isKind(i, tkIdent) && !s.isKind(i, tkQuotedIdent) {
		return i, nil, false
	}
	parts = append(parts, s.unquoteIdent(i))
	end = i + 1
	for s.isOp(end, ".") && (s.isKind(end+1, tkIdent) || s.isKind(end+1, tkQuotedIdent)) {
		parts = append(parts, s.unquoteIdent(end+1))
		end += 2
	}
	return end, parts, true
}

// createTable rewrites CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name
// (elements) [WITH (settings)] [...]; the WITH clause is cut out and
// returned. ok is false for other shapes (CREATE TABLE ... AS SELECT,
// CREATE TABLE ... LIKE, CREATE INDEX), which the caller rewrites
// generically.
func (r *rewriter) createTable() (ok bool, with []Setting, err error) {
	s := r.s
	if !s.isWord(0, "create") {
		return false, nil, nil
	}
	i := 1
	for ; i < 4 && !s.isWord(i, "table"); i++ {
		if !s.isWord(i, "temporary") && !s.isWord(i, "temp") && !s.isWord(i, "global") && !s.isWord(i, "local") {
			return false, nil, nil
		}
	}
	if !s.isWord(i, "table") {
		return false, nil, nil
	}
	i++
	if s.isWord(i, "if") && s.isWord(i+1, "not") && s.isWord(i+2, "exists") {
		i += 3
	}
	i, _, ok = s.nameChain(i)
	if ok && s.isWord(i, "with") && s.isOp(i+1, "(") && s.isWord(int(s.match[i+1])+1, "as") {
		// CREATE TABLE t WITH (settings) AS query: the settings are
		// PostgreSQL's storage parameters' place, YQL's here.
		if with, err = s.settingList(i + 1); err != nil {
			return true, nil, err
		}
		if err := r.seq(0, i); err != nil {
			return true, nil, err
		}
		return true, with, r.seq(int(s.match[i+1])+1, s.n())
	}
	if !ok || !s.isOp(i, "(") {
		return false, nil, nil
	}
	if err := r.seq(0, i); err != nil {
		return true, nil, err
	}
	if err := r.tableElements(i); err != nil {
		return true, nil, err
	}
	k := int(s.match[i]) + 1
	if s.isWord(k, "with") && s.isOp(k+1, "(") {
		with, err = s.settingList(k + 1)
		if err != nil {
			return true, nil, err
		}
		k = int(s.match[k+1]) + 1
	}
	return true, with, r.seq(k, s.n())
}

// tableElements emits the parenthesised element list of CREATE TABLE (or
// of ALTER TABLE ... ADD (...)) opening at open.
func (r *rewriter) tableElements(open int) error {
	s := r.s
	close := int(s.match[open])
	r.plain(open)
	for k, el := range s.split(open+1, close) {
		if k > 0 {
			r.plain(el[0] - 1)
		}
		if el[0] == el[1] {
			return s.errAtTok(el[1])
		}
		if err := r.tableElement(el[0], el[1]); err != nil {
			return err
		}
	}
	r.plain(close)
	return nil
}

// tableElement emits one element [a, b) of a table definition: a column
// definition or a key/constraint. KEY and INDEX also start YQL column
// names ("key Utf8"); the element is a column when a valid type name
// follows, and an index ("KEY idx (a)") otherwise.
func (r *rewriter) tableElement(a, b int) error {
	s := r.s
	if ok, err := r.yqlIndex(a, b); ok || err != nil {
		return err
	}
	if s.isKind(a, tkIdent) {
		w := strings.ToLower(s.text(a))
		if constraintWords[w] || (w == "key" || w == "index") && !s.looksLikeType(a+1, b) {
			return r.constraint(a, b)
		}
	}
	return r.columnDef(a, b)
}

// looksLikeType reports whether a valid type name starts at i.
func (s *stmtToks) looksLikeType(i, hi int) bool {
	if !s.isKind(i, tkIdent) || columnOptionWords[strings.ToLower(s.text(i))] {
		return false
	}
	_, _, err := s.parseTypeAt(i, hi)
	return err == nil
}

// columnDef emits "name Type [options]" for [a, b) with the type replaced
// by BLOB COMMENT 'pivot:<Type>'. The options (NOT NULL, DEFAULT literal,
// PRIMARY KEY, [GENERATED ALWAYS] AS (expr) [STORED], COMMENT '...') are
// rewritten generically, so typed literals and casts work in them.
func (r *rewriter) columnDef(a, b int) error {
	s := r.s
	if a >= b {
		return s.errAtTok(a)
	}
	switch s.toks[a].kind {
	case tkIdent:
		r.emit(a, backquote(s.text(a)))
	case tkQuotedIdent:
		r.emit(a, s.text(a))
	default:
		return s.errAtTok(a)
	}
	if a+1 >= b || s.isKind(a+1, tkIdent) && columnOptionWords[strings.ToLower(s.text(a+1))] {
		return s.errAtTok(a + 1)
	}
	name := s.unquoteIdent(a)
	t, serial := serialType(s.text(a + 1))
	next := a + 2
	if serial {
		r.identities = append(r.identities, ColumnIdentity{Column: name, Kind: IdentitySerial, Pos: s.rp.pos(s.start(a + 1))})
	} else {
		var err error
		if t, next, err = s.parseTypeAt(a+1, b); err != nil {
			return err
		}
	}
	r.syn("BLOB COMMENT "+sqlQuote(markerPrefix+typeText(t)), a+1, false, false)
	r.lastTok = next - 1
	lo, end, id, err := s.identityClause(next, b)
	if err != nil {
		return err
	}
	if lo < 0 {
		return r.seq(next, b)
	}
	if serial {
		return s.errAtTok(lo)
	}
	id.Column = name
	r.identities = append(r.identities, id)
	if err := r.seq(next, lo); err != nil {
		return err
	}
	return r.seq(end, b)
}

// constraint emits a key or constraint element [a, b). Parenthesised
// groups are column lists, except after CHECK.
func (r *rewriter) constraint(a, b int) error {
	s := r.s
	r.emit(a, s.text(a))
	for i := a + 1; i < b; {
		if s.isOp(i, "(") {
			var err error
			if s.isWord(i-1, "check") {
				err = r.group(i)
			} else {
				err = r.columnList(i)
			}
			if err != nil {
				return err
			}
			i = int(s.match[i]) + 1
			continue
		}
		r.plain(i)
		i++
	}
	return nil
}

// columnList emits a key's column list, quoting the column names:
// PRIMARY KEY (hash, key) becomes PRIMARY KEY (`hash`, `key`).
func (r *rewriter) columnList(open int) error {
	s := r.s
	close := int(s.match[open])
	r.plain(open)
	for k, el := range s.split(open+1, close) {
		if k > 0 {
			r.plain(el[0] - 1)
		}
		a, b := el[0], el[1]
		if a < b && s.isKind(a, tkIdent) &&
			(a+1 == b || s.isOp(a+1, "(") || s.isWord(a+1, "asc") || s.isWord(a+1, "desc")) {
			r.emit(a, backquote(s.text(a)))
			a++
		}
		if err := r.seq(a, b); err != nil {
			return err
		}
	}
	r.plain(close)
	return nil
}

// alterTable rewrites the column definitions in ALTER TABLE specs: ADD
// [COLUMN], MODIFY [COLUMN], CHANGE [COLUMN]. ok is false when the
// statement is not ALTER TABLE.
func (r *rewriter) alterTable() (ok bool, err error) {
	s := r.s
	if !s.isWord(0, "alter") || !s.isWord(1, "table") {
		return false, nil
	}
	i := 2
	if s.isWord(i, "if") && s.isWord(i+1, "exists") {
		// TiDB has no ALTER TABLE IF EXISTS: it sees ALTER TABLE t.
		if _, _, ok := s.nameChain(i + 2); !ok {
			return false, nil
		}
		r.alter = append(r.alter, AlterAction{Spec: -1, Kind: AlterTableIfExists})
		if err := r.seq(0, i); err != nil {
			return true, err
		}
		i += 2
		j, _, _ := s.nameChain(i)
		if s.isWord(i, "only") {
			j, _, _ = s.nameChain(i + 1)
			i++
		}
		if err := r.seq(i, j); err != nil {
			return true, err
		}
		i = j
	} else if s.isWord(i, "only") && (s.isKind(i+1, tkIdent) || s.isKind(i+1, tkQuotedIdent)) {
		// ALTER TABLE ONLY t (pg_dump's form): PivotDB has no table
		// inheritance, so ONLY changes nothing.
		if err := r.seq(0, i); err != nil {
			return true, err
		}
		i++
		j, _, ok := s.nameChain(i)
		if !ok {
			return true, s.errAtTok(i)
		}
		if err := r.seq(i, j); err != nil {
			return true, err
		}
		i = j
	} else {
		i, _, ok = s.nameChain(i)
		if !ok {
			return false, nil
		}
		if err := r.seq(0, i); err != nil {
			return true, err
		}
	}
	for k, el := range s.split(i, s.n()) {
		if k > 0 {
			r.plain(el[0] - 1)
		}
		handled, err := r.pgAlterSpec(k, el[0], el[1])
		if err != nil {
			return true, err
		}
		if handled {
			continue
		}
		if err := r.alterSpec(el[0], el[1]); err != nil {
			return true, err
		}
	}
	return true, nil
}

// pgAlterSpec handles the PostgreSQL ALTER TABLE actions TiDB's grammar
// lacks: ALTER [COLUMN] c SET|DROP NOT NULL and ALTER [COLUMN] c [SET DATA]
// TYPE t [USING expr] are recorded in r.alter and handed to TiDB as FORCE
// (a spec that changes nothing, which the binder matches by position);
// ADD ... NOT VALID and DROP CONSTRAINT IF EXISTS are recorded as flags
// of the spec TiDB parses without them; RENAME a TO b gains COLUMN.
func (r *rewriter) pgAlterSpec(spec, a, b int) (bool, error) {
	s := r.s
	switch {
	case s.isWord(a, "alter") && !s.isWord(a+1, "constraint") && !s.isWord(a+1, "check") && !s.isWord(a+1, "index"):
		j := a + 1
		if s.isWord(j, "column") {
			j++
		}
		if !s.isKind(j, tkIdent) && !s.isKind(j, tkQuotedIdent) {
			return false, nil
		}
		act := AlterAction{Spec: spec, Column: s.unquoteIdent(j)}
		j++
		switch {
		case s.isWord(j, "set") && s.isWord(j+1, "not") && s.isWord(j+2, "null") && j+3 == b:
			act.Kind = AlterSetNotNull
		case s.isWord(j, "drop") && s.isWord(j+1, "not") && s.isWord(j+2, "null") && j+3 == b:
			act.Kind = AlterDropNotNull
		case s.isWord(j, "type") || s.isWord(j, "set") && s.isWord(j+1, "data") && s.isWord(j+2, "type"):
			if !s.isWord(j, "type") {
				j += 2
			}
			t, next, err := s.parseTypeAt(j+1, b)
			if err != nil {
				return true, err
			}
			act.Kind, act.Type = AlterSetType, t
			if s.isWord(next, "collate") && next+1 < b {
				next += 2 // the only collation is the binary one
			}
			if s.isWord(next, "using") {
				if next+1 >= b {
					return true, s.errAtTok(b)
				}
				act.Using = s.src[s.start(next+1):s.toks[b-1].end]
				next = b
			}
			if next != b {
				return true, s.errAtTok(next)
			}
		default:
			return false, nil
		}
		r.alter = append(r.alter, act)
		r.syn("FORCE", a, false, false)
		return true, nil
	case s.isWord(a, "add") && b-a > 2 && s.isWord(b-2, "not") && s.isWord(b-1, "valid"):
		r.alter = append(r.alter, AlterAction{Spec: spec, Kind: AlterNotValid})
		return true, r.alterSpec(a, b-2)
	case s.isWord(a, "drop") && s.isWord(a+1, "constraint") && s.isWord(a+2, "if") && s.isWord(a+3, "exists"):
		r.alter = append(r.alter, AlterAction{Spec: spec, Kind: AlterIfExists})
		r.emit(a, s.text(a))
		r.emit(a+1, s.text(a+1))
		return true, r.seq(a+4, b)
	case s.isWord(a, "rename") && !s.isWord(a+1, "column") && !s.isWord(a+1, "to") && !s.isWord(a+1, "as") &&
		!s.isWord(a+1, "index") && !s.isWord(a+1, "key") && s.isWord(a+2, "to"):
		r.emit(a, s.text(a))
		r.syn("COLUMN", a, false, false)
		return true, r.seq(a+1, b)
	}
	return false, nil
}

// alterSpec emits one ALTER TABLE spec [a, b).
func (r *rewriter) alterSpec(a, b int) error {
	s := r.s
	words := func(j int, ws ...string) int {
		for _, w := range ws {
			if s.isWord(j, w) {
				j++
			}
		}
		return j
	}
	switch {
	case s.isWord(a, "add"):
		j := a + 1
		column := s.isWord(j, "column")
		if column {
			j++
		}
		if s.isWord(j, "if") && s.isWord(j+1, "not") && s.isWord(j+2, "exists") {
			j += 3
		}
		for k := a; k < j; k++ {
			r.emit(k, s.text(k))
		}
		if s.isOp(j, "(") && int(s.match[j]) < b {
			if err := r.tableElements(j); err != nil {
				return err
			}
			return r.seq(int(s.match[j])+1, b)
		}
		if !column && s.isKind(j, tkIdent) {
			w := strings.ToLower(s.text(j))
			if w == "partition" {
				return r.seq(j, b)
			}
			if constraintWords[w] || (w == "key" || w == "index") && !s.looksLikeType(j+1, b) {
				return r.constraint(j, b)
			}
		}
		return r.columnDef(j, b)
	case s.isWord(a, "modify"):
		j := words(a+1, "column")
		if s.isWord(j, "if") && s.isWord(j+1, "exists") {
			j += 2
		}
		for k := a; k < j; k++ {
			r.emit(k, s.text(k))
		}
		return r.columnDef(j, b)
	case s.isWord(a, "change"):
		j := words(a+1, "column")
		if s.isWord(j, "if") && s.isWord(j+1, "exists") {
			j += 2
		}
		for k := a; k < j; k++ {
			r.emit(k, s.text(k))
		}
		switch {
		case s.isKind(j, tkIdent):
			r.emit(j, backquote(s.text(j)))
		case s.isKind(j, tkQuotedIdent):
			r.emit(j, s.text(j))
		default:
			return s.errAtTok(j)
		}
		return r.columnDef(j+1, b)
	case s.isWord(a, "alter"):
		// ALTER [COLUMN] c SET DEFAULT expr: MySQL's grammar takes a
		// literal or a parenthesised expression there, PostgreSQL any
		// expression (pg_dump writes SET DEFAULT nextval('...'::regclass)).
		j := words(a+1, "column") + 1
		if s.isWord(j, "add") && s.isWord(j+1, "generated") {
			// pg_dump writes identity columns so.
			return errAt(sqlerr.FeatureNotSupported, s.start(j), "ALTER COLUMN ... ADD GENERATED ... AS IDENTITY is not supported yet (declare the identity column in CREATE TABLE)")
		}
		if s.isWord(j, "set") && s.isWord(j+1, "default") && j+2 < b && !(s.isOp(j+2, "(") && int(s.match[j+2]) == b-1) {
			if err := r.seq(a, j+2); err != nil {
				return err
			}
			r.syn("(", j+2, false, false)
			if err := r.seq(j+2, b); err != nil {
				return err
			}
			r.syn(")", b-1, true, false)
			return nil
		}
	}
	return r.seq(a, b)
}

// upsertStatement rewrites YQL's UPSERT INTO (also after EXPLAIN) to
// INSERT INTO; ok is false when the statement has no UPSERT.
func (r *rewriter) upsertStatement() (ok bool, err error) {
	s := r.s
	k := -1
	switch {
	case s.isWord(0, "upsert"):
		k = 0
	case s.isWord(0, "explain") || s.isWord(0, "desc") || s.isWord(0, "describe"):
		for i := 1; i < s.n() && i < 8; i = s.skip(i) {
			if s.isWord(i, "upsert") && s.isWord(i+1, "into") {
				k = i
				break
			}
		}
	}
	if k < 0 {
		return false, nil
	}
	if err := r.seq(0, k); err != nil {
		return true, err
	}
	r.emit(k, "INSERT")
	return true, r.seq(k+1, r.hi)
}
