package bind

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// scopeColumn is one column visible to expressions.
type scopeColumn struct {
	table  string // table name or alias, lower case
	name   string
	typ    types.Type
	hidden bool
	// qualifiedOnly columns resolve only as table.column: each side's
	// copy of a USING join's merged column (using.go). SELECT * skips them.
	qualifiedOnly bool
}

// scope resolves column names against the columns of an input row.
type scope struct {
	cols []scopeColumn
}

func (sc *scope) ResolveColumn(table, name string) (int, types.Type, error) {
	found := -1
	for i, c := range sc.cols {
		if !strings.EqualFold(c.name, name) || (table != "" && !strings.EqualFold(c.table, table)) || (table == "" && c.qualifiedOnly) {
			continue
		}
		if found >= 0 {
			return 0, types.Type{}, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", name)
		}
		found = i
	}
	if found < 0 {
		if table != "" {
			return 0, types.Type{}, sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s does not exist", table, name)
		}
		return 0, types.Type{}, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name)
	}
	return found, sc.cols[found].typ, nil
}

func tableScope(t *catalog.Table, alias string) *scope {
	if alias == "" {
		alias = t.Name
	}
	sc := &scope{}
	for _, c := range t.Columns {
		sc.cols = append(sc.cols, scopeColumn{table: strings.ToLower(alias), name: c.Name, typ: c.Type, hidden: c.Hidden})
	}
	return sc
}
