package pgcatalog

import (
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Functions that read the session or the catalog, which package expr
// cannot see: PostgreSQL's system information functions (version(),
// current_database(), current_setting()), the catalog helpers psql and
// drivers call (pg_get_userbyid, format_type, pg_table_is_visible,
// pg_get_indexdef, ...), and casts to object-identifier types
// (pivot_regcast, which the dialect front makes of x::regclass).
//
// They are offered to the expression builder through Builder.Funcs (see
// Function). Values that are fixed for the statement (the database, the
// user) become constants; the others are evaluated per row against the
// statement's catalog snapshot.

// sessionFunc declares one function: how many arguments it takes, the
// types its untyped arguments take, and how a call is built.
type sessionFunc struct {
	minArgs, maxArgs int
	// argTypes are the types untyped arguments take, by position (the last
	// repeats).
	argTypes []types.Type
	// build makes the call; args are already built and resolved.
	build buildFunc
}

type buildFunc func(v *View, args []expr.Expr) (expr.Expr, error)

var (
	tOID  = types.TypeInt64
	tInt4 = types.TypeInt32
	tText = types.TypeUtf8
	tBool = types.TypeBool
)

// sig declares a function's arity and argument types.
func sig(minArgs, maxArgs int, argTypes ...types.Type) sessionFunc {
	return sessionFunc{minArgs: minArgs, maxArgs: maxArgs, argTypes: argTypes}
}

// as completes a declaration with its builder.
func (f sessionFunc) as(build buildFunc) *sessionFunc {
	f.build = build
	return &f
}

// sessionFuncs is the table of session functions by name, filled in init
// from the groups below.
var sessionFuncs = map[string]*sessionFunc{}

func init() {
	for _, group := range []map[string]*sessionFunc{
		informationFuncs(), catalogFuncs(), absentObjectFuncs(), textFuncs(), privilegeFuncs(),
		backendFuncs(), sizeFuncs(), objectFuncs(), commentFuncs(),
	} {
		for name, f := range group {
			sessionFuncs[name] = f
		}
	}
}

// informationFuncs are PostgreSQL's system information functions: constants
// for the statement.
func informationFuncs() map[string]*sessionFunc {
	fixed := func(f func(v *View) string) *sessionFunc {
		return sig(0, 0).as(func(v *View, _ []expr.Expr) (expr.Expr, error) { return constText(f(v)), nil })
	}
	database := fixed(func(v *View) string { return v.Database.Name })
	user := fixed(func(v *View) string { return v.User })
	return map[string]*sessionFunc{
		"version": fixed(func(*View) string {
			return "PostgreSQL " + sessionvars.ServerVersion + " on x86_64-pc-linux-gnu, compiled by Go"
		}),
		"current_database": database,
		"current_catalog":  database,
		"current_schema":   fixed(func(*View) string { return "public" }),
		"current_user":     user,
		"session_user":     user,
		"current_role":     user,
		"user":             user,
		"current_setting":  sig(1, 2, tText, tBool).as(currentSetting),
		// current_schemas(include_implicit): the schemas names are looked
		// up in, in order: pg_catalog (implicitly first) and public,
		// whatever search_path says (PivotDB has only those).
		"current_schemas": sig(1, 1, tBool).as(perRow("current_schemas", tText, func(a []types.Value) (types.Value, error) {
			if a[0].Bool() {
				return types.NewUtf8("{pg_catalog,public}"), nil
			}
			return types.NewUtf8("{public}"), nil
		})),
	}
}

// catalogFuncs describe catalog objects by OID, for psql's and drivers'
// metadata queries.
func catalogFuncs() map[string]*sessionFunc {
	return map[string]*sessionFunc{
		"pg_get_userbyid": sig(1, 1, tOID).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_get_userbyid", tText, func(a []types.Value) (types.Value, error) {
				return types.NewUtf8(v.userName(a[0].Int())), nil
			})(v, args)
		}),
		"format_type": sig(2, 2, tOID, tInt4).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			// A NULL typmod is "none" (psql's \dC passes NULL), not a NULL
			// result.
			if args[1].Type().Family == types.Null {
				args[1] = &expr.Const{Value: types.NewInt(types.Int32, -1), Typ: tInt4}
			}
			return perRow("format_type", tText, func(a []types.Value) (types.Value, error) {
				if a[0].Int() == 0 {
					// InvalidOid (typelem of a non-array type).
					return types.NewUtf8("-"), nil
				}
				return types.NewUtf8(v.formatType(a[0].Int(), a[1].Int())), nil
			})(v, args)
		}),
		// pg_typeof(x) is the name of x's type (PostgreSQL returns a
		// regtype, which prints as this name); an untyped literal or NULL
		// is "unknown" there too. The type is known when the statement is
		// bound, so the answer is a constant.
		"pg_typeof": sig(1, 1, types.TypeUnknown).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			t := args[0].Type()
			if t.Family == types.Unknown || t.Family == types.Null {
				return constText("unknown"), nil
			}
			return constText(v.formatType(typeOID(t), -1)), nil
		}),
		"pg_table_is_visible": sig(1, 1, tOID).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			// Every relation PivotDB has is in public or pg_catalog, both on
			// the search path.
			return perRow("pg_table_is_visible", tBool, func(a []types.Value) (types.Value, error) {
				_, ok := v.relationName(a[0].Int())
				return types.NewBool(ok), nil
			})(v, args)
		}),
		"pg_type_is_visible": sig(1, 1, tOID).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_type_is_visible", tBool, func(a []types.Value) (types.Value, error) {
				return types.NewBool(v.formatType(a[0].Int(), -1) != "???"), nil
			})(v, args)
		}),
		"pg_get_indexdef":        sig(1, 3, tOID, tInt4, tBool).as(getIndexDef),
		"pg_get_serial_sequence": sig(2, 2, tText, tText).as(getSerialSequence),
		"pg_get_constraintdef":   sig(1, 2, tOID, tBool).as(getConstraintDef),
		// pg_get_expr decompiles an expression stored in the catalog; PivotDB
		// stores defaults and computed columns as their text (pg_attrdef.adbin).
		"pg_get_expr": sig(2, 3, tText, tOID, tBool).as(perRow("pg_get_expr", tText, func(a []types.Value) (types.Value, error) {
			return types.NewUtf8(a[0].Str()), nil
		})),
		// PivotDB has no table partitioning in PostgreSQL's sense (a table
		// is one relation however many shards it has): a relation's only
		// ancestor is itself. PostgreSQL's version returns a set; the one
		// row is the value.
		"pg_partition_ancestors": sig(1, 1, tOID).as(perRow("pg_partition_ancestors", tOID, func(a []types.Value) (types.Value, error) {
			return types.NewInt64(a[0].Int()), nil
		})),
		parser.RegCastFunc: sig(2, 2, tText, tText).as(buildRegCast),
		parser.RegNameFunc: sig(2, 2, tText, tText).as(buildRegName),
	}
}

// absentObjectFuncs describe objects PivotDB does not have: comments on
// shared objects (databases, roles), publications, extended statistics objects and
// triggers. The answer is what PostgreSQL gives for an object without one.
func absentObjectFuncs() map[string]*sessionFunc {
	null := func(*View, []expr.Expr) (expr.Expr, error) { return expr.NullOf(tText), nil }
	return map[string]*sessionFunc{
		"shobj_description": sig(2, 2, tOID, tText).as(null),
		"pg_relation_is_publishable": sig(1, 1, tOID).as(perRow("pg_relation_is_publishable", tBool, func(a []types.Value) (types.Value, error) {
			return types.NewBool(false), nil
		})),
		"pg_get_statisticsobjdef_columns": sig(1, 1, tOID).as(null),
		"pg_get_triggerdef":               sig(1, 2, tOID, tBool).as(null),
	}
}

// textFuncs are text helpers psql's queries call.
func textFuncs() map[string]*sessionFunc {
	return map[string]*sessionFunc{
		"pg_encoding_to_char": sig(1, 1, tInt4).as(perRow("pg_encoding_to_char", tText, func(a []types.Value) (types.Value, error) {
			if a[0].Int() == 6 {
				return types.NewUtf8("UTF8"), nil
			}
			return types.NewUtf8(""), nil
		})),
		"quote_ident": sig(1, 1, tText).as(perRow("quote_ident", tText, func(a []types.Value) (types.Value, error) {
			return types.NewUtf8(quoteIdent(a[0].Str())), nil
		})),
		// quote_literal as PostgreSQL's: quotes doubled, and a value with
		// a backslash doubled and written as an E'' string.
		"quote_literal": sig(1, 1, tText).as(perRow("quote_literal", tText, func(a []types.Value) (types.Value, error) {
			v := strings.ReplaceAll(a[0].Str(), "'", "''")
			if strings.Contains(v, `\`) {
				return types.NewUtf8("E'" + strings.ReplaceAll(v, `\`, `\\`) + "'"), nil
			}
			return types.NewUtf8("'" + v + "'"), nil
		})),
	}
}

// functionNames lists the session functions for pg_proc.
func functionNames() []string {
	var out []string
	for n := range sessionFuncs {
		if n != parser.RegCastFunc && n != parser.RegNameFunc {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// constText returns a constant text.
func constText(s string) expr.Expr { return &expr.Const{Value: types.NewUtf8(s), Typ: tText} }

// perRow makes a call evaluated per row.
func perRow(name string, typ types.Type, fn func(a []types.Value) (types.Value, error)) buildFunc {
	return func(v *View, args []expr.Expr) (expr.Expr, error) {
		return expr.NewSessionFunc(name, typ, args, fn), nil
	}
}

// Function resolves a call of name for the expression builder
// (expr.Builder.Funcs): ok is false when name is no session function.
func Function(b *expr.Builder, v *View, name string, args []expr.Expr) (e expr.Expr, ok bool, err error) {
	f := sessionFuncs[name]
	if f == nil {
		return nil, false, nil
	}
	if len(args) < f.minArgs || len(args) > f.maxArgs {
		return nil, false, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
	}
	for i := range args {
		if len(f.argTypes) == 0 {
			break
		}
		t := f.argTypes[min(i, len(f.argTypes)-1)]
		if t.Family == types.Unknown {
			// An argument of several accepted types (an OID or a name):
			// the builder looks at the type it has.
			continue
		}
		e, err := b.Resolve(args[i], t)
		if err != nil {
			return nil, false, err
		}
		if err := checkArg(name, e, t); err != nil {
			return nil, false, err
		}
		args[i] = e
	}
	e, err = f.build(v, args)
	return e, err == nil, err
}

// checkArg accepts an argument of the declared family, any integer for an
// integer, and NULL.
func checkArg(name string, e expr.Expr, want types.Type) error {
	got := e.Type().Family
	switch {
	case got == types.Null, got == want.Family:
		return nil
	case got.IsInteger() && want.Family.IsInteger():
		return nil
	case want.Family == types.Utf8 && got == types.Unknown:
		return nil
	case (name == parser.RegCastFunc || name == parser.RegNameFunc) && got.IsInteger():
		// An OID cast from a number.
		return nil
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, e.Type().PGName())
}
