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
