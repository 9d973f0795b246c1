package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pivotdb/pivotdb/tests/history"
)

// Transaction workloads over the wire (issue 16): several pgx clients run
// random transactions against a server for a few seconds while every
// operation is recorded with its invocation and completion time; the
// histories are then checked by tests/history (Elle's list-append
// analysis, porcupine for registers) or by invariants (the bank's total).

// workloadTime is how long each workload runs: short, these run in make
// test.
const workloadTime = 3 * time.Second

// clock is the history's monotonic clock: nanoseconds since the workload
// started.
type clock struct{ start time.Time }

func (c clock) now() int64 { return int64(time.Since(c.start)) }

// sqlState returns err's SQLSTATE, "" when it has none (a broken
// connection, a timeout on the client).
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retryable reports whether a transaction that failed with err may be run
// again: a serialization failure or a deadlock, as applications retry.
func retryable(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01":
		return true
	}
	return false
}

// beginSQL spells BEGIN at an isolation level ("" for the default).
func beginSQL(isolation string) string {
	if isolation == "" {
		return "BEGIN"
	}
	return "BEGIN ISOLATION LEVEL " + isolation
}

// ---- list-append ----

// listAppendOptions shape a list-append run.
type listAppendOptions struct {
	isolation string // "" or a level for BEGIN
	level     history.Level
	clients   int
	keys      int
	// split cuts the table into shards at these keys (none: one shard).
	split []int
	// statementReads makes every transaction either appends only, or one
	// statement reading several keys at once. At READ COMMITTED such a
	// history must still be snapshot-isolated, since a statement reads at
	// one snapshot: checked at history.RepeatableRead, a read that sees
	// part of a transaction's appends is a G-single.
	statementReads bool
}

// runListAppend runs random transactions of appends and reads and checks
// the history. An append of v to k inserts the row (k, pos, v), pos being
// the number of k's rows the transaction sees: two concurrent appends to
// one key collide on (k, pos) and one fails 23505 (a failed transaction,
// as in Elle's histories), so pos orders a key's values as they committed.
// A read is SELECT v FROM la WHERE k = $1 ORDER BY pos.
func runListAppend(t *testing.T, o listAppendOptions) {
	srv := startServer(t)
	ctx := ctxT(t)
	admin := srv.connect(t, pgx.QueryExecModeCacheStatement)
	with := ""
	if len(o.split) > 0 {
		keys := ""
		for i, k := range o.split {
			if i > 0 {
				keys += ", "
			}
			keys += fmt.Sprintf("(%d)", k)
		}
		with = " WITH (PARTITION_AT_KEYS = (" + keys + "), AUTO_PARTITIONING_BY_SIZE = DISABLED)"
	}
	mustExec(t, admin, "CREATE TABLE la (k Int64, pos Int64, v Int64, PRIMARY KEY (k, pos))"+with)

	clk := clock{start: time.Now()}
	var (
		mu      sync.Mutex
		hist    []history.Txn
		nextID  atomic.Int64
		nextVal = make([]atomic.Int64, o.keys)
	)
	deadline := time.Now().Add(workloadTime)
	var wg sync.WaitGroup
	for p := 0; p < o.clients; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeCacheStatement)
			rng := rand.New(rand.NewSource(int64(p) + time.Now().UnixNano()))
			for time.Now().Before(deadline) {
				txn := history.Txn{ID: int(nextID.Add(1)), Process: p}
				reader := o.statementReads && rng.Intn(2) == 0
				for n := 1 + rng.Intn(4); n > 0; n-- {
					k := rng.Intn(o.keys)
					if o.statementReads && !reader || !o.statementReads && rng.Intn(2) == 0 {
						txn.Ops = append(txn.Ops, history.Op{Kind: history.Append, Key: k, Value: int(nextVal[k].Add(1))})
					} else {
						txn.Ops = append(txn.Ops, history.Op{Kind: history.Read, Key: k})
					}
				}
				txn.Invoke = clk.now()
				if reader {
					txn.Status = listAppendStatementRead(ctx, c, &txn)
				} else {
					txn.Status = listAppendTxn(ctx, c, o.isolation, &txn)
				}
				txn.Complete = clk.now()
				mu.Lock()
				hist = append(hist, txn)
				mu.Unlock()
				if txn.Status == history.StatusInfo {
					// The connection's state is unknown: start over.
					c.Close(ctx)
					c = srv.connect(t, pgx.QueryExecModeCacheStatement)
				}
			}
			c.Close(ctx)
		}(p)
	}
	wg.Wait()
	res := history.CheckListAppend(hist, o.level)
	counts := map[history.Status]int{}
	for _, h := range hist {
		counts[h.Status]++
	}
	t.Logf("%d transactions (%d ok, %d failed, %d unknown); anomalies: %v", len(hist),
		counts[history.StatusOK], counts[history.StatusFail], counts[history.StatusInfo], res.Kinds())
	if counts[history.StatusOK] < 20 {
		t.Fatalf("only %d transactions committed: the workload checked nothing", counts[history.StatusOK])
	}
	if !res.Valid() {
		for _, h := range hist {
			t.Log(h.String())
		}
		t.Fatalf("history not valid at level %d:\n%s", o.level, res)
	}
}

// listAppendTxn runs one transaction, filling in its reads, and returns
// its outcome.
func listAppendTxn(ctx context.Context, c *pgx.Conn, isolation string, txn *history.Txn) history.Status {
	fail := func(err error) history.Status {
		if sqlState(err) == "" {
			if !c.IsClosed() {
				// Not the server's answer and not a broken connection:
				// the workload itself is wrong.
				panic(fmt.Sprintf("list-append client: %v", err))
			}
			return history.StatusInfo
		}
		_, _ = c.Exec(ctx, "ROLLBACK")
		return history.StatusFail
	}
	if _, err := c.Exec(ctx, beginSQL(isolation)); err != nil {
		return fail(err)
	}
	for i := range txn.Ops {
		op := &txn.Ops[i]
		switch op.Kind {
		case history.Append:
			_, err := c.Exec(ctx, "INSERT INTO la (k, pos, v) SELECT $1::Int64, count(*), $2::Int64 FROM la WHERE k = $1", op.Key, op.Value)
			if err != nil {
				return fail(err)
			}
		case history.Read:
			rows, err := c.Query(ctx, "SELECT v FROM la WHERE k = $1 ORDER BY pos", op.Key)
			if err != nil {
				return fail(err)
			}
			list := []int{}
			for rows.Next() {
				var v int64
				if err := rows.Scan(&v); err != nil {
					rows.Close()
					return fail(err)
				}
				list = append(list, int(v))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fail(err)
			}
			op.List = list
		}
	}
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		if sqlState(err) == "" {
			return history.StatusInfo
		}
		return history.StatusFail
	}
	return history.StatusOK
}

// listAppendStatementRead reads every key of txn's reads in one
// statement (autocommit).
func listAppendStatementRead(ctx context.Context, c *pgx.Conn, txn *history.Txn) history.Status {
	in := ""
	lists := map[int][]int{}
	for i, op := range txn.Ops {
		if i > 0 {
			in += ", "
		}
		in += fmt.Sprint(op.Key)
		lists[op.Key] = []int{}
	}
	// PivotDB has no array type to pass the keys in: they are literals.
	rows, err := c.Query(ctx, "SELECT k, v FROM la WHERE k IN ("+in+") ORDER BY k, pos")
	if err == nil {
		for rows.Next() {
			var k, v int64
			if err = rows.Scan(&k, &v); err != nil {
				break
			}
			lists[int(k)] = append(lists[int(k)], int(v))
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		if sqlState(err) == "" && !c.IsClosed() {
			panic(fmt.Sprintf("list-append client: %v", err))
		}
		if sqlState(err) == "" {
			return history.StatusInfo
		}
		return history.StatusFail
	}
	for i := range txn.Ops {
		txn.Ops[i].List = lists[txn.Ops[i].Key]
	}
	return history.StatusOK
}

// TestListAppendReadCommitted: random list-append transactions at READ
// COMMITTED on a one-shard table show none of G0, G1a, G1b, G1c.
func TestListAppendReadCommitted(t *testing.T) {
	runListAppend(t, listAppendOptions{level: history.ReadCommitted, clients: 6, keys: 6})
}

// TestListAppendStatementReadsOneShard: on one shard, one statement reading
// several keys sees all of a transaction's appends or none. Today each key
// of the IN list was read by a lookup of its own, on the live engine, and
// the checker found G-single here too; now every lookup of a statement reads
// at its one timestamp.
func TestListAppendStatementReadsOneShard(t *testing.T) {
	runListAppend(t, listAppendOptions{level: history.RepeatableRead, clients: 6, keys: 6, statementReads: true})
}

// TestListAppendReadCommittedShards: at READ COMMITTED over three shards,
// one statement reading several keys sees all of a transaction's appends
// or none (a statement reads every shard at one snapshot).
func TestListAppendReadCommittedShards(t *testing.T) {
	runListAppend(t, listAppendOptions{level: history.RepeatableRead, clients: 6, keys: 6, split: []int{2, 4},
		statementReads: true})
}

// TestListAppendRepeatableRead: snapshot isolation forbids G-single too.
func TestListAppendRepeatableRead(t *testing.T) {
	runListAppend(t, listAppendOptions{isolation: "REPEATABLE READ", level: history.RepeatableRead,
		clients: 6, keys: 6, split: []int{3}})
}

// TestListAppendSerializable: no cycle at all, G2-item included.
func TestListAppendSerializable(t *testing.T) {
	runListAppend(t, listAppendOptions{isolation: "SERIALIZABLE", level: history.Serializable,
		clients: 6, keys: 6, split: []int{3}})
}

// ---- registers ----

// TestRegisterLinearizable: single-key reads, writes (UPSERT) and
// compare-and-set (UPDATE ... WHERE v = old) from several clients, each in
// its own autocommit statement, are linearizable, as porcupine checks.
func TestRegisterLinearizable(t *testing.T) {
	srv := startServer(t)
	ctx := ctxT(t)
	admin := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, admin, "CREATE TABLE reg (k Int64, v Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = ((2)), AUTO_PARTITIONING_BY_SIZE = DISABLED)")
	const keys = 4
	clk := clock{start: time.Now()}
	var (
		mu  sync.Mutex
		ops []history.RegisterOp
	)
	deadline := time.Now().Add(workloadTime)
	var wg sync.WaitGroup
	for p := 0; p < 5; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeCacheStatement)
			defer c.Close(ctx)
			rng := rand.New(rand.NewSource(int64(p) + time.Now().UnixNano()))
			for time.Now().Before(deadline) {
				op := history.RegisterOp{Process: p, Key: rng.Intn(keys), Value: rng.Intn(5)}
				op.Call = clk.now()
				var err error
				switch rng.Intn(3) {
				case 0:
					op.Kind = history.RegRead
					var v int64
					err = c.QueryRow(ctx, "SELECT v FROM reg WHERE k = $1", op.Key).Scan(&v)
					if errors.Is(err, pgx.ErrNoRows) {
						err = nil
					} else if err == nil {
						op.Found, op.Value = true, int(v)
					}
				case 1:
					op.Kind = history.RegWrite
					_, err = c.Exec(ctx, "UPSERT INTO reg (k, v) VALUES ($1, $2)", op.Key, op.Value)
				default:
					op.Kind, op.Old = history.RegCAS, rng.Intn(5)
					var tag pgconn.CommandTag
					tag, err = c.Exec(ctx, "UPDATE reg SET v = $1 WHERE k = $2 AND v = $3", op.Value, op.Key, op.Old)
					op.Swapped = err == nil && tag.RowsAffected() == 1
				}
				op.Return = clk.now()
				if err != nil {
					if sqlState(err) != "" {
						// Refused: it did not happen.
						continue
					}
					op.Unknown = true
				}
				mu.Lock()
				ops = append(ops, op)
				mu.Unlock()
				if op.Unknown {
					return
				}
			}
		}(p)
	}
	wg.Wait()
	if len(ops) < 50 {
		t.Fatalf("only %d operations: the workload checked nothing", len(ops))
	}
	res, _ := history.CheckRegisters(ops, 30*time.Second)
	t.Logf("%d register operations: %v", len(ops), res)
	if res != porcupine.Ok {
		for _, op := range ops {
			t.Logf("p%d [%d, %d] %s", op.Process, op.Call, op.Return, op)
		}
		t.Fatalf("register history is %v", res)
	}
}

// ---- bank ----

// bankOptions shape a bank run.
type bankOptions struct {
	isolation string
	accounts  int
	// split cuts the accounts into shards at these ids (none: one shard).
	split []int
	// index adds a secondary index on branch, which the readers' second
	// sum reads through.
	index bool
	// nonNegative checks that no balance ever goes below zero: transfers
	// read the balance and only move what is there, which holds when the
	// level prevents the write skew of two concurrent withdrawals.
	nonNegative bool
}

// runBank moves money between accounts in transactions (read both
// balances, move part of the source's, retry on 40001/40P01) while readers
// sum all balances; every sum and the final total must equal the initial
// total.
func runBank(t *testing.T, o bankOptions) {
	srv := startServer(t)
	ctx := ctxT(t)
	admin := srv.connect(t, pgx.QueryExecModeCacheStatement)
	with := " WITH (AUTO_PARTITIONING_BY_SIZE = DISABLED)"
	if len(o.split) > 0 {
		keys := ""
		for i, k := range o.split {
			if i > 0 {
				keys += ", "
			}
			keys += fmt.Sprintf("(%d)", k)
		}
		with = " WITH (PARTITION_AT_KEYS = (" + keys + "), AUTO_PARTITIONING_BY_SIZE = DISABLED)"
	}
	mustExec(t, admin, "CREATE TABLE bank (id Int64, branch Int64, bal Int64, PRIMARY KEY (id))"+with)
	if o.index {
		mustExec(t, admin, "CREATE INDEX bank_branch ON bank (branch)")
	}
	const initial = 100
	for id := 0; id < o.accounts; id++ {
		mustExec(t, admin, "INSERT INTO bank (id, branch, bal) VALUES ($1, $2, $3)", id, id%3, initial)
	}
	total := int64(initial * o.accounts)

	deadline := time.Now().Add(workloadTime)
	var (
		wg        sync.WaitGroup
		transfers atomic.Int64
		retries   atomic.Int64
		sums      atomic.Int64
		mu        sync.Mutex
		problems  []string
	)
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeCacheStatement)
			defer c.Close(ctx)
			rng := rand.New(rand.NewSource(int64(w) + time.Now().UnixNano()))
			for time.Now().Before(deadline) {
				from, to := rng.Intn(o.accounts), rng.Intn(o.accounts)
				if from == to {
					continue
				}
				for {
					err := bankTransfer(ctx, c, o.isolation, from, to, int64(1+rng.Intn(20)))
					if err == nil {
						transfers.Add(1)
						break
					}
					_, _ = c.Exec(ctx, "ROLLBACK")
					if !retryable(err) {
						problem("transfer %d -> %d: %v", from, to, err)
						return
					}
					retries.Add(1)
				}
			}
		}(w)
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := srv.connect(t, pgx.QueryExecModeCacheStatement)
			defer c.Close(ctx)
			queries := []string{"SELECT sum(bal), min(bal) FROM bank"}
			if o.index {
				queries = append(queries, "SELECT sum(bal), min(bal) FROM bank WHERE branch IN (0, 1, 2)")
			}
			for i := 0; time.Now().Before(deadline); i++ {
				q := queries[i%len(queries)]
				var sum, low int64
				if err := c.QueryRow(ctx, q).Scan(&sum, &low); err != nil {
					problem("%s: %v", q, err)
					return
				}
				sums.Add(1)
				if sum != total {
					problem("%s: sum %d, want %d", q, sum, total)
				}
				if o.nonNegative && low < 0 {
					problem("%s: a balance of %d", q, low)
				}
			}
		}()
	}
	wg.Wait()
	var final int64
	if err := admin.QueryRow(ctx, "SELECT sum(bal) FROM bank").Scan(&final); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transfers (%d retries), %d sums", transfers.Load(), retries.Load(), sums.Load())
	if final != total {
		t.Errorf("final total %d, want %d", final, total)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if transfers.Load() < 20 || sums.Load() < 20 {
		t.Fatalf("%d transfers and %d sums: the workload checked nothing", transfers.Load(), sums.Load())
	}
}

// bankTransfer moves up to amount from one account to another in one
// transaction, never more than the source holds as read.
func bankTransfer(ctx context.Context, c *pgx.Conn, isolation string, from, to int, amount int64) error {
	if _, err := c.Exec(ctx, beginSQL(isolation)); err != nil {
		return err
	}
	var bal int64
	if err := c.QueryRow(ctx, "SELECT bal FROM bank WHERE id = $1", from).Scan(&bal); err != nil {
		return err
	}
	amount = min(amount, bal)
	if amount > 0 {
		if _, err := c.Exec(ctx, "UPDATE bank SET bal = bal - $1 WHERE id = $2", amount, from); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "UPDATE bank SET bal = bal + $1 WHERE id = $2", amount, to); err != nil {
			return err
		}
	}
	_, err := c.Exec(ctx, "COMMIT")
	return err
}

// TestBankReadCommittedOneShard: on one shard without indexes, every
// statement already reads one consistent view today.
func TestBankReadCommittedOneShard(t *testing.T) {
	runBank(t, bankOptions{accounts: 8})
}

// TestBankReadCommittedShards: accounts over three shards and read through
// a secondary index too; every sum is the total only when a statement
// reads all of them at one snapshot (the 66 wrong sums of 12,190).
func TestBankReadCommittedShards(t *testing.T) {
	runBank(t, bankOptions{accounts: 9, split: []int{3, 6}, index: true})
}

// TestBankRepeatableRead: the same at REPEATABLE READ, transfers retrying
// on 40001.
func TestBankRepeatableRead(t *testing.T) {
	runBank(t, bankOptions{isolation: "REPEATABLE READ", accounts: 9, split: []int{3, 6}, index: true})
}

// TestBankSerializable: and at SERIALIZABLE, where no balance goes
// negative either.
func TestBankSerializable(t *testing.T) {
	runBank(t, bankOptions{isolation: "SERIALIZABLE", accounts: 9, split: []int{3, 6}, index: true, nonNegative: true})
}
