package sql

import (
	"context"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// GRANT and REVOKE edit the ACLs of tables, views and databases, and the
// memberships of roles, in one catalog change.
//
// Grantors follow PostgreSQL: an owner (or a superuser, acting as the
// owner) grants as the owner; anyone else grants as itself, and only the
// privileges it holds WITH GRANT OPTION. REVOKE removes what the revoking
// role (as the owner, for owners and superusers) granted; revoking a
// grant option that was used to grant others fails with 2BP01 unless
// CASCADE revokes those grants too.

func (s *Session) runGrant(ctx context.Context, p *bind.Grant) (Result, error) {
	g := p.Grant
	tag := "GRANT"
	if g.Revoke {
		tag = "REVOKE"
	}
	if g.Target == parser.GrantRoles {
		tag += " ROLE"
	}
	err := s.ddl(func(ch *catalog.Change, _ *partition.Change, _ *storage.Batch) error {
		snap := ch.Snapshot()
		grantees := make([]string, len(g.Grantees))
		for i, name := range g.Grantees {
			if name == parser.CurrentUser {
				name = s.user
			}
			if _, ok := snap.User(name); !ok && name != "" {
				return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
			}
			if name == "" && g.WithGrantOption {
				return sqlerr.New(sqlerr.InvalidGrantOperation, "grant options can only be granted to roles")
			}
			grantees[i] = name
		}
		if g.Target == parser.GrantRoles {
			return s.grantRoles(ch, g, grantees)
		}
		return s.grantPrivileges(ch, g, grantees)
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: tag}, nil
}

// grantPrivileges is GRANT/REVOKE privileges ON tables, views or databases.
func (s *Session) grantPrivileges(ch *catalog.Change, g *parser.Grant, grantees []string) error {
	snap := ch.Snapshot()
	acc := s.access(snap)
	kind := acl.Table
	if g.Target == parser.GrantOnDatabases {
		kind = acl.Database
	}
	privs := acl.All(kind)
	if !g.All {
		privs = 0
		for _, name := range g.Privileges {
			p, ok := acl.Parse(name)
			if !ok {
				return sqlerr.New(sqlerr.InternalError, "sql: unknown privilege %s", name)
			}
			privs |= p
		}
	}
	for _, name := range g.Objects {
		switch kind {
		case acl.Database:
			d, ok := snap.Database(name)
			if !ok {
				return sqlerr.New(sqlerr.UndefinedDatabase, "database %q does not exist", name)
			}
			nd := *d
			var err error
			if nd.ACL, err = s.editACL(acc, &d.Owned, kind, "database", d.Name, g, privs, grantees); err != nil {
				return err
			}
			ch.PutDatabase(&nd)
		default:
			schema, rel, qualified := strings.Cut(name, ".")
			if !qualified {
				schema, rel = "", name
			}
			if schema != "" && !strings.EqualFold(schema, s.db.Name) && !strings.EqualFold(schema, "public") {
				return sqlerr.NotSupported("granting on a relation of another database (%s)", schema)
			}
			if t, ok := snap.Table(s.db.ID, rel); ok {
				nt := *t
				var err error
				if nt.ACL, err = s.editACL(acc, &t.Owned, kind, "table", t.Name, g, privs, grantees); err != nil {
					return err
				}
				ch.PutTable(&nt)
				continue
			}
			if v, ok := snap.View(s.db.ID, rel); ok {
				nv := *v
				var err error
				if nv.ACL, err = s.editACL(acc, &v.Owned, kind, "view", v.Name, g, privs, grantees); err != nil {
					return err
				}
				ch.PutView(&nv)
				continue
			}
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", rel)
		}
	}
	return nil
}

// editACL returns the ACL of object o (a what called name) after g.
func (s *Session) editACL(acc *catalog.Access, o *catalog.Owned, kind acl.Kind, what, name string,
	g *parser.Grant, privs acl.Privilege, grantees []string) (acl.ACL, error) {
	list := o.EffectiveACL(kind)
	grantor, allowed := o.OwnerName(), privs
	if !acc.Owns(o) {
		held, options := acc.Privileges(o, kind)
		grantor, allowed = acc.Role(), privs&options
		verb := map[bool]string{false: "were granted", true: "could be revoked"}[g.Revoke]
		code := map[bool]string{false: sqlerr.PrivilegeNotGranted, true: sqlerr.PrivilegeNotRevoked}[g.Revoke]
		switch {
		case allowed == 0 && held == 0:
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", what, name)
		case allowed == 0:
			s.notice("WARNING", code, "no privileges %s for %q", verb, name)
			return o.ACL, nil
		case allowed != privs:
			s.notice("WARNING", code, "not all privileges %s for %q", verb, name)
		}
	}
	for _, grantee := range grantees {
		if !g.Revoke {
			list = list.Grant(grantee, grantor, allowed, g.WithGrantOption)
			continue
		}
		var err error
		if list, err = revokeCascade(list, grantee, grantor, allowed, g.GrantOptionFor, g.Cascade, map[[2]string]bool{}); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// revokeCascade revokes privs (their grant option only, with optionOnly)
// that grantor gave grantee, and, with cascade, what grantee granted
// others with the grant option it loses; without cascade such grants are
// an error. seen stops grant cycles.
func revokeCascade(list acl.ACL, grantee, grantor string, privs acl.Privilege, optionOnly, cascade bool, seen map[[2]string]bool) (acl.ACL, error) {
	key := [2]string{grantee, grantor}
	if seen[key] {
		return list, nil
	}
	seen[key] = true
	var lost acl.Privilege
	for _, it := range list {
		if it.Grantee == grantee && it.Grantor == grantor {
			lost = it.GrantOptions & privs
		}
	}
	if lost != 0 {
		deps := list.Dependent(grantee, lost)
		if len(deps) > 0 && !cascade {
			return nil, &sqlerr.Error{Code: sqlerr.DependentObjectsStillExist, Message: "dependent privileges exist",
				Hint: "Use CASCADE to revoke them too."}
		}
		for _, d := range deps {
			var err error
			if list, err = revokeCascade(list, d.Grantee, grantee, lost&d.Privs, false, true, seen); err != nil {
				return nil, err
			}
		}
	}
	return list.Revoke(grantee, grantor, privs, optionOnly), nil
}

// grantRoles is GRANT role TO role and REVOKE role FROM role: members hold
// the privileges (and ownerships) of the roles they are members of.
func (s *Session) grantRoles(ch *catalog.Change, g *parser.Grant, members []string) error {
	for _, role := range g.Objects {
		snap := ch.Snapshot()
		acc := s.access(snap)
		r, ok := snap.User(role)
		if !ok {
			return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", role)
		}
		if !acc.Superuser() && (r.Superuser || !acc.CreateRole()) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to %s role %q",
				map[bool]string{false: "grant", true: "revoke"}[g.Revoke], role)
		}
		for _, name := range members {
			if name == "" {
				return sqlerr.New(sqlerr.UndefinedObject, "role \"public\" does not exist")
			}
			m, _ := ch.Snapshot().User(name)
			nm := *m
			has := slices.Contains(m.MemberOf, role)
			switch {
			case g.Revoke && !has:
				s.notice("WARNING", sqlerr.Warning, "role %q is not a member of role %q", name, role)
				continue
			case g.Revoke:
				nm.MemberOf = slices.DeleteFunc(slices.Clone(m.MemberOf), func(x string) bool { return x == role })
			case has:
				s.notice("NOTICE", sqlerr.SuccessfulCompletion, "role %q is already a member of role %q", name, role)
				continue
			default:
				// A member of itself, directly or through other roles,
				// would make membership a cycle.
				if ch.Snapshot().Access(role).InRole(name) {
					return sqlerr.New(sqlerr.InvalidGrantOperation, "role %q is a member of role %q", role, name)
				}
				nm.MemberOf = append(slices.Clone(m.MemberOf), role)
			}
			ch.PutUser(&nm)
		}
	}
	return nil
}

// alterOwner is ALTER TABLE|VIEW|DATABASE name OWNER TO role. As in
// PostgreSQL, only the owner (or a superuser) may give an object away, and
// only to a role it is a member of; a database's new owner needs CREATEDB
// from a non-superuser. The old owner's grants become the new owner's.
func (s *Session) alterOwner(ctx context.Context, p *bind.AlterOwner) (Result, error) {
	newOwner := p.Owner
	if newOwner == parser.CurrentUser {
		newOwner = s.user
	}
	err := s.ddl(func(ch *catalog.Change, _ *partition.Change, _ *storage.Batch) error {
		snap := ch.Snapshot()
		acc := s.access(snap)
		if _, ok := snap.User(newOwner); !ok {
			return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", newOwner)
		}
		mayGive := func() error {
			if !acc.MemberOf(newOwner) {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "must be able to SET ROLE %q", newOwner)
			}
			return nil
		}
		switch p.Kind {
		case "database":
			d, ok := snap.Database(p.Name)
			if !ok {
				return sqlerr.New(sqlerr.UndefinedDatabase, "database %q does not exist", p.Name)
			}
			if err := ownDatabase(acc, d); err != nil {
				return err
			}
			if err := mayGive(); err != nil {
				return err
			}
			if !acc.CreateDB() {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to change owner of database")
			}
			nd := *d
			nd.Owner, nd.ACL = newOwner, d.ACL.NewOwner(d.OwnerName(), newOwner)
			ch.PutDatabase(&nd)
			return nil
		}
		schema, rel, qualified := strings.Cut(p.Name, ".")
		if !qualified {
			schema, rel = "", p.Name
		}
		if schema != "" && !strings.EqualFold(schema, s.db.Name) && !strings.EqualFold(schema, "public") {
			return sqlerr.NotSupported("changing the owner of a relation of another database (%s)", schema)
		}
		if t, ok := snap.Table(s.db.ID, rel); ok && p.Kind == "table" {
			if err := ownTable(acc, t); err != nil {
				return err
			}
			if err := mayGive(); err != nil {
				return err
			}
			nt := *t
			nt.Owner, nt.ACL = newOwner, t.ACL.NewOwner(t.OwnerName(), newOwner)
			ch.PutTable(&nt)
			return nil
		}
		// ALTER TABLE may name a view or a sequence too, as in PostgreSQL
		// (pg_dump writes ALTER TABLE ... OWNER TO for all three).
		if v, ok := snap.View(s.db.ID, rel); ok && (p.Kind == "view" || p.Kind == "table") {
			if err := ownView(acc, v); err != nil {
				return err
			}
			if err := mayGive(); err != nil {
				return err
			}
			nv := *v
			nv.Owner, nv.ACL = newOwner, v.ACL.NewOwner(v.OwnerName(), newOwner)
			ch.PutView(&nv)
			return nil
		}
		if q, ok := snap.Sequence(s.db.ID, rel); ok && (p.Kind == "sequence" || p.Kind == "table") {
			if !acc.Owns(&q.Owned) {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of sequence %s", q.Name)
			}
			if err := mayGive(); err != nil {
				return err
			}
			nq := *q
			nq.Owner, nq.ACL = newOwner, q.ACL.NewOwner(q.OwnerName(), newOwner)
			ch.PutSequence(&nq)
			return nil
		}
		if snap.RelationExists(s.db.ID, rel) {
			return sqlerr.New(sqlerr.WrongObjectType, "%q is not a %s", rel, p.Kind)
		}
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", rel)
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "ALTER " + strings.ToUpper(p.Kind)}, nil
}
