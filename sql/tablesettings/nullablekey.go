package tablesettings

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// NULLABLE_KEY_COLUMNS carries the nullability of a table's key columns
// through pg_dump. A YQL primary key leaves its columns nullable unless
// they are declared NOT NULL, but pg_dump creates the table without its
// key and adds it after the rows with ALTER TABLE ... ADD PRIMARY KEY,
// which makes the key's columns NOT NULL as in PostgreSQL. So
// pg_class.reloptions of a table lists its nullable key columns
// (nullable_key_columns=("k", "l")), pg_dump writes them into the CREATE
// TABLE's WITH (...), and ADD PRIMARY KEY leaves the columns named there
// nullable (Settings.DeferredNullableKey).
//
// The setting is only for a table created without a primary key; the
// columns of a declared key allow NULL unless NOT NULL already. The value
// is a column name (a string or an identifier) or a tuple of them.

// nullableKey parses NULLABLE_KEY_COLUMNS for a CREATE TABLE.
func nullableKey(v parser.Value, pos int, t TableInfo) ([]string, error) {
	if !hiddenKey(t) {
		return nil, withHint(errorf(codeTable, pos, "%s is only for a table created without a primary key", kNullableKey),
			"The columns of a PRIMARY KEY (...) allow NULL unless declared NOT NULL; the setting tells a later "+
				"ALTER TABLE ... ADD PRIMARY KEY (pg_dump's form) which of its columns stay nullable.")
	}
	items := []parser.Value{v}
	if v.Kind == parser.ValueTuple {
		items = v.Items
	}
	if len(items) == 0 {
		return nil, errorf(codeSyntax, v.Pos, "%s value should name at least one column", kNullableKey)
	}
	var names []string
	for _, it := range items {
		if it.Kind != parser.ValueString && it.Kind != parser.ValueIdent {
			return nil, errorf(codeSyntax, it.Pos, "%s value should be a column name or a tuple of column names", kNullableKey)
		}
		c, ok := t.column(it.Str)
		if !ok {
			return nil, errorf(codeColumn, it.Pos, "column %q named in %s does not exist", it.Str, kNullableKey)
		}
		for _, n := range names {
			if n == c.Name {
				return nil, errorf(codeValue, it.Pos, "column %q appears twice in %s", c.Name, kNullableKey)
			}
		}
		names = append(names, c.Name)
	}
	return names, nil
}

// formatNames renders column names as NULLABLE_KEY_COLUMNS takes them.
func formatNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteString(n)
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// NullableKeyOption is the pg_class.reloptions item of a table whose key
// columns named in names allow NULL ("" when none do).
func NullableKeyOption(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return strings.ToLower(kNullableKey.String()) + "=" + formatNames(names)
}

// NullableKeyNotInKey is the error of ADD PRIMARY KEY when the table's
// NULLABLE_KEY_COLUMNS names a column that is not in the new key.
func NullableKeyNotInKey(column string) error {
	return sqlerr.New(codeTable, "column %q is named in %s but is not in the primary key", column, kNullableKey)
}
