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
// The server under test is the binary named by $PIVOTDB_BIN (make test sets
// it); without it, TestMain builds one into a temporary directory.
package tests
