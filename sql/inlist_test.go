package sql

import "testing"

// TestEmptyInList: SQLite's x IN () is FALSE and x NOT IN () TRUE, even
// for a NULL x (the parser spells the list IN (pivot_empty_list())).
func TestEmptyInList(t *testing.T) {
	s := testSession(t, testEngine(t))
	got := formatRows(query(t, s, "SELECT 1 IN (), NULL IN (), 1 NOT IN ( ), NULL NOT IN (), 'a' in ()"))
	if got != "f,f,t,t,f" {
		t.Fatalf("got %s", got)
	}
	wantStmtCode(t, s, "SELECT pivot_empty_list()", "42883")
}

// TestCastSigned: MySQL's CAST targets SIGNED and UNSIGNED, which
// sqllogictest files use, are Int64 and Uint64.
func TestCastSigned(t *testing.T) {
	s := testSession(t, testEngine(t))
	got := formatRows(query(t, s, "SELECT CAST(3.7 AS SIGNED), CAST('-12' AS signed), CAST(5 AS UNSIGNED), CAST(NULL AS SIGNED)"))
	if got != "4,-12,5,NULL" {
		t.Fatalf("got %s", got)
	}
	wantStmtCode(t, s, "SELECT CAST(-1 AS UNSIGNED)", "22003")
}
