package sql

import (
	"context"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// asUser opens a session of the default database for user.
func asUser(t testing.TB, e *Engine, user string) *Session {
	t.Helper()
	s, err := e.NewSession("pivotdb", user)
	if err != nil {
		t.Fatalf("session for %s: %v", user, err)
	}
	t.Cleanup(s.Close)
	return s
}

// denied runs sql and wants 42501 with the message.
func denied(t *testing.T, s *Session, sql, msg string) {
	t.Helper()
	_, err := tryQuery(s, sql)
	e := sqlerr.As(err)
	if err == nil || e.Code != sqlerr.InsufficientPrivilege || !strings.Contains(e.Message, msg) {
		t.Fatalf("%s: got %v, want 42501 %q", sql, err, msg)
	}
}

// boolOf runs a query returning one boolean.
func boolOf(t *testing.T, s *Session, sql string) bool {
	t.Helper()
	rows := query(t, s, sql)
	return rows[0][0].Bool()
}

func TestTablePrivileges(t *testing.T) {
	e := testEngine(t)
	admin := testSession(t, e)
	query(t, admin, "CREATE USER alice")
	query(t, admin, "CREATE USER bob")
	query(t, admin, "CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, admin, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	query(t, admin, "CREATE TABLE u (k Int64, PRIMARY KEY (k))")
	alice := asUser(t, e, "alice")

	for _, q := range []string{
		"SELECT * FROM t",
		"SELECT count(*) FROM u JOIN t ON u.k = t.k",
		"SELECT 1 WHERE EXISTS (SELECT 1 FROM t)",
		"SELECT * FROM (SELECT k FROM t) AS d",
		"INSERT INTO t VALUES (3, 'c')",
		"UPSERT INTO t (k, v) VALUES (3, 'c')",
		"UPDATE t SET v = 'x'",
		"DELETE FROM t WHERE k = 1",
		"EXPLAIN SELECT * FROM t",
	} {
		denied(t, alice, q, "permission denied for table ")
	}
	denied(t, alice, "CREATE INDEX t_v ON t (v)", "must be owner of table t")
	denied(t, alice, "DROP TABLE t", "must be owner of table t")
	denied(t, alice, "ALTER TABLE t SET (AUTO_PARTITIONING_BY_SIZE = DISABLED)", "must be owner of table t")
	denied(t, alice, "CREATE TABLE mine (k Int64, PRIMARY KEY (k))", "permission denied for schema public")
	// The system catalogs are readable by every role.
	query(t, alice, "SELECT count(*) FROM pg_catalog.pg_class")
	query(t, alice, "SELECT count(*) FROM sys.partitions")

	if boolOf(t, alice, "SELECT has_table_privilege('t', 'SELECT')") {
		t.Fatal("has_table_privilege before GRANT")
	}
	query(t, admin, "GRANT SELECT ON t TO alice")
	if rows := query(t, alice, "SELECT v FROM t ORDER BY k"); len(rows) != 2 {
		t.Fatalf("alice reads %d rows", len(rows))
	}
	if !boolOf(t, alice, "SELECT has_table_privilege('t', 'SELECT')") ||
		boolOf(t, alice, "SELECT has_table_privilege('alice', 't', 'INSERT')") ||
		!boolOf(t, admin, "SELECT has_table_privilege('alice', 't', 'insert, select')") {
		t.Fatal("has_table_privilege after GRANT SELECT")
	}
	// SELECT alone does not allow writes; UPDATE without SELECT allows an
	// UPDATE that reads no column, not one whose WHERE does.
	denied(t, alice, "INSERT INTO t VALUES (3, 'c')", "permission denied for table t")
	query(t, admin, "REVOKE SELECT ON t FROM alice")
	query(t, admin, "GRANT UPDATE ON t TO alice")
	query(t, alice, "UPDATE t SET v = 'z'")
	denied(t, alice, "UPDATE t SET v = 'y' WHERE k = 1", "permission denied for table t")
	denied(t, alice, "UPDATE t SET v = v || 'y'", "permission denied for table t")
	// UPSERT overwrites: INSERT and UPDATE.
	query(t, admin, "GRANT INSERT ON t TO alice")
	query(t, alice, "UPSERT INTO t (k, v) VALUES (5, 'e')")
	query(t, alice, "INSERT INTO t VALUES (6, 'f')")
	query(t, admin, "REVOKE UPDATE ON t FROM alice")
	denied(t, alice, "UPSERT INTO t (k, v) VALUES (5, 'e')", "permission denied for table t")

	// ALL, PUBLIC and the ACL's text form.
	query(t, admin, "GRANT ALL PRIVILEGES ON t TO bob")
	query(t, admin, "GRANT SELECT ON t TO PUBLIC")
	rows := query(t, admin, "SELECT relacl::text FROM pg_catalog.pg_class WHERE relname = 't'")
	if got := rows[0][0].Str(); got != "{pivotdb=arwdD/pivotdb,alice=a/pivotdb,bob=arwdD/pivotdb,=r/pivotdb}" {
		t.Fatalf("relacl %s", got)
	}
	if rows := query(t, admin, "SELECT relacl FROM pg_catalog.pg_class WHERE relname = 'u'"); !rows[0][0].IsNull() {
		t.Fatalf("relacl of a table never granted on: %v", rows[0][0])
	}
	query(t, alice, "SELECT * FROM t") // through PUBLIC
	query(t, admin, "REVOKE ALL ON t FROM PUBLIC, alice")
	denied(t, alice, "SELECT * FROM t", "permission denied for table t")

	// A prepared statement is checked again after a REVOKE.
	query(t, admin, "GRANT SELECT ON t TO alice")
	p, err := alice.Prepare(context.Background(), "SELECT k FROM t", nil)
	if err != nil {
		t.Fatal(err)
	}
	query(t, admin, "REVOKE SELECT ON t FROM alice")
	if _, err := alice.Execute(context.Background(), p, nil); sqlerr.As(err).Code != sqlerr.InsufficientPrivilege {
		t.Fatalf("prepared statement after REVOKE: %v", err)
	}
}

func TestOwnersAndCreate(t *testing.T) {
	e := testEngine(t)
	admin := testSession(t, e)
	query(t, admin, "CREATE USER alice")
	query(t, admin, "CREATE USER bob")
	query(t, admin, "GRANT CREATE ON DATABASE pivotdb TO alice, bob")
	alice := asUser(t, e, "alice")
	bob := asUser(t, e, "bob")
	query(t, alice, "CREATE TABLE a (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, alice, "INSERT INTO a VALUES (1, 10)")
	query(t, alice, "CREATE INDEX a_v ON a (v)")
	if rows := query(t, admin, "SELECT tableowner FROM pg_catalog.pg_tables WHERE tablename = 'a'"); rows[0][0].Str() != "alice" {
		t.Fatalf("owner %v", rows[0][0])
	}
	denied(t, bob, "SELECT * FROM a", "permission denied for table a")
	denied(t, bob, "DROP INDEX a_v", "must be owner of index a_v")
	denied(t, bob, "DROP TABLE a", "must be owner of table a")
	// A view reads its tables with its owner's privileges: bob may read a
	// through alice's view once alice grants him the view only.
	query(t, alice, "CREATE VIEW av AS SELECT k FROM a")
	denied(t, bob, "SELECT * FROM av", "permission denied for view av")
	query(t, alice, "GRANT SELECT ON av TO bob")
	if rows := query(t, bob, "SELECT * FROM av"); len(rows) != 1 {
		t.Fatalf("bob reads %d rows through the view", len(rows))
	}
	denied(t, bob, "SELECT * FROM a", "permission denied for table a")
	denied(t, bob, "DROP VIEW av", "must be owner of view av")
	// A view of bob's over alice's table gives bob nothing he lacks.
	query(t, bob, "CREATE VIEW bv AS SELECT 1 AS one")
	query(t, alice, "GRANT SELECT ON a TO bob")
	query(t, bob, "DROP VIEW bv")
	query(t, bob, "CREATE VIEW bv AS SELECT k FROM a")
	query(t, alice, "REVOKE SELECT ON a FROM bob")
	denied(t, bob, "SELECT * FROM bv", "permission denied for table a")

	// Grant options: bob may pass on what he holds WITH GRANT OPTION.
	query(t, alice, "GRANT SELECT, INSERT ON a TO bob WITH GRANT OPTION")
	query(t, admin, "CREATE USER carol")
	query(t, bob, "GRANT SELECT ON a TO carol")
	carol := asUser(t, e, "carol")
	query(t, carol, "SELECT * FROM a")
	// carol holds SELECT without the grant option: PostgreSQL warns.
	carol.TakeNotices()
	query(t, carol, "GRANT SELECT ON a TO bob")
	if n := carol.TakeNotices(); len(n) != 1 || n[0].Code != sqlerr.PrivilegeNotGranted {
		t.Fatalf("notices %v", n)
	}
	query(t, admin, "CREATE USER dave")
	dave := asUser(t, e, "dave")
	denied(t, dave, "GRANT SELECT ON a TO dave", "permission denied for table a")
	_, err := tryQuery(admin, "REVOKE SELECT ON a FROM bob")
	wantCode(t, err, "2BP01")
	query(t, alice, "REVOKE SELECT ON a FROM bob CASCADE")
	denied(t, carol, "SELECT * FROM a", "permission denied for table a")
	rows := query(t, admin, "SELECT relacl::text FROM pg_catalog.pg_class WHERE relname = 'a'")
	if got := rows[0][0].Str(); got != "{alice=arwdD/alice,bob=a*/alice}" {
		t.Fatalf("relacl after CASCADE: %s", got)
	}

	// Databases: CREATEDB, ownership, CONNECT.
	denied(t, alice, "CREATE DATABASE adb", "permission denied to create database")
	query(t, admin, "ALTER USER alice CREATEDB")
	query(t, alice, "CREATE DATABASE adb")
	denied(t, bob, "DROP DATABASE adb", "must be owner of database adb")
	query(t, alice, "REVOKE CONNECT ON DATABASE adb FROM PUBLIC")
	if _, err := e.NewSession("adb", "bob"); sqlerr.As(err).Code != sqlerr.InsufficientPrivilege {
		t.Fatalf("bob connected without CONNECT: %v", err)
	}
	if !boolOf(t, alice, "SELECT has_database_privilege('adb', 'CONNECT')") || boolOf(t, alice, "SELECT has_database_privilege('bob', 'adb', 'connect')") {
		t.Fatal("has_database_privilege")
	}
	rows = query(t, admin, "SELECT datacl::text FROM pg_catalog.pg_database WHERE datname = 'adb'")
	if got := rows[0][0].Str(); got != "{alice=Cc/alice}" {
		t.Fatalf("datacl %s", got)
	}
	query(t, alice, "GRANT CONNECT ON DATABASE adb TO bob")
	// A session sees grants on its database made after it started.
	if boolOf(t, bob, "SELECT has_schema_privilege('public', 'CREATE')") != true {
		t.Fatal("bob has CREATE on pivotdb")
	}
	query(t, admin, "REVOKE CREATE ON DATABASE pivotdb FROM bob")
	if boolOf(t, bob, "SELECT has_schema_privilege('public', 'CREATE')") {
		t.Fatal("has_schema_privilege did not see the REVOKE")
	}
	s, err := e.NewSession("adb", "bob")
	if err != nil {
		t.Fatal(err)
	}
	denied(t, s, "CREATE TABLE x (k Int64, PRIMARY KEY (k))", "permission denied for schema public")
	if boolOf(t, s, "SELECT has_schema_privilege('public', 'CREATE')") || !boolOf(t, s, "SELECT has_schema_privilege('public', 'USAGE')") {
		t.Fatal("has_schema_privilege")
	}
	s.Close()

	// A role that owns objects or holds privileges cannot be dropped;
	// giving its objects away lets it go.
	_, err = tryQuery(admin, "DROP USER alice")
	wantCode(t, err, "2BP01")
	denied(t, bob, "ALTER TABLE a OWNER TO bob", "must be owner of table a")
	denied(t, alice, "ALTER TABLE a OWNER TO bob", `must be able to SET ROLE "bob"`)
	query(t, admin, "ALTER TABLE a OWNER TO bob")
	rows = query(t, admin, "SELECT relacl::text FROM pg_catalog.pg_class WHERE relname = 'a'")
	if got := rows[0][0].Str(); got != "{bob=a*rwdD/bob}" {
		t.Fatalf("relacl after OWNER TO: %s", got)
	}
	query(t, bob, "DROP INDEX a_v")
	query(t, admin, "ALTER VIEW av OWNER TO bob")
	query(t, admin, "ALTER DATABASE adb OWNER TO pivotdb")
	_, err = tryQuery(admin, "ALTER VIEW a OWNER TO bob")
	wantCode(t, err, "42809")
	query(t, admin, "REVOKE CREATE ON DATABASE pivotdb FROM alice")
	query(t, admin, "REVOKE CONNECT ON DATABASE adb FROM alice")
	query(t, admin, "DROP USER alice")
}

func TestRoleAttributes(t *testing.T) {
	dir := t.TempDir()
	e := openAt(t, dir, Options{})
	admin := testSession(t, e)
	query(t, admin, "CREATE USER alice PASSWORD 'a'")
	query(t, admin, "CREATE ROLE readers")
	query(t, admin, "CREATE USER boss SUPERUSER CREATEDB")
	alice := asUser(t, e, "alice")

	// CREATE ROLE does not LOGIN unless told; NOLOGIN refuses sessions.
	for _, u := range []string{"readers", "nobody"} {
		_, err := e.NewSession("pivotdb", u)
		if e := sqlerr.As(err); err == nil || e.Code != sqlerr.InvalidAuthorizationSpec || !e.Fatal {
			t.Fatalf("%s logged in: %v", u, err)
		}
	}
	if _, err := e.NewSession("pivotdb", "readers"); !strings.Contains(err.Error(), `role "readers" is not permitted to log in`) {
		t.Fatalf("NOLOGIN error: %v", err)
	}

	// Only a superuser alters roles; a role may change its own password.
	denied(t, alice, "ALTER USER pivotdb PASSWORD 'mine'", `permission denied to alter role "pivotdb"`)
	denied(t, alice, "ALTER USER alice SUPERUSER", `permission denied to alter role "alice"`)
	query(t, alice, "ALTER USER alice PASSWORD 'b'")
	denied(t, alice, "CREATE USER x", "permission denied to create role")
	denied(t, alice, "DROP USER boss", `permission denied to drop role "boss"`)
	_, err := tryQuery(admin, "ALTER USER pivotdb NOSUPERUSER")
	wantCode(t, err, "42501")

	// CREATEROLE creates roles, but no superusers.
	query(t, admin, "ALTER USER alice CREATEROLE")
	query(t, alice, "CREATE USER helper")
	denied(t, alice, "CREATE USER x SUPERUSER", "permission denied to create role")
	denied(t, alice, "ALTER USER helper PASSWORD 'h'", `permission denied to alter role "helper"`)

	// Membership: readers' privileges are its members'.
	query(t, admin, "CREATE TABLE t (k Int64, PRIMARY KEY (k))")
	query(t, admin, "GRANT SELECT ON t TO readers")
	helper := asUser(t, e, "helper")
	denied(t, helper, "SELECT * FROM t", "permission denied for table t")
	query(t, alice, "GRANT readers TO helper")
	query(t, helper, "SELECT * FROM t")
	if !boolOf(t, helper, "SELECT pg_has_role('readers', 'MEMBER')") || boolOf(t, helper, "SELECT pg_has_role('boss', 'MEMBER')") {
		t.Fatal("pg_has_role")
	}
	_, err = tryQuery(admin, "GRANT helper TO readers")
	wantCode(t, err, "0LP01")
	if rows := query(t, admin, "SELECT count(*) FROM pg_catalog.pg_auth_members"); rows[0][0].Int() != 1 {
		t.Fatalf("pg_auth_members has %v rows", rows[0][0])
	}

	// pg_roles shows the attributes; verifiers are for superusers only.
	rows := query(t, admin, "SELECT rolname, rolsuper, rolcanlogin, rolcreatedb, rolcreaterole FROM pg_catalog.pg_roles ORDER BY rolname")
	var got []string
	for _, r := range rows {
		got = append(got, r[0].Str()+":"+r[1].String()+r[2].String()+r[3].String()+r[4].String())
	}
	// pg_database_owner, PostgreSQL's built-in role, owns schema public.
	want := "alice:ftft boss:tttf helper:ftff pg_database_owner:ffff pivotdb:tttt readers:ffff"
	if strings.Join(got, " ") != want {
		t.Fatalf("pg_roles\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	denied(t, alice, "SELECT rolpassword FROM pg_catalog.pg_authid", "permission denied for table pg_authid")
	denied(t, alice, "SELECT passwd FROM pg_shadow", "permission denied for table pg_shadow")
	if rows := query(t, admin, "SELECT rolpassword FROM pg_catalog.pg_authid WHERE rolname = 'alice'"); !strings.HasPrefix(rows[0][0].Str(), "SCRAM-SHA-256$") {
		t.Fatalf("pg_authid verifier %v", rows[0][0])
	}
	if boolOf(t, alice, "SELECT has_table_privilege('pg_authid', 'SELECT')") || !boolOf(t, alice, "SELECT has_table_privilege('pg_class', 'SELECT')") {
		t.Fatal("has_table_privilege on system relations")
	}
	if v, _ := alice.vars.Get("is_superuser"); v != "off" {
		t.Fatalf("alice's is_superuser %q", v)
	}

	// Attributes, memberships and grants persist.
	alice.Close()
	helper.Close()
	admin.Close()
	e.Close()
	e = openAt(t, dir, Options{})
	defer e.Close()
	helper = asUser(t, e, "helper")
	query(t, helper, "SELECT * FROM t")
	if _, err := e.NewSession("pivotdb", "readers"); err == nil {
		t.Fatal("readers logged in after restart")
	}
	admin = testSession(t, e)
	if !boolOf(t, admin, "SELECT rolcreaterole FROM pg_catalog.pg_roles WHERE rolname = 'alice'") {
		t.Fatal("CREATEROLE lost across restart")
	}
	// Dropping a role removes its memberships.
	query(t, admin, "REVOKE SELECT ON t FROM readers")
	query(t, admin, "DROP ROLE readers")
	if rows := query(t, admin, "SELECT count(*) FROM pg_catalog.pg_auth_members"); rows[0][0].Int() != 0 {
		t.Fatal("membership outlived its role")
	}
}
