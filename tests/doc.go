// Package tests holds PivotDB's end-to-end tests: a real server binary on a
// loopback port, driven over the wire by pgx (simple and extended protocol)
// and by psql, plus the project's own SQL regression files (tests/sql/*.test)
// run through the logictest runner (tests/logictest).
//
// The server under test is the binary named by $PIVOTDB_BIN (make test sets
// it); without it, TestMain builds one into a temporary directory.
package tests
