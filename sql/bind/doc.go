// Package bind turns a parsed statement into a bound statement: plain data
// (Select{Node}, Insert, Modify, CreateTable, ...) that the sql root runs in
// one place (Session.run). Nothing here executes, reads rows or writes.
//
// Invariants: a Statement refers to catalog objects as of the snapshot it
// was bound against; the sql root re-binds when the catalog changed
// before running it. This package imports no transaction, partition or
// storage package: what it needs from a running session reaches it as
// data (see Env once the binder lives here).
package bind
