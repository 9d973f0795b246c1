package sql

import (
	"testing"
)

// TestRoleSettingsPrivilegesAndCleanup checks who may store session
// defaults (a database's owner; a role itself, CREATEROLE, superusers for
// roles) and that dropping the database or role drops its settings.
func TestRoleSettingsPrivilegesAndCleanup(t *testing.T) {
	e := testEngine(t)
	admin := testSession(t, e)
	for _, q := range []string{"CREATE USER carol", "CREATE USER dave", "CREATE DATABASE other"} {
		query(t, admin, q)
	}
	carol := asUser(t, e, "carol")
	query(t, carol, "ALTER ROLE carol SET sql_dialect = postgresql")
	denied(t, carol, "ALTER ROLE dave SET sql_dialect = postgresql", "permission denied")
	denied(t, carol, "ALTER DATABASE other SET sql_dialect = postgresql", "must be owner of database other")
	if got := query(t, asUser(t, e, "carol"), "SHOW sql_dialect")[0][0].Text(); got != "postgresql" {
		t.Fatalf("carol's new session: %s", got)
	}
	if got := query(t, carol, "SHOW sql_dialect")[0][0].Text(); got != "yql" {
		t.Fatalf("ALTER ROLE changed the running session: %s", got)
	}

	query(t, admin, "ALTER ROLE dave IN DATABASE other SET sql_dialect = postgresql")
	query(t, admin, "ALTER DATABASE other SET TimeZone = 'Europe/Berlin'")
	s, err := e.NewSession("other", "dave")
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SHOW sql_dialect")[0][0].Text(); got != "postgresql" {
		t.Fatalf("dave in other: %s", got)
	}
	if got := query(t, s, "SHOW TimeZone")[0][0].Text(); got != "Europe/Berlin" {
		t.Fatalf("other's TimeZone: %s", got)
	}
	s.Close()
	rows := query(t, admin, "SELECT d.datname, s.setrole <> 0, s.setconfig::text FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase ORDER BY 2")
	if len(rows) != 2 || rows[0][2].Text() != "{TimeZone=Europe/Berlin}" || rows[1][2].Text() != "{sql_dialect=postgresql}" {
		t.Fatalf("pg_db_role_setting: %v", rows)
	}
	if got := query(t, admin, "SELECT rolconfig::text FROM pg_roles WHERE rolname = 'carol'")[0][0].Text(); got != "{sql_dialect=postgresql}" {
		t.Fatalf("pg_roles.rolconfig: %s", got)
	}
	snap := e.catalog.Snapshot()
	db, _ := snap.Database("other")
	query(t, admin, "DROP DATABASE other")
	query(t, admin, "DROP USER carol")
	snap = e.catalog.Snapshot()
	if len(snap.SessionSettings(db.ID, "dave")) != 0 || len(snap.SessionSettings(0, "carol")) != 0 {
		t.Fatalf("settings outlive their database or role: %v %v",
			snap.SessionSettings(db.ID, "dave"), snap.SessionSettings(0, "carol"))
	}
	if _, err := tryQuery(admin, "ALTER ROLE nobody SET sql_dialect = yql"); err == nil {
		t.Fatal("ALTER ROLE of a missing role succeeded")
	}
	if _, err := tryQuery(admin, "ALTER ROLE dave SET no_such_setting = 1"); err == nil {
		t.Fatal("unknown setting stored")
	}
}
