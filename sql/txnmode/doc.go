// Package txnmode names a transaction's characteristics as PostgreSQL has
// them: its isolation level, READ ONLY / READ WRITE and DEFERRABLE.
//
// It is a leaf package so that every layer can speak of them: the parser
// and binder produce the words, sessionvars validates the settings
// (default_transaction_isolation, transaction_isolation, ...), the session
// decides a transaction's Mode, and the transaction core (sql/txn) acts on
// it.
//
// # Where the mode lives
//
// The session keeps the characteristics of the open transaction in its
// settings transaction_isolation, transaction_read_only and
// transaction_deferrable (which read as the default_transaction_* settings
// outside a transaction block, as in PostgreSQL, where every statement
// outside a block is a transaction of its own). Session.txnMode turns them
// into a Mode: the one value the transaction core reads to choose its
// snapshot and conflict rules.
//
// # What runs today
//
// Implemented is the gate every place that accepts a level asks: READ
// COMMITTED (and READ UNCOMMITTED, which is READ COMMITTED in PostgreSQL
// too), REPEATABLE READ and SERIALIZABLE all run (sql/txn; SERIALIZABLE by
// timestamp ordering with read refresh, see sql/txn/readspans.go). A
// READ ONLY DEFERRABLE SERIALIZABLE transaction reads one consistent
// snapshot and never fails, like every read-only SERIALIZABLE transaction
// here: DEFERRABLE has nothing to wait for.
package txnmode
