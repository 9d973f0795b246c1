// Package planner holds PivotDB's logical plans and the inference of key
// ranges from predicates (design.md §6, after YTsaurus select_rows).
//
// Plans are data: trees of nodes (Scan, Filter, Project, Aggregate, Sort,
// Limit, Distinct, Values, Generate, Join, LockRows) that the SQL layer builds from a parsed
// statement and the executor (sql/exec) turns into iterators. LockRows
// (lockrows.go) is added by the SQL layer to a bound locking query (SELECT
// ... FOR UPDATE, sql/selectlock.go), never by the binder. Plans never
// execute themselves and never import the executor (the go-mysql-server
// planbuilder/rowexec split).
//
// A Scan reads one table. Its Filter is the whole WHERE condition; its
// Ranges, a RangeProgram compiled from the Filter at plan time, is evaluated
// at execution with the statement's parameters and the session's
// range_expansion_limit into sorted, disjoint key ranges plus the part of
// the filter still to apply. The steps (see rangeprog.go for details):
//
//	CompileRanges   WHERE → atoms (key column ⊙ row-independent expression),
//	                captured conjuncts and residual filter
//	Evaluate        atoms → key tries (keytrie.go, rangeatom.go) →
//	                computed key columns by evaluation or enumeration of
//	                f(key / d) and f(key) % m (computed.go) → ranges within
//	                the expansion limit, widened past it (rangeexpand.go);
//	                a point read by key (`k = $1`) and an IN list of
//	                points (`k IN ($1, ...)`), also over a hash-sharded
//	                key, skip the tries and the walk: the point fast path
//	                (rangepoint.go), which gives exactly what they give
//	                (TestPointFastPathMatchesGeneral)
//	ToSpans         ranges → storage spans (half-open byte ranges)
//	ShardSpans      spans → the shards they touch, in key order (prune.go)
//
// A Scan may read through a secondary index instead (index.go): the
// index's entries are a table with the indexed table's columns keyed by
// the index columns then the primary key, so the same CompileRanges gives
// ranges over them; ChooseIndex picks an index that bounds its first
// column more narrowly than the primary key is bounded.
//
// Ranges are never narrower than the condition: anything that cannot be
// represented widens them and the whole condition is applied. The oracle
// test (oracle_test.go) checks this soundness on random predicates over a
// grid of keys with NULLs, and exactness whenever a result claims it.
//
// Notation (String, EXPLAIN): `[LOWER .. UPPER)` where a bound is a tuple of
// literals of a key prefix, `()` is the start of the table and `<Max>` sorts
// after every value: key (k, l) with `k = 20 AND l > 3` gives
// `[(20, 3, <Max>) .. (20, <Max>))`.
//
// Debugging: the data-driven files in testdata/ranges show input predicates
// and the ranges they give; run `go test ./planner -rewrite` after an
// intended change and read the diff. EXPLAIN prints the same ranges for a
// live table with the shards they touch (`ranges=N partitions=K/T`).
package planner
