package sql

import (
	"context"
	"errors"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestSerializableCycleReads: the statements of one protocol cycle are one
// transaction, so at SERIALIZABLE a query that only reads, ahead of a
// write in the same cycle, is among the reads the commit refreshes: a
// change to what it read, committed before the cycle's Sync, fails the
// commit with 40001. At READ COMMITTED the same cycle commits.
func TestSerializableCycleReads(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE oc (d Int32, on_call Bool, PRIMARY KEY (d))")
	ctx := context.Background()
	for _, c := range []struct {
		level string
		fails bool
	}{{"serializable", true}, {"read committed", false}} {
		t.Run(c.level, func(t *testing.T) {
			query(t, a, "DELETE FROM oc")
			query(t, a, "INSERT INTO oc VALUES (1, true), (2, true)")
			query(t, a, "SET default_transaction_isolation = '"+c.level+"'")
			run := func(sql string) {
				t.Helper()
				p, err := a.Prepare(ctx, sql, nil)
				if err != nil {
					t.Fatal(err)
				}
				res, err := a.Execute(ctx, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				for {
					row, err := res.Next(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if row == nil {
						break
					}
				}
				res.Close()
			}
			a.BeginImplicit()
			run("SELECT count(*) FROM oc WHERE on_call")
			query(t, b, "UPDATE oc SET on_call = false WHERE d = 2")
			run("UPDATE oc SET on_call = false WHERE d = 1")
			err := a.Sync()
			var se *sqlerr.Error
			if c.fails != (errors.As(err, &se) && se.Code == sqlerr.SerializationFailure) {
				t.Fatalf("Sync: %v, want 40001: %v", err, c.fails)
			}
		})
	}
}
