package sql

import (
	"context"
	"testing"

	"github.com/pivotdb/pivotdb/sql/types"
)

// TestWithDMLOwnTransaction: outside any protocol cycle (no BeginImplicit)
// a statement with data-modifying WITH queries is one transaction of its
// own: committed when it succeeds, nothing of it kept when the main query
// fails after the WITH query wrote.
func TestWithDMLOwnTransaction(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE wo (id int PRIMARY KEY, v int)")
	ctx := context.Background()
	run := func(sql string) ([][]types.Value, error) {
		p, err := s.Prepare(ctx, sql, nil)
		if err != nil {
			return nil, err
		}
		res, err := s.Execute(ctx, p, nil)
		if err != nil {
			return nil, err
		}
		defer res.Close()
		var rows [][]types.Value
		for {
			row, err := res.Next(ctx)
			if err != nil || row == nil {
				return rows, err
			}
			rows = append(rows, append([]types.Value(nil), row...))
		}
	}
	rows, err := run("WITH x AS (INSERT INTO wo VALUES (1, 10), (2, 20) RETURNING id) SELECT count(*), (SELECT count(*) FROM wo) FROM x")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0].Int() != 2 || rows[0][1].Int() != 0 {
		t.Fatalf("got %v, want [[2 0]]", rows)
	}
	if s.txn != nil {
		t.Fatal("the statement's transaction is still open")
	}
	if _, err := run("WITH x AS (INSERT INTO wo VALUES (3, 0) RETURNING v) SELECT CAST('x' || v AS int) FROM x"); err == nil {
		t.Fatal("the cast did not fail")
	}
	if got := query(t, s, "SELECT count(*) FROM wo"); got[0][0].Int() != 2 {
		t.Fatalf("count %v, want 2: the failed statement's INSERT was kept", got[0][0])
	}
}
