package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// AlterOwner is ALTER TABLE|VIEW|SEQUENCE|DATABASE name OWNER TO role: it
// gives an object to another role.
type AlterOwner struct {
	// Kind is "table", "view", "sequence" or "database".
	Kind string
	// Name is the object's name (possibly "schema.name" for a relation):
	// a bare name lowercased, a quoted one as written.
	Name string
	// Owner is the new owner; CurrentUser for CURRENT_USER, CURRENT_ROLE
	// and SESSION_USER.
	Owner string
}

// parseAlterOwner parses ALTER TABLE|VIEW|DATABASE name OWNER TO role; ok
// is false for any other ALTER.
func (s *stmtToks) parseAlterOwner() (o *AlterOwner, ok bool, err error) {
	// isWord, not text: the statement may be the lone word ALTER (a crash
	// FuzzParse found, testdata/fuzz/FuzzParse/49b8c4b75f0d73df).
	var kind string
	for _, k := range []string{"table", "view", "sequence", "database"} {
		if s.isWord(1, k) {
			kind = k
		}
	}
	if kind == "" {
		return nil, false, nil
	}
	i := 2
	if kind != "database" && s.isWord(i, "if") && s.isWord(i+1, "exists") {
		i += 2
	}
	name, ok := s.objectName(i)
	if !ok {
		return nil, false, nil
	}
	i++
	if kind != "database" && s.isOp(i, ".") {
		rest, ok := s.objectName(i + 1)
		if !ok {
			return nil, false, nil
		}
		name += "." + rest
		i += 2
	}
	if !s.isWord(i, "owner") || !s.isWord(i+1, "to") {
		return nil, false, nil
	}
	if i > 3 && kind != "database" && s.isWord(2, "if") {
		return nil, true, errAt(sqlerr.FeatureNotSupported, s.start(2), "ALTER %s IF EXISTS ... OWNER TO is not supported yet", strings.ToUpper(kind))
	}
	i += 2
	o = &AlterOwner{Kind: kind, Name: name}
	switch {
	case s.isWord(i, "current_user"), s.isWord(i, "current_role"), s.isWord(i, "session_user"):
		o.Owner = CurrentUser
	default:
		if o.Owner, ok = s.objectName(i); !ok {
			return nil, true, s.errAtTok(i)
		}
	}
	if !s.atEnd(i + 1) {
		return nil, true, s.errAtTok(i + 1)
	}
	return o, true, nil
}
