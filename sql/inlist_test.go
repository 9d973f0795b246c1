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
