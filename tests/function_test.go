package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSQLFunctionOverTheWire: a SQL function survives a restart, takes
// parameters of the extended protocol as arguments, and psql's \df lists
// it with its signature.
func TestSQLFunctionOverTheWire(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	if _, err := c.Exec(ctx, "CREATE FUNCTION twice(x integer) RETURNS integer LANGUAGE sql IMMUTABLE STRICT AS 'SELECT x * 2'"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT twice($1)", 21).Scan(&n); err != nil || n != 42 {
		t.Fatalf("twice($1): %d %v", n, err)
	}
	srv.restart()
	c = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	if err := c.QueryRow(ctx, "SELECT twice(5)").Scan(&n); err != nil || n != 10 {
		t.Fatalf("after restart: %d %v", n, err)
	}
	out := runPsql(t, srv, "-c", `\df`)
	if !strings.Contains(out, "twice") || !strings.Contains(out, "x integer") || !strings.Contains(out, "| integer") {
		t.Fatalf("psql \\df:\n%s", out)
	}
}
