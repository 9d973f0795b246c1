// Package pgcatalog answers the PostgreSQL system catalogs that clients
// query (psql's describe commands, drivers' metadata calls) from PivotDB's
// own catalog.
//
// Each one is a virtual table: a list of columns and a function that
// produces its rows from one catalog snapshot and the session (a View), planned as
// a Generate node, so any query PivotDB can run over a table runs over
// them (WHERE, ORDER BY, aggregates; joins as the executor supports them).
// Nothing is stored: every statement sees the catalog as of its snapshot.
//
// Object identifiers:
//
//	namespaces   pg_catalog = 11, public = 2200, information_schema = 13000
//	tables       their catalog ID (the same number RowDescription reports)
//	primary keys the index and its constraint: pkIndexOID / pkConstraintOID
//	types        PostgreSQL's OIDs of design §3.1's wire types
//	the user     10, like PostgreSQL's bootstrap superuser
//	databases    their catalog ID
//	system views PostgreSQL's OIDs for its catalogs (pg_class 1259, ...,
//	             catalogOIDs), else systemViewOID + their position; every
//	             relation has the hidden system column tableoid
//	YQL types    PostgreSQL lacks (Uint64, Int8, Datetime, ...): domains
//	             over their wire type (yqlDomains), so format_type prints a
//	             name PivotDB reads back and clients see the base type
//
// Figures that live outside the catalog reach the View as callbacks the
// session fills: shard data sizes (RelationSize, for pg_relation_size and
// its kind: funcs_size.go), a table's settings with its current shard
// boundaries (TableOptions, for pg_class.reloptions, which pg_dump writes
// back as WITH (...)), a view's columns (ViewColumns: the binder plans the
// view), activity counters, locks and cursors.
//
// Types: oid columns are bigint, name and char columns text. Array
// columns are arrays (cols: text[], int2[], oid[] as bigint[]; aclitem[]
// is text[] of PostgreSQL's aclitem text): producers hand row() their
// text form ('{a,b}'), which it parses, so a malformed one panics (a bug
// here). int2vector and oidvector columns (indkey, indoption, indclass,
// proargtypes) are int2[] / bigint[] whose values are given as '1 2' and
// print so again (types.NewVector), as clients split indkey::varchar on
// blanks; RowDescription says int2[] where PostgreSQL says int2vector.
// pg_type lists the array types of the built-in types (typelem,
// typarray), and array columns of user tables report them (format_type
// prints "integer[]").
//
// Layers: Lookup finds a relation by name and Table.Node plans its read as
// a planner.Generate node whose rows are computed when the statement runs
// (tables.go); Function resolves the session functions for the expression
// builder (funcs.go: the table of functions; funcs_catalog.go: their
// bodies). Both read a View: the statement's catalog
// snapshot, database, user and settings — never the session itself, so the
// binder can use them without the executor.
//
// Debugging: SELECT * FROM pg_catalog.pg_class (or any relation) shows what
// a client sees; sql/testdata/pgcatalog holds the queries psql and drivers
// send, with their expected answers.
package pgcatalog
