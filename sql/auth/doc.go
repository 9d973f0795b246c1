// Package auth holds PivotDB's password verifiers: SCRAM-SHA-256 secrets in
// the text form PostgreSQL stores in pg_authid.rolpassword,
//
//	SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>
//
// (salt and keys base64). The catalog keeps only this form, never a
// password; the server's SCRAM exchange (github.com/xdg-go/scram) checks a
// client's proof against it. Using PostgreSQL's format means a verifier
// taken from PostgreSQL (CREATE USER ... PASSWORD 'SCRAM-SHA-256$...', as
// pg_dumpall writes it) works unchanged.
package auth
