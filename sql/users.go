package sql

import (
	"context"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/auth"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// Users: CREATE / ALTER / DROP USER store login roles with SCRAM-SHA-256
// verifiers in the catalog (persisted like tables), which the server's
// SCRAM authentication reads through Engine.PasswordVerifier. There is no
// privilege system yet: every user may do everything, including managing
// users, as a PostgreSQL superuser may.

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
	if u, ok := e.catalog.Snapshot().User(catalog.BootstrapUser); ok && u.Password != "" {
		return nil
	}
	v, err := verifierFor(pw)
	if err != nil {
		return err
	}
	ch := e.catalog.Begin()
	ch.PutUser(&catalog.User{Name: catalog.BootstrapUser, Password: v})
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
		switch u.Kind {
		case parser.UserCreate:
			tag = "CREATE ROLE"
			name := u.Names[0]
			if _, ok := snap.User(name); ok {
				return sqlerr.New(sqlerr.DuplicateObject, "role %q already exists", name)
			}
			ch.PutUser(&catalog.User{Name: name, Password: verifier})
		case parser.UserAlter:
			tag = "ALTER ROLE"
			name := u.Names[0]
			old, ok := snap.User(name)
			if !ok {
				return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
			}
			nu := *old
			if u.HasPassword {
				nu.Password = verifier
			}
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
				ch.DropUser(name)
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
