package tests

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestStatementSnapshotAcrossShards is issue 16's opening bug: one session
// moves money between rows on different shards of a table with a secondary
// index, in transactions, again and again; another sums the balances, by a
// full scan and through the index. Every statement reads all shards and the
// index at one timestamp, so no sum may see half of a transfer.
func TestStatementSnapshotAcrossShards(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	setup := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer setup.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE b (id Int32, g Int32, bal Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = ((2), (3)), AUTO_PARTITIONING_BY_SIZE = DISABLED)",
		"CREATE INDEX b_g ON b (g, bal)",
		"INSERT INTO b VALUES (1, 1, 1000), (2, 2, 1000), (3, 3, 1000), (4, 4, 1000)",
	} {
		if _, err := setup.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The second sum must read the index (not the table) for the test to
	// cover index reads.
	var plan strings.Builder
	rows, err := setup.Query(ctx, "EXPLAIN SELECT sum(bal) FROM b WHERE g >= 0")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if rows.Close(); !strings.Contains(plan.String(), "b_g") {
		t.Fatalf("the index sum does not read the index:\n%s", plan.String())
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	var transfers atomic.Int64
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
			defer c.Close(ctx)
			for n := 0; !stop.Load(); n++ {
				// Row 1 or 2 (first two shards) against row 4 (last shard).
				from, to := 1+w, 4
				if n%2 == 1 {
					from, to = to, from
				}
				tx, err := c.Begin(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				_, err = tx.Exec(ctx, "UPDATE b SET bal = bal - 7 WHERE id = $1", from)
				if err == nil {
					_, err = tx.Exec(ctx, "UPDATE b SET bal = bal + 7 WHERE id = $1", to)
				}
				if err == nil {
					err = tx.Commit(ctx)
				}
				if err != nil {
					_ = tx.Rollback(ctx)
					if !strings.Contains(err.Error(), "40P01") {
						t.Error(err)
						return
					}
					continue // a deadlock between the two writers: retried
				}
				transfers.Add(1)
			}
		}(w)
	}
	r := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer r.Close(ctx)
	var sums, wrong int
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && !t.Failed() {
		for _, q := range []string{"SELECT sum(bal) FROM b", "SELECT sum(bal) FROM b WHERE g >= 0"} {
			var sum int64
			if err := r.QueryRow(ctx, q).Scan(&sum); err != nil {
				t.Fatal(err)
			}
			sums++
			if sum != 4000 {
				wrong++
				if wrong <= 5 {
					t.Errorf("%s = %d, want 4000", q, sum)
				}
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d sums (%d wrong) during %d transfers", sums, wrong, transfers.Load())
	if transfers.Load() < 10 {
		t.Fatalf("only %d transfers ran: the test proves nothing", transfers.Load())
	}
}

// TestRepeatableRead: a REPEATABLE READ transaction reads one snapshot
// (from its first statement) and fails with 40001 when it writes a row
// another transaction committed after it; read-then-write increments
// retried on 40001 lose nothing.
func TestRepeatableRead(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	a := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer a.Close(ctx)
	b := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer b.Close(ctx)
	exec := func(c *pgx.Conn, q string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	value := func(c *pgx.Conn) int64 {
		t.Helper()
		var v int64
		if err := c.QueryRow(ctx, "SELECT v FROM c WHERE id = 1").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	exec(a, "CREATE TABLE c (id Int32, v Int64, PRIMARY KEY (id))")
	exec(a, "INSERT INTO c VALUES (1, 0)")

	exec(a, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	var level string
	if err := a.QueryRow(ctx, "SHOW transaction_isolation").Scan(&level); err != nil || level != "repeatable read" {
		t.Fatalf("SHOW transaction_isolation: %q, %v", level, err)
	}
	before := value(a)
	exec(b, "UPDATE c SET v = v + 1000 WHERE id = 1")
	if got := value(a); got != before {
		t.Fatalf("second read in the transaction: %d, first %d", got, before)
	}
	_, err := a.Exec(ctx, "UPDATE c SET v = v + 1 WHERE id = 1")
	if err == nil || !strings.Contains(err.Error(), "40001") ||
		!strings.Contains(err.Error(), "could not serialize access due to concurrent update") {
		t.Fatalf("update of a row changed after the snapshot: %v, want 40001", err)
	}
	exec(a, "ROLLBACK")
	if got := value(a); got != before+1000 {
		t.Fatalf("after rollback: %d, want %d", got, before+1000)
	}

	// Read, compute, write: retried on 40001, no increment is lost.
	start := value(a)
	const workers, each = 4, 15
	var wg sync.WaitGroup
	var conflicts atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
			defer c.Close(ctx)
			for done := 0; done < each; {
				tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
				if err != nil {
					t.Error(err)
					return
				}
				var v int64
				err = tx.QueryRow(ctx, "SELECT v FROM c WHERE id = 1").Scan(&v)
				if err == nil {
					_, err = tx.Exec(ctx, "UPDATE c SET v = $1 WHERE id = 1", v+1)
				}
				if err == nil {
					err = tx.Commit(ctx)
				}
				if err != nil {
					_ = tx.Rollback(ctx)
					if strings.Contains(err.Error(), "40001") {
						conflicts.Add(1)
						continue
					}
					t.Error(err)
					return
				}
				done++
			}
		}()
	}
	wg.Wait()
	if got := value(a); got != start+workers*each {
		t.Fatalf("after %d increments: %d, want %d (%d conflicts retried)", workers*each, got-start, workers*each, conflicts.Load())
	}
	t.Logf("%d increments, %d retried after 40001", workers*each, conflicts.Load())
}

// TestSavepointReleasesLocks: ROLLBACK TO SAVEPOINT undoes the writes made
// after the savepoint and releases their row locks, so another session can
// write those rows at once; the writes before it stay and commit.
func TestSavepointReleasesLocks(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	a := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer a.Close(ctx)
	b := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	defer b.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE s (id Int32, v Int64, PRIMARY KEY (id))",
		"INSERT INTO s VALUES (1, 0), (2, 0)",
		"SET lock_timeout = '2s'",
		"BEGIN",
		"UPDATE s SET v = 1 WHERE id = 1",
		"SAVEPOINT x",
		"UPDATE s SET v = 1 WHERE id = 2",
		"ROLLBACK TO SAVEPOINT x",
	} {
		if _, err := a.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := b.Exec(ctx, "SET lock_timeout = '2s'"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec(ctx, "UPDATE s SET v = 20 WHERE id = 2"); err != nil {
		t.Fatalf("row 2 after the rollback to the savepoint: %v", err)
	}
	if _, err := b.Exec(ctx, "UPDATE s SET v = 10 WHERE id = 1"); err == nil || !strings.Contains(err.Error(), "55P03") {
		t.Fatalf("row 1, locked before the savepoint: %v, want 55P03", err)
	}
	if _, err := a.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var v1, v2 int64
	if err := b.QueryRow(ctx, "SELECT (SELECT v FROM s WHERE id = 1), (SELECT v FROM s WHERE id = 2)").Scan(&v1, &v2); err != nil {
		t.Fatal(err)
	}
	if v1 != 1 || v2 != 20 {
		t.Fatalf("after commit: v1 = %d, v2 = %d; want 1, 20", v1, v2)
	}
}
