// Package tests holds PivotDB's end-to-end tests: a real server binary on a
// loopback port, driven over the wire by pgx (simple and extended protocol)
// and by psql, plus the project's own SQL regression files (tests/sql/*.test)
// run through the logictest runner (tests/logictest).
//
// Client drivers (drivers_test.go): lib/pq through database/sql, pgx's
// type round trips, and programs in tests/drivers/ run with the real
// clients: pgjdbc (compiled with javac at test time), node-postgres
// (installed by `npm ci` from the committed lock file), psycopg2 (the
// system Python) and a pgbench custom script. Each skips when its tool is
// missing, except in CI (CI=true), where that fails the test.
//
// Transaction workloads (txn_workload_test.go, txn_core_test.go): several
// clients run random transactions for a few seconds while every operation
// is recorded with its invocation and completion time; package
// tests/history checks the histories (Elle's list-append analysis at an
// isolation level, porcupine for single-key registers), and the bank
// workload checks that every sum of the balances is the total. Those at
// READ COMMITTED and REPEATABLE READ across shards run, as do the savepoint,
// lost-update (also with FOR UPDATE) and SKIP LOCKED job queue tests;
// locking_test.go has the row locks between two sessions (conflicts,
// NOWAIT, SKIP LOCKED, lock_timeout, re-check, deadlock); serializable_test.go
// SERIALIZABLE's anomalies (write skew, Fekete's read-only anomaly) and
// READ COMMITTED's server-side retries; TestAsOfSystemTime historical reads.
// snapshot_test.go has the
// issue's opening bug (sums across shards and an index) and REPEATABLE
// READ's and savepoints' behaviour between two sessions.
//
// The server under test is the binary named by $PIVOTDB_BIN (make test sets
// it); without it, TestMain builds one into a temporary directory.
//
// Cluster tests (cluster_*_test.go) start `pivotdb serve --join` processes;
// a failed one prints the end of each node's log. For a failure seen once,
// run it with PIVOTDB_TEST_LOGDIR=DIR (every node's whole log, restarts
// appended, kept as DIR/<test>-n<i>.log) and PIVOTDB_TEST_NODE_FLAGS="--log-level
// debug" (dragonboat's elections and terms too). For a stall,
// PIVOTDB_TEST_NODE_DUMPS=DIR makes each node of a failed test print its
// goroutines (SIGQUIT) and keeps its whole log as DIR/n<i>.log. Which node serves SQL the
// tests read from the nodes' logs (servingState, servingProc: the claim of
// the newest serving epoch, then "serving SQL" under it).
package tests
