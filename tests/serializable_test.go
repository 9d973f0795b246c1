package tests

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SERIALIZABLE over the wire (issue 16): the scenarios that need several
// sessions. Write skew and the workloads are in txn_core_test.go and
// txn_workload_test.go.

// TestReadOnlyAnomaly is Fekete, O'Neil and O'Neil's read-only transaction
// anomaly ("A Read-Only Transaction Anomaly Under Snapshot Isolation",
// 2004). Checking x and savings y start at 0. T2 withdraws 10 from x,
// with a penalty of 1 if x + y would go negative; T1 deposits 20 into y;
// T3 only reads both. Run as
//
//	T2 reads x, y (0, 0) · T1 deposits, commits · T3 reads (0, 20), commits
//	· T2 writes x = -11, commits
//
// snapshot isolation commits all three, and no serial order gives it: T3
// saw the deposit, so T1 is before T3; T2 charged the penalty, so it ran
// before T1; but T3 did not see T2's withdrawal. At REPEATABLE READ that
// is what happens (and shows the test can tell); at SERIALIZABLE T2's
// commit fails with 40001 — its read of y was overwritten before it could
// commit — and run again it sees the deposit and charges no penalty.
func TestReadOnlyAnomaly(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	admin := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, admin, "CREATE TABLE acct (name Utf8, bal Int64, PRIMARY KEY (name)) WITH (PARTITION_AT_KEYS = (('y')))")
	t1 := srv.connect(t, pgx.QueryExecModeCacheStatement)
	t2 := srv.connect(t, pgx.QueryExecModeCacheStatement)
	t3 := srv.connect(t, pgx.QueryExecModeCacheStatement)
	bal := func(c *pgx.Conn, name string) int64 {
		t.Helper()
		var v int64
		if err := c.QueryRow(ctx, "SELECT bal FROM acct WHERE name = $1", name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// withdraw is T2's read and write.
	withdraw := func() {
		t.Helper()
		x, y := bal(t2, "x"), bal(t2, "y")
		amount := int64(10)
		if x+y-amount < 0 {
			amount++
		}
		mustExec(t, t2, "UPDATE acct SET bal = bal - $1 WHERE name = 'x'", amount)
	}
	for _, level := range []string{"REPEATABLE READ", "SERIALIZABLE"} {
		t.Run(level, func(t *testing.T) {
			mustExec(t, admin, "DELETE FROM acct")
			mustExec(t, admin, "INSERT INTO acct VALUES ('x', 0), ('y', 0)")
			begin := "BEGIN ISOLATION LEVEL " + level
			mustExec(t, t2, begin)
			withdraw()
			mustExec(t, t1, begin)
			mustExec(t, t1, "UPDATE acct SET bal = bal + 20 WHERE name = 'y'")
			mustExec(t, t1, "COMMIT")
			mustExec(t, t3, begin+", READ ONLY")
			x3, y3 := bal(t3, "x"), bal(t3, "y")
			mustExec(t, t3, "COMMIT")
			if x3 != 0 || y3 != 20 {
				t.Fatalf("T3 read (%d, %d), want (0, 20)", x3, y3)
			}
			_, err := t2.Exec(ctx, "COMMIT")
			if level == "REPEATABLE READ" {
				if err != nil {
					t.Fatalf("T2's commit at REPEATABLE READ: %v", err)
				}
				if x := bal(admin, "x"); x != -11 {
					t.Fatalf("x = %d, want the anomaly's -11", x)
				}
				return
			}
			if sqlState(err) != "40001" || !strings.Contains(err.Error(), "read/write dependencies") {
				t.Fatalf("T2's commit: %v, want 40001", err)
			}
			if x := bal(admin, "x"); x != 0 {
				t.Fatalf("x = %d after T2 failed, want 0", x)
			}
			// Run again, T2 sees the deposit: no penalty, and the three
			// are serial as T1, T3, T2.
			mustExec(t, t2, begin)
			withdraw()
			mustExec(t, t2, "COMMIT")
			if x, y := bal(admin, "x"), bal(admin, "y"); x != -10 || y != 20 {
				t.Fatalf("(x, y) = (%d, %d), want (-10, 20)", x, y)
			}
		})
	}
}

// TestSerializableHint: the failure carries PostgreSQL's hint to retry.
func TestSerializableHint(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	a := srv.connect(t, pgx.QueryExecModeCacheStatement)
	b := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, a, "CREATE TABLE kv (k Int64, v Int64, PRIMARY KEY (k))")
	mustExec(t, a, "INSERT INTO kv VALUES (1, 0), (2, 0)")
	mustExec(t, a, "SET default_transaction_isolation = 'serializable'")
	mustExec(t, a, "BEGIN")
	var n int64
	if err := a.QueryRow(ctx, "SELECT count(*) FROM kv WHERE v = 0").Scan(&n); err != nil {
		t.Fatal(err)
	}
	mustExec(t, b, "INSERT INTO kv VALUES (3, 0)") // a phantom of a's read
	mustExec(t, a, "UPDATE kv SET v = $1 WHERE k = 1", n)
	_, err := a.Exec(ctx, "COMMIT")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "40001" || pe.Hint != "The transaction might succeed if retried." {
		t.Fatalf("commit: %v, want 40001 with a hint", err)
	}
	// The failed transaction is over: the session works on.
	mustExec(t, a, "UPDATE kv SET v = 1 WHERE k = 1")
}

// TestReadCommittedNoSerializationFailures: READ COMMITTED resolves its
// conflicts itself (a writer re-reads the row it waited for and re-checks
// its WHERE; what only running again resolves is run again in the server
// while no row was sent), so under heavy contention — increments of a few
// hot rows, upserts through the primary key and through a unique index
// while other clients delete and re-insert those rows, and a client
// creating and dropping an index of the table back to back; transfers in
// blocks on both tables — clients never see 40001. The index changes wait
// for the transactions writing the table (PostgreSQL's SHARE lock), so no
// writer meets an index change at its commit. Deadlocks (40P01) of the
// blocks are the application's, as in PostgreSQL, and are not counted.
// A statement outside a block whose commit at Sync meets a conflict is run
// again there; when a few such runs all report another row count than the
// client was sent, the commit fails with 40001 after all (its detail says
// so): those are logged, not failed.
func TestReadCommittedNoSerializationFailures(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	admin := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, admin, "CREATE TABLE hot (k Int64, u Int64, v Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = ((3)))")
	mustExec(t, admin, "CREATE UNIQUE INDEX hot_u ON hot (u)")
	const keys = 6
	mustExec(t, admin, "CREATE TABLE acct (k Int64, v Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = ((3)))")
	for k := 0; k < keys; k++ {
		mustExec(t, admin, "INSERT INTO hot VALUES ($1, $1, 0)", k)
		mustExec(t, admin, "INSERT INTO acct VALUES ($1, 0)", k)
	}
	ops := []string{
		"UPDATE hot SET v = v + 1 WHERE k = $1",
		"INSERT INTO hot VALUES ($1, $1, 1) ON CONFLICT (k) DO UPDATE SET v = hot.v + 1",
		"INSERT INTO hot VALUES ($1 + 100, $1, 1) ON CONFLICT (u) DO UPDATE SET v = hot.v + 1",
		"DELETE FROM hot WHERE u = $1",
		"INSERT INTO hot VALUES ($1, $1, 0) ON CONFLICT DO NOTHING",
		"UPDATE hot SET v = v - 1 WHERE v > 0 AND k >= $1",
	}
	var (
		mu       sync.Mutex
		failures = map[string]int{}
		// reranDiffered counts the 40001s of the gap below.
		reranDiffered int
		total         atomic.Int64
	)
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for p := 0; p < 6; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeCacheStatement)
			defer c.Close(ctx)
			rng := rand.New(rand.NewSource(int64(p)))
			for time.Now().Before(deadline) {
				var err error
				if p == 0 || p == 2 && rng.Intn(2) == 0 {
					// A transfer between two rows in a block.
					a, b := rng.Intn(keys), rng.Intn(keys)
					err = func() error {
						// It writes hot too, whose indexes change under it.
						for _, q := range []string{"BEGIN", "UPDATE acct SET v = v - 1 WHERE k = $1", "UPDATE hot SET v = v + 1 WHERE k = $1",
							"UPDATE acct SET v = v + 1 WHERE k = $2", "COMMIT"} {
							var args []any
							if strings.Contains(q, "$1") {
								args = []any{a}
							} else if strings.Contains(q, "$2") {
								q, args = strings.Replace(q, "$2", "$1", 1), []any{b}
							}
							if _, err := c.Exec(ctx, q, args...); err != nil {
								_, _ = c.Exec(ctx, "ROLLBACK")
								return err
							}
						}
						return nil
					}()
				} else if p == 1 {
					// Schema changes under the writers, back to back.
					// They wait for the writers' blocks, so they may
					// take part in a deadlock (40P01) and be left
					// undone: IF [NOT] EXISTS picks up from there.
					_, err = c.Exec(ctx, "CREATE INDEX IF NOT EXISTS hot_v ON hot (v)")
					if err == nil {
						_, err = c.Exec(ctx, "DROP INDEX IF EXISTS hot_v")
					}
				} else {
					_, err = c.Exec(ctx, ops[rng.Intn(len(ops))], rng.Intn(keys))
				}
				total.Add(1)
				switch sqlState(err) {
				case "", "40P01", "23505":
					// 23505: an upsert through one unique key meeting
					// the other, as in PostgreSQL.
					if err != nil && sqlState(err) == "" {
						t.Error(err)
						return
					}
				default:
					mu.Lock()
					var pe *pgconn.PgError
					detail := ""
					if errors.As(err, &pe) {
						detail = pe.Detail
					}
					if strings.HasPrefix(detail, "The statement was run again at commit") {
						// The documented gap (see above): counted, not failed.
						reranDiffered++
					} else {
						failures[fmt.Sprintf("p%d %s %s %s", p, sqlState(err), err.Error(), detail)]++
					}
					mu.Unlock()
				}
			}
		}(p)
	}
	wg.Wait()
	t.Logf("%d statements; %d failed at commit after reruns reported another row count", total.Load(), reranDiffered)
	for msg, n := range failures {
		t.Errorf("%d× %s", n, msg)
	}
}
