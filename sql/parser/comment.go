package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Comment is COMMENT ON TABLE|COLUMN|INDEX name IS 'text' | NULL: the
// description psql's \d+ and obj_description / col_description show.
type Comment struct {
	// Kind is "table", "column" or "index".
	Kind string
	// Parts is the object's name as written, split at the dots, each part
	// a bare word lowercased or a quoted one as written: [schema.]name,
	// and for a column [schema.]table.column.
	Parts []string
	// Text is the comment; empty removes it (NULL or '', as in
	// PostgreSQL).
	Text string
}

// commentKinds are the objects PostgreSQL's COMMENT ON names; those
// beyond TABLE, COLUMN and INDEX are 0A000.
var commentKinds = []string{"table", "column", "index", "view", "materialized", "sequence", "database", "schema",
	"function", "procedure", "aggregate", "type", "domain", "constraint", "trigger", "role", "extension",
	"foreign", "collation", "conversion", "event", "large", "operator", "policy", "publication", "rule",
	"server", "statistics", "subscription", "tablespace", "text", "transform", "access", "cast", "language"}

// parseComment parses COMMENT ON kind name IS 'text' | NULL.
func (s *stmtToks) parseComment() (*Comment, error) {
	if !s.isWord(1, "on") {
		return nil, s.errAtTok(1)
	}
	kind := ""
	for _, k := range commentKinds {
		if s.isWord(2, k) {
			kind = k
		}
	}
	switch kind {
	case "":
		return nil, s.errAtTok(2)
	case "table", "column", "index":
	default:
		return nil, errAt(sqlerr.FeatureNotSupported, s.start(2), "COMMENT ON %s is not supported yet", strings.ToUpper(s.text(2)))
	}
	c := &Comment{Kind: kind}
	i := 3
	for {
		part, ok := s.objectName(i)
		if !ok || s.isKind(i, tkString) {
			return nil, s.errAtTok(i)
		}
		c.Parts = append(c.Parts, part)
		i++
		if !s.isOp(i, ".") {
			break
		}
		i++
	}
	maxParts := 2
	if kind == "column" {
		maxParts = 3
		if len(c.Parts) < 2 {
			// PostgreSQL's error, without a position.
			return nil, sqlerr.New(sqlerr.SyntaxError, "column name must be qualified")
		}
	}
	if len(c.Parts) > maxParts {
		return nil, sqlerr.New(sqlerr.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(c.Parts, "."))
	}
	if !s.isWord(i, "is") {
		return nil, s.errAtTok(i)
	}
	i++
	switch {
	case s.isWord(i, "null"):
	case s.isKind(i, tkString):
		c.Text = s.strValue(i)
	default:
		return nil, s.errAtTok(i)
	}
	if err := s.endAt(i + 1); err != nil {
		return nil, err
	}
	return c, nil
}
