package pgcatalog

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Owners, ACLs and the privilege inquiry functions: relowner/relacl and
// datdba/datacl show the catalog's owners and ACLs (psql's \dp and \l
// print the ACLs), and has_table_privilege, has_database_privilege,
// has_schema_privilege and pg_has_role answer with the same checks the
// statements pass (catalog.Access).

// roleOIDOf is the OID of a role by name (0 for none).
func (v *View) roleOIDOf(name string) int64 {
	for i, r := range v.roles() {
		if r == name {
			return roleOID(i)
		}
	}
	return 0
}

// aclArray is an ACL as the text of an aclitem[] value, NULL for an object
// never granted on.
func aclArray(a acl.ACL) any {
	if a == nil {
		return nil
	}
	parts := make([]string, len(a))
	for i, s := range a.Strings() {
		if strings.ContainsAny(s, `"\,{} `) {
			s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		parts[i] = s
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// privilegeFuncs are the privilege inquiry functions. Each takes an
// optional role (name or OID; the session's user without one), an object
// (name or OID) and a privilege list ("SELECT, INSERT", each optionally
// "WITH GRANT OPTION"), and is true when the role holds any of them.
func privilegeFuncs() map[string]*sessionFunc {
	f := func(name string, check func(v *View, acc *catalog.Access, obj types.Value, privs string) (bool, error)) *sessionFunc {
		return sig(2, 3).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			for i, a := range args {
				if a.Type().Family == types.Unknown {
					c, err := expr.NewCast(a, tText)
					if err != nil {
						return nil, err
					}
					args[i] = c
				}
			}
			return expr.NewSessionFunc(name, tBool, args, func(a []types.Value) (types.Value, error) {
				for _, x := range a {
					if x.IsNull() {
						return types.NullValue, nil
					}
				}
				role := v.User
				if len(a) == 3 {
					var err error
					if role, err = v.roleArg(a[0]); err != nil {
						return types.Value{}, err
					}
					a = a[1:]
				}
				ok, err := check(v, v.Snapshot.Access(role), a[0], a[1].Str())
				if err != nil {
					return types.Value{}, err
				}
				return types.NewBool(ok), nil
			}), nil
		})
	}
	return map[string]*sessionFunc{
		"has_table_privilege":    f("has_table_privilege", tablePrivilege),
		"has_database_privilege": f("has_database_privilege", databasePrivilege),
		"has_schema_privilege":   f("has_schema_privilege", schemaPrivilege),
		"pg_has_role":            f("pg_has_role", hasRole),
	}
}

// roleArg resolves a role given by name or OID.
func (v *View) roleArg(x types.Value) (string, error) {
	if x.Family().IsInteger() {
		for i, r := range v.roles() {
			if roleOID(i) == x.Int() {
				return r, nil
			}
		}
		return "", sqlerr.New(sqlerr.UndefinedObject, "role with OID %d does not exist", x.Int())
	}
	if _, ok := v.Snapshot.User(x.Str()); !ok && x.Str() != v.User {
		return "", sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", x.Str())
	}
	return x.Str(), nil
}

// privilegeList parses a privilege list: the privileges, and which of them
// are asked WITH GRANT OPTION. Names outside valid are refused as
// PostgreSQL refuses them; ignored are valid names PivotDB never grants
// (TEMPORARY, REFERENCES, TRIGGER: no role holds them but a superuser).
func privilegeList(s string, valid acl.Privilege, ignored ...string) (privs, options acl.Privilege, err error) {
	for _, part := range strings.Split(s, ",") {
		word := strings.ToUpper(strings.Join(strings.Fields(part), " "))
		withOption := strings.HasSuffix(word, " WITH GRANT OPTION")
		word = strings.TrimSuffix(word, " WITH GRANT OPTION")
		p, ok := acl.Parse(word)
		switch {
		case ok && valid&p != 0:
			privs |= p
			if withOption {
				options |= p
			}
		case contains(ignored, word):
		default:
			return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(part))
		}
	}
	return privs, options, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// holds reports whether acc holds any of privs (options: with the grant
// option) on o.
func holds(acc *catalog.Access, o *catalog.Owned, k acl.Kind, privs, options acl.Privilege) bool {
	held, heldOptions := acc.Privileges(o, k)
	return held&(privs&^options) != 0 || heldOptions&options != 0
}

func tablePrivilege(v *View, acc *catalog.Access, obj types.Value, list string) (bool, error) {
	privs, options, err := privilegeList(list, acl.All(acl.Table), "REFERENCES", "TRIGGER", "MAINTAIN")
	if err != nil {
		return false, err
	}
	oid := obj.Int()
	if !obj.Family().IsInteger() {
		var ok bool
		if oid, ok = v.relationOID(obj.Str()); !ok {
			return false, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", obj.Str())
		}
	}
	if acc.Superuser() {
		return true, nil
	}
	if t, ok := v.tableByOID(oid); ok {
		return holds(acc, &t.Owned, acl.Table, privs, options), nil
	}
	for _, vw := range v.Snapshot.Views(v.Database.ID) {
		if int64(vw.ID) == oid {
			return holds(acc, &vw.Owned, acl.Table, privs, options), nil
		}
	}
	if name, ok := v.relationName(oid); ok && !superuserOnly[name] {
		// System relations grant SELECT to PUBLIC (but the password
		// relations, which only superusers may read); an index has no
		// privileges of its own.
		for _, list := range virtualTableLists {
			for i, vt := range list {
				if systemOID(vt, i) == oid {
					return privs&^options&acl.Select != 0, nil
				}
			}
		}
	}
	return false, nil
}

func databasePrivilege(v *View, acc *catalog.Access, obj types.Value, list string) (bool, error) {
	privs, options, err := privilegeList(list, acl.All(acl.Database), "TEMPORARY", "TEMP")
	if err != nil {
		return false, err
	}
	var d *catalog.Database
	for _, x := range v.Snapshot.Databases() {
		if obj.Family().IsInteger() && int64(x.ID) == obj.Int() || !obj.Family().IsInteger() && x.Name == obj.Str() {
			d = x
		}
	}
	if d == nil {
		if obj.Family().IsInteger() {
			return false, sqlerr.New(sqlerr.UndefinedDatabase, "database with OID %d does not exist", obj.Int())
		}
		return false, sqlerr.New(sqlerr.UndefinedDatabase, "database %q does not exist", obj.Str())
	}
	return acc.Superuser() || holds(acc, &d.Owned, acl.Database, privs, options), nil
}

// schemaPrivilege: every role may use the schemas; CREATE in public is
// CREATE on the session's database, in the system schemas a superuser's.
func schemaPrivilege(v *View, acc *catalog.Access, obj types.Value, list string) (bool, error) {
	var schema string
	if obj.Family().IsInteger() {
		switch obj.Int() {
		case oidPublic:
			schema = "public"
		case oidPgCatalog:
			schema = "pg_catalog"
		case oidInformationSchema:
			schema = "information_schema"
		default:
			return false, sqlerr.New(sqlerr.InvalidSchemaName, "schema with OID %d does not exist", obj.Int())
		}
	} else {
		schema = obj.Str()
		if schema != "public" && schema != "pg_catalog" && schema != "information_schema" {
			return false, sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", schema)
		}
	}
	for _, part := range strings.Split(list, ",") {
		word := strings.ToUpper(strings.Join(strings.Fields(part), " "))
		withOption := strings.HasSuffix(word, " WITH GRANT OPTION")
		switch strings.TrimSuffix(word, " WITH GRANT OPTION") {
		case "USAGE":
			if acc.Superuser() || !withOption {
				return true, nil
			}
		case "CREATE":
			if acc.Superuser() {
				return true, nil
			}
			if schema == "public" {
				_, options := acc.Privileges(&v.Database.Owned, acl.Database)
				if held := acc.Has(&v.Database.Owned, acl.Database, acl.Create); held && (!withOption || options&acl.Create != 0) {
					return true, nil
				}
			}
		default:
			return false, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(part))
		}
	}
	return false, nil
}

// hasRole is pg_has_role: MEMBER, USAGE and SET all mean membership, since
// every role inherits the privileges of the roles it is a member of.
func hasRole(v *View, acc *catalog.Access, obj types.Value, list string) (bool, error) {
	role, err := v.roleArg(obj)
	if err != nil {
		return false, err
	}
	for _, part := range strings.Split(list, ",") {
		word := strings.ToUpper(strings.Join(strings.Fields(part), " "))
		switch strings.TrimSuffix(word, " WITH ADMIN OPTION") {
		case "MEMBER", "USAGE", "SET":
		default:
			return false, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(part))
		}
	}
	return acc.MemberOf(role), nil
}

// superuserOnly are the system relations that hold password verifiers:
// only superusers may read them.
var superuserOnly = map[string]bool{"pg_authid": true, "pg_shadow": true}

// SuperuserOnly reports whether a system relation may be read by
// superusers only.
func (t *Table) SuperuserOnly() bool { return t.Schema == "pg_catalog" && superuserOnly[t.Name] }
