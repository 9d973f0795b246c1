package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// GrantTarget is what a GRANT or REVOKE is about.
type GrantTarget uint8

// The targets of GRANT and REVOKE.
const (
	// GrantOnTables is GRANT privileges ON [TABLE] t, ... (tables and views).
	GrantOnTables GrantTarget = iota + 1
	// GrantOnDatabases is GRANT privileges ON DATABASE d, ....
	GrantOnDatabases
	// GrantRoles is GRANT role, ... TO role, ... (membership).
	GrantRoles
)

// Grant is GRANT or REVOKE, in PostgreSQL's syntax (TiDB's grammar has
// MySQL's, with 'user'@'host' and db.* targets):
//
//	GRANT { priv [, ...] | ALL [PRIVILEGES] } ON [TABLE] t [, ...]
//	    TO grantee [, ...] [WITH GRANT OPTION]
//	GRANT { priv [, ...] | ALL [PRIVILEGES] } ON DATABASE d [, ...] TO ...
//	GRANT role [, ...] TO role [, ...]
//	REVOKE [GRANT OPTION FOR] ... FROM grantee [, ...] [CASCADE | RESTRICT]
//
// A grantee is a role name, PUBLIC, CURRENT_USER, CURRENT_ROLE or
// SESSION_USER.
type Grant struct {
	Revoke bool
	Target GrantTarget
	// Privileges are the privilege keywords, upper case; empty with All.
	Privileges []string
	All        bool
	// Objects are the tables (possibly "schema.name"), databases or, for
	// GrantRoles, the granted roles: bare names lowercased, quoted ones as
	// written.
	Objects []string
	// Grantees are role names; "" is PUBLIC, and CURRENT_USER, CURRENT_ROLE
	// and SESSION_USER are kept as CurrentUser.
	Grantees []string
	// WithGrantOption is GRANT's WITH GRANT OPTION; GrantOptionFor is
	// REVOKE GRANT OPTION FOR; Cascade is REVOKE's CASCADE.
	WithGrantOption bool
	GrantOptionFor  bool
	Cascade         bool
}

// CurrentUser stands for CURRENT_USER, CURRENT_ROLE and SESSION_USER among
// Grant.Grantees (a role cannot be named so: the quotes keep it apart).
const CurrentUser = "\x00current_user"

// parseGrant parses GRANT and REVOKE.
func (s *stmtToks) parseGrant() (*Grant, error) {
	g := &Grant{Revoke: strings.EqualFold(s.text(0), "revoke")}
	i := 1
	if g.Revoke && s.isWord(i, "grant") && s.isWord(i+1, "option") && s.isWord(i+2, "for") {
		g.GrantOptionFor = true
		i += 3
	}
	// The privileges (or roles) up to ON, TO or FROM.
	var words []string
	var wordPos []int
	for {
		if s.isWord(i, "all") {
			g.All = true
			i++
			if s.isWord(i, "privileges") {
				i++
			}
		} else {
			name, ok := s.objectName(i)
			if !ok {
				return nil, s.errAtTok(i)
			}
			if s.isOp(i+1, "(") {
				return nil, errAt(sqlerr.FeatureNotSupported, s.start(i+1), "column privileges are not supported yet")
			}
			words = append(words, name)
			wordPos = append(wordPos, i)
			i++
		}
		if !s.isOp(i, ",") {
			break
		}
		i++
	}
	if g.All && len(words) > 0 {
		return nil, s.errAtTok(wordPos[0])
	}
	if !s.isWord(i, "on") {
		// GRANT role TO role / REVOKE role FROM role.
		if g.All || g.GrantOptionFor {
			return nil, s.errAtTok(i)
		}
		g.Target = GrantRoles
		g.Objects = words
		return s.grantees(g, i)
	}
	i++
	g.Target = GrantOnTables
	switch {
	case s.isWord(i, "database"):
		g.Target = GrantOnDatabases
		i++
	case s.isWord(i, "table"):
		i++
	case s.isWord(i, "all") && s.isWord(i+1, "tables"):
		return nil, errAt(sqlerr.FeatureNotSupported, s.start(i), "GRANT ON ALL TABLES IN SCHEMA is not supported yet")
	case s.isWord(i, "schema"), s.isWord(i, "sequence"), s.isWord(i, "function"), s.isWord(i, "procedure"),
		s.isWord(i, "routine"), s.isWord(i, "type"), s.isWord(i, "domain"), s.isWord(i, "language"),
		s.isWord(i, "tablespace"), s.isWord(i, "foreign"), s.isWord(i, "large"), s.isWord(i, "parameter"):
		return nil, errAt(sqlerr.FeatureNotSupported, s.start(i), "privileges on %s objects are not supported yet",
			strings.ToUpper(s.text(i)))
	}
	for k, w := range words {
		up := strings.ToUpper(w)
		switch up {
		case "TEMP", "TEMPORARY", "REFERENCES", "TRIGGER", "MAINTAIN", "USAGE", "EXECUTE":
			return nil, errAt(sqlerr.FeatureNotSupported, s.start(wordPos[k]), "privilege %s is not supported yet", up)
		}
		if !validPrivilege(g.Target, up) {
			return nil, errAt(sqlerr.InvalidGrantOperation, s.start(wordPos[k]), "invalid privilege type %s for %s",
				up, map[GrantTarget]string{GrantOnTables: "relation", GrantOnDatabases: "database"}[g.Target])
		}
		g.Privileges = append(g.Privileges, up)
	}
	for {
		name, ok := s.objectName(i)
		if !ok {
			return nil, s.errAtTok(i)
		}
		i++
		if g.Target == GrantOnTables && s.isOp(i, ".") {
			rest, ok := s.objectName(i + 1)
			if !ok {
				return nil, s.errAtTok(i + 1)
			}
			name += "." + rest
			i += 2
		}
		g.Objects = append(g.Objects, name)
		if !s.isOp(i, ",") {
			break
		}
		i++
	}
	return s.grantees(g, i)
}

// validPrivilege reports whether a privilege keyword applies to the
// target. TEMPORARY is refused separately: PivotDB has no temporary tables.
func validPrivilege(t GrantTarget, p string) bool {
	switch t {
	case GrantOnTables:
		switch p {
		case "SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE":
			return true
		}
	case GrantOnDatabases:
		return p == "CREATE" || p == "CONNECT"
	}
	return false
}

// grantees parses "TO|FROM grantee, ..." and what may follow.
func (s *stmtToks) grantees(g *Grant, i int) (*Grant, error) {
	if !s.isWord(i, map[bool]string{false: "to", true: "from"}[g.Revoke]) {
		return nil, s.errAtTok(i)
	}
	i++
	for {
		switch {
		case s.isWord(i, "public") && g.Target != GrantRoles:
			g.Grantees = append(g.Grantees, "")
		case s.isWord(i, "current_user"), s.isWord(i, "current_role"), s.isWord(i, "session_user"):
			g.Grantees = append(g.Grantees, CurrentUser)
		default:
			name, ok := s.objectName(i)
			if !ok {
				return nil, s.errAtTok(i)
			}
			g.Grantees = append(g.Grantees, name)
		}
		i++
		if !s.isOp(i, ",") {
			break
		}
		i++
	}
	switch {
	case !g.Revoke && s.isWord(i, "with") && s.isWord(i+1, "grant") && s.isWord(i+2, "option") && g.Target != GrantRoles:
		g.WithGrantOption = true
		i += 3
	case !g.Revoke && s.isWord(i, "with") && g.Target == GrantRoles:
		return nil, errAt(sqlerr.FeatureNotSupported, s.start(i), "GRANT role ... WITH options are not supported yet")
	case g.Revoke && s.isWord(i, "cascade"):
		g.Cascade = true
		i++
	case g.Revoke && s.isWord(i, "restrict"):
		i++
	}
	if s.isWord(i, "granted") {
		return nil, errAt(sqlerr.FeatureNotSupported, s.start(i), "GRANTED BY is not supported yet")
	}
	if !s.atEnd(i) {
		return nil, s.errAtTok(i)
	}
	return g, nil
}
