// Package catalog holds PivotDB's schema descriptors — databases, tables,
// columns and their settings, views, users — and persists them as JSON
// records in the metadata store (package meta, namespace meta.Catalog),
// whose batches ride on the data batch of a schema change, so that the
// change and the data it affects commit atomically.
//
// Layout of catalog records (see storage/keys.go for the prefixes):
//
//	<SystemPrefix> "cat/seq"            next object id (decimal text)
//	<SystemPrefix> "cat/db/"  <id BE8>  Database JSON
//	<SystemPrefix> "cat/tbl/" <id BE8>  Table JSON
//	<SystemPrefix> "cat/user/" <name>   User JSON (name, SCRAM verifier,
//	                                    attributes, memberships)
//	<SystemPrefix> "cat/seqdesc/" <id BE8>  Sequence JSON (options; where
//	                                    it stands is in meta.Sequence)
//	<SystemPrefix> "cat/view/" <id BE8> View JSON (definition text, and
//	                                    the sql_dialect it is written in)
//	<SystemPrefix> "cat/enum/" <id BE8> EnumType JSON (CREATE TYPE ... AS
//	                                    ENUM: name, labels with their sort
//	                                    positions; enum.go). Columns of the
//	                                    type hold a copy of the definition
//	                                    in their types.Type, which ALTER
//	                                    TYPE rewrites in the same change.
//	<SystemPrefix> "cat/func/" <id BE8> Function JSON (CREATE FUNCTION ...
//	                                    LANGUAGE sql: signature, body text
//	                                    and its dialect; function.go)
//	<SystemPrefix> "cat/dbrolesetting/" <db id BE8> <role>
//	                                    RoleSetting JSON: ALTER DATABASE/
//	                                    ROLE ... SET (db 0: every database,
//	                                    role "": every role)
//
// Databases, tables and views carry their owner and ACL (Owned); Access
// answers what a role may do with them.
//
// The in-memory Catalog is a copy-on-write snapshot: readers take the current
// *Snapshot (no locking on the statement path) and schema changes build a
// new Snapshot which is installed only after its batch committed. Names of
// databases, tables and columns compare case-insensitively (as unquoted
// identifiers do in PostgreSQL) and keep the spelling they were created with;
// user names are case-sensitive, as PostgreSQL's role names are.
package catalog
