package tests

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestTextRefusesNUL sends NUL and invalid UTF-8 in text parameters over
// the wire, in pgx's text and binary encodings: each fails with 22021 as
// in PostgreSQL, and bytea parameters keep any byte.
func TestTextRefusesNUL(t *testing.T) {
	srv := startServer(t, "--unsafe-no-sync", "--balancer-interval", "0", "--ttl-run-interval", "0")
	ctx := context.Background()
	setup := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := setup.Exec(ctx, "CREATE TABLE nul (k Int64, s Utf8, b String, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeCacheStatement} {
		c := srv.connect(t, mode)
		for _, bad := range []string{"abc\x00def", "\xff", "a\xc3"} {
			_, err := c.Exec(ctx, "INSERT INTO nul VALUES (1, $1, NULL)", bad)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "22021" {
				t.Errorf("mode %v, text %q: %v, want 22021", mode, bad, err)
			}
		}
		if _, err := c.Exec(ctx, "UPSERT INTO nul VALUES (2, 'ok', $1)", []byte("a\x00b")); err != nil {
			t.Errorf("mode %v, bytea with NUL: %v", mode, err)
		}
	}
	var n int
	if err := setup.QueryRow(ctx, "SELECT count(*) FROM nul WHERE length(b) = 3").Scan(&n); err != nil || n != 1 {
		t.Fatalf("bytea rows: %d, %v", n, err)
	}
	if err := setup.QueryRow(ctx, "SELECT count(*) FROM nul WHERE k = 1").Scan(&n); err != nil || n != 0 {
		t.Fatalf("text rows with NUL: %d, %v", n, err)
	}
}
