// Package planner holds PivotDB's logical plans: trees of plain data nodes
// (Scan, Filter, Project, Aggregate, Sort, Limit, Distinct, Values) that the
// SQL layer builds from a parsed statement and the executor (sql/exec) turns
// into iterators. Plans never execute themselves and never import the
// executor (the go-mysql-server planbuilder/rowexec split).
//
// A Scan reads one table. Its KeyPrefix, when set, fixes a prefix of the
// primary key with expressions evaluated at execution time (so a prepared
// statement's parameters narrow the read to a key range); the Filter is
// always applied in full on top, so the key constraint only has to be sound
// (no matching row outside the range), never exact.
//
// Explain renders a plan as text for EXPLAIN.
package planner
