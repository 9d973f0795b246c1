package pgcatalog

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The relations of pg_catalog and information_schema (see pgcatalog.go).
// Columns follow PostgreSQL 15's, in its order, so that SELECT * and the
// queries of clients written against PostgreSQL find what they expect.
// Relations whose PostgreSQL counterparts describe features PivotDB does
// not have (inheritance, policies, triggers, rules, publications, extended
// statistics, comments) exist with their columns and no rows: a query
// about them gets the true answer, "none".

func empty(*View) [][]types.Value { return nil }

var (
	pgDescriptionCols = cols("objoid oid, classoid oid, objsubid int4, description text")
	pgNamespaceCols   = cols("oid oid, nspname name, nspowner oid, nspacl aclitem[]")
	pgClassCols       = cols("oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid, " +
		"relam oid, relfilenode oid, reltablespace oid, relpages int4, reltuples float4, relallvisible int4, " +
		"reltoastrelid oid, relhasindex bool, relisshared bool, relpersistence char, relkind char, relnatts int2, " +
		"relchecks int2, relhasrules bool, relhastriggers bool, relhassubclass bool, relrowsecurity bool, " +
		"relforcerowsecurity bool, relispopulated bool, relreplident char, relispartition bool, relrewrite oid, " +
		"relfrozenxid xid, relminmxid xid, relacl aclitem[], reloptions text[], relpartbound text")
	pgAttributeCols = cols("attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2, attnum int2, " +
		"attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, attstorage char, " +
		"attcompression char, attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, " +
		"attgenerated char, attisdropped bool, attislocal bool, attinhcount int4, attcollation oid, attacl aclitem[], " +
		"attoptions text[], attfdwoptions text[], attmissingval text")
	pgEnumCols = cols("oid oid, enumtypid oid, enumsortorder float4, enumlabel name")
	pgTypeCols = cols("oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool, " +
		"typtype char, typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid, " +
		"typsubscript regproc, typelem oid, typarray oid, typinput regproc, typoutput regproc, typreceive regproc, " +
		"typsend regproc, typmodin regproc, typmodout regproc, typanalyze regproc, typalign char, typstorage char, " +
		"typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, typcollation oid, typdefaultbin text, " +
		"typdefault text, typacl aclitem[]")
	pgIndexCols = cols("indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool, " +
		"indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, indisclustered bool, " +
		"indisvalid bool, indcheckxmin bool, indisready bool, indislive bool, indisreplident bool, indkey int2vector, " +
		"indcollation oidvector, indclass oidvector, indoption int2vector, indexprs text, indpred text")
	pgConstraintCols = cols("oid oid, conname name, connamespace oid, contype char, condeferrable bool, " +
		"condeferred bool, convalidated bool, conrelid oid, contypid oid, conindid oid, conparentid oid, " +
		"confrelid oid, confupdtype char, confdeltype char, confmatchtype char, conislocal bool, coninhcount int4, " +
		"connoinherit bool, conkey int2[], confkey int2[], conpfeqop oid[], conppeqop oid[], conffeqop oid[], " +
		"confdelsetcols int2[], conexclop oid[], conbin text")
	pgDatabaseCols = cols("oid oid, datname name, datdba oid, encoding int4, datlocprovider char, " +
		"datistemplate bool, datallowconn bool, datconnlimit int4, datfrozenxid xid, datminmxid xid, " +
		"dattablespace oid, datcollate text, datctype text, daticulocale text, datcollversion text, datacl aclitem[]")
	pgRolesCols = cols("rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, " +
		"rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, rolvaliduntil timestamp, " +
		"rolbypassrls bool, rolconfig text[], oid oid")
	pgAuthidCols = cols("oid oid, rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool, " +
		"rolcanlogin bool, rolreplication bool, rolbypassrls bool, rolconnlimit int4, rolpassword text, rolvaliduntil timestamp")
	pgShadowCols = cols("usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, " +
		"usebypassrls bool, passwd text, valuntil timestamp, useconfig text[]")
	pgAuthMembersCols   = cols("oid oid, roleid oid, member oid, grantor oid, admin_option bool")
	pgDbRoleSettingCols = cols("setdatabase oid, setrole oid, setconfig text[]")
	pgUserCols          = cols("usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, " +
		"usebypassrls bool, passwd text, valuntil timestamp, useconfig text[]")
	pgSettingsCols = cols("name text, setting text, unit text, category text, short_desc text, extra_desc text, " +
		"context text, vartype text, source text, min_val text, max_val text, enumvals text[], boot_val text, " +
		"reset_val text, sourcefile text, sourceline int4, pending_restart bool")
	pgCursorsCols = cols("name text, statement text, is_holdable bool, is_binary bool, is_scrollable bool, " +
		"creation_time timestamp")
	pgAmCols      = cols("oid oid, amname name, amhandler regproc, amtype char")
	pgAttrdefCols = cols("oid oid, adrelid oid, adnum int2, adbin text")
	pgProcCols    = cols("oid oid, proname name, pronamespace oid, proowner oid, prolang oid, procost float4, " +
		"prorows float4, provariadic oid, prosupport regproc, prokind char, prosecdef bool, proleakproof bool, " +
		"proisstrict bool, proretset bool, provolatile char, proparallel char, pronargs int2, " +
		"pronargdefaults int2, prorettype oid, proargtypes oidvector, proallargtypes oid[], proargmodes char[], " +
		"proargnames text[], proargdefaults text, protrftypes oid[], prosrc text, probin text, prosqlbody text, " +
		"proconfig text[], proacl aclitem[]")
)

var pgCatalogTables = []*Table{
	{Schema: "pg_catalog", Name: "pg_namespace", Cols: pgNamespaceCols, rows: func(v *View) [][]types.Value {
		c := pgNamespaceCols
		return [][]types.Value{
			row(c, oidPgCatalog, "pg_catalog", oidBootstrapUser, nil),
			// public as PostgreSQL 15 has it: owned by
			// pg_database_owner, USAGE for everyone; PivotDB's CREATE
			// in it is the database's privilege (CREATE ON DATABASE),
			// which the database's owner holds.
			row(c, oidPublic, "public", oidPgDatabaseOwner, "{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}"),
			row(c, oidInformationSchema, "information_schema", oidBootstrapUser, nil),
		}
	}},
	{Schema: "pg_catalog", Name: "pg_class", Cols: pgClassCols, rows: pgClassRows},
	{Schema: "pg_catalog", Name: "pg_attribute", Cols: pgAttributeCols, rows: pgAttributeRows},
	{Schema: "pg_catalog", Name: "pg_type", Cols: pgTypeCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		procs := procOIDs(procNames())
		for _, t := range pgTypes {
			typtype, mod := "b", int64(-1)
			if t.base != 0 {
				typtype, mod = "d", t.baseMod
			}
			arr := int64(types.ArrayOID(uint32(t.oid)))
			in, outf := procs.typeIO(t.oid, t.base)
			out = append(out, row(pgTypeCols, t.oid, t.typname, oidPgCatalog, oidBootstrapUser, t.len, t.byVal,
				typtype, t.category, false, true, ",", 0, 0, 0, arr, in, outf, 0, 0, 0, 0, 0, t.align, "p",
				false, t.base, mod, 0, typeCollation(t.oid), nil, nil, nil))
		}
		// The array types: typelem names the element type, as the
		// drivers read it to decode arrays.
		for _, t := range pgTypes {
			arr := int64(types.ArrayOID(uint32(t.oid)))
			if arr == 0 {
				continue
			}
			out = append(out, row(pgTypeCols, arr, "_"+t.typname, oidPgCatalog, oidBootstrapUser, -1, false,
				"b", "A", false, true, ",", 0, 0, t.oid, 0, procs.oid(arrayIn), procs.oid(arrayOut), 0, 0, 0, 0, 0, t.align, "x",
				false, 0, -1, 0, typeCollation(t.oid), nil, nil, nil))
		}
		// The database's enum types (typtype 'e', category 'E').
		for _, e := range v.enumTypes() {
			out = append(out, row(pgTypeCols, int64(e.Def.OID()), e.Def.Name, oidPublic, v.roleOIDOf(e.OwnerName()),
				4, true, "e", "E", false, true, ",", 0, 0, 0, int64(e.Def.ArrayOID()), procs.oid(enumIn), procs.oid(enumOut), 0, 0, 0, 0, 0, "i", "p",
				false, 0, -1, 0, 0, nil, nil, aclArray(e.ACL)))
			// Its array type, _name.
			out = append(out, row(pgTypeCols, int64(e.Def.ArrayOID()), "_"+e.Def.Name, oidPublic, v.roleOIDOf(e.OwnerName()),
				-1, false, "b", "A", false, true, ",", 0, 0, int64(e.Def.OID()), 0, procs.oid(arrayIn), procs.oid(arrayOut), 0, 0, 0, 0, 0, "i", "x",
				false, 0, -1, 0, 0, nil, nil, aclArray(e.ACL)))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_index", Cols: pgIndexCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, t := range v.tables() {
			if !hasVisibleKey(t) {
				continue
			}
			keys := make([]string, len(t.PrimaryKey))
			zeros := make([]string, len(t.PrimaryKey))
			for i, k := range t.PrimaryKey {
				keys[i] = strconv.Itoa(attnum(t, k))
				zeros[i] = "0"
			}
			n := len(t.PrimaryKey)
			out = append(out, row(pgIndexCols, pkIndexOID(t), int64(t.ID), n, n, true, false, true, false,
				true, false, true, false, true, true, false, strings.Join(keys, " "), strings.Join(zeros, " "),
				strings.Join(zeros, " "), strings.Join(zeros, " "), nil, nil))
		}
		for _, t := range v.tables() {
			for _, ix := range t.Indexes {
				keys := make([]string, len(ix.Columns))
				zeros := make([]string, len(ix.Columns))
				opts := make([]string, len(ix.Columns))
				for i, c := range ix.Columns {
					keys[i] = strconv.Itoa(attnum(t, c))
					zeros[i] = "0"
					// indoption: a DESC column is INDOPTION_DESC with
					// INDOPTION_NULLS_FIRST, DESC's default (3), as
					// PostgreSQL records it (pgjdbc's getIndexInfo
					// reads ASC_OR_DESC from bit 1).
					opts[i] = "0"
					if i < len(ix.Desc) && ix.Desc[i] {
						opts[i] = "3"
					}
				}
				n := len(ix.Columns)
				out = append(out, row(pgIndexCols, int64(ix.ID), int64(t.ID), n, n, ix.Unique, false, false, false,
					true, false, true, false, true, true, false, strings.Join(keys, " "), strings.Join(zeros, " "),
					strings.Join(zeros, " "), strings.Join(opts, " "), nil, nil))
			}
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_constraint", Cols: pgConstraintCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, t := range v.tables() {
			if !hasVisibleKey(t) {
				continue
			}
			keys := make([]int, len(t.PrimaryKey))
			for i, k := range t.PrimaryKey {
				keys[i] = attnum(t, k)
			}
			out = append(out, row(pgConstraintCols, pkConstraintOID(t), pkIndexName(t), oidPublic, "p", false,
				false, true, int64(t.ID), 0, pkIndexOID(t), 0, 0, " ", " ", " ", true, 0, true, arrayText(keys),
				nil, nil, nil, nil, nil, nil, nil))
		}
		for _, t := range v.tables() {
			for _, ix := range t.Indexes {
				if !ix.Unique {
					continue
				}
				keys := make([]int, len(ix.Columns))
				for i, k := range ix.Columns {
					keys[i] = attnum(t, k)
				}
				out = append(out, row(pgConstraintCols, int64(ix.ID)|pkConstraintBit, ix.Name, oidPublic, "u", false,
					false, true, int64(t.ID), 0, int64(ix.ID), 0, 0, " ", " ", " ", true, 0, true, arrayText(keys),
					nil, nil, nil, nil, nil, nil, nil))
			}
			for k, fk := range t.ForeignKeys {
				parent, ok := v.Snapshot.TableByID(fk.RefTable)
				if !ok {
					continue
				}
				keys := make([]int, len(fk.Columns))
				refs := make([]int, len(fk.Columns))
				for i, c := range fk.Columns {
					keys[i] = attnum(t, c)
					refs[i] = attnum(parent, parent.PrimaryKey[i])
				}
				out = append(out, row(pgConstraintCols, fkConstraintOID(t, k), fk.Name, oidPublic, "f", false,
					false, !fk.NotValid, int64(t.ID), 0, pkIndexOID(parent), 0, int64(parent.ID), string(fk.OnUpdate),
					string(fk.OnDelete), "s", true, 0, true, arrayText(keys), arrayText(refs),
					nil, nil, nil, nil, nil, nil))
			}
			for k, c := range t.Checks {
				var keys []int
				for i, col := range t.Columns {
					if !col.Hidden && exprUsesColumn(c.Expr, col.Name) {
						keys = append(keys, attnum(t, i))
					}
				}
				out = append(out, row(pgConstraintCols, checkConstraintOID(t, k), c.Name, oidPublic, "c", false,
					false, !c.NotValid, int64(t.ID), 0, 0, 0, 0, " ", " ", " ", true, 0, false, arrayText(keys),
					nil, nil, nil, nil, nil, nil, storedExprText(c.Expr)))
			}
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_database", Cols: pgDatabaseCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, d := range v.Snapshot.Databases() {
			out = append(out, row(pgDatabaseCols, d.ID, d.Name, v.roleOIDOf(d.OwnerName()), 6, "c", false, true, -1, 0, 0,
				oidDefaultTablespace, "C", "C", nil, nil, aclArray(d.ACL)))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_roles", Cols: pgRolesCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for i, r := range v.roles() {
			u := v.role(r)
			out = append(out, row(pgRolesCols, r, u.Superuser, true, u.CreateRole, u.CreateDB, !u.NoLogin, false, -1,
				"********", nil, false, v.roleConfig(r), roleOID(i)))
		}
		out = append(out, row(pgRolesCols, "pg_database_owner", false, true, false, false, false, false, -1,
			"********", nil, false, nil, oidPgDatabaseOwner))
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_user", Cols: pgUserCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for i, r := range v.roles() {
			if u := v.role(r); !u.NoLogin {
				out = append(out, row(pgUserCols, r, roleOID(i), u.CreateDB, u.Superuser, false, false, "********", nil, nil))
			}
		}
		return out
	}},
	// pg_authid and pg_shadow hold the password verifiers: superusers only
	// (the binder refuses them to others, see SuperuserOnly).
	{Schema: "pg_catalog", Name: "pg_authid", Cols: pgAuthidCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for i, r := range v.roles() {
			u := v.role(r)
			out = append(out, row(pgAuthidCols, roleOID(i), r, u.Superuser, true, u.CreateRole, u.CreateDB, !u.NoLogin,
				false, false, -1, nullIfEmpty(u.Password), nil))
		}
		out = append(out, row(pgAuthidCols, oidPgDatabaseOwner, "pg_database_owner", false, true, false, false, false,
			false, false, -1, nil, nil))
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_shadow", Cols: pgShadowCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for i, r := range v.roles() {
			if u := v.role(r); !u.NoLogin {
				out = append(out, row(pgShadowCols, r, roleOID(i), u.CreateDB, u.Superuser, false, false,
					nullIfEmpty(u.Password), nil, nil))
			}
		}
		return out
	}},
	// ALTER DATABASE/ROLE ... SET (psql's \drds).
	{Schema: "pg_catalog", Name: "pg_db_role_setting", Cols: pgDbRoleSettingCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, r := range v.Snapshot.RoleSettings() {
			var role int64
			if r.Role != "" {
				role = v.roleOIDOf(r.Role)
			}
			out = append(out, row(pgDbRoleSettingCols, int64(r.DatabaseID), role, settingsArray(r.Settings)))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_auth_members", Cols: pgAuthMembersCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for i, r := range v.roles() {
			for _, m := range v.role(r).MemberOf {
				role := v.roleOIDOf(m)
				out = append(out, row(pgAuthMembersCols, roleOID(i)<<16|role, role, roleOID(i), oidBootstrapUser, false))
			}
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_settings", Cols: pgSettingsCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, n := range sessionvars.Names() {
			val, _ := v.Settings.Get(n)
			ctx := "user"
			if sessionvars.ReadOnly(n) {
				ctx = "internal"
			}
			out = append(out, row(pgSettingsCols, sessionvars.DisplayName(n), val, nil, "PivotDB", "", nil, ctx, "string",
				"default", nil, nil, nil, sessionvars.Default(n), sessionvars.Default(n), nil, nil, false))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_cursors", Cols: pgCursorsCols, rows: func(v *View) [][]types.Value {
		if v.Cursors == nil {
			return nil
		}
		var out [][]types.Value
		for _, c := range v.Cursors() {
			out = append(out, row(pgCursorsCols, c.Name, c.Statement, c.Holdable, c.Binary, c.Scrollable, c.Created))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_description", Cols: pgDescriptionCols, rows: func(v *View) [][]types.Value {
		// PostgreSQL's comment on public (which pg_dump leaves out of a
		// dump when it is unchanged) and COMMENT ON's (comments.go).
		var out [][]types.Value
		for _, d := range v.descriptions() {
			out = append(out, row(pgDescriptionCols, d.objoid, d.classoid, d.objsubid, d.text))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_shdescription", Cols: cols("objoid oid, classoid oid, description text"), rows: empty},
	// No security label providers: pg_dumpall -g reads the roles' labels.
	{Schema: "pg_catalog", Name: "pg_shseclabel", Cols: cols("objoid oid, classoid oid, provider text, label text"), rows: empty},
	// No GRANT ON PARAMETER: pg_dumpall -g lists the grants on settings.
	{Schema: "pg_catalog", Name: "pg_parameter_acl", Cols: cols("oid oid, parname text, paracl aclitem[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_am", Cols: pgAmCols, rows: func(v *View) [][]types.Value {
		return [][]types.Value{
			row(pgAmCols, oidHeapAM, "heap", 0, "t"),
			row(pgAmCols, oidBtreeAM, "btree", 0, "i"),
		}
	}},
	{Schema: "pg_catalog", Name: "pg_attrdef", Cols: pgAttrdefCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, t := range v.tables() {
			for i, c := range t.Columns {
				if c.Default != "" && !c.Hidden {
					out = append(out, row(pgAttrdefCols, int64(t.ID)<<8|int64(attnum(t, i)), int64(t.ID),
						attnum(t, i), storedExprText(c.Default)))
				}
			}
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_collation", Cols: cols("oid oid, collname name, collnamespace oid, collowner oid, collprovider char, collisdeterministic bool, collencoding int4, collcollate text, collctype text, colliculocale text, collversion text"),
		rows: func(v *View) [][]types.Value {
			c := cols("oid oid, collname name, collnamespace oid, collowner oid, collprovider char, collisdeterministic bool, collencoding int4, collcollate text, collctype text, colliculocale text, collversion text")
			return [][]types.Value{
				row(c, oidDefaultCollation, "default", oidPgCatalog, oidBootstrapUser, "d", true, -1, nil, nil, nil, nil),
				row(c, oidCCollation, "C", oidPgCatalog, oidBootstrapUser, "c", true, -1, "C", "C", nil, nil),
			}
		}},
	{Schema: "pg_catalog", Name: "pg_tablespace", Cols: cols("oid oid, spcname name, spcowner oid, spcacl aclitem[], spcoptions text[]"),
		rows: func(v *View) [][]types.Value {
			c := cols("oid oid, spcname name, spcowner oid, spcacl aclitem[], spcoptions text[]")
			return [][]types.Value{row(c, oidDefaultTablespace, "pg_default", oidBootstrapUser, nil, nil)}
		}},
	{Schema: "pg_catalog", Name: "pg_proc", Cols: pgProcCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for i, n := range procNames() {
			out = append(out, row(pgProcCols, procOIDBase+i, n, oidPgCatalog, oidBootstrapUser, 12, 1.0, 0.0, 0, 0,
				"f", false, false, false, false, "v", "s", 0, 0, 0, "", nil, nil, nil, nil, nil, n, nil, nil, nil, nil))
		}
		// The database's SQL functions (prolang 14: sql).
		for _, f := range v.userFunctions() {
			argTypes := make([]string, len(f.Args))
			var names []string
			for i, a := range f.Args {
				argTypes[i] = strconv.FormatInt(typeOID(a.Type), 10)
				if a.Name != "" {
					names = append(names, a.Name)
				}
			}
			var argNames any
			if len(names) > 0 {
				argNames = "{" + strings.Join(names, ",") + "}"
			}
			rows := 0.0
			if f.SetOf {
				rows = 1000 // PostgreSQL's default estimate for a set-returning function
			}
			out = append(out, row(pgProcCols, userFunctionOID(f), f.Name, oidPublic, v.roleOIDOf(f.OwnerName()), 14, 100.0, rows, 0, 0,
				"f", false, false, f.Strict, f.SetOf, f.Volatility, "u", len(f.Args), 0, typeOID(f.Returns),
				strings.Join(argTypes, " "), nil, nil, argNames, nil, nil, f.Body, nil, nil, nil, nil))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_cast", Cols: pgCastCols, rows: pgCastRows},
	{Schema: "pg_catalog", Name: "pg_shseclabel", Cols: cols("objoid oid, classoid oid, provider text, label text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_seclabel", Cols: cols("objoid oid, classoid oid, objsubid int4, provider text, label text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_enum", Cols: pgEnumCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, e := range v.enumTypes() {
			for k, l := range e.Def.Labels {
				out = append(out, row(pgEnumCols, enumLabelOID(e, k), int64(e.Def.OID()), l.Sort, l.Label))
			}
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_inherits", Cols: cols("inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_policy", Cols: cols("oid oid, polname name, polrelid oid, polcmd char, polpermissive bool, polroles oid[], polqual text, polwithcheck text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_trigger", Cols: cols("oid oid, tgrelid oid, tgparentid oid, tgname name, tgfoid oid, tgtype int2, tgenabled char, tgisinternal bool, tgconstrrelid oid, tgconstrindid oid, tgconstraint oid, tgdeferrable bool, tginitdeferred bool, tgnargs int2, tgattr int2vector, tgargs text, tgqual text, tgoldtable name, tgnewtable name"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_rewrite", Cols: cols("oid oid, rulename name, ev_class oid, ev_type char, ev_enabled char, is_instead bool, ev_qual text, ev_action text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_statistic_ext", Cols: cols("oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid, stxstattarget int4, stxkeys int2vector, stxkind char[], stxexprs text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_publication", Cols: cols("oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool, pubupdate bool, pubdelete bool, pubtruncate bool, pubviaroot bool"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_publication_namespace", Cols: cols("oid oid, pnpubid oid, pnnspid oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_publication_rel", Cols: cols("oid oid, prpubid oid, prrelid oid, prqual text, prattrs int2vector"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_extension", Cols: cols("oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool, extversion text, extconfig oid[], extcondition text[]"), rows: empty},
	// The languages functions are written in: PivotDB's built-ins
	// (internal) and SQL functions; none is procedural (lanispl), which is
	// what pg_dump asks for.
	{Schema: "pg_catalog", Name: "pg_language", Cols: pgLanguageCols, rows: func(*View) [][]types.Value {
		return [][]types.Value{
			row(pgLanguageCols, 12, "internal", oidBootstrapUser, false, false, 0, 0, 2246, nil),
			row(pgLanguageCols, 13, "c", oidBootstrapUser, false, false, 0, 0, 2247, nil),
			row(pgLanguageCols, 14, "sql", oidBootstrapUser, false, true, 0, 0, 2248, nil),
		}
	}},
	// Catalogs of objects PivotDB has none of (user-defined operators,
	// operator classes, conversions, text search, foreign data, event
	// triggers, default privileges, subscriptions, large objects):
	// pg_dump reads each.
	{Schema: "pg_catalog", Name: "pg_operator", Cols: cols("oid oid, oprname name, oprnamespace oid, oprowner oid, oprkind char, oprcanmerge bool, oprcanhash bool, oprleft oid, oprright oid, oprresult oid, oprcom oid, oprnegate oid, oprcode oid, oprrest oid, oprjoin oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_opclass", Cols: cols("oid oid, opcmethod oid, opcname name, opcnamespace oid, opcowner oid, opcfamily oid, opcintype oid, opcdefault bool, opckeytype oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_opfamily", Cols: cols("oid oid, opfmethod oid, opfname name, opfnamespace oid, opfowner oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_conversion", Cols: cols("oid oid, conname name, connamespace oid, conowner oid, conforencoding int4, contoencoding int4, conproc oid, condefault bool"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_aggregate", Cols: cols("aggfnoid oid, aggkind char, aggnumdirectargs int2, aggtransfn oid, aggfinalfn oid, aggcombinefn oid, aggserialfn oid, aggdeserialfn oid, aggmtransfn oid, aggminvtransfn oid, aggmfinalfn oid, aggfinalextra bool, aggmfinalextra bool, aggfinalmodify char, aggmfinalmodify char, aggsortop oid, aggtranstype oid, aggtransspace int4, aggmtranstype oid, aggmtransspace int4, agginitval text, aggminitval text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_event_trigger", Cols: cols("oid oid, evtname name, evtevent name, evtowner oid, evtfoid oid, evtenabled char, evttags text[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_ts_parser", Cols: cols("oid oid, prsname name, prsnamespace oid, prsstart oid, prstoken oid, prsend oid, prsheadline oid, prslextype oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_ts_dict", Cols: cols("oid oid, dictname name, dictnamespace oid, dictowner oid, dicttemplate oid, dictinitoption text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_ts_template", Cols: cols("oid oid, tmplname name, tmplnamespace oid, tmplinit oid, tmpllexize oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_ts_config", Cols: cols("oid oid, cfgname name, cfgnamespace oid, cfgowner oid, cfgparser oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_foreign_data_wrapper", Cols: cols("oid oid, fdwname name, fdwowner oid, fdwhandler oid, fdwvalidator oid, fdwacl aclitem[], fdwoptions text[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_foreign_server", Cols: cols("oid oid, srvname name, srvowner oid, srvfdw oid, srvtype text, srvversion text, srvacl aclitem[], srvoptions text[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_default_acl", Cols: cols("oid oid, defaclrole oid, defaclnamespace oid, defaclobjtype char, defaclacl aclitem[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_subscription", Cols: cols("oid oid, subdbid oid, subskiplsn text, subname name, subowner oid, subenabled bool, subbinary bool, substream bool, subtwophasestate char, subdisableonerr bool, subconninfo text, subslotname name, subsynccommit text, subpublications text[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_largeobject_metadata", Cols: cols("oid oid, lomowner oid, lomacl aclitem[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_amop", Cols: cols("oid oid, amopfamily oid, amoplefttype oid, amoprighttype oid, amopstrategy int2, amoppurpose char, amopopr oid, amopmethod oid, amopsortfamily oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_amproc", Cols: cols("oid oid, amprocfamily oid, amproclefttype oid, amprocrighttype oid, amprocnum int2, amproc oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_seclabels", Cols: cols("objoid oid, classoid oid, objsubid int4, objtype text, objnamespace oid, objname text, provider text, label text"), rows: empty},
	// Range types: none.
	{Schema: "pg_catalog", Name: "pg_range", Cols: cols("rngtypid oid, rngsubtype oid, rngmultitypid oid, rngcollation oid, rngsubopc oid, rngcanonical oid, rngsubdiff oid"), rows: empty},
	// pg_dump reads them: PivotDB has no extensions whose initial
	// privileges it would record, nor transforms.
	{Schema: "pg_catalog", Name: "pg_init_privs", Cols: cols("objoid oid, classoid oid, objsubid int4, privtype char, initprivs aclitem[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_transform", Cols: cols("oid oid, trftype oid, trflang oid, trffromsql oid, trftosql oid"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_depend", Cols: pgDependCols, rows: pgDependRows},
	{Schema: "pg_catalog", Name: "pg_foreign_table", Cols: cols("ftrelid oid, ftserver oid, ftoptions text[]"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_partitioned_table", Cols: cols("partrelid oid, partstrat char, partnatts int2, partdefid oid, partattrs int2vector, partclass oidvector, partcollation oidvector, partexprs text"), rows: empty},
	{Schema: "pg_catalog", Name: "pg_sequence", Cols: pgSequenceCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, q := range v.Snapshot.Sequences(v.Database.ID) {
			out = append(out, row(pgSequenceCols, int64(q.ID), typeOID(q.Type), q.Start, q.Increment,
				q.MaxValue, q.MinValue, q.Cache, q.Cycle))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_tables", Cols: pgTablesCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, t := range v.tables() {
			out = append(out, row(pgTablesCols, "public", t.Name, t.OwnerName(), nil, hasVisibleKey(t) || len(t.Indexes) > 0,
				false, false, false))
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_indexes", Cols: pgIndexesCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, t := range v.tables() {
			if hasVisibleKey(t) {
				out = append(out, row(pgIndexesCols, "public", t.Name, pkIndexName(t), nil, pkIndexDef(t)))
			}
			for i := range t.Indexes {
				out = append(out, row(pgIndexesCols, "public", t.Name, t.Indexes[i].Name, nil, indexDef(t, &t.Indexes[i])))
			}
		}
		return out
	}},
	{Schema: "pg_catalog", Name: "pg_stat_activity", Cols: pgStatActivityCols, rows: pgStatActivityRows},
	{Schema: "pg_catalog", Name: "pg_locks", Cols: pgLocksCols, rowsErr: pgLocksRows},
	{Schema: "pg_catalog", Name: "pg_stat_user_tables", Cols: pgStatUserTablesCols, rows: pgStatUserTablesRows},
}

var pgLanguageCols = cols("oid oid, lanname name, lanowner oid, lanispl bool, lanpltrusted bool, lanplcallfoid oid, laninline oid, lanvalidator oid, lanacl aclitem[]")

var pgCastCols = cols("oid oid, castsource oid, casttarget oid, castfunc oid, castcontext char, castmethod char")

// pgCastRows lists the casts between the types of pg_type that PivotDB
// performs (expr.CastAllowed), each marked as PostgreSQL marks its casts:
// implicit ('i') when the two types mix to the target in an expression,
// in assignment ('a') when a column of the target accepts the source
// without a cast, explicit ('e') otherwise. PivotDB's casts are built-in
// conversions, not functions of pg_proc: castmethod is 'f' with no
// castfunc.
func pgCastRows(*View) [][]types.Value {
	var out [][]types.Value
	for _, from := range pgTypes {
		ft, ok := types.FromOID(uint32(from.oid))
		if !ok || ft.Family == types.Unknown {
			continue
		}
		for _, to := range pgTypes {
			tt, ok := types.FromOID(uint32(to.oid))
			if !ok || tt.Family == types.Unknown || from.oid == to.oid || !expr.CastAllowed(ft, tt) {
				continue
			}
			ctx := "e"
			if common, err := expr.CommonType("", ft, tt); err == nil && common.Family == tt.Family && ft.Family != tt.Family {
				ctx = "i"
			} else if expr.AssignmentAllowed(ft, tt) {
				ctx = "a"
			}
			// Below 16384 (FirstNormalObjectId): built in, so pg_dump
			// does not dump them as CREATE CAST.
			out = append(out, row(pgCastCols, castOIDBase+len(out), from.oid, to.oid, 0, ctx, "f"))
		}
	}
	return out
}

// procOIDBase numbers pg_proc's rows: procOIDBase + the position in
// procNames.
const procOIDBase = 20000

// castOIDBase numbers pg_cast's rows.
const castOIDBase = 10000

// procNames lists the functions pg_proc describes, sorted: the expression
// builder's and the session functions.
func procNames() []string {
	names := append(expr.FunctionNames(), functionNames()...)
	names = append(names, ioFunctionNames()...)
	sort.Strings(names)
	return names
}

var pgSequenceCols = cols("seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8, seqmin int8, seqcache int8, seqcycle bool")

var pgIndexesCols = cols("schemaname name, tablename name, indexname name, tablespace name, indexdef text")

var pgTablesCols = cols("schemaname name, tablename name, tableowner name, tablespace name, hasindexes bool, hasrules bool, hastriggers bool, rowsecurity bool")

func pgClassRows(v *View) [][]types.Value {
	var out [][]types.Value
	c := pgClassCols
	// owner is the relation's owner; nil owned: a system relation.
	var owned *catalog.Owned
	// reloptions of the table being listed (nil: none).
	var reloptions any
	// checks and triggers of the table being listed: relchecks counts its
	// CHECK constraints, relhastriggers is set when foreign keys reference
	// it or go from it (PostgreSQL implements them with triggers, and psql's
	// \d lists foreign keys and "Referenced by" only then).
	var checks int
	var triggers bool
	referenced := map[uint64]bool{}
	for _, t := range v.tables() {
		for _, fk := range t.ForeignKeys {
			referenced[fk.RefTable] = true
		}
	}
	rel := func(oid int64, name string, ns int64, am int64, hasIndex bool, kind string, natts int) []types.Value {
		owner, relacl := int64(oidBootstrapUser), any(nil)
		if owned != nil {
			owner = v.roleOIDOf(owned.OwnerName())
			if kind != "i" {
				relacl = aclArray(owned.ACL)
			}
		}
		return row(c, oid, name, ns, 0, 0, owner, am, oid, 0, 0, -1.0, 0, 0, hasIndex, false, "p",
			kind, natts, checks, false, triggers, false, false, false, true, "d", false, 0, 0, 0, relacl, reloptions, nil)
	}
	for _, t := range v.tables() {
		owned = &t.Owned
		key := hasVisibleKey(t)
		reloptions = v.tableOptions(t)
		checks, triggers = len(t.Checks), len(t.ForeignKeys) > 0 || referenced[t.ID]
		out = append(out, rel(int64(t.ID), t.Name, oidPublic, oidHeapAM, key || len(t.Indexes) > 0, "r",
			len(visibleTableColumns(t))))
		reloptions, checks, triggers = nil, 0, false
		if key {
			out = append(out, rel(pkIndexOID(t), pkIndexName(t), oidPublic, oidBtreeAM, false, "i", len(t.PrimaryKey)))
		}
		for _, ix := range t.Indexes {
			out = append(out, rel(int64(ix.ID), ix.Name, oidPublic, oidBtreeAM, false, "i", len(ix.Columns)))
		}
	}
	// Views: their columns are known by planning their query.
	for _, vw := range v.Snapshot.Views(v.Database.ID) {
		owned = &vw.Owned
		out = append(out, rel(int64(vw.ID), vw.Name, oidPublic, 0, false, "v", len(v.viewColumns(vw))))
	}
	owned = nil
	// A sequence is a relation of kind S with three columns in
	// PostgreSQL (last_value, log_cnt, is_called).
	for _, q := range v.Snapshot.Sequences(v.Database.ID) {
		owned = &q.Owned
		out = append(out, rel(int64(q.ID), q.Name, oidPublic, 0, false, "S", 3))
	}
	owned = nil
	for _, list := range virtualTableLists {
		for i, vt := range list {
			ns := int64(oidPgCatalog)
			if vt.Schema == "information_schema" {
				ns = oidInformationSchema
			}
			out = append(out, rel(systemOID(vt, i), vt.Name, ns, 0, false, "v", len(vt.Cols)))
		}
	}
	return out
}

func pgAttributeRows(v *View) [][]types.Value {
	var out [][]types.Value
	attr := func(rel int64, name string, typ types.Type, num int, notNull, hasDef bool, generated string, identity ...string) []types.Value {
		ident := ""
		if len(identity) > 0 {
			ident = identity[0]
		}
		oid := typeOID(typ)
		var length int64 = -1
		byVal := false
		align := "i"
		for _, pt := range pgTypes {
			if pt.oid == oid {
				length, byVal, align = int64(pt.len), pt.byVal, pt.align
			}
		}
		var coll, ndims int64
		if typ.ElemType().Family == types.Utf8 {
			coll = oidDefaultCollation
		}
		storage := "p"
		if typ.Family == types.Array {
			ndims, storage = 1, "x"
			length, byVal = -1, false
			if typ.ElemType().TypeSize() == 8 {
				align = "d"
			}
		}
		return row(pgAttributeCols, rel, name, oid, -1, length, num, ndims, -1, typmod(typ), byVal, align, storage, "",
			notNull, hasDef, false, ident, generated, false, true, 0, coll, nil, nil, nil, nil)
	}
	for _, t := range v.tables() {
		for _, i := range visibleTableColumns(t) {
			c := t.Columns[i]
			gen := ""
			if c.Computed != "" {
				gen = "s"
			}
			out = append(out, attr(int64(t.ID), c.Name, c.Type, attnum(t, i), c.NotNull, c.Default != "", gen,
				map[string]string{catalog.IdentityAlways: "a", catalog.IdentityByDefault: "d"}[c.Identity]))
		}
		if hasVisibleKey(t) {
			for n, k := range t.PrimaryKey {
				c := t.Columns[k]
				out = append(out, attr(pkIndexOID(t), c.Name, c.Type, n+1, c.NotNull, false, ""))
			}
		}
		for _, ix := range t.Indexes {
			for n, k := range ix.Columns {
				c := t.Columns[k]
				out = append(out, attr(int64(ix.ID), c.Name, c.Type, n+1, c.NotNull, false, ""))
			}
		}
	}
	for _, vw := range v.Snapshot.Views(v.Database.ID) {
		for n, c := range v.viewColumns(vw) {
			out = append(out, attr(int64(vw.ID), c.Name, c.Type, n+1, false, false, ""))
		}
	}
	for _, list := range virtualTableLists {
		for i, vt := range list {
			for n, c := range vt.Cols {
				out = append(out, attr(systemOID(vt, i), c.Name, c.Type, n+1, false, false, ""))
			}
		}
	}
	return out
}

var (
	isTablesCols = cols("table_catalog name, table_schema name, table_name name, table_type text, " +
		"self_referencing_column_name name, reference_generation text, user_defined_type_catalog name, " +
		"user_defined_type_schema name, user_defined_type_name name, is_insertable_into text, is_typed text, " +
		"commit_action text")
	isColumnsCols = cols("table_catalog name, table_schema name, table_name name, column_name name, " +
		"ordinal_position int4, column_default text, is_nullable text, data_type text, " +
		"character_maximum_length int4, character_octet_length int4, numeric_precision int4, " +
		"numeric_precision_radix int4, numeric_scale int4, datetime_precision int4, interval_type text, " +
		"interval_precision int4, udt_catalog name, udt_schema name, udt_name name, is_identity text, is_generated text, generation_expression text, " +
		"is_updatable text")
	isTableConstraintsCols = cols("constraint_catalog name, constraint_schema name, constraint_name name, " +
		"table_catalog name, table_schema name, table_name name, constraint_type text, is_deferrable text, " +
		"initially_deferred text, enforced text, nulls_distinct text")
	isCheckConstraintsCols = cols("constraint_catalog name, constraint_schema name, constraint_name name, " +
		"check_clause text")
	isReferentialConstraintsCols = cols("constraint_catalog name, constraint_schema name, constraint_name name, " +
		"unique_constraint_catalog name, unique_constraint_schema name, unique_constraint_name name, " +
		"match_option text, update_rule text, delete_rule text")
	isSequencesCols = cols("sequence_catalog name, sequence_schema name, sequence_name name, data_type text, " +
		"numeric_precision int4, numeric_precision_radix int4, numeric_scale int4, start_value text, " +
		"minimum_value text, maximum_value text, increment text, cycle_option text")
	isSchemataCols = cols("catalog_name name, schema_name name, schema_owner name, " +
		"default_character_set_catalog name, default_character_set_schema name, default_character_set_name name, " +
		"sql_path text")
)

var informationSchemaTables = []*Table{
	{Schema: "information_schema", Name: "tables", Cols: isTablesCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		db := v.Database.Name
		for _, t := range v.tables() {
			out = append(out, row(isTablesCols, db, "public", t.Name, "BASE TABLE", nil, nil, nil, nil, nil,
				"YES", "NO", nil))
		}
		for _, vw := range v.Snapshot.Views(v.Database.ID) {
			out = append(out, row(isTablesCols, db, "public", vw.Name, "VIEW", nil, nil, nil, nil, nil,
				"NO", "NO", nil))
		}
		for _, list := range virtualTableLists {
			for _, vt := range list {
				out = append(out, row(isTablesCols, db, vt.Schema, vt.Name, "VIEW", nil, nil, nil, nil, nil,
					"NO", "NO", nil))
			}
		}
		return out
	}},
	{Schema: "information_schema", Name: "columns", Cols: isColumnsCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		db := v.Database.Name
		for _, t := range v.tables() {
			for _, i := range visibleTableColumns(t) {
				out = append(out, informationSchemaColumn(db, t, i))
			}
		}
		return out
	}},
	{Schema: "information_schema", Name: "table_constraints", Cols: isTableConstraintsCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		db := v.Database.Name
		add := func(t *catalog.Table, name, typ string) {
			out = append(out, row(isTableConstraintsCols, db, "public", name, db, "public", t.Name, typ,
				"NO", "NO", "YES", nil))
		}
		for _, t := range v.tables() {
			if hasVisibleKey(t) {
				add(t, pkIndexName(t), "PRIMARY KEY")
			}
			for _, ix := range t.Indexes {
				if ix.Unique {
					add(t, ix.Name, "UNIQUE")
				}
			}
			for _, c := range t.Checks {
				add(t, c.Name, "CHECK")
			}
			for _, fk := range t.ForeignKeys {
				add(t, fk.Name, "FOREIGN KEY")
			}
			for _, i := range visibleTableColumns(t) {
				if t.Columns[i].NotNull {
					add(t, notNullName(t, i), "CHECK")
				}
			}
		}
		return out
	}},
	{Schema: "information_schema", Name: "check_constraints", Cols: isCheckConstraintsCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		db := v.Database.Name
		for _, t := range v.tables() {
			for _, c := range t.Checks {
				out = append(out, row(isCheckConstraintsCols, db, "public", c.Name, "("+storedExprText(c.Expr)+")"))
			}
			for _, i := range visibleTableColumns(t) {
				if c := t.Columns[i]; c.NotNull {
					out = append(out, row(isCheckConstraintsCols, db, "public", notNullName(t, i), c.Name+" IS NOT NULL"))
				}
			}
		}
		return out
	}},
	{Schema: "information_schema", Name: "referential_constraints", Cols: isReferentialConstraintsCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		db := v.Database.Name
		rule := map[byte]string{'a': "NO ACTION", 'r': "RESTRICT", 'c': "CASCADE", 'n': "SET NULL", 'd': "SET DEFAULT"}
		for _, t := range v.tables() {
			for _, fk := range t.ForeignKeys {
				parent, ok := v.Snapshot.TableByID(fk.RefTable)
				if !ok {
					continue
				}
				out = append(out, row(isReferentialConstraintsCols, db, "public", fk.Name, db, "public",
					pkIndexName(parent), "NONE", rule[fk.OnUpdate], rule[fk.OnDelete]))
			}
		}
		return out
	}},
	{Schema: "information_schema", Name: "sequences", Cols: isSequencesCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, q := range v.Snapshot.Sequences(v.Database.ID) {
			cycle := "NO"
			if q.Cycle {
				cycle = "YES"
			}
			text := func(n int64) string { return strconv.FormatInt(n, 10) }
			out = append(out, row(isSequencesCols, v.Database.Name, "public", q.Name, q.Type.PGName(),
				map[types.Family]int{types.Int16: 16, types.Int32: 32, types.Int64: 64}[q.Type.Family], 2, 0,
				text(q.Start), text(q.MinValue), text(q.MaxValue), text(q.Increment), cycle))
		}
		return out
	}},
	{Schema: "information_schema", Name: "schemata", Cols: isSchemataCols, rows: func(v *View) [][]types.Value {
		var out [][]types.Value
		for _, n := range []string{"information_schema", "pg_catalog", "public"} {
			out = append(out, row(isSchemataCols, v.Database.Name, n, "pivotdb", nil, nil, nil, nil))
		}
		return out
	}},
}

// informationSchemaColumn is the information_schema.columns row of column
// i of t.
func informationSchemaColumn(db string, t *catalog.Table, i int) []types.Value {
	c := t.Columns[i]
	nullable := "YES"
	if c.NotNull {
		nullable = "NO"
	}
	var def any
	if c.Default != "" {
		def = storedExprText(c.Default)
	}
	dataType := c.Type.PGName()
	var charMax, octetMax, numPrec, numRadix, numScale, dtPrec, ivType any
	switch f := c.Type.Family; {
	case f == types.Array:
		dataType = "ARRAY"
	case f == types.Enum:
		dataType = "USER-DEFINED"
	case f == types.Utf8 && c.Type.Blank:
		dataType = "character"
		if c.Type.Width > 0 {
			charMax = c.Type.Width
			octetMax = c.Type.Width * 4
		} else {
			octetMax = 1073741824
		}
	case f == types.Utf8 && c.Type.Width > 0:
		dataType = "character varying"
		charMax = c.Type.Width
		octetMax = c.Type.Width * 4
	case f == types.Utf8:
		octetMax = 1073741824
	case f == types.Decimal || f == types.Uint64:
		dataType = "numeric"
		numRadix = 10
		if f == types.Uint64 {
			numPrec, numScale = 20, 0
		} else if c.Type.Precision > 0 {
			numPrec, numScale = c.Type.Precision, c.Type.Scale
		}
	case f.IsInteger():
		numRadix, numScale = 2, 0
		numPrec = map[int16]int{2: 16, 4: 32, 8: 64}[c.Type.TypeSize()]
	case f == types.Float:
		numPrec, numRadix = 24, 2
	case f == types.Double:
		numPrec, numRadix = 53, 2
	case f == types.Date:
		dtPrec = 0
	case f == types.Timestamp || f == types.TimestampTZ || f == types.Datetime:
		dtPrec = 6
		if f == types.Datetime {
			dtPrec = 0
		} else if p, ok := c.Type.Qual.Precision(); ok {
			dtPrec = p
		}
	case f == types.Time || f == types.TimeTZ:
		dtPrec = 6
		if p, ok := c.Type.Qual.Precision(); ok {
			dtPrec = p
		}
	case f == types.Interval:
		dtPrec = 6
		if p, ok := c.Type.Qual.Precision(); ok {
			dtPrec = p
		}
		if q := types.IntervalFieldsText(c.Type.Qual); q != "" {
			ivType = q
		}
	}
	generated, genExpr := "NEVER", any(nil)
	if c.Computed != "" {
		generated, genExpr = "ALWAYS", storedExprText(c.Computed)
	}
	identity := "NO"
	if c.Identity != "" {
		// An identity column has no default in information_schema.
		identity, def = "YES", nil
	}
	return row(isColumnsCols, db, "public", t.Name, c.Name, attnum(t, i), def, nullable, dataType, charMax,
		octetMax, numPrec, numRadix, numScale, dtPrec, ivType, nil, db, "pg_catalog", formatUDTName(c.Type), identity, generated,
		genExpr, "YES")
}

// formatUDTName is information_schema's udt_name: the pg_type name; for a
// YQL type described as a domain, its base type's (information_schema
// names the domain in domain_name).
func formatUDTName(t types.Type) string {
	if t.Family == types.Enum && t.Enum != nil {
		return t.Enum.Name
	}
	if t.Family == types.Array && t.Elem == types.Enum && t.Enum != nil {
		return "_" + t.Enum.Name
	}
	if t.Family == types.Array {
		if n := arrayTypeName(typeOID(t.ElemType())); n != "" {
			return n
		}
	}
	oid := typeOID(t)
	if d, ok := yqlDomains[t.Family]; ok {
		oid = d.base
	}
	for _, pt := range pgTypes {
		if pt.oid == oid {
			return pt.typname
		}
	}
	return "text"
}

// enumTypes lists the enum types of the view's database.
func (v *View) enumTypes() []*catalog.EnumType {
	if v.Snapshot == nil || v.Database == nil {
		return nil
	}
	return v.Snapshot.EnumTypes(v.Database.ID)
}

// enumLabelOID is pg_enum's oid of label k of e. PivotDB gives labels no
// object ids of their own, so they are numbered in a range of their own,
// [3<<29, 1<<31): 256 per type, in the order of the current labels.
func enumLabelOID(e *catalog.EnumType, k int) int64 {
	return 3<<29 + int64(e.Def.ID%(1<<21))*256 + int64(k%256)
}

// typeCollation is pg_type.typcollation: the default collation for the
// string types (as a string column's attcollation), 0 for the others, so
// pg_dump writes no COLLATE for a column of its type's own collation.
func typeCollation(oid int64) int64 {
	if t, ok := types.FromOID(uint32(oid)); ok && t.Family == types.Utf8 {
		return oidDefaultCollation
	}
	return 0
}

var pgDependCols = cols("classid oid, objid oid, objsubid int4, refclassid oid, refobjid oid, refobjsubid int4, deptype char")

// pgDependRows lists each view's dependencies on the tables and views its
// query reads (normal, 'n'), so that pg_dump writes a view after them.
// PostgreSQL records them on the view's rewrite rule; pg_dump takes a
// dependency of the view itself as well. The relations are found by name
// in the stored definition, as the view sees them when it is used.
func pgDependRows(v *View) [][]types.Value {
	var out [][]types.Value
	classOID := catalogOIDs["pg_class"]
	for _, vw := range v.Snapshot.Views(v.Database.ID) {
		d := parser.DialectYQL
		if vw.Dialect == sessionvars.DialectPostgreSQL {
			d = parser.DialectPostgreSQL
		}
		stmts, err := parser.ParseDialect(vw.Definition, d)
		if err != nil || len(stmts) != 1 || stmts[0].AST == nil {
			continue
		}
		names := &tableNames{}
		stmts[0].AST.Accept(names)
		seen := map[int64]bool{}
		for _, n := range names.names {
			var ref int64
			if t, ok := v.Snapshot.Table(v.Database.ID, n); ok {
				ref = int64(t.ID)
			} else if rv, ok := v.Snapshot.View(v.Database.ID, n); ok && rv.ID != vw.ID {
				ref = int64(rv.ID)
			}
			if ref != 0 && !seen[ref] {
				seen[ref] = true
				out = append(out, row(pgDependCols, classOID, int64(vw.ID), 0, classOID, ref, 0, "n"))
			}
		}
	}
	return out
}

// tableNames collects the table names of a statement's tree.
type tableNames struct{ names []string }

func (c *tableNames) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok {
		c.names = append(c.names, tn.Name.O)
	}
	return n, false
}

func (c *tableNames) Leave(n ast.Node) (ast.Node, bool) { return n, true }
