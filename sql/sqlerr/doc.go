// Package sqlerr defines the errors a client can see: each carries a
// PostgreSQL SQLSTATE code, a message worded like PostgreSQL's, and, where the
// parser knows it, a 1-based character position in the statement text.
//
// Errors from lower layers that do not carry a code are reported as XX000
// (internal_error): that code means a bug, never a user mistake.
package sqlerr
