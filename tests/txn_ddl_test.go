package tests

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestTransactionalDDLIsolation: a table created in an open transaction is
// invisible to a second session until the commit; a schema change waits
// for the transaction holding uncommitted ones; a write to a table whose
// schema another transaction is changing fails with 40001 instead of
// storing a row checked against the old definition; a schema change waits
// for the transactions that wrote its table.
func TestTransactionalDDLIsolation(t *testing.T) {
	srv := startServer(t)
	a := srv.connect(t, pgx.QueryExecModeCacheStatement)
	b := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)

	mustExec(t, a, "BEGIN")
	mustExec(t, a, "CREATE TABLE fresh (id Int32, v Utf8, PRIMARY KEY (id))")
	mustExec(t, a, "INSERT INTO fresh VALUES (1, 'a'), (2, 'b')")
	if _, err := b.Exec(ctx, "SELECT * FROM fresh"); sqlState(err) != "42P01" {
		t.Fatalf("second session read the uncommitted table: %v", err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'fresh'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("pg_class of the second session: %d, %v", n, err)
	}

	// Another schema change waits for the transaction.
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "CREATE TABLE other (id Int32, PRIMARY KEY (id))")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a schema change ran while another transaction held uncommitted ones: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	mustExec(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT count(*) FROM fresh").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the commit: %d rows, %v", n, err)
	}

	// An autocommit write of a table with another transaction's
	// uncommitted ALTER waits for it, then runs under the new definition.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "ALTER TABLE fresh ALTER COLUMN v SET NOT NULL")
	go func() {
		_, err := b.Exec(ctx, "INSERT INTO fresh VALUES (3, NULL)")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a write ran while another transaction was changing its table: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	mustExec(t, a, "COMMIT")
	if err := <-done; sqlState(err) != "23502" {
		t.Fatalf("write after the commit: %v", err)
	}

	// A write inside a transaction waits for the block that changes its
	// table too, as PostgreSQL's lock makes it (the block's table lock
	// lasts until it ends); lock_timeout bounds the wait, for a write in
	// a block as for an autocommit one.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "ALTER TABLE fresh ALTER COLUMN v DROP NOT NULL")
	mustExec(t, b, "SET lock_timeout = '100ms'")
	mustExec(t, b, "BEGIN")
	if _, err := b.Exec(ctx, "INSERT INTO fresh VALUES (4, 'x')"); sqlState(err) != "55P03" {
		t.Fatalf("write in a block past lock_timeout: %v", err)
	}
	mustExec(t, b, "ROLLBACK")
	if _, err := b.Exec(ctx, "INSERT INTO fresh VALUES (4, 'x')"); sqlState(err) != "55P03" {
		t.Fatalf("write past lock_timeout: %v", err)
	}
	mustExec(t, a, "COMMIT")
	mustExec(t, b, "INSERT INTO fresh VALUES (4, NULL)")

	// The other way round, a schema change waits for the transactions
	// that wrote its table (as PostgreSQL's lock makes it), which then
	// commit: lock_timeout bounds its wait.
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "INSERT INTO fresh VALUES (5, 'y')")
	mustExec(t, a, "SET lock_timeout = '100ms'")
	if _, err := a.Exec(ctx, "ALTER TABLE fresh ALTER COLUMN v TYPE text"); sqlState(err) != "55P03" {
		t.Fatalf("schema change while a block writes the table: %v", err)
	}
	go func() {
		_, err := a.Exec(ctx, "ALTER TABLE fresh ADD COLUMN w int")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	mustExec(t, b, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustExec(t, a, "SET lock_timeout = 0")

	// lock_timeout bounds the wait for the schema-change lock.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "DROP TABLE other")
	if _, err := b.Exec(ctx, "CREATE TABLE third (id Int32, PRIMARY KEY (id))"); sqlState(err) != "55P03" {
		t.Fatalf("schema change past lock_timeout: %v", err)
	}
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "INSERT INTO other VALUES (1)")
}

// TestTransactionalDDLKill: kill -9 while a transaction with schema changes
// is open shows none of it after the restart (the created table is gone,
// the dropped one is back with its rows), and a committed one is whole.
func TestTransactionalDDLKill(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE keep (id Int32, v Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = ((5)))")
	mustExec(t, c, "INSERT INTO keep SELECT x, x FROM generate_series(1, 10) AS g(x)")
	mustExec(t, c, "CREATE TABLE gone (id Int32, PRIMARY KEY (id))")
	mustExec(t, c, "INSERT INTO gone VALUES (1)")

	// Committed: DROP gone and CREATE made, then kill at once.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "DROP TABLE gone")
	mustExec(t, c, "CREATE TABLE made (id Int32, PRIMARY KEY (id))")
	mustExec(t, c, "INSERT INTO made VALUES (7)")
	mustExec(t, c, "COMMIT")

	// Open: both halves of a transaction that never commits.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "CREATE TABLE half (id Int32, v Utf8, PRIMARY KEY (id))")
	mustExec(t, c, "CREATE INDEX half_v ON half (v)")
	mustExec(t, c, "INSERT INTO half VALUES (1, 'x')")
	mustExec(t, c, "DROP TABLE keep")
	mustExec(t, c, "UPDATE made SET id = 8")
	srv.kill()
	srv.start()

	c = srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	var n, sum int
	if err := c.QueryRow(ctx, "SELECT count(*), sum(v) FROM keep").Scan(&n, &sum); err != nil || n != 10 || sum != 55 {
		t.Fatalf("keep after the restart: %d rows, sum %d, %v", n, sum, err)
	}
	if _, err := c.Exec(ctx, "SELECT * FROM half"); sqlState(err) != "42P01" {
		t.Fatalf("half after the restart: %v", err)
	}
	if _, err := c.Exec(ctx, "SELECT * FROM gone"); sqlState(err) != "42P01" {
		t.Fatalf("gone after the restart: %v", err)
	}
	if err := c.QueryRow(ctx, "SELECT id FROM made").Scan(&n); err != nil || n != 7 {
		t.Fatalf("made after the restart: %d, %v", n, err)
	}
	// The names are free and the new tables empty; no shard map is left
	// without a table.
	mustExec(t, c, "CREATE TABLE half (id Int32, v Utf8, PRIMARY KEY (id))")
	mustExec(t, c, "CREATE TABLE gone (id Int32, PRIMARY KEY (id))")
	if err := c.QueryRow(ctx, "SELECT (SELECT count(*) FROM half) + (SELECT count(*) FROM gone)").Scan(&n); err != nil || n != 0 {
		t.Fatalf("re-created tables: %d rows, %v", n, err)
	}
}
