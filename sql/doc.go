// Package sql is PivotDB's SQL layer: the Engine (storage, catalog, shard
// manager, transactions) and the Sessions that run statements on it.
//
// Layers, top to bottom:
//
//	Session.Prepare / PrepareScript   parse (sql/parser) → analyse: an
//	                                  analyser builds a statementPlan against
//	                                  one catalog snapshot, inferring $n types
//	Session.Execute                   re-analyse if the catalog changed, run
//	                                  the plan: queries become exec iterators
//	                                  (sql/exec over planner nodes), writes go
//	                                  through a rowWriter into a txn.Txn
//	Result                            rows streamed to the wire layer, then a
//	                                  command tag
//
// Transactions. A session is outside a block, in an implicit transaction
// (the protocol cycle bracketed by BeginImplicit/Sync: a simple-query string
// or an extended-protocol pipeline commits at Sync), or in an explicit block
// (BEGIN ... COMMIT). Writes take per-key locks (sql/txn) and commit in one
// Pebble batch through the shard manager, which adds the per-shard statistics
// deltas to the same batch. Any error in a block fails it (25P02 until it
// ends). Schema changes commit on their own (catalog and shard maps in one
// batch), also inside a block, with a NOTICE.
//
// Where things live: sql/sessionvars (SET/SHOW settings), select.go (SELECT planning and
// aggregation), join.go (FROM clauses: join order, condition pushdown, hash
// join keys, derived tables), view.go (CREATE/DROP VIEW and view expansion),
// subquery.go (subqueries in expressions: outer references become hidden
// parameters bound per outer row), setop.go (UNION, EXCEPT, INTERSECT and
// their precedence), dml.go (INSERT/UPSERT/REPLACE/UPDATE/DELETE), ddl.go
// (CREATE and DROP, computed columns), index.go (secondary indexes:
// CREATE/DROP INDEX, REINDEX, entry maintenance in every write, UNIQUE
// checks, the schema gate that keeps backfills and commits apart), shards.go
// (sys.partitions, SHOW CREATE TABLE,
// ALTER ... SET/RESET, RESHARD, SPLIT), misc.go (transaction and session
// statements, EXPLAIN), balancer.go (automatic partitioning policy),
// ttl_runner.go (erasing rows expired under a table's TTL; package sql/ttl
// decides expiry, and scans and writes' existence checks hide expired rows),
// sql/pgcatalog (pg_catalog and information_schema as virtual tables over
// the catalog, planned as Generate nodes, and the functions that read the
// session or the catalog: version(), current_setting(), format_type(),
// ::regclass ...; offered to the expression builder through
// expr.Builder.Funcs),
// and users.go (CREATE/ALTER/DROP USER; verifiers from package sql/auth, read by
// the server's SCRAM authentication through Engine.PasswordVerifier).
//
// Limits: statement_timeout (a context deadline per statement, 57014),
// Options.MaxQueryMemory (exec.Context.MemLimit: rows held by sorts,
// grouping, DISTINCT and INSERT sources, 53200);
// idle_in_transaction_session_timeout is enforced by the server, which sees
// the client idle.
//
// Debugging: EXPLAIN shows the plan with each table read's key ranges and the
// shards they touch (for a read through an index, the index and its ranges);
// sys.partitions shows every shard's counters, index shards as
// "table/index". Tests call checkIndexes (index_test.go), which compares
// every index with the entries its table's rows give.
package sql
