package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// UserKind is the kind of a user statement.
type UserKind uint8

// The user statements, in PostgreSQL's syntax (TiDB's grammar has MySQL's
// CREATE USER 'u'@'host' IDENTIFIED BY, which PostgreSQL clients never send).
const (
	// UserCreate is CREATE USER|ROLE name [[WITH] option ...].
	UserCreate UserKind = iota + 1
	// UserAlter is ALTER USER|ROLE name [WITH] option ....
	UserAlter
	// UserDrop is DROP USER|ROLE [IF EXISTS] name [, ...].
	UserDrop
)

// UserStmt is CREATE, ALTER or DROP USER (ROLE is a synonym: PivotDB has
// no groups, every role can log in).
type UserStmt struct {
	Kind UserKind
	// Names holds the user names (one except for DROP): a bare word
	// lowercased as PostgreSQL folds identifiers, a quoted one as written.
	Names    []string
	IfExists bool
	// HasPassword is set when PASSWORD was given; Password is then the
	// password (or a SCRAM-SHA-256 verifier), and NullPassword is set for
	// PASSWORD NULL, which removes it.
	HasPassword  bool
	Password     string
	NullPassword bool
}

// acceptedRoleOptions are the role options that describe what every
// PivotDB user already is, so stating them changes nothing: all users are
// superusers that can log in (there is no privilege system yet). Their
// negations are rejected as not supported.
var acceptedRoleOptions = map[string]bool{"login": true, "superuser": true, "inherit": true}

// parseUser parses CREATE/ALTER/DROP USER|ROLE; ok is false when the
// statement is some other CREATE/ALTER/DROP.
func (s *stmtToks) parseUser() (u *UserStmt, ok bool, err error) {
	if !s.isWord(1, "user") && !s.isWord(1, "role") {
		return nil, false, nil
	}
	u = &UserStmt{}
	i := 2
	switch strings.ToLower(s.text(0)) {
	case "create":
		u.Kind = UserCreate
	case "alter":
		u.Kind = UserAlter
	case "drop":
		u.Kind = UserDrop
		if s.isWord(i, "if") && s.isWord(i+1, "exists") {
			u.IfExists = true
			i += 2
		}
		for {
			name, ok := s.objectName(i)
			if !ok {
				return nil, true, s.errAtTok(i)
			}
			u.Names = append(u.Names, name)
			i++
			if !s.isOp(i, ",") {
				break
			}
			i++
		}
		if !s.atEnd(i) {
			return nil, true, s.errAtTok(i)
		}
		return u, true, nil
	default:
		return nil, false, nil
	}
	name, ok := s.objectName(i)
	if !ok {
		return nil, true, s.errAtTok(i)
	}
	u.Names = []string{name}
	i++
	if u.Kind == UserAlter && s.isWord(i, "rename") {
		return nil, true, errAt(sqlerr.FeatureNotSupported, s.start(i), "ALTER USER ... RENAME is not supported yet")
	}
	if s.isWord(i, "with") {
		i++
	}
	nOpts := 0
	for !s.atEnd(i) {
		nOpts++
		switch {
		case s.isWord(i, "password") || s.isWord(i, "encrypted") && s.isWord(i+1, "password"):
			if u.HasPassword {
				return nil, true, errAt(sqlerr.SyntaxError, s.start(i), "conflicting or redundant options")
			}
			if s.isWord(i, "encrypted") {
				i++
			}
			i++
			u.HasPassword = true
			switch {
			case s.isWord(i, "null"):
				u.NullPassword = true
			case s.isKind(i, tkString):
				u.Password = s.strs[s.toks[i].aux]
			default:
				return nil, true, s.errAtTok(i)
			}
			i++
		case s.isKind(i, tkIdent) && acceptedRoleOptions[strings.ToLower(s.text(i))]:
			i++
		case s.isKind(i, tkIdent):
			return nil, true, errAt(sqlerr.FeatureNotSupported, s.start(i),
				"role option %s is not supported yet", strings.ToUpper(s.text(i)))
		default:
			return nil, true, s.errAtTok(i)
		}
	}
	if u.Kind == UserAlter && nOpts == 0 {
		return nil, true, s.errAtTok(i)
	}
	return u, true, nil
}
