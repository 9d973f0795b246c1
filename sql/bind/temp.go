package bind

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Temporary tables (CREATE TEMP TABLE) live in the catalog like any table,
// under a name private to the session that made them: TempNamePrefix, the
// session's number and "_", then the name as written (TempPrefix). The
// session's lookups try that name first, so a temporary table shadows a
// table of the same name, as PostgreSQL's pg_temp schema does; other
// sessions never resolve it, and no client can name it directly. The
// session drops them when it ends, and the engine drops every one left at
// startup, so a crash leaves none behind.

// TempNamePrefix starts the catalog name of every temporary table.
const TempNamePrefix = "pg_temp_"

// TempPrefix is the catalog-name prefix of session n's temporary tables.
func TempPrefix(n uint64) string { return fmt.Sprintf("%s%d_", TempNamePrefix, n) }

// IsTempName reports whether a catalog name is a temporary table's.
func IsTempName(name string) bool { return strings.HasPrefix(strings.ToLower(name), TempNamePrefix) }

// TempDisplayName is a temporary table's name as its session wrote it.
func TempDisplayName(name string) string {
	if !IsTempName(name) {
		return name
	}
	rest := name[len(TempNamePrefix):]
	if i := strings.IndexByte(rest, '_'); i >= 0 {
		return rest[i+1:]
	}
	return name
}

// tempTable resolves name among the session's temporary tables.
func (a *binder) tempTable(schema, name string) (*catalog.Table, bool) {
	if a.env.TempPrefix == "" || schema != "" && !strings.EqualFold(schema, "pg_temp") {
		return nil, false
	}
	return a.snap.Table(a.env.Database.ID, a.env.TempPrefix+name)
}

// tempCreate gives a CREATE TABLE its catalog name: the session's private
// one for CREATE TEMP TABLE. Names that look like a temporary table's are
// reserved.
func (a *binder) tempCreate(t *catalog.Table) error {
	if IsTempName(t.Name) {
		return sqlerr.New(sqlerr.ReservedName, "table name %q is reserved: it starts with %q", t.Name, TempNamePrefix)
	}
	if !a.stmt.Temp {
		return nil
	}
	if a.env.TempPrefix == "" {
		return sqlerr.NotSupported("temporary tables outside a session")
	}
	t.Name = a.env.TempPrefix + t.Name
	return nil
}
