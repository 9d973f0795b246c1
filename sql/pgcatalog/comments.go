package pgcatalog

import (
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Comments (COMMENT ON TABLE|COLUMN|INDEX, package sql) live in the
// tables' catalog descriptors; pg_description lists them, and
// obj_description / col_description look them up as PostgreSQL's SQL
// functions of the same names do over pg_description.

// description is one row of pg_description.
type description struct {
	objoid, classoid int64
	objsubid         int
	text             string
}

// descriptions lists the comments the session can see: PostgreSQL's on
// the public schema, and those of the session database's tables, their
// columns (objsubid is the column's attnum) and their indexes.
func (v *View) descriptions() []description {
	const pgClass, pgNamespace = 1259, 2615
	out := []description{{objoid: oidPublic, classoid: pgNamespace, text: "standard public schema"}}
	for _, t := range v.tables() {
		if t.Comment != "" {
			out = append(out, description{objoid: int64(t.ID), classoid: pgClass, text: t.Comment})
		}
		for i, c := range t.Columns {
			if n := attnum(t, i); c.Comment != "" && n > 0 {
				out = append(out, description{objoid: int64(t.ID), classoid: pgClass, objsubid: n, text: c.Comment})
			}
		}
		if t.PrimaryKeyComment != "" && hasVisibleKey(t) {
			out = append(out, description{objoid: pkIndexOID(t), classoid: pgClass, text: t.PrimaryKeyComment})
		}
		for _, ix := range t.Indexes {
			if ix.Comment != "" {
				out = append(out, description{objoid: int64(ix.ID), classoid: pgClass, text: ix.Comment})
			}
		}
	}
	return out
}

// describe returns the comment on object oid (sub-object sub) whose
// catalog is classoid (0: any, as the one-argument obj_description
// reads), NULL for none.
func (v *View) describe(oid, classoid int64, sub int) types.Value {
	for _, d := range v.descriptions() {
		if d.objoid == oid && d.objsubid == sub && (classoid == 0 || d.classoid == classoid) {
			return types.NewUtf8(d.text)
		}
	}
	return types.NullValue
}

// commentFuncs are obj_description(oid [, catalog name]) and
// col_description(table oid, attnum).
func commentFuncs() map[string]*sessionFunc {
	return map[string]*sessionFunc{
		"obj_description": sig(1, 2, tOID, tText).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("obj_description", tText, func(a []types.Value) (types.Value, error) {
				classoid := int64(0)
				if len(a) == 2 {
					oid, ok := catalogOIDs[a[1].Str()]
					if !ok {
						return types.NullValue, nil // no such catalog: no comment in it
					}
					classoid = oid
				}
				return v.describe(a[0].Int(), classoid, 0), nil
			})(v, args)
		}),
		"col_description": sig(2, 2, tOID, tInt4).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			return perRow("col_description", tText, func(a []types.Value) (types.Value, error) {
				if a[1].Int() <= 0 {
					return types.NullValue, nil
				}
				return v.describe(a[0].Int(), catalogOIDs["pg_class"], int(a[1].Int())), nil
			})(v, args)
		}),
	}
}
