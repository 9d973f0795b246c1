package pgcatalog

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// objectFuncs describe views and functions for psql's \sv and \df and
// pg_dump, and set_config, which pg_dump calls first.
func objectFuncs() map[string]*sessionFunc {
	return map[string]*sessionFunc{
		// pg_get_viewdef(view [, pretty]): the view's query as written
		// (PivotDB keeps a view as the text of its CREATE VIEW), the
		// view named by OID or by name.
		"pg_get_viewdef": sig(1, 2, types.TypeUnknown, tBool).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			byOID := args[0].Type().Family.IsInteger()
			return perRow("pg_get_viewdef", tText, func(a []types.Value) (types.Value, error) {
				for _, vw := range v.Snapshot.Views(v.Database.ID) {
					if byOID && int64(vw.ID) != a[0].Int() || !byOID && !strings.EqualFold(vw.Name, strings.Trim(a[0].Str(), `"`)) {
						continue
					}
					d := parser.DialectYQL
					if vw.Dialect == sessionvars.DialectPostgreSQL {
						d = parser.DialectPostgreSQL
					}
					q, ok := parser.ViewQueryText(vw.Definition, d)
					if !ok {
						return types.Value{}, sqlerr.New(sqlerr.InternalError, "view %q: stored definition is not CREATE VIEW", vw.Name)
					}
					// PostgreSQL prints the query on lines of its own, ending
					// with a semicolon.
					return types.NewUtf8(" " + q + ";"), nil
				}
				if !byOID {
					return types.Value{}, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", a[0].Str())
				}
				if _, ok := v.relationName(a[0].Int()); ok {
					return types.Value{}, sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", a[0].Text())
				}
				return types.NullValue, nil
			})(v, args)
		}),
		// Built-in functions are in pg_catalog, always on the search path;
		// the database's SQL functions are in public.
		"pg_function_is_visible": sig(1, 1, tOID).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_function_is_visible", tBool, func(a []types.Value) (types.Value, error) {
				n := a[0].Int() - procOIDBase
				_, user := v.userFunctionByOID(a[0].Int())
				return types.NewBool(n >= 0 && n < int64(len(procNames())) || user), nil
			})(v, args)
		}),
		// The signatures of built-in functions are not described in pg_proc
		// (PivotDB's functions resolve their arguments when called): NULL;
		// the database's SQL functions have theirs (psql's \df).
		"pg_get_function_result": sig(1, 1, tOID).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_get_function_result", tText, func(a []types.Value) (types.Value, error) {
				if f, ok := v.userFunctionByOID(a[0].Int()); ok {
					name := func(t types.Type) string { return v.formatType(typeOID(t), typmod(t)) }
					switch {
					case f.RowType != "":
						return types.NewUtf8("SETOF " + quoteIdent(f.RowType)), nil
					case f.SetOf && len(f.Columns) > 0:
						// RETURNS TABLE (or SETOF a table: its columns).
						parts := make([]string, len(f.Columns))
						for i, c := range f.Columns {
							parts[i] = quoteIdent(c.Name) + " " + name(c.Type)
						}
						return types.NewUtf8("TABLE(" + strings.Join(parts, ", ") + ")"), nil
					case f.SetOf:
						return types.NewUtf8("SETOF " + name(f.Returns)), nil
					}
					return types.NewUtf8(name(f.Returns)), nil
				}
				return types.NullValue, nil
			})(v, args)
		}),
		"pg_get_function_arguments":          sig(1, 1, tOID).as(functionArguments),
		"pg_get_function_identity_arguments": sig(1, 1, tOID).as(functionArguments),
		// pg_tablespace_location: the one tablespace lives in the data
		// directory, which PostgreSQL shows as ''; another OID has no
		// pg_tblspc link, PostgreSQL's error.
		"pg_tablespace_location": sig(1, 1, tOID).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_tablespace_location", tText, func(a []types.Value) (types.Value, error) {
				if a[0].Int() == oidDefaultTablespace {
					return types.NewUtf8(""), nil
				}
				return types.Value{}, sqlerr.New("58P01", "could not read symbolic link \"pg_tblspc/%d\": No such file or directory", a[0].Int())
			})(v, args)
		}),
		// acldefault(kind, owner): the ACL an object of the kind has while
		// none was granted (pg_dump compares the real ACL with it). Tables,
		// views, sequences and databases carry PivotDB's defaults
		// (acl.Default); for the other kinds, whose privileges PivotDB does
		// not check, it is PostgreSQL's: the owner holds them all, and
		// PUBLIC may execute functions and use types.
		"acldefault": sig(2, 2, tText, tOID).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("acldefault", tText, func(a []types.Value) (types.Value, error) {
				owner := v.userName(a[1].Int())
				item := func(grantee, privs string) string {
					return acl.QuoteRole(grantee) + "=" + privs + "/" + acl.QuoteRole(owner)
				}
				var items []string
				switch a[0].Str() {
				case "r":
					return types.NewUtf8(aclArray(acl.Default(acl.Table, owner)).(string)), nil
				case "d":
					return types.NewUtf8(aclArray(acl.Default(acl.Database, owner)).(string)), nil
				case "s":
					items = []string{item(owner, "rwU")}
				case "n":
					items = []string{item(owner, "UC")}
				case "f", "p":
					items = []string{item("", "X"), item(owner, "X")}
				case "T":
					items = []string{item("", "U"), item(owner, "U")}
				case "l":
					items = []string{item("", "U"), item(owner, "U")}
				case "L":
					items = []string{item(owner, "rw")}
				case "F", "S":
					items = []string{item(owner, "U")}
				default:
					return types.Value{}, sqlerr.New(sqlerr.InternalError, "unrecognized object type abbreviation: %s", a[0].Str())
				}
				return types.NewUtf8("{" + strings.Join(items, ",") + "}"), nil
			})(v, args)
		}),
		// A single node is never a standby replaying a primary's log.
		"pg_is_in_recovery": sig(0, 0).as(func(*View, []expr.Expr) (expr.Expr, error) {
			return &expr.Const{Value: types.NewBool(false), Typ: tBool}, nil
		}),
		"set_config": sig(3, 3, tText, tText, tBool).as(setConfig),
	}
}

// setConfig is set_config(name, value, is_local): SET name = value, whose
// new value it returns. SET LOCAL is not supported, nor is its function
// form. A NULL argument makes the result NULL (session functions are
// strict) and changes nothing.
func setConfig(v *View, args []expr.Expr) (expr.Expr, error) {
	return expr.NewSessionFunc("set_config", tText, args, func(a []types.Value) (types.Value, error) {
		if a[2].Bool() {
			return types.Value{}, sqlerr.NotSupported("set_config with is_local = true (SET LOCAL)")
		}
		name := strings.ToLower(a[0].Str())
		if err := v.Settings.Set(name, a[1].Str()); err != nil {
			return types.Value{}, err
		}
		val, err := v.Settings.Get(name)
		if err != nil {
			return types.Value{}, err
		}
		if n := sessionvars.Notice(name, val); n != "" && v.Notice != nil {
			v.Notice(n)
		}
		return types.NewUtf8(val), nil
	}), nil
}

// functionArguments is pg_get_function_arguments: "a integer, b text" for
// a SQL function of the database, NULL for a built-in one.
func functionArguments(v *View, args []expr.Expr) (expr.Expr, error) {
	return perRow("pg_get_function_arguments", tText, func(a []types.Value) (types.Value, error) {
		f, ok := v.userFunctionByOID(a[0].Int())
		if !ok {
			return types.NullValue, nil
		}
		parts := make([]string, len(f.Args))
		for i, arg := range f.Args {
			parts[i] = v.formatType(typeOID(arg.Type), typmod(arg.Type))
			if arg.Name != "" {
				parts[i] = arg.Name + " " + parts[i]
			}
		}
		return types.NewUtf8(strings.Join(parts, ", ")), nil
	})(v, args)
}

// userFunctionOID is the OID of a SQL function of the database: a range
// of its own above the enum types' (types.EnumOIDBase) and below the enum
// labels' (pg_enum).
func userFunctionOID(f *catalog.Function) int64 { return 5<<28 + int64(f.ID) }

func (v *View) userFunctions() []*catalog.Function {
	if v == nil || v.Snapshot == nil || v.Database == nil {
		return nil
	}
	return v.Snapshot.Functions(v.Database.ID, "")
}

func (v *View) userFunctionByOID(oid int64) (*catalog.Function, bool) {
	for _, f := range v.userFunctions() {
		if userFunctionOID(f) == oid {
			return f, true
		}
	}
	return nil, false
}
