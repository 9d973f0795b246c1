package pgcatalog

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// currentSetting is current_setting(name [, missing_ok]): read when the row
// is computed, so it sees a SET that ran after the statement was bound.
func currentSetting(v *View, args []expr.Expr) (expr.Expr, error) {
	return expr.NewSessionFunc("current_setting", tText, args, func(a []types.Value) (types.Value, error) {
		val, err := v.Settings.Get(a[0].Str())
		if err != nil {
			if len(a) > 1 && a[1].Bool() {
				return types.NullValue, nil
			}
			return types.Value{}, err
		}
		return types.NewUtf8(val), nil
	}), nil
}

// getIndexDef is pg_get_indexdef(oid [, column [, pretty]]): an index's
// CREATE INDEX statement, or the definition of its column number column.
func getIndexDef(v *View, args []expr.Expr) (expr.Expr, error) {
	return perRow("pg_get_indexdef", tText, func(a []types.Value) (types.Value, error) {
		oid, column := a[0].Int(), int64(0)
		if len(a) > 1 {
			column = a[1].Int()
		}
		for _, t := range v.tables() {
			if pkIndexOID(t) == oid && hasVisibleKey(t) {
				if column > 0 {
					if int(column) <= len(t.PrimaryKey) {
						return types.NewUtf8(quoteIdent(t.Columns[t.PrimaryKey[column-1]].Name)), nil
					}
					return types.NewUtf8(""), nil
				}
				return types.NewUtf8(pkIndexDef(t)), nil
			}
			for i := range t.Indexes {
				ix := &t.Indexes[i]
				if int64(ix.ID) != oid {
					continue
				}
				if column > 0 {
					if int(column) <= len(ix.Columns) {
						// One column's definition is its name alone,
						// without DESC (PostgreSQL's attrsOnly).
						return types.NewUtf8(quoteIdent(t.Columns[ix.Columns[column-1]].Name)), nil
					}
					return types.NewUtf8(""), nil
				}
				return types.NewUtf8(indexDef(t, ix)), nil
			}
		}
		return types.NullValue, nil
	})(v, args)
}

// getConstraintDef is pg_get_constraintdef(oid [, pretty]): a
// constraint's definition as ALTER TABLE ... ADD CONSTRAINT takes it
// (PRIMARY KEY (a), UNIQUE (a), FOREIGN KEY (a) REFERENCES t(b) ON DELETE
// CASCADE, CHECK ((a > 0)), with NOT VALID when it was added so). The
// referenced table is qualified with public when search_path leaves
// public out, as PostgreSQL qualifies names that are not visible (pg_dump
// empties search_path).
func getConstraintDef(v *View, args []expr.Expr) (expr.Expr, error) {
	return perRow("pg_get_constraintdef", tText, func(a []types.Value) (types.Value, error) {
		oid := a[0].Int()
		cols := func(t *catalog.Table, idx []int) string {
			names := make([]string, len(idx))
			for i, k := range idx {
				names[i] = quoteIdent(t.Columns[k].Name)
			}
			return strings.Join(names, ", ")
		}
		notValid := func(nv bool) string {
			if nv {
				return " NOT VALID"
			}
			return ""
		}
		for _, t := range v.tables() {
			if pkConstraintOID(t) == oid && hasVisibleKey(t) {
				return types.NewUtf8("PRIMARY KEY (" + keyColumnNames(t) + ")"), nil
			}
			for _, ix := range t.Indexes {
				if ix.Unique && int64(ix.ID)|pkConstraintBit == oid {
					return types.NewUtf8("UNIQUE (" + cols(t, ix.Columns) + ")"), nil
				}
			}
			for k, fk := range t.ForeignKeys {
				if fkConstraintOID(t, k) != oid {
					continue
				}
				parent, ok := v.Snapshot.TableByID(fk.RefTable)
				if !ok {
					return types.NullValue, nil
				}
				def := "FOREIGN KEY (" + cols(t, fk.Columns) + ") REFERENCES " + v.qualifiedName(parent.Name) +
					"(" + cols(parent, parent.PrimaryKey[:len(fk.Columns)]) + ")"
				if r := fkRuleText[fk.OnUpdate]; r != "" {
					def += " ON UPDATE " + r
				}
				if r := fkRuleText[fk.OnDelete]; r != "" {
					def += " ON DELETE " + r
				}
				return types.NewUtf8(def + notValid(fk.NotValid)), nil
			}
			for k, c := range t.Checks {
				if checkConstraintOID(t, k) == oid {
					return types.NewUtf8("CHECK ((" + storedExprText(c.Expr) + "))" + notValid(c.NotValid)), nil
				}
			}
		}
		return types.NullValue, nil
	})(v, args)
}

// fkRuleText spells a foreign key's referential actions; NO ACTION, the
// default, is left out as PostgreSQL leaves it out.
var fkRuleText = map[byte]string{'r': "RESTRICT", 'c': "CASCADE", 'n': "SET NULL", 'd': "SET DEFAULT"}

// qualifiedName is a relation's name as PostgreSQL's ruleutils prints it:
// bare while public is on the search path, public.name otherwise.
func (v *View) qualifiedName(name string) string {
	if v.Settings != nil {
		if sp, err := v.Settings.Get("search_path"); err == nil && !searchPathHasPublic(sp) {
			return "public." + quoteIdent(name)
		}
	}
	return quoteIdent(name)
}

// searchPathHasPublic reports whether a search_path lists public.
func searchPathHasPublic(sp string) bool {
	for _, p := range strings.Split(sp, ",") {
		if strings.EqualFold(strings.Trim(strings.TrimSpace(p), `"`), "public") {
			return true
		}
	}
	return false
}

// buildRegCast is x::regclass and the other object-identifier casts. The
// result is the OID as bigint: a name is looked up (42P01 / 42704 when
// there is none), a number passes through.
func buildRegCast(v *View, args []expr.Expr) (expr.Expr, error) {
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
				if t.typname == s || formatType(t.oid, -1) == s {
					return types.NewInt64(t.oid), nil
				}
			}
			// The database's enum types and their arrays (mood, mood[],
			// _mood).
			for _, e := range v.enumTypes() {
				switch s {
				case e.Def.Name:
					return types.NewInt64(int64(e.Def.OID())), nil
				case e.Def.Name + "[]", "_" + e.Def.Name:
					return types.NewInt64(int64(e.Def.ArrayOID())), nil
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
		case "regproc":
			oid, err := v.regprocOID(s)
			return types.NewInt64(oid), err
		case "oid":
			return types.Value{}, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type oid: %q", s)
		}
		return types.Value{}, sqlerr.NotSupported("casting a name to %s", target)
	}), nil
}

// buildRegName is x::regclass::text and its siblings (regtype,
// regnamespace, regrole): the name of the object, as the reg type's output
// function writes it — a relation qualified when public is not on the
// search_path, a type as format_type does, an OID naming nothing as its
// number, OID 0 as "-". A name is looked up first, as the cast does.
func buildRegName(v *View, args []expr.Expr) (expr.Expr, error) {
	cast, err := buildRegCast(v, args)
	if err != nil {
		return nil, err
	}
	target := args[1].(*expr.Const).Value.Str()
	return expr.NewSessionFunc(parser.RegNameFunc, tText, []expr.Expr{cast}, func(a []types.Value) (types.Value, error) {
		if a[0].IsNull() {
			return types.NullValue, nil
		}
		oid := a[0].Int()
		if oid == 0 {
			return types.NewUtf8("-"), nil
		}
		if name, ok := v.regName(target, oid); ok {
			return types.NewUtf8(name), nil
		}
		return types.NewUtf8(fmt.Sprint(oid)), nil
	}), nil
}

// regName names the object oid numbers for a reg type's output.
func (v *View) regName(target string, oid int64) (string, bool) {
	switch target {
	case "regclass":
		if name, ok := v.relationName(oid); ok {
			return v.qualifiedName(name), true
		}
	case "regtype":
		base := oid
		if e := types.ElemOID(uint32(oid)); e != 0 {
			base = int64(e) // an array type: format_type writes elem[]
		}
		for _, t := range pgTypes {
			if t.oid == base {
				return formatType(oid, -1), true
			}
		}
		for _, e := range v.enumTypes() {
			switch oid {
			case int64(e.Def.OID()):
				return quoteIdent(e.Def.Name), true
			case int64(e.Def.ArrayOID()):
				return quoteIdent(e.Def.Name) + "[]", true
			}
		}
	case "regnamespace":
		switch oid {
		case oidPgCatalog:
			return "pg_catalog", true
		case oidPublic:
			return "public", true
		case oidInformationSchema:
			return "information_schema", true
		}
	case "regrole":
		for i, r := range v.roles() {
			if roleOID(i) == oid {
				return quoteIdent(r), true
			}
		}
	}
	return "", false
}

func parseOID(s string) (int64, error) {
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != s || n < 0 || n > 1<<32-1 {
		return 0, fmt.Errorf("not an oid")
	}
	return n, nil
}

// getSerialSequence is pg_get_serial_sequence(table, column): the
// schema-qualified name of the sequence a serial or identity column owns,
// NULL when it owns none. The table name may be qualified and quoted as in
// PostgreSQL; the column name is taken as written.
func getSerialSequence(v *View, args []expr.Expr) (expr.Expr, error) {
	return perRow("pg_get_serial_sequence", tText, func(a []types.Value) (types.Value, error) {
		name := a[0].Str()
		if schema, rest, ok := strings.Cut(name, "."); ok && !strings.HasPrefix(name, `"`) {
			if !strings.EqualFold(schema, "public") && !strings.EqualFold(schema, v.Database.Name) {
				return types.Value{}, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
			}
			name = rest
		}
		name = strings.Trim(name, `"`)
		t, ok := v.Snapshot.Table(v.Database.ID, name)
		if !ok {
			return types.Value{}, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		}
		col := a[1].Str()
		if i := t.ColumnIndex(col); i < 0 || t.Columns[i].Hidden {
			return types.Value{}, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", col, t.Name)
		}
		for _, q := range v.Snapshot.OwnedSequences(v.Database.ID, t.ID) {
			if strings.EqualFold(q.OwnerColumn, col) {
				return types.NewUtf8("public." + q.Name), nil
			}
		}
		return types.NullValue, nil
	})(v, args)
}
