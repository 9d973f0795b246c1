// Package ttl decides which rows of a table have expired under its TTL
// setting (design.md §8): a row expires when column + interval <= now.
//
// # API
//
//	func At(t *catalog.Table, now time.Time) *Expiry   // nil: the table has no TTL
//	func (x *Expiry) Expired(row []types.Value) bool
//
// At evaluates the setting once, at the statement's time, into a cutoff in
// the column's own unit, so that the per-row test is one comparison of
// integers: readers call it for every row they decode, and a table without
// TTL costs them one nil check.
//
// # Decisions
//
//   - NULL never expires.
//   - Date, Datetime and Timestamp compare as points in time (microseconds
//     since the Unix epoch; a Date is its midnight UTC), so a Date row
//     expires at its midnight plus the interval.
//   - Uint32, Uint64 and Int64 count their unit (SECONDS ... NANOSECONDS)
//     since the Unix epoch. The cutoff is floor((now - interval) / unit),
//     computed exactly (math/big: nanoseconds of far dates overflow int64),
//     so value <= cutoff is the same as value·unit + interval <= now.
//     Negative Int64 values lie before the epoch and expire; unsigned
//     values never lie before it.
//   - Readers (sql/exec scans, INSERT's existence check, the re-check of
//     UPDATE and DELETE under a row's lock) treat an expired row as absent;
//     the background runner (sql/ttl_runner.go, partition.TTLRunner) deletes
//     it later, re-checking it under its lock with its own clock reading.
package ttl
