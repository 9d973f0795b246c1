package sql

import "testing"

// TestColumnUnique: a column's UNIQUE and an unnamed UNIQUE (cols) are
// unique indexes named as PostgreSQL names the constraints; NULLs do not
// collide.
func TestColumnUnique(t *testing.T) {
	s := testSession(t, testEngine(t))
	query(t, s, "CREATE TABLE uq (z Int64 UNIQUE, a Int64, b Int64, UNIQUE (a, b))")
	query(t, s, "INSERT INTO uq VALUES (1, 1, 1), (NULL, 1, 2), (NULL, NULL, 1), (2, NULL, 1)")
	wantStmtCode(t, s, "INSERT INTO uq VALUES (1, 5, 5)", "23505")
	wantStmtCode(t, s, "INSERT INTO uq VALUES (3, 1, 2)", "23505")
	if got := formatRows(query(t, s, "SELECT count(*) FROM uq")); got != "4" {
		t.Fatalf("rows: %s", got)
	}
	// The indexes exist under those names.
	wantStmtCode(t, s, "CREATE INDEX uq_z_key ON uq (a)", "42P07")
	wantStmtCode(t, s, "CREATE INDEX uq_a_b_key ON uq (a)", "42P07")
	query(t, s, "DROP INDEX uq_z_key")
	query(t, s, "INSERT INTO uq VALUES (1, 7, 7)")
}
