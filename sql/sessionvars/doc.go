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
// Debugging: SHOW ALL and pg_settings list every value of a session.
package sessionvars
