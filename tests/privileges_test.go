package tests

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPrivilegesOverTheWire: two users with SCRAM passwords; what one
// creates the other may use only once granted; NOLOGIN and a missing
// CONNECT privilege refuse the connection with PostgreSQL's FATAL errors.
func TestPrivilegesOverTheWire(t *testing.T) {
	srv := startServer(t, "--auth", "scram", "--initial-password", "boot")
	admin, err := connectURL(t, srv.url("pivotdb", "boot", "pivotdb", "disable"))
	if err != nil {
		t.Fatalf("%v\n%s", err, srv.log)
	}
	mustExec(t, admin, "CREATE USER alice PASSWORD 'a'")
	mustExec(t, admin, "CREATE USER bob PASSWORD 'b'")
	mustExec(t, admin, "GRANT CREATE ON DATABASE pivotdb TO alice")
	alice, err := connectURL(t, srv.url("alice", "a", "pivotdb", "disable"))
	if err != nil {
		t.Fatal(err)
	}
	bob, err := connectURL(t, srv.url("bob", "b", "pivotdb", "disable"))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, alice, "CREATE TABLE notes (id Int64, body Utf8, PRIMARY KEY (id))")
	mustExec(t, alice, "INSERT INTO notes VALUES (1, 'hello')")

	wantPgError := func(err error, code, msg string) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != code || pe.Message != msg {
			t.Fatalf("got %v, want %s %q", err, code, msg)
		}
	}
	var body string
	err = bob.QueryRow(ctxT(t), "SELECT body FROM notes WHERE id = $1", 1).Scan(&body)
	wantPgError(err, "42501", "permission denied for table notes")
	_, err = bob.Exec(ctxT(t), "ALTER USER alice PASSWORD 'stolen'")
	wantPgError(err, "42501", `permission denied to alter role "alice"`)

	mustExec(t, alice, "GRANT SELECT ON notes TO bob")
	if err := bob.QueryRow(ctxT(t), "SELECT body FROM notes WHERE id = $1", 1).Scan(&body); err != nil || body != "hello" {
		t.Fatalf("bob after GRANT: %q %v", body, err)
	}
	_, err = bob.Exec(ctxT(t), "INSERT INTO notes VALUES (2, 'x')")
	wantPgError(err, "42501", "permission denied for table notes")
	var can bool
	if err := bob.QueryRow(ctxT(t), "SELECT has_table_privilege('notes', 'SELECT')").Scan(&can); err != nil || !can {
		t.Fatalf("has_table_privilege: %v %v", can, err)
	}
	// A user may change its own password.
	mustExec(t, bob, "ALTER USER bob PASSWORD 'b2'")

	mustExec(t, admin, "ALTER USER bob NOLOGIN")
	_, err = connectURL(t, srv.url("bob", "b2", "pivotdb", "disable"))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28000" || pe.Severity != "FATAL" || pe.Message != `role "bob" is not permitted to log in` {
		t.Fatalf("NOLOGIN: %v", err)
	}
	mustExec(t, admin, "ALTER USER bob LOGIN")
	mustExec(t, admin, "CREATE DATABASE private")
	mustExec(t, admin, "REVOKE CONNECT ON DATABASE private FROM PUBLIC")
	_, err = connectURL(t, srv.url("bob", "b2", "private", "disable"))
	if !errors.As(err, &pe) || pe.Code != "42501" || pe.Severity != "FATAL" || pe.Message != `permission denied for database "private"` {
		t.Fatalf("without CONNECT: %v", err)
	}
	if _, err := connectURL(t, srv.url("bob", "b2", "pivotdb", "disable")); err != nil {
		t.Fatalf("bob with LOGIN again: %v", err)
	}
}
