package tests

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustExec(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(ctxT(t), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want SQLSTATE %s, got %v", code, err)
	}
	if pe.Code != code {
		t.Fatalf("want SQLSTATE %s, got %s: %s", code, pe.Code, pe.Message)
	}
}

var execModes = map[string]pgx.QueryExecMode{
	"simple":   pgx.QueryExecModeSimpleProtocol,
	"extended": pgx.QueryExecModeCacheStatement,
	"describe": pgx.QueryExecModeDescribeExec,
}

// TestWritesAndReads covers the write semantics of design.md §3.3 and the
// query features of issue 2 in every pgx protocol mode.
func TestWritesAndReads(t *testing.T) {
	srv := startServer(t)
	for name, mode := range execModes {
		t.Run(name, func(t *testing.T) {
			c := srv.connect(t, mode)
			ctx := ctxT(t)
			tbl := "kv_" + name
			mustExec(t, c, "CREATE TABLE "+tbl+" (id Uint64, name Utf8 NOT NULL, score Int32 DEFAULT 7, note Utf8, PRIMARY KEY (id))")
			mustExec(t, c, "INSERT INTO "+tbl+" (id, name) VALUES (1, 'one'), (2, 'two')")
			_, err := c.Exec(ctx, "INSERT INTO "+tbl+" (id, name) VALUES (1, 'again')")
			wantCode(t, err, "23505")
			_, err = c.Exec(ctx, "INSERT INTO "+tbl+" (id, name) VALUES (3, NULL)")
			wantCode(t, err, "23502")

			// UPSERT updates only the listed columns; REPLACE overwrites the row.
			mustExec(t, c, "UPDATE "+tbl+" SET note = 'kept' WHERE id = 1")
			mustExec(t, c, "UPSERT INTO "+tbl+" (id, name) VALUES (1, 'uno'), (3, 'three')")
			mustExec(t, c, "REPLACE INTO "+tbl+" (id, name) VALUES (2, 'dos')")
			rows, err := c.Query(ctx, "SELECT id, name, score, note FROM "+tbl+" ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				id    uint64
				name  string
				score *int32
				note  *string
			}
			var got []row
			for rows.Next() {
				var r row
				if err := rows.Scan(&r.id, &r.name, &r.score, &r.note); err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 {
				t.Fatalf("got %d rows", len(got))
			}
			if got[0].name != "uno" || got[0].note == nil || *got[0].note != "kept" {
				t.Errorf("UPSERT must keep unlisted columns: %+v", got[0])
			}
			if got[1].name != "dos" || got[1].score == nil || *got[1].score != 7 || got[1].note != nil {
				t.Errorf("REPLACE must reset unlisted columns to defaults: %+v", got[1])
			}

			// Parameters, aggregates, GROUP BY, HAVING, LIMIT/OFFSET.
			var n int64
			var sum int64
			if err := c.QueryRow(ctx, "SELECT count(*), sum(id) FROM "+tbl+" WHERE id >= $1", 2).Scan(&n, &sum); err != nil {
				t.Fatal(err)
			}
			if n != 2 || sum != 5 {
				t.Errorf("count, sum = %d, %d", n, sum)
			}
			var name string
			if err := c.QueryRow(ctx, "SELECT name FROM "+tbl+" WHERE id = $1", uint64(3)).Scan(&name); err != nil || name != "three" {
				t.Errorf("point select: %q, %v", name, err)
			}
			var names []string
			rows, err = c.Query(ctx, "SELECT name FROM "+tbl+" ORDER BY name DESC LIMIT 2 OFFSET 1")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				rows.Scan(&s)
				names = append(names, s)
			}
			if len(names) != 2 || names[0] != "three" || names[1] != "dos" {
				t.Errorf("ORDER BY DESC LIMIT OFFSET: %v", names)
			}

			// Transactions: ROLLBACK undoes, COMMIT keeps, errors fail the block.
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "DELETE FROM "+tbl+" WHERE id = 1"); err != nil {
				t.Fatal(err)
			}
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+tbl).Scan(&n); err != nil || n != 2 {
				t.Errorf("read-your-writes: count = %d, %v", n, err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRow(ctx, "SELECT count(*) FROM "+tbl).Scan(&n); err != nil || n != 3 {
				t.Errorf("after ROLLBACK: count = %d, %v", n, err)
			}
			tx, _ = c.Begin(ctx)
			_, err = tx.Exec(ctx, "INSERT INTO "+tbl+" (id, name) VALUES (1, 'dup')")
			wantCode(t, err, "23505")
			_, err = tx.Exec(ctx, "SELECT 1")
			wantCode(t, err, "25P02")
			tx.Rollback(ctx)
		})
	}
}

// TestBatch pipelines several statements in one round trip.
func TestBatch(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	mustExec(t, c, "CREATE TABLE b (k Int64, v Utf8, PRIMARY KEY (k))")
	batch := &pgx.Batch{}
	for i := 0; i < 50; i++ {
		batch.Queue("UPSERT INTO b (k, v) VALUES ($1, $2)", i, "v")
	}
	batch.Queue("SELECT count(*) FROM b")
	br := c.SendBatch(ctx, batch)
	for i := 0; i < 50; i++ {
		if _, err := br.Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := br.QueryRow().Scan(&n); err != nil || n != 50 {
		t.Fatalf("count = %d, %v", n, err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRestartKeepsData stops the server with SIGTERM and starts it again on
// the same data directory.
func TestRestartKeepsData(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, "CREATE TABLE r (k Int64, v Utf8, PRIMARY KEY (k))")
	mustExec(t, c, "INSERT INTO r VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	mustExec(t, c, "CREATE DATABASE other")
	c.Close(context.Background())
	srv.restart()
	c = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	var n int64
	if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM r").Scan(&n); err != nil || n != 3 {
		t.Fatalf("after restart: count = %d, %v", n, err)
	}
	oc, err := pgx.Connect(ctxT(t), srv.connString("other"))
	if err != nil {
		t.Fatalf("database created before restart: %v", err)
	}
	oc.Close(context.Background())
}

// TestUnknownDatabase expects FATAL 3D000.
func TestUnknownDatabase(t *testing.T) {
	srv := startServer(t)
	_, err := pgx.Connect(ctxT(t), srv.connString("nosuchdb"))
	wantCode(t, err, "3D000")
}

// TestCancel cancels a running statement from the client.
func TestCancel(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Exec(ctx, "SELECT pg_sleep(30)")
	if err == nil {
		t.Fatal("statement was not cancelled")
	}
	// pgx cancels through a CancelRequest on a new connection and then
	// closes this one; the server must keep serving others.
	c2 := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	var one int
	if err := c2.QueryRow(ctxT(t), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

// TestStatementTimeout expects 57014 once statement_timeout passes.
func TestStatementTimeout(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, "SET statement_timeout = 100")
	_, err := c.Exec(ctxT(t), "SELECT pg_sleep(10)")
	wantCode(t, err, "57014")
}

// TestPipelineIsAtomic checks PostgreSQL's implicit transaction: the
// statements of a batch (up to Sync) or of one simple-query string commit
// together, and an error rolls all of them back.
func TestPipelineIsAtomic(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	mustExec(t, c, "CREATE TABLE p (k Int64, PRIMARY KEY (k))")
	mustExec(t, c, "INSERT INTO p VALUES (1)")
	batch := &pgx.Batch{}
	batch.Queue("INSERT INTO p VALUES ($1)", 2)
	batch.Queue("INSERT INTO p VALUES ($1)", 1) // duplicate: fails the batch
	batch.Queue("INSERT INTO p VALUES ($1)", 3)
	err := c.SendBatch(ctx, batch).Close()
	wantCode(t, err, "23505")
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM p").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after a failed batch: count = %d, %v (want 1: nothing of the batch)", n, err)
	}

	sc := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	_, err = sc.Exec(ctx, "INSERT INTO p VALUES (10); INSERT INTO p VALUES (1)")
	wantCode(t, err, "23505")
	if err := sc.QueryRow(ctx, "SELECT count(*) FROM p WHERE k = 10").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a failed multi-statement query kept its first insert: %d, %v", n, err)
	}
	// BEGIN inside the string makes a block that stays open.
	if _, err := sc.Exec(ctx, "INSERT INTO p VALUES (20); BEGIN; INSERT INTO p VALUES (21)"); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := sc.QueryRow(ctx, "SELECT count(*) FROM p WHERE k >= 20").Scan(&n); err != nil || n != 0 {
		t.Fatalf("ROLLBACK of a block begun mid-string: %d rows left, %v", n, err)
	}
}
