// Package acl is PivotDB's access control lists: the privileges a role may
// hold on a table, view or database, the list of grants an object carries
// (an ACL of Items, each "grantee=privileges/grantor" as PostgreSQL's
// aclitem prints it), and the edits GRANT and REVOKE make to such a list.
//
// It knows nothing of the catalog: objects keep their owner and their ACL
// (sql/catalog), the catalog's Access answers "may this role do that", and
// the sql root runs GRANT and REVOKE. An object whose ACL is nil has never
// been granted on: its privileges are Default(kind, owner), which is what
// the first GRANT or REVOKE starts from, as in PostgreSQL (relacl NULL
// until then, so psql's \dp shows an empty column).
//
// Debugging: SELECT relname, relacl FROM pg_class shows every table's list
// in aclitem form; has_table_privilege('role', 't', 'SELECT') answers for
// one role.
package acl
