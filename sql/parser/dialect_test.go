package parser

import (
	"errors"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func errCode(err error) string {
	var e *sqlerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TestDialectDoubleQuotes checks that "..." is a string in yql and a quoted
// identifier in postgresql, and that YQL-only syntax parses in both.
func TestDialectDoubleQuotes(t *testing.T) {
	cases := []struct {
		sql     string
		d       Dialect
		tidb    string // substring of Statement.TiDBText
		errCode string
	}{
		{`SELECT "order" FROM t`, DialectYQL, `SELECT 'order' FROM`, ""},
		{`SELECT "order" FROM t`, DialectPostgreSQL, "SELECT `order` FROM", ""},
		{`SELECT "a""b", "x` + "`" + `y" FROM "T"`, DialectPostgreSQL, "SELECT `a\"b`, `x``y` FROM `T`", ""},
		{`SELECT "a\n"`, DialectPostgreSQL, "SELECT `a\\n`", ""},
		{`SELECT ""`, DialectPostgreSQL, "", "42601"},
		{`SELECT "abc`, DialectPostgreSQL, "", "42601"},
		{"UPSERT INTO `t` (k) VALUES (1)", DialectPostgreSQL, "INSERT INTO `t`", ""},
		{`CREATE TABLE "t" ("k" Uint64, v Utf8, PRIMARY KEY ("k")) WITH (AUTO_PARTITIONING_BY_LOAD = ENABLED)`, DialectPostgreSQL, "CREATE TABLE `t` (`k`", ""},
		{`SELECT a FROM t ORDER BY a DESC NULLS LAST, b NULLS FIRST`, DialectYQL, "ORDER BY a DESC, (pivot_nulls_last()) , b, (pivot_nulls_first())", ""},
	}
	for _, c := range cases {
		stmts, err := ParseDialect(c.sql, c.d)
		if c.errCode != "" {
			if err == nil || errCode(err) != c.errCode {
				t.Errorf("%s (dialect %d): got %v, want %s", c.sql, c.d, err, c.errCode)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s (dialect %d): %v", c.sql, c.d, err)
			continue
		}
		if got := stmts[0].TiDBText; !strings.Contains(got, c.tidb) {
			t.Errorf("%s (dialect %d): TiDB text %q, want it to contain %q", c.sql, c.d, got, c.tidb)
		}
	}
}
