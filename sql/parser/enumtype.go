package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TypeStmt is one of PostgreSQL's enum type statements, which TiDB's
// grammar lacks:
//
//	CREATE TYPE name AS ENUM ('label', ...)
//	ALTER TYPE name ADD VALUE [IF NOT EXISTS] 'label' [BEFORE | AFTER 'label']
//	ALTER TYPE name RENAME VALUE 'old' TO 'new'
//	ALTER TYPE name RENAME TO new_name
//	DROP TYPE [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
//
// Other CREATE TYPE forms (composite, range, base types) are 0A000.
type TypeStmt struct {
	Kind TypeKind
	// Names are the types named (unquoted names folded to lower case);
	// one except for DROP.
	Names []string
	// Labels are CREATE's labels in order; ADD VALUE's label; RENAME
	// VALUE's old and new label.
	Labels []string
	// Neighbour is ADD VALUE's BEFORE/AFTER label ("" for none); Before
	// tells which.
	Neighbour string
	Before    bool
	// NewName is RENAME TO's name.
	NewName     string
	IfExists    bool
	IfNotExists bool
	Cascade     bool
}

// TypeKind tells the type statements apart.
type TypeKind uint8

// The type statements.
const (
	TypeCreateEnum TypeKind = iota + 1
	TypeAddValue
	TypeRenameValue
	TypeRename
	TypeDrop
)

// typeStatement parses the type statements; ok is false for others.
func (s *stmtToks) typeStatement() (*TypeStmt, bool, error) {
	if !s.isWord(1, "type") {
		return nil, false, nil
	}
	st := &TypeStmt{}
	i := 2
	if s.isWord(0, "drop") {
		st.Kind = TypeDrop
		if s.isWord(i, "if") && s.isWord(i+1, "exists") {
			st.IfExists = true
			i += 2
		}
		for {
			name, next, err := s.typeObjName(i)
			if err != nil {
				return nil, true, err
			}
			st.Names = append(st.Names, name)
			i = next
			if !s.isOp(i, ",") {
				break
			}
			i++
		}
		switch {
		case s.isWord(i, "cascade"):
			st.Cascade = true
			i++
		case s.isWord(i, "restrict"):
			i++
		}
		return st, true, s.endAt(i)
	}
	name, i, err := s.typeObjName(i)
	if err != nil {
		return nil, true, err
	}
	st.Names = []string{name}
	switch {
	case s.isWord(0, "create"):
		if !s.isWord(i, "as") {
			return nil, true, sqlerr.NotSupported("CREATE TYPE other than AS ENUM")
		}
		if !s.isWord(i+1, "enum") {
			return nil, true, sqlerr.NotSupported("CREATE TYPE other than AS ENUM")
		}
		st.Kind = TypeCreateEnum
		i += 2
		if !s.isOp(i, "(") {
			return nil, true, s.errAtTok(i)
		}
		close := int(s.match[i])
		for _, el := range s.split(i+1, close) {
			if el[1] != el[0]+1 || !s.isKind(el[0], tkString) {
				return nil, true, s.errAtTok(el[0])
			}
			st.Labels = append(st.Labels, s.strValue(el[0]))
		}
		return st, true, s.endAt(close + 1)
	case s.isWord(0, "alter"):
		switch {
		case s.isWord(i, "add") && s.isWord(i+1, "value"):
			st.Kind = TypeAddValue
			i += 2
			if s.isWord(i, "if") && s.isWord(i+1, "not") && s.isWord(i+2, "exists") {
				st.IfNotExists = true
				i += 3
			}
			if !s.isKind(i, tkString) {
				return nil, true, s.errAtTok(i)
			}
			st.Labels = []string{s.strValue(i)}
			i++
			if s.isWord(i, "before") || s.isWord(i, "after") {
				st.Before = s.isWord(i, "before")
				if !s.isKind(i+1, tkString) {
					return nil, true, s.errAtTok(i + 1)
				}
				st.Neighbour = s.strValue(i + 1)
				i += 2
			}
			return st, true, s.endAt(i)
		case s.isWord(i, "rename") && s.isWord(i+1, "value"):
			st.Kind = TypeRenameValue
			if !s.isKind(i+2, tkString) || !s.isWord(i+3, "to") || !s.isKind(i+4, tkString) {
				return nil, true, s.errAtTok(i + 2)
			}
			st.Labels = []string{s.strValue(i + 2), s.strValue(i + 4)}
			return st, true, s.endAt(i + 5)
		case s.isWord(i, "rename") && s.isWord(i+1, "to"):
			st.Kind = TypeRename
			n, next, err := s.typeObjName(i + 2)
			if err != nil {
				return nil, true, err
			}
			st.NewName = n
			return st, true, s.endAt(next)
		}
		return nil, true, sqlerr.NotSupported("this form of ALTER TYPE")
	}
	return nil, false, nil
}

// typeObjName reads a type's name, [public.]name, at i.
func (s *stmtToks) typeObjName(i int) (string, int, error) {
	end, parts, ok := s.nameChain(i)
	if !ok || len(parts) > 2 || len(parts) == 2 && !strings.EqualFold(parts[0], "public") {
		return "", i, s.errAtTok(i)
	}
	name := parts[len(parts)-1]
	if s.isKind(end-1, tkIdent) {
		name = strings.ToLower(name)
	}
	return name, end, nil
}

// strValue is the decoded value of the string literal at i.
func (s *stmtToks) strValue(i int) string { return s.strs[s.toks[i].aux] }

// endAt fails unless the statement ends at i.
func (s *stmtToks) endAt(i int) error {
	if i < s.n() {
		return s.errAtTok(i)
	}
	return nil
}
