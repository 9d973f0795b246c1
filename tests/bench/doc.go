// Command bench measures PivotDB over the wire with pgx: point SELECT by
// primary key, single-row UPSERT, and a 100k-row range scan, each at several
// client counts. It starts its own server on a temporary data directory
// (default durability: synced commits) and prints one table.
//
//	go run ./tests/bench --bin bin/pivotdb [--duration 3s] [--clients 1,4,16]
package main
