package sql

import (
	"testing"
)

// TestImplicitTxnOwnsCycleTableLocks: a protocol cycle takes its table
// locks before its implicit transaction begins (at the first write); the
// transaction then carries the id those locks were taken under, so the
// wait-for graph sees one node for the session. With two ids, a deadlock
// running through a table-lock wait of one and a key-lock wait of the other
// was never detected (the workload of TestReadCommittedNoSerializationFailures
// hung, rarely).
func TestImplicitTxnOwnsCycleTableLocks(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE lo (k Int64, v Int64, PRIMARY KEY (k))")
	s.BeginImplicit()
	for _, sql := range []string{"SELECT * FROM lo", "INSERT INTO lo VALUES (1, 1)"} {
		inCycle(t, s, sql)
	}
	if s.txn == nil || s.relOwner == 0 {
		t.Fatalf("txn %v, table lock owner %d: want both", s.txn, s.relOwner)
	}
	if s.txn.ID() != s.relOwner {
		t.Fatalf("transaction id %d, table locks owned by %d: want one owner", s.txn.ID(), s.relOwner)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT v FROM lo WHERE k = 1"); len(got) != 1 {
		t.Fatalf("%v", got)
	}
}
