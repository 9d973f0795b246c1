// Package bind is PivotDB's binder: Bind turns one parsed statement into a
// bound Statement — plain data (Select{Node}, Insert, Modify, CreateTable,
// ...) that the sql root runs in one place (Session.run). Nothing here
// executes, reads rows or writes.
//
// Binding reads only its Env: the session's database, user and settings,
// the clock, one catalog snapshot, and a function giving the rows of
// sys.partitions when a statement reads them. It imports no transaction,
// partition or storage package (imports_test.go checks).
//
// Layers: bind.go dispatches on the kind of statement and resolves names
// (scope.go); queries are built by select.go, join.go (FROM: join order,
// condition pushdown, derived tables), using.go (JOIN ... USING, NATURAL),
// lateral.go (LATERAL and functions after other FROM items: an Apply
// only when they read an item to their left, else ordinary join items),
// subquery.go
// (outer references become hidden parameters bound per outer row;
// subquery_hash.go decorrelates EXISTS and IN correlated by equalities
// into a hash semi/anti join),
// setop.go, values.go (VALUES as a query), insert.go (an INSERT's rows:
// insertLiterals builds the rows the parser's literal-VALUES fast path read,
// parser.Statement.Values, instead of InsertStmt.Lists;
// literalvalues_test.go checks it against the full parse), cte.go (WITH, WITH RECURSIVE),
// with_dml.go (data-modifying WITH queries: their RETURNING rows as a
// relation the session fills before the main statement runs),
// window.go (window functions over the grouped row; the aggregates TiDB's
// grammar does not know arrive as group_concat(pivot_window_agg('name'),
// ...) OVER, see windowAggArgs), projectset.go (unnest,
// generate_subscripts and information_schema._pg_expandarray — two
// columns in step whose record (x, n) the call stands for — in a select
// list: a ProjectSet under the
// projection, over the Window nodes when the query has aggregates or
// window functions), aggmods.go (an aggregate's ORDER BY and
// array_agg's FILTER, taken off its first argument), grouping_sets.go
// (GROUPING SETS, ROLLUP, CUBE) and view.go (views expand as derived
// tables; lockview.go lists what a view reads, for LOCK on a view);
// writes by insert.go and modify.go (with returning.go for RETURNING lists and onconflict.go for ON
// CONFLICT arbiters and DO UPDATE); sequences and identity columns by
// sequence.go; enum types by enumtype.go (TypeDDL, and resolveType, which
// turns the type names the parser did not know into the database's enum
// types, 42704 otherwise, for column definitions, ALTER COLUMN TYPE and
// casts through expr.Builder.Types); SQL functions by function.go
// (FunctionDDL, and calls inlined through expr.Builder.Funcs) and
// setfunc.go (set-returning SQL functions in FROM: the body planned as a
// derived table, its $n and parameter names bound to the call's arguments
// through binder.fnArgs);
// schema statements by ddl.go, createas.go (CREATE TABLE AS), temp.go
// (temporary tables' private names), alter.go (ALTER TABLE's column and
// constraint actions: the new descriptor plus the scans or rewrite the
// stored rows need), check.go (CHECK constraints), index.go, shard.go and
// show.go; foreign keys (declared, and the FKGraph a write needs) by
// foreignkey.go; cursor statements by cursor.go (FETCH takes its columns
// from the session's open cursor through Env.Cursor); settings.go reads
// the planner switches (enable_indexscan, enable_hashjoin); system
// relations (pg_catalog via sql/pgcatalog, sys.partitions) by system.go.
// A query's locking clauses become one RowLock per locked table
// (locking.go, PostgreSQL's checks and errors) and AS OF SYSTEM TIME an
// AsOf, an absolute HLC timestamp or an offset from the statement's start
// (asof.go, CockroachDB's evaluation and errors); both are fields of
// Select (AsOf also of Txn, for BEGIN ... AS OF SYSTEM TIME).
//
// Privileges: every table and view a statement reads or writes is checked
// for the session's user (for a view's tables, the view's owner) while it is
// bound (privileges.go).
//
// Invariants: a Statement refers to catalog objects as of the snapshot it
// was bound against; the sql root binds again when the catalog changed
// before running it. Parameters nothing constrains are typed text, as in
// PostgreSQL. The parse of the expression texts a write binds every time
// (computed columns, column defaults) is cached by text and shared by all
// sessions (ddl.go, storedExprs): those trees are read-only, so nothing
// may walk them with an ast Visitor (Accept writes children back).
//
// Debugging: EXPLAIN prints what a query was bound to; errors carry the
// position of the offending expression in the statement. testdata/bind
// binds statements against an Env over a catalog of its own, without a
// Session (bind_test.go; rewrite with -rewrite).
package bind
