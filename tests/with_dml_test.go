package tests

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestWithDMLExtended runs data-modifying WITH queries over the extended
// protocol: parameters reach both the WITH query and the main statement,
// and a prepared statement executed twice runs its INSERT once per
// execution, each execution reading only its own RETURNING rows.
func TestWithDMLExtended(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE TABLE wdx (id int PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	const q = "WITH x AS (INSERT INTO wdx VALUES ($1, $2) RETURNING id, v) SELECT x.id, x.v + $2, (SELECT count(*) FROM wdx) FROM x"
	for i, id := range []int{1, 2} {
		var gotID, sum, count int64
		if err := c.QueryRow(ctx, q, id, 10*id).Scan(&gotID, &sum, &count); err != nil {
			t.Fatal(err)
		}
		// count is the table before the statement: the main query does
		// not see the row its WITH query inserted.
		if gotID != int64(id) || sum != int64(20*id) || count != int64(i) {
			t.Fatalf("execution %d: got (%d, %d, %d), want (%d, %d, %d)", i+1, gotID, sum, count, id, 20*id, i)
		}
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM wdx").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count: %d, %v; want 2", n, err)
	}
	// Unreferenced, the DELETE still runs, once.
	if _, err := c.Exec(ctx, "WITH d AS (DELETE FROM wdx WHERE id = $1 RETURNING id) SELECT 1", 1); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM wdx").Scan(&n); err != nil || n != 1 {
		t.Fatalf("count after DELETE: %d, %v; want 1", n, err)
	}
}
