package sql

import (
	"fmt"
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
// They are offered to the expression builder through Builder.Funcs.
// Values that are fixed for the statement (the database, the user) become
// constants; the others are evaluated per row against the statement's
// catalog snapshot.

// sessionFunc builds one call; args are already built.
type sessionFunc struct {
	minArgs, maxArgs int
	// argTypes are the types untyped arguments take, by position (the last
	// repeats).
	argTypes []types.Type
	build    func(v *catalogView, args []expr.Expr) (expr.Expr, error)
}

var sessionFuncs map[string]*sessionFunc

func sessionFunctionNames() []string {
	var out []string
	for n := range sessionFuncs {
		if n != parser.RegCastFunc {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

var (
	tOID  = types.TypeInt64
	tText = types.TypeUtf8
	tBool = types.TypeBool
)

// constant returns a constant text or NULL.
func constText(s string) expr.Expr { return &expr.Const{Value: types.NewUtf8(s), Typ: tText} }

// perRow makes a call evaluated per row.
func perRow(name string, typ types.Type, fn func(a []types.Value) (types.Value, error)) func(v *catalogView, args []expr.Expr) (expr.Expr, error) {
	return func(v *catalogView, args []expr.Expr) (expr.Expr, error) {
		return expr.NewSessionFunc(name, typ, args, fn), nil
	}
}

func init() {
	fixed := func(f func(v *catalogView) string) *sessionFunc {
		return &sessionFunc{build: func(v *catalogView, _ []expr.Expr) (expr.Expr, error) { return constText(f(v)), nil }}
	}
	version := fixed(func(*catalogView) string {
		return "PostgreSQL " + sessionvars.ServerVersion + " on x86_64-pc-linux-gnu, compiled by Go"
	})
	database := fixed(func(v *catalogView) string { return v.s.db.Name })
	user := fixed(func(v *catalogView) string { return v.s.user })
	sessionFuncs = map[string]*sessionFunc{
		"version":          version,
		"current_database": database,
		"current_catalog":  database,
		"current_schema":   fixed(func(*catalogView) string { return "public" }),
		"current_user":     user,
		"session_user":     user,
		"current_role":     user,
		"user":             user,
		"current_setting": {1, 2, []types.Type{tText, tBool}, func(v *catalogView, args []expr.Expr) (expr.Expr, error) {
			return expr.NewSessionFunc("current_setting", tText, args, func(a []types.Value) (types.Value, error) {
				val, err := v.s.vars.Get(a[0].Str())
				if err != nil {
					if len(a) > 1 && a[1].Bool() {
						return types.NullValue, nil
					}
					return types.Value{}, err
				}
				return types.NewUtf8(val), nil
			}), nil
		}},
		"pg_get_userbyid": {1, 1, []types.Type{tOID}, func(v *catalogView, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_get_userbyid", tText, func(a []types.Value) (types.Value, error) {
				return types.NewUtf8(v.userName(a[0].Int())), nil
			})(v, args)
		}},
		"format_type": {2, 2, []types.Type{tOID, types.TypeInt32}, perRow("format_type", tText, func(a []types.Value) (types.Value, error) {
			return types.NewUtf8(formatType(a[0].Int(), a[1].Int())), nil
		})},
		"pg_table_is_visible": {1, 1, []types.Type{tOID}, func(v *catalogView, args []expr.Expr) (expr.Expr, error) {
			// Every relation PivotDB has is in public or pg_catalog, both on
			// the search path.
			return perRow("pg_table_is_visible", tBool, func(a []types.Value) (types.Value, error) {
				_, ok := v.relationName(a[0].Int())
				return types.NewBool(ok), nil
			})(v, args)
		}},
		"pg_type_is_visible": {1, 1, []types.Type{tOID}, perRow("pg_type_is_visible", tBool, func(a []types.Value) (types.Value, error) {
			return types.NewBool(formatType(a[0].Int(), -1) != "???"), nil
		})},
		"pg_get_indexdef": {1, 3, []types.Type{tOID, types.TypeInt32, tBool}, func(v *catalogView, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_get_indexdef", tText, func(a []types.Value) (types.Value, error) {
				for _, t := range v.tables() {
					if pkIndexOID(t) == a[0].Int() && hasVisibleKey(t) {
						if len(a) > 1 && a[1].Int() > 0 {
							// The definition of one index column.
							if k := a[1].Int(); int(k) <= len(t.PrimaryKey) {
								return types.NewUtf8(quoteIdent(t.Columns[t.PrimaryKey[k-1]].Name)), nil
							}
							return types.NewUtf8(""), nil
						}
						return types.NewUtf8(pkIndexDef(t)), nil
					}
					for i := range t.Indexes {
						ix := &t.Indexes[i]
						if int64(ix.ID) != a[0].Int() {
							continue
						}
						if len(a) > 1 && a[1].Int() > 0 {
							if k := a[1].Int(); int(k) <= len(ix.Columns) {
								return types.NewUtf8(indexColumnNames(t, ix)[k-1]), nil
							}
							return types.NewUtf8(""), nil
						}
						return types.NewUtf8(indexDef(t, ix)), nil
					}
				}
				return types.NullValue, nil
			})(v, args)
		}},
		"pg_get_constraintdef": {1, 2, []types.Type{tOID, tBool}, func(v *catalogView, args []expr.Expr) (expr.Expr, error) {
			return perRow("pg_get_constraintdef", tText, func(a []types.Value) (types.Value, error) {
				for _, t := range v.tables() {
					if pkConstraintOID(t) == a[0].Int() && hasVisibleKey(t) {
						return types.NewUtf8("PRIMARY KEY (" + keyColumnNames(t) + ")"), nil
					}
				}
				return types.NullValue, nil
			})(v, args)
		}},
		// pg_get_expr decompiles an expression stored in the catalog; PivotDB
		// stores defaults and computed columns as their text (pg_attrdef.adbin).
		"pg_get_expr": {2, 3, []types.Type{tText, tOID, tBool}, perRow("pg_get_expr", tText, func(a []types.Value) (types.Value, error) {
			return types.NewUtf8(a[0].Str()), nil
		})},
		// PivotDB has no COMMENT ON: every object's description is NULL, as
		// PostgreSQL's is for an object without a comment.
		"obj_description":   {1, 2, []types.Type{tOID, tText}, noComment},
		"col_description":   {2, 2, []types.Type{tOID, types.TypeInt32}, noComment},
		"shobj_description": {2, 2, []types.Type{tOID, tText}, noComment},
		"pg_encoding_to_char": {1, 1, []types.Type{types.TypeInt32}, perRow("pg_encoding_to_char", tText, func(a []types.Value) (types.Value, error) {
			if a[0].Int() == 6 {
				return types.NewUtf8("UTF8"), nil
			}
			return types.NewUtf8(""), nil
		})},
		"quote_ident": {1, 1, []types.Type{tText}, perRow("quote_ident", tText, func(a []types.Value) (types.Value, error) {
			return types.NewUtf8(quoteIdent(a[0].Str())), nil
		})},
		"array_to_string": {2, 3, []types.Type{tText}, perRow("array_to_string", tText, func(a []types.Value) (types.Value, error) {
			elems, err := expr.ParseArrayText(a[0].Str())
			if err != nil {
				return types.Value{}, err
			}
			var out []string
			for _, e := range elems {
				if e == nil {
					if len(a) > 2 {
						out = append(out, a[2].Str())
					}
					continue
				}
				out = append(out, *e)
			}
			return types.NewUtf8(strings.Join(out, a[1].Str())), nil
		})},
		// PivotDB has no table partitioning in PostgreSQL's sense (a table
		// is one relation however many shards it has): a relation's only
		// ancestor is itself. PostgreSQL's version returns a set; the one
		// row is the value.
		"pg_partition_ancestors": {1, 1, []types.Type{tOID}, perRow("pg_partition_ancestors", tOID, func(a []types.Value) (types.Value, error) {
			return types.NewInt64(a[0].Int()), nil
		})},
		// There are no publications (logical replication).
		"pg_relation_is_publishable": {1, 1, []types.Type{tOID}, perRow("pg_relation_is_publishable", tBool, func(a []types.Value) (types.Value, error) {
			return types.NewBool(false), nil
		})},
		// There are no extended statistics objects or triggers to describe:
		// for any OID the answer is NULL, as PostgreSQL's for a missing one.
		"pg_get_statisticsobjdef_columns": {1, 1, []types.Type{tOID}, noObject},
		"pg_get_triggerdef":               {1, 2, []types.Type{tOID, tBool}, noObject},
		parser.RegCastFunc:                {2, 2, []types.Type{tText, tText}, buildRegCast},
		// PivotDB has no array type: x::T[] checks and normalises the
		// elements of the text form of an array, a[i] reads one, and
		// array_upper/array_lower give the bounds of its one dimension.
		parser.ArrayCastFunc: {2, 2, []types.Type{tText}, buildArrayCast},
		parser.ArrayElemFunc: {2, 2, []types.Type{tText, types.TypeInt64}, buildArrayElem},
		"array_upper":        {2, 2, []types.Type{tText, types.TypeInt32}, arrayBound("array_upper", true)},
		"array_lower":        {2, 2, []types.Type{tText, types.TypeInt32}, arrayBound("array_lower", false)},
	}
}

func noComment(*catalogView, []expr.Expr) (expr.Expr, error) { return expr.NullOf(tText), nil }

func noObject(*catalogView, []expr.Expr) (expr.Expr, error) { return expr.NullOf(tText), nil }

// sessionFunc resolves name for the expression builder (Builder.Funcs).
func (a *analyser) sessionFunc(b *expr.Builder, name string, args []expr.Expr) (expr.Expr, bool, error) {
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
		e, err := b.Resolve(args[i], t)
		if err != nil {
			return nil, false, err
		}
		if err := checkArg(name, e, t); err != nil {
			return nil, false, err
		}
		args[i] = e
	}
	e, err := f.build(&catalogView{s: a.s, snap: a.snap}, args)
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
	case name == parser.RegCastFunc && got.IsInteger():
		// An OID cast from a number.
		return nil
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, e.Type().PGName())
}

// buildRegCast is x::regclass and the other object-identifier casts. The
// result is the OID as bigint: a name is looked up (42P01 / 42704 when
// there is none), a number passes through.
func buildRegCast(v *catalogView, args []expr.Expr) (expr.Expr, error) {
	k, ok := args[1].(*expr.Const)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes a type name", parser.RegCastFunc)
	}
	target := k.Value.Str()

	return expr.NewSessionFunc(target, tOID, args[:1], func(a []types.Value) (types.Value, error) {
		x := a[0]
		if x.Family().IsInteger() {
			return types.NewInt64(x.Int()), nil
		}
		s := strings.TrimSpace(x.Str())
		if n, err := parseOID(s); err == nil {
			return types.NewInt64(n), nil
		}
		switch target {
		case "regclass":
			if oid, ok := v.relationOID(s); ok {
				return types.NewInt64(oid), nil
			}
			return types.Value{}, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", s)
		case "regtype":
			for _, t := range pgTypes {
				if t.name == s || formatType(t.oid, -1) == s {
					return types.NewInt64(t.oid), nil
				}
			}
			return types.Value{}, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", s)
		case "regnamespace":
			for _, n := range []struct {
				oid  int64
				name string
			}{{oidPgCatalog, "pg_catalog"}, {oidPublic, "public"}, {oidInformationSchema, "information_schema"}} {
				if n.name == s {
					return types.NewInt64(n.oid), nil
				}
			}
			return types.Value{}, sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", s)
		case "regrole":
			for i, r := range v.roles() {
				if r == s {
					return types.NewInt64(roleOID(i)), nil
				}
			}
			return types.Value{}, sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", s)
		case "oid":
			return types.Value{}, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type oid: %q", s)
		}
		return types.Value{}, sqlerr.NotSupported("casting a name to %s", target)
	}), nil
}

func parseOID(s string) (int64, error) {
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != s || n < 0 || n > 1<<32-1 {
		return 0, fmt.Errorf("not an oid")
	}
	return n, nil
}

// arrayElemType returns the element type of the cast x::T[] that e is,
// ok false when e is no such cast.
func arrayElemType(e expr.Expr) (types.Type, bool) {
	f, isFunc := e.(*expr.Func)
	if !isFunc || f.Name != parser.ArrayCastFunc || len(f.Args) != 2 {
		return types.Type{}, false
	}
	c, isConst := f.Args[1].(*expr.Const)
	if !isConst {
		return types.Type{}, false
	}
	t, err := types.ParseTypeName(c.Value.Str())
	return t, err == nil
}

// buildArrayCast is x::T[] (pivot_array_cast(x, 'T')): the text form of
// the array with every element read as a T (22P02 / 22003 for one that is
// not) and written back in T's text form.
func buildArrayCast(_ *catalogView, args []expr.Expr) (expr.Expr, error) {
	c, isConst := args[1].(*expr.Const)
	if !isConst {
		return nil, sqlerr.New(sqlerr.SyntaxError, "the type of %s must be a string literal", parser.ArrayCastFunc)
	}
	t, err := types.ParseTypeName(c.Value.Str())
	if err != nil {
		return nil, err
	}
	switch {
	case t.Family.IsInteger(), t.Family == types.Utf8, t.Family == types.String, t.Family == types.Bool:
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "arrays of %s are not supported yet", t.PGName())
	}
	return perRow(parser.ArrayCastFunc, tText, func(a []types.Value) (types.Value, error) {
		elems, err := expr.ParseArrayText(a[0].Str())
		if err != nil {
			return types.Value{}, err
		}
		for i, e := range elems {
			if e == nil {
				continue
			}
			v, err := types.ParseText(t, *e)
			if err != nil {
				return types.Value{}, err
			}
			txt := v.Text()
			elems[i] = &txt
		}
		return types.NewUtf8(expr.FormatArrayText(elems)), nil
	})(nil, args)
}

// buildArrayElem is the subscript a[i] (pivot_array_elem(a, i)), typed as
// the element type of a cast a::T[], and otherwise as the context decides
// (expr.ArrayElem).
func buildArrayElem(_ *catalogView, args []expr.Expr) (expr.Expr, error) {
	t, ok := arrayElemType(args[0])
	if !ok {
		t = types.TypeUnknown
	}
	return &expr.ArrayElem{Arr: args[0], Index: args[1], Elem: t}, nil
}

// arrayBound is array_upper (upper set) and array_lower of a
// one-dimensional array: 1 and its length for dimension 1, NULL for an
// empty array and any other dimension, as in PostgreSQL.
func arrayBound(name string, upper bool) func(*catalogView, []expr.Expr) (expr.Expr, error) {
	return perRow(name, types.TypeInt32, func(a []types.Value) (types.Value, error) {
		elems, err := expr.ParseArrayText(a[0].Str())
		if err != nil {
			return types.Value{}, err
		}
		if a[1].Int() != 1 || len(elems) == 0 {
			return types.NullValue, nil
		}
		if upper {
			return types.NewInt(types.Int32, int64(len(elems))), nil
		}
		return types.NewInt(types.Int32, 1), nil
	})
}
