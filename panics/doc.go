// Package panics recovers panics of PivotDB's background goroutines and
// parallel workers, so that a bug in one of them fails the statement or job
// it belongs to instead of ending the server.
//
// # Use
//
//   - Recover, deferred, turns a panic of the calling goroutine into an
//     *Error ("internal error: panic in <where>: <value>", XX000 for a
//     client): scan workers send it to the statement's consumer, the
//     balancer and the TTL runner log it and go on with their next table or
//     tick, and the one-off background jobs (key filter rewrites, the
//     background count of a reshape, the ballast file) log it and end.
//   - Go runs a function on a new goroutine under Recover.
//   - Crash, deferred at the start of a critical section, ends the process
//     (exit status 2) when a panic goes through it, even if an outer Recover
//     would catch it. It marks the places where continuing after a panic
//     could corrupt data, so a crash is the honest answer:
//     partition's shard map swap (the new map may be committed but not
//     installed, with the table's locks still held) and sql's install of a
//     committed schema change (the catalog in memory would disagree with
//     the one on disk). After a restart, recovery from the WAL puts memory
//     and disk back in step.
//
// Every recovered panic is logged at error level with its stack (SetLogger;
// slog's default logger otherwise) and counted: Count is the number since
// the process started, which tests read and the sys views may show.
//
// # Testing
//
// Inject(point) panics when a test has armed point with Arm; unarmed it
// costs one atomic load. The points are named after the code they sit in:
// "exec.scanworker", "partition.balancer.tick", "partition.ttl.erase",
// "partition.land", "sql.keyfilter.compact".
package panics
