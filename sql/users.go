package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/auth"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// Users: CREATE / ALTER / DROP USER (or ROLE) store roles with their
// attributes and SCRAM-SHA-256 verifiers in the catalog (persisted like
// tables), which the server's SCRAM authentication reads through
// Engine.PasswordVerifier.
//
// Who may do what, as in PostgreSQL: CREATE ROLE needs CREATEROLE (and
// SUPERUSER to create a superuser, CREATEDB to give CREATEDB); ALTER ROLE
// needs SUPERUSER, except that a role may change its own password; DROP
// ROLE needs CREATEROLE (SUPERUSER for a superuser), and refuses a role
// that still owns objects or holds privileges (2BP01). The bootstrap user
// keeps SUPERUSER and LOGIN, so that someone can always log in and
// administer the server.

// PasswordVerifier returns user's stored SCRAM-SHA-256 verifier; ok is
// false when the user does not exist or has no password.
func (e *Engine) PasswordVerifier(user string) (string, bool) {
	u, ok := e.catalog.Snapshot().User(user)
	if !ok || u.Password == "" {
		return "", false
	}
	return u.Password, true
}

// HasPasswords reports whether any user has a password, i.e. whether
// anyone could log in under SCRAM authentication.
func (e *Engine) HasPasswords() bool {
	for _, u := range e.catalog.Snapshot().Users() {
		if u.Password != "" {
			return true
		}
	}
	return false
}

// setInitialPassword gives the bootstrap user its first password
// (Options.InitialPassword) when it has none. A password already set (by
// an earlier start or by ALTER USER) is kept: the flag is for bootstrap, not
// a way to reset a password behind the users' backs.
func (e *Engine) setInitialPassword(pw string) error {
	if pw == "" {
		return nil
	}
	u, ok := e.catalog.Snapshot().User(catalog.BootstrapUser)
	if ok && u.Password != "" {
		return nil
	}
	v, err := verifierFor(pw)
	if err != nil {
		return err
	}
	ch := e.catalog.Begin()
	nu := catalog.User{Name: catalog.BootstrapUser, Superuser: true, CreateDB: true, CreateRole: true}
	if ok {
		nu = *u
	}
	nu.Password = v
	ch.PutUser(&nu)
	b := e.meta.NewBatch()
	defer b.Close()
	if err := ch.Write(b); err != nil {
		ch.Abort()
		return err
	}
	if err := b.Commit(); err != nil {
		ch.Abort()
		return err
	}
	ch.Install()
	return nil
}

// verifierFor turns the PASSWORD of CREATE/ALTER USER into what is stored:
// a SCRAM-SHA-256 verifier given as such is kept (after checking it), any
// other string is hashed as a password.
func verifierFor(pw string) (string, error) {
	if auth.IsVerifier(pw) {
		if _, err := auth.Parse(pw); err != nil {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "%s", err.Error())
		}
		return pw, nil
	}
	v, err := auth.HashPassword(pw)
	if err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "hashing password: %v", err)
	}
	return v, nil
}

func (s *Session) runUser(ctx context.Context, p *bind.User) (Result, error) {
	u := p.UserStmt
	// Hash before taking the catalog lock: PBKDF2 takes milliseconds.
	var verifier string
	if u.HasPassword && !u.NullPassword {
		if u.Password == "" {
			s.notice("NOTICE", sqlerr.SuccessfulCompletion, "empty string is not a valid password, clearing password")
		} else {
			v, err := verifierFor(u.Password)
			if err != nil {
				return nil, err
			}
			verifier = v
		}
	}
	var tag string
	err := s.ddl(func(ch *catalog.Change, _ *partition.Change, _ *storage.Batch) error {
		snap := ch.Snapshot()
		acc := s.access(snap)
		switch u.Kind {
		case parser.UserCreate:
			tag = "CREATE ROLE"
			name := u.Names[0]
			if err := mayCreateRole(acc, u); err != nil {
				return err
			}
			if _, ok := snap.User(name); ok {
				return sqlerr.New(sqlerr.DuplicateObject, "role %q already exists", name)
			}
			nu := catalog.User{Name: name, Password: verifier, NoLogin: u.Role}
			setAttributes(&nu, u)
			ch.PutUser(&nu)
		case parser.UserAlter:
			tag = "ALTER ROLE"
			name := u.Names[0]
			old, ok := snap.User(name)
			if !ok {
				return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
			}
			if err := mayAlterRole(acc, u, old); err != nil {
				return err
			}
			nu := *old
			if u.HasPassword {
				nu.Password = verifier
			}
			setAttributes(&nu, u)
			ch.PutUser(&nu)
		case parser.UserDrop:
			tag = "DROP ROLE"
			for _, name := range u.Names {
				if _, ok := snap.User(name); !ok {
					if u.IfExists {
						s.notice("NOTICE", sqlerr.SuccessfulCompletion, "role %q does not exist, skipping", name)
						continue
					}
					return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
				}
				switch name {
				case s.user:
					return sqlerr.New(sqlerr.ObjectInUse, "current user cannot be dropped")
				case catalog.BootstrapUser:
					return sqlerr.New(sqlerr.ObjectInUse, "role %q cannot be dropped because it is the built-in user", name)
				}
				if err := dropRole(ch, acc, name); err != nil {
					return err
				}
				ch.DropRoleSettings(0, name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: tag}, nil
}

// setAttributes applies the role attributes the statement gave.
func setAttributes(nu *catalog.User, u *parser.UserStmt) {
	if u.Superuser != nil {
		nu.Superuser = *u.Superuser
	}
	if u.Login != nil {
		nu.NoLogin = !*u.Login
	}
	if u.CreateDB != nil {
		nu.CreateDB = *u.CreateDB
	}
	if u.CreateRole != nil {
		nu.CreateRole = *u.CreateRole
	}
}

// mayCreateRole checks CREATE ROLE's privileges.
func mayCreateRole(acc *catalog.Access, u *parser.UserStmt) error {
	denied := func(detail string) error {
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: "permission denied to create role", Detail: detail}
	}
	switch {
	case acc.Superuser():
		return nil
	case !acc.CreateRole():
		return denied("Only roles with the CREATEROLE attribute may create roles.")
	case u.Superuser != nil && *u.Superuser:
		return denied("Only roles with the SUPERUSER attribute may create roles with the SUPERUSER attribute.")
	case u.CreateDB != nil && *u.CreateDB && !acc.CreateDB():
		return denied("Only roles with the CREATEDB attribute may create roles with the CREATEDB attribute.")
	}
	return nil
}

// mayAlterRole checks ALTER ROLE's privileges: a superuser may alter any
// role (but the bootstrap user keeps SUPERUSER and LOGIN), any role its
// own password.
func mayAlterRole(acc *catalog.Access, u *parser.UserStmt, old *catalog.User) error {
	attrs := u.Superuser != nil || u.Login != nil || u.CreateDB != nil || u.CreateRole != nil
	switch {
	case old.Name == catalog.BootstrapUser && (u.Superuser != nil && !*u.Superuser || u.Login != nil && !*u.Login):
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: fmt.Sprintf("permission denied to alter role %q", old.Name),
			Detail: "The bootstrap user must have the SUPERUSER and LOGIN attributes."}
	case acc.Superuser():
		return nil
	case old.Name == acc.Role() && !attrs:
		return nil
	}
	detail := "Only roles with the SUPERUSER attribute may alter other roles."
	if old.Name == acc.Role() {
		detail = "Only roles with the SUPERUSER attribute may change role attributes; a role may change its own password."
	}
	return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: fmt.Sprintf("permission denied to alter role %q", old.Name),
		Detail: detail}
}

// dropRole removes a role after checking DROP ROLE's privileges and what
// depends on the role; memberships in it are removed with it, as
// PostgreSQL does.
func dropRole(ch *catalog.Change, acc *catalog.Access, name string) error {
	snap := ch.Snapshot()
	u, _ := snap.User(name)
	if !acc.Superuser() && (u.Superuser || !acc.CreateRole()) {
		return &sqlerr.Error{Code: sqlerr.InsufficientPrivilege, Message: fmt.Sprintf("permission denied to drop role %q", name),
			Detail: "Only roles with the CREATEROLE attribute may drop roles, and only superusers may drop superusers."}
	}
	var deps []string
	check := func(o *catalog.Owned, what, obj string) {
		if o.OwnerName() == name {
			deps = append(deps, "owner of "+what+" "+obj)
		} else if o.ACL.Mentions(name) {
			deps = append(deps, "privileges for "+what+" "+obj)
		}
	}
	for _, d := range snap.Databases() {
		check(&d.Owned, "database", d.Name)
		for _, t := range snap.Tables(d.ID) {
			check(&t.Owned, "table", t.Name)
		}
		for _, v := range snap.Views(d.ID) {
			check(&v.Owned, "view", v.Name)
		}
	}
	if len(deps) > 0 {
		return &sqlerr.Error{Code: sqlerr.DependentObjectsStillExist,
			Message: fmt.Sprintf("role %q cannot be dropped because some objects depend on it", name),
			Detail:  strings.Join(deps, "\n")}
	}
	for _, m := range snap.Users() {
		if slices.Contains(m.MemberOf, name) {
			nm := *m
			nm.MemberOf = slices.DeleteFunc(slices.Clone(m.MemberOf), func(x string) bool { return x == name })
			ch.PutUser(&nm)
		}
	}
	ch.DropUser(name)
	return nil
}
