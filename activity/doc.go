// Package activity is the registry of live backends (client sessions) that
// pg_stat_activity, pg_cancel_backend, pg_terminate_backend and
// pg_backend_pid read, and the console and metrics count.
//
// Layers: the server (package server) owns the connections, so it creates
// a Backend when a connection finishes its startup, keeps its state
// current (which statement runs, idle or in a transaction block) and gives
// it the functions that cancel the running statement and end the
// connection. The SQL session gets its Backend from the server and hands
// it to the catalog views (sql/pgcatalog), which read the registry through
// it. sql/txn marks a Backend as waiting while a statement waits for a row
// lock, finding it in the statement's context (FromContext).
//
// Invariants: a Backend is in its Registry from its connection's startup
// to the connection's end, and its PID is the one the client got in
// BackendKeyData. Fields that change while a statement runs are read and
// written under the Backend's mutex; Snapshot copies them.
//
// Debugging: SELECT * FROM pg_stat_activity shows what the registry holds.
package activity
