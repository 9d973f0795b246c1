package sql

import (
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Privilege checks of the statements resolved when they run (DDL, GRANT,
// users). Queries and writes are checked while they are bound
// (sql/bind/privileges.go). Every check reads the snapshot of the catalog
// change it belongs to, so it sees the objects as they are changed.

// ownTable fails with 42501 unless the session's role owns t.
func ownTable(acc *catalog.Access, t *catalog.Table) error {
	if acc.Owns(&t.Owned) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of table %s", t.Name)
}

// ownView fails with 42501 unless the session's role owns v.
func ownView(acc *catalog.Access, v *catalog.View) error {
	if acc.Owns(&v.Owned) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of view %s", v.Name)
}

// ownDatabase fails with 42501 unless the session's role owns d.
func ownDatabase(acc *catalog.Access, d *catalog.Database) error {
	if acc.Owns(&d.Owned) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of database %s", d.Name)
}

// mayCreateIn fails with 42501 unless the session's role may create tables
// and views in d: PivotDB has one schema per database (public), whose
// CREATE privilege is the database's, so the error names the schema as
// PostgreSQL's does.
func mayCreateIn(acc *catalog.Access, d *catalog.Database) error {
	if acc.Has(&d.Owned, acl.Database, acl.Create) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for schema public")
}

// access is the session role's access in a snapshot.
func (s *Session) access(snap *catalog.Snapshot) *catalog.Access { return snap.Access(s.user) }

// currentDB is the session's database as snap has it (its owner and ACL
// may have changed since the session started).
func (s *Session) currentDB(snap *catalog.Snapshot) *catalog.Database {
	if d, ok := snap.Database(s.db.Name); ok && d.ID == s.db.ID {
		return d
	}
	return s.db
}
