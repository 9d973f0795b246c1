package tests

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestTransactionalRewrite: ALTER COLUMN TYPE inside a transaction block
// while other clients write the table — autocommit statements and blocks
// of their own. Other sessions read the old table (and type) until the
// COMMIT; autocommit writers wait for the block and then write the new
// table, blocks that wrote the old one fail with 40001 and leave nothing;
// ROLLBACK, and ROLLBACK TO a savepoint, leave the old table. After every
// round every row is what the successful writes made it, read by key and
// through the index.
func TestTransactionalRewrite(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	admin := srv.connect(t, pgx.QueryExecModeCacheStatement)
	const rows = 400
	mustExec(t, admin, "CREATE TABLE rw (k int PRIMARY KEY, v int NOT NULL, w text) WITH (PARTITION_AT_KEYS = ((100), (200), (300)))")
	mustExec(t, admin, "CREATE INDEX rw_w ON rw (w)")
	mustExec(t, admin, "INSERT INTO rw SELECT x, x, 'w' || x::text FROM generate_series(0, $1) AS g(x)", rows-1)

	// Each writer owns the keys k with k % writers == its number, so the
	// expected state follows from its successful statements alone.
	const writers = 4
	want := make([]int64, rows)
	for k := range want {
		want[k] = int64(k)
	}
	// Writers hold mu shared from a statement's start to its want update,
	// so that check (holding it exclusively) sees no write in flight.
	var mu sync.RWMutex
	stop := make(chan struct{})
	var done, failed atomic.Int64
	var wg sync.WaitGroup
	for p := 0; p < writers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeCacheStatement)
			defer c.Close(context.Background())
			rng := rand.New(rand.NewSource(int64(p)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := rng.Intn(rows/writers)*writers + p
				inBlock := rng.Intn(3) == 0
				var err error
				mu.RLock()
				if inBlock {
					err = func() error {
						for _, q := range []string{"BEGIN", "UPDATE rw SET v = v + 1 WHERE k = $1", "UPDATE rw SET v = v + 1 WHERE k = $1", "COMMIT"} {
							var args []any
							if q[0] == 'U' {
								args = []any{k}
							}
							if _, err := c.Exec(ctx, q, args...); err != nil {
								_, _ = c.Exec(ctx, "ROLLBACK")
								return err
							}
						}
						return nil
					}()
				} else {
					var tag pgconn.CommandTag
					tag, err = c.Exec(ctx, "UPDATE rw SET v = v + 2 WHERE k = $1", k)
					if err == nil && tag.RowsAffected() != 1 {
						err = fmt.Errorf("UPDATE of key %d: %d rows", k, tag.RowsAffected())
					}
				}
				if err == nil {
					want[k] += 2
					done.Add(1)
				}
				mu.RUnlock()
				switch sqlState(err) {
				case "":
					if err != nil {
						t.Error(err)
						return
					}
				case "40001", "40P01":
					// Nothing of it was kept.
					failed.Add(1)
				default:
					t.Errorf("writer %d: %v", p, err)
					return
				}
			}
		}(p)
	}

	alter := srv.connect(t, pgx.QueryExecModeCacheStatement)
	reader := srv.connect(t, pgx.QueryExecModeCacheStatement)
	typeOf := func(c *pgx.Conn) string {
		t.Helper()
		var s string
		if err := c.QueryRow(ctx, "SELECT data_type FROM information_schema.columns WHERE table_name = 'rw' AND column_name = 'v'").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	check := func(round int) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		got, err := reader.Query(ctx, "SELECT k, v::bigint, w FROM rw ORDER BY k")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for got.Next() {
			var k, v int64
			var w string
			if err := got.Scan(&k, &v, &w); err != nil {
				t.Fatal(err)
			}
			if k != int64(n) || v != want[k] || w != fmt.Sprintf("w%d", k) {
				t.Fatalf("round %d: row %d is (%d, %d, %s), want (%d, %d, w%d)", round, n, k, v, w, n, want[n], n)
			}
			n++
		}
		if err := got.Err(); err != nil {
			t.Fatal(err)
		}
		if n != rows {
			t.Fatalf("round %d: %d rows, want %d", round, n, rows)
		}
		// Through the index, a few keys.
		for _, k := range []int{0, 77, rows - 1} {
			var v int64
			if err := reader.QueryRow(ctx, "SELECT v::bigint FROM rw WHERE w = $1", fmt.Sprintf("w%d", k)).Scan(&v); err != nil || v != want[k] {
				t.Fatalf("round %d: key %d through the index: %d, %v; want %d", round, k, v, err, want[k])
			}
		}
	}

	types := []string{"bigint", "integer"}
	cur := "integer"
	for round := 0; round < 6; round++ {
		next := types[round%2]
		if next == cur {
			next = types[(round+1)%2]
		}
		mustExec(t, alter, "BEGIN")
		if round == 4 {
			mustExec(t, alter, "SAVEPOINT before")
		}
		// A second schema change of the table in the block waits for
		// its writers again — among them autocommit writers waiting for
		// this block: that cycle is a deadlock (40P01), never a hang;
		// the round then starts over.
		if _, err := alter.Exec(ctx, "ALTER TABLE rw ALTER COLUMN v TYPE "+next); err != nil {
			t.Fatal(err)
		}
		if _, err := alter.Exec(ctx, "ALTER TABLE rw ALTER COLUMN w SET DEFAULT 'd'"); sqlState(err) == "40P01" {
			t.Logf("round %d: %v", round, err)
			mustExec(t, alter, "ROLLBACK")
			round--
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if got := typeOf(alter); got != next {
			t.Fatalf("round %d: the block sees %s, want %s", round, got, next)
		}
		// Meanwhile the others read the old table.
		time.Sleep(30 * time.Millisecond)
		if got := typeOf(reader); got != cur {
			t.Fatalf("round %d: another session sees %s before the commit, want %s", round, got, cur)
		}
		var n int
		if err := reader.QueryRow(ctx, "SELECT count(*) FROM rw").Scan(&n); err != nil || n != rows {
			t.Fatalf("round %d: another session read %d rows, %v", round, n, err)
		}
		switch round {
		case 1, 3:
			mustExec(t, alter, "ROLLBACK")
		case 4:
			mustExec(t, alter, "ROLLBACK TO SAVEPOINT before")
			mustExec(t, alter, "COMMIT")
		default:
			mustExec(t, alter, "COMMIT")
			cur = next
		}
		if got := typeOf(reader); got != cur {
			t.Fatalf("round %d: after the block the type is %s, want %s", round, got, cur)
		}
		time.Sleep(30 * time.Millisecond)
		check(round)
	}
	close(stop)
	wg.Wait()
	check(6)
	t.Logf("%d writes, %d failed with 40001 or 40P01", done.Load(), failed.Load())
	if done.Load() == 0 {
		t.Fatal("no write went through")
	}
}

// TestTransactionalRewriteKill: kill -9 with a rewrite in an open block
// leaves the old table, and after a committed one the new table, each
// whole; a rewrite runs again on what the restart left.
func TestTransactionalRewriteKill(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	mustExec(t, c, "CREATE TABLE rk (id int PRIMARY KEY, v int, w text) WITH (PARTITION_AT_KEYS = ((50)))")
	mustExec(t, c, "CREATE INDEX rk_w ON rk (w)")
	mustExec(t, c, "INSERT INTO rk SELECT x, x, x::text FROM generate_series(1, 100) AS g(x)")
	mustExec(t, c, "CREATE TABLE nk (id int NOT NULL, v int)")
	mustExec(t, c, "INSERT INTO nk SELECT x, x FROM generate_series(1, 100) AS g(x)")

	state := func(what string, wantType string, wantRows, wantSum int) {
		t.Helper()
		var typ string
		var n, sum, byIndex int
		if err := c.QueryRow(ctx, "SELECT data_type FROM information_schema.columns WHERE table_name = 'rk' AND column_name = 'v'").Scan(&typ); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT count(*), sum(v)::int FROM rk").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT id FROM rk WHERE w = '42'").Scan(&byIndex); err != nil {
			t.Fatal(err)
		}
		if typ != wantType || n != wantRows || sum != wantSum || byIndex != 42 {
			t.Fatalf("%s: %s, %d rows, sum %d, index row %d; want %s, %d rows, sum %d", what, typ, n, sum, byIndex, wantType, wantRows, wantSum)
		}
	}

	// Open: the rewrite and the block's rows are gone after the restart.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO rk VALUES (101, 101, '101')")
	mustExec(t, c, "ALTER TABLE rk ALTER COLUMN v TYPE bigint")
	mustExec(t, c, "INSERT INTO rk VALUES (102, 102, '102')")
	mustExec(t, c, "ALTER TABLE nk ADD PRIMARY KEY (id)")
	srv.kill()
	srv.start()
	c = srv.connect(t, pgx.QueryExecModeCacheStatement)
	state("open block", "integer", 100, 5050)
	// nk has no primary key again: a duplicate id goes in.
	mustExec(t, c, "INSERT INTO nk VALUES (1, 1)")
	mustExec(t, c, "DELETE FROM nk WHERE id = 1")
	mustExec(t, c, "INSERT INTO nk VALUES (1, 1)")

	// Committed, then killed at once: the new table, whole.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "ALTER TABLE rk ALTER COLUMN v TYPE bigint")
	mustExec(t, c, "INSERT INTO rk VALUES (101, 101, '101')")
	mustExec(t, c, "COMMIT")
	srv.kill()
	srv.start()
	c = srv.connect(t, pgx.QueryExecModeCacheStatement)
	state("committed block", "bigint", 101, 5151)
	if _, err := c.Exec(ctx, "INSERT INTO nk VALUES (1, 1)"); err != nil {
		t.Fatal(err) // still no key (that block did not change nk)
	}

	// And again, on what the restart left.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "ALTER TABLE rk ALTER COLUMN v TYPE integer")
	mustExec(t, c, "COMMIT")
	state("second rewrite", "integer", 101, 5151)
}

// TestRewriteKillInPhase1: kill -9 while an ALTER COLUMN TYPE outside a
// block converts the rows (its first phase, which commits the new table's
// rows in chunks under ids no committed catalog names) leaves the old
// table whole after the restart, and the same ALTER then runs.
func TestRewriteKillInPhase1(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	mustExec(t, c, "CREATE TABLE rp (id int PRIMARY KEY, v int, w text)")
	mustExec(t, c, "CREATE INDEX rp_w ON rp (w)")
	mustExec(t, c, "INSERT INTO rp SELECT x, x, x::text FROM generate_series(1, 60000) AS g(x)")
	state := func(what, wantType string) {
		t.Helper()
		var typ string
		var n, sum, byIndex int64
		if err := c.QueryRow(ctx, "SELECT data_type FROM information_schema.columns WHERE table_name = 'rp' AND column_name = 'v'").Scan(&typ); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT count(*), sum(v)::bigint FROM rp").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT id FROM rp WHERE w = '4242'").Scan(&byIndex); err != nil {
			t.Fatal(err)
		}
		if typ != wantType || n != 60000 || sum != 60000*60001/2 || byIndex != 4242 {
			t.Fatalf("%s: %s, %d rows, sum %d, index row %d", what, typ, n, sum, byIndex)
		}
	}

	alter := srv.connect(t, pgx.QueryExecModeCacheStatement)
	done := make(chan error, 1)
	go func() {
		_, err := alter.Exec(context.Background(), "ALTER TABLE rp ALTER COLUMN v TYPE bigint")
		done <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		var status string
		var rowsDone, rowsTotal int64
		err := c.QueryRow(ctx, "SELECT status, rows_done, rows_total FROM sys.jobs WHERE description LIKE 'ALTER TABLE rp%'").
			Scan(&status, &rowsDone, &rowsTotal)
		if err == nil && status == "running" && rowsDone > 0 && rowsDone < rowsTotal {
			break
		}
		if err != nil && err != pgx.ErrNoRows {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Skipf("the ALTER ended (%v) before its first phase was seen", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress seen")
		}
		time.Sleep(2 * time.Millisecond)
	}
	srv.kill()
	<-done
	srv.start()
	c = srv.connect(t, pgx.QueryExecModeCacheStatement)
	state("killed in phase 1", "integer")
	mustExec(t, c, "ALTER TABLE rp ALTER COLUMN v TYPE bigint")
	state("after the ALTER", "bigint")
}
