package sql

import (
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// runRoleSetting runs ALTER DATABASE d SET/RESET and ALTER ROLE r [IN
// DATABASE d] SET/RESET: it changes the settings stored for new sessions
// (catalog.RoleSetting, through the metadata store like any schema
// change), never the current session's, as in PostgreSQL.
func (s *Session) runRoleSetting(p *bind.RoleSetting) (Result, error) {
	tag := "ALTER ROLE"
	if p.Role == "" && !p.AllRoles {
		tag = "ALTER DATABASE"
	}
	if p.AllRoles {
		return nil, sqlerr.NotSupported("ALTER ROLE ALL ... SET")
	}
	// The value is checked (and normalised) now, so that a session never
	// starts with a value SET would have refused.
	var name, value string
	if p.Set != nil {
		name = p.Set.Name
		if err := sessionvars.NotADefault(name); err != nil {
			return nil, err
		}
		if !p.Set.Default {
			v, err := sessionvars.Validate(name, strings.Join(p.Set.Values, ", "))
			if err != nil {
				return nil, err
			}
			value = v
		} else if !sessionvars.Known(name) {
			return nil, sessionvars.Unknown(name)
		}
	} else if !p.Reset.All {
		name = p.Reset.Name
		if !sessionvars.Known(name) {
			return nil, sessionvars.Unknown(name)
		}
	}
	err := s.ddl(func(ch *catalog.Change, _ *partition.Change, _ *storage.Batch) error {
		snap := ch.Snapshot()
		acc := s.access(snap)
		var dbID uint64
		if p.Database != "" {
			db, ok := snap.Database(p.Database)
			if !ok {
				return sqlerr.New(sqlerr.UndefinedDatabase, "database %q does not exist", p.Database)
			}
			if p.Role == "" {
				// ALTER DATABASE: its owner's (or a superuser's).
				if err := ownDatabase(acc, db); err != nil {
					return err
				}
			}
			dbID = db.ID
		}
		if p.Role != "" {
			u, ok := snap.User(p.Role)
			if !ok {
				return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", p.Role)
			}
			// As in PostgreSQL: a role may change its own defaults, a
			// superuser anyone's, CREATEROLE those of non-superusers.
			if p.Role != s.user && !acc.Superuser() && !(acc.CreateRole() && !u.Superuser) {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied")
			}
		}
		rs := &catalog.RoleSetting{DatabaseID: dbID, Role: p.Role, Settings: map[string]string{}}
		if old, ok := snap.RoleSetting(dbID, p.Role); ok {
			for k, v := range old.Settings {
				rs.Settings[k] = v
			}
		}
		switch {
		case p.Set != nil && !p.Set.Default:
			rs.Settings[name] = value
		case p.Reset != nil && p.Reset.All:
			clear(rs.Settings)
		default:
			// RESET name and SET name TO DEFAULT remove the entry.
			delete(rs.Settings, name)
		}
		ch.PutRoleSetting(rs)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: tag}, nil
}
