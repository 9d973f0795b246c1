// Package sessionvars holds PivotDB's run-time settings (SET / SHOW /
// RESET, pg_settings, current_setting, ParameterStatus): the table of known
// settings with their defaults and how each new value is validated and
// normalised (table.go, normalize.go), and Vars, one session's values
// (vars.go).
//
// Invariants: a Vars holds a value for every setting of the table, always
// in normalised form; names are case-insensitive and kept lower case;
// read-only settings change only through Init (the server's own values,
// such as session_authorization). Reportable settings that changed are
// remembered until TakeChanged, so the wire layer can send ParameterStatus
// for exactly them. A session's defaults (what RESET returns to) are the
// server's, then what SetDefault adds at connection start: ALTER
// DATABASE/ROLE ... SET and the startup packet. TimeZone values are what
// types.LoadZone resolves; sql_dialect is yql or postgresql.
//
// Transaction characteristics (txn.go): transaction_isolation,
// transaction_read_only and transaction_deferrable are the open
// transaction block's (BeginTxn copies the default_transaction_* values in,
// EndTxn lets them follow the defaults again); outside a block they read as
// the defaults. The session, not Vars, enforces when they may change (SET
// TRANSACTION's rules). Isolation levels are validated with package
// txnmode, which also says which levels run (0A000 for the others).
//
// What every statement reads is kept parsed beside the values: the four
// timeouts and TxnMode's answers in and outside a block. Every write of a
// value goes through Vars.store, which updates the timeouts and clears
// the modes, so neither can go stale.
//
// Debugging: SHOW ALL and pg_settings list every value of a session.
package sessionvars
