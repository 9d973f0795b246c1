// Package exec turns logical plans (package planner) into pull-based row
// iterators and runs them. Each plan node becomes one iterator; Next returns
// the next row or nil at the end.
//
// Rows returned by Next are owned by the caller only until the next call:
// operators that keep rows (Sort, Aggregate, Distinct, the build side of a
// Join) copy them.
//
// Row locks (lockrows.go): a LockRows node locks, for each row it passes,
// the rows of its targets by their primary key values in the row, through
// Context.LockRow (the session's: lock table, strength, NOWAIT / SKIP
// LOCKED); a row a target skips is left out.
//
// Joins (join.go) read the right input into memory, hashed on the join keys
// when there are any (a NULL key matches nothing), and stream the left
// input past it; a LEFT join pads unmatched left rows with NULLs. The join
// reads its tables through ordinary scans, so TTL expiry applies to them.
//
// Index scans (indexscan.go): a Scan with an Index reads the index's entry
// ranges, then each row by primary key, on one storage snapshot when
// reading committed data; rows come in index order and are checked against
// TTL and the whole condition like any scan's.
//
// Point scans (pointscan.go): when every range of a Scan is one full
// primary key (`k = 1`, `k IN (...)`), the keys are read one after another
// through a storage.PointReader — no iterator or goroutine per key or shard —
// which also lets tables with KEY_BLOOM_FILTER skip absent keys' blocks.
// Other scans read each shard's span with an iterator, several shards in
// parallel on committed data (scan.go).
//
// TTL: scans skip rows expired under their table's TTL at the statement's
// time (Context.Now; package sql/ttl), so no reader above sees them.
//
// Subqueries: a Subquery expression node (subquery.go) runs its plan through
// the executor reached from expr.Context.Exec, with the outer values it binds
// added to the parameters; results are cached in the Context for the
// statement, keyed by those values. A decorrelated EXISTS / IN (subhash.go)
// instead runs its inner plan once and probes a hash table on the
// correlation keys for each outer row: keyed by the value itself for one
// text or integer key (no encoding, no allocation per probe), one shared
// group for every EXISTS key, sized from the plan's previous build, read
// without a lock once built; its memory is accounted in 64 KiB steps.
// An EXISTS keyed by text or a tuple keeps only its keys, in one byte
// arena with an open-addressing index (keyset.go: a handful of
// allocations per build instead of one string per key). When the build
// side is a plain scan and the key one stored column, the build reads that
// column straight from each stored row (subhashraw.go, rowenc.ColumnText)
// without decoding the rows; RawKeyBuilds counts such builds for tests.
// A probe that is an outer column as it stands reads it from the outer
// row directly (plainProbe), without evaluating or converting it.
// BenchmarkExistsBenchWorkload (package sql) is tests/bench's correlated
// EXISTS in process, with CPU per query. Set operations (setop.go) hash
// rows by their DISTINCT key.
//
// Window functions (window.go): the input is read and sorted by its
// PARTITION BY and ORDER BY values' key encoding, then computed one
// partition at a time (running aggregates incrementally). WITH RECURSIVE
// (recursive.go) streams its rounds, each round reading the previous one
// through a WorkTable, and releases a finished round from the memory
// account. Lateral joins (apply.go) build their right side once per left
// row with the left row's values bound as hidden parameters.
//
// Stored rows straight out (wiresource.go): a plain projection of stored
// columns over a serial or point scan has a WireSource, which hands out
// each visible row's stored key and value instead of decoded values; the
// scan still applies the filter and TTL (decoding a row only when one of
// them needs its values). The server encodes those bytes into the wire
// format itself (package sql's WireRows, rowenc.WireEncoder). A
// WireSource is reset onto each execution's scan (Reset) and its memory
// kept per prepared statement, so the set-up allocates nothing once warm.
//
// Cancellation: scans check the statement context every few hundred rows and
// return its error, which the session maps to 57014.
//
// EXPLAIN ANALYZE (analyze.go): an Analysis carried on the statement's
// context.Context makes Build wrap every iterator in a counter of its rows,
// starts and (with TIMING) time, keyed by plan node; without one Build adds
// a nil check per operator and nothing per row (BenchmarkScanAnalyze in
// package sql). Every table read reports the rows it read from storage when
// it finishes a shard's part (Context.addReads): into the shard's read
// counter, the table's seq_tup_read / idx_tup_fetch (ScanCounter) and, under
// EXPLAIN ANALYZE, the scan node's per-shard counts. Debugging: EXPLAIN
// (ANALYZE, TIMING OFF) shows which operator returned or read how many rows.
//
// OneValuesRow (valuesrow.go) evaluates a one-row VALUES of constants and
// parameters without Build, for the source of a single-row INSERT/UPSERT;
// it declines under EXPLAIN ANALYZE, so the VALUES node is still measured.
package exec
