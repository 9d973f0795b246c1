package tests

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgxReturningUuid writes rows keyed by gen_random_uuid() and reads
// the keys back through RETURNING in every pgx mode: uuid results in text
// (simple protocol) and binary (extended), and a uuid parameter in binary.
func TestPgxReturningUuid(t *testing.T) {
	srv := startServer(t)
	setup := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, setup, "CREATE TABLE ru (id Uuid DEFAULT gen_random_uuid(), n Int64, PRIMARY KEY (id))")
	ctx := context.Background()
	for name, mode := range execModes {
		t.Run(name, func(t *testing.T) {
			c := srv.connect(t, mode)
			var id [16]byte
			var n int64
			if err := c.QueryRow(ctx, "INSERT INTO ru (n) VALUES ($1) RETURNING id, n", int64(7)).Scan(&id, &n); err != nil {
				t.Fatal(err)
			}
			if n != 7 || id[6]>>4 != 4 {
				t.Fatalf("returned id %x n %d: want a version 4 uuid and 7", id, n)
			}
			var back int64
			if err := c.QueryRow(ctx, "UPDATE ru SET n = n + 1 WHERE id = $1 RETURNING n", pgtype.UUID{Bytes: id, Valid: true}).Scan(&back); err != nil {
				t.Fatal(err)
			}
			if back != 8 {
				t.Fatalf("UPDATE ... RETURNING by uuid: %d", back)
			}
			var s string
			if err := c.QueryRow(ctx, "DELETE FROM ru WHERE id = $1 RETURNING id::text", pgtype.UUID{Bytes: id, Valid: true}).Scan(&s); err != nil {
				t.Fatal(err)
			}
			if len(s) != 36 || s[14] != '4' {
				t.Fatalf("deleted id as text: %q", s)
			}
		})
	}
}
