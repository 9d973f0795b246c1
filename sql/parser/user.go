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

// UserStmt is CREATE, ALTER or DROP USER or ROLE (the same but for the
// default of LOGIN: CREATE USER can log in, CREATE ROLE cannot).
type UserStmt struct {
	Kind UserKind
	// Role is set for the ROLE spelling.
	Role bool
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
	// The role attributes given ([NO]SUPERUSER, [NO]LOGIN, [NO]CREATEDB,
	// [NO]CREATEROLE); nil where the statement did not say.
	Superuser, Login, CreateDB, CreateRole *bool
}

// roleAttribute returns the attribute field a role option sets and the
// value it sets it to. INHERIT is accepted because it is what every role
// does (holds the privileges of the roles it is a member of); NOINHERIT is
// refused as not supported.
func (u *UserStmt) roleAttribute(word string) (field **bool, value, ok bool) {
	w := strings.ToLower(word)
	value = !strings.HasPrefix(w, "no")
	if !value && w != "nosuperuser" && w != "nologin" && w != "nocreatedb" && w != "nocreaterole" {
		return nil, false, false
	}
	switch strings.TrimPrefix(w, "no") {
	case "superuser":
		return &u.Superuser, value, true
	case "login":
		return &u.Login, value, true
	case "createdb":
		return &u.CreateDB, value, true
	case "createrole":
		return &u.CreateRole, value, true
	}
	return nil, false, false
}

// parseUser parses CREATE/ALTER/DROP USER|ROLE; ok is false when the
// statement is some other CREATE/ALTER/DROP.
func (s *stmtToks) parseUser() (u *UserStmt, ok bool, err error) {
	if !s.isWord(1, "user") && !s.isWord(1, "role") {
		return nil, false, nil
	}
	u = &UserStmt{Role: s.isWord(1, "role")}
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
		case s.isWord(i, "inherit"):
			i++
		case s.isWord(i, "noreplication"), s.isWord(i, "nobypassrls"):
			// What every PivotDB role is: there is no replication
			// protocol and no row-level security to bypass. pg_dumpall
			// writes both for every role; REPLICATION and BYPASSRLS
			// stay 0A000.
			i++
		case s.isKind(i, tkIdent):
			field, value, ok := u.roleAttribute(s.text(i))
			if !ok {
				return nil, true, errAt(sqlerr.FeatureNotSupported, s.start(i),
					"role option %s is not supported yet", strings.ToUpper(s.text(i)))
			}
			if *field != nil {
				return nil, true, errAt(sqlerr.SyntaxError, s.start(i), "conflicting or redundant options")
			}
			*field = &value
			i++
		default:
			return nil, true, s.errAtTok(i)
		}
	}
	if u.Kind == UserAlter && nOpts == 0 {
		return nil, true, s.errAtTok(i)
	}
	return u, true, nil
}
