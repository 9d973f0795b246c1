package parser

import "testing"

func TestViewQueryText(t *testing.T) {
	for _, c := range []struct{ def, want string }{
		{"CREATE VIEW v AS SELECT a FROM t", "SELECT a FROM t"},
		{"create or replace view \"as\" (x, y) as select 1, 2;", "select 1, 2"},
		{"CREATE VIEW v (a) AS (SELECT 'as' AS a)", "(SELECT 'as' AS a)"},
		{"CREATE TABLE v AS SELECT 1", ""},
	} {
		got, _ := ViewQueryText(c.def, DialectPostgreSQL)
		if got != c.want {
			t.Errorf("ViewQueryText(%q) = %q, want %q", c.def, got, c.want)
		}
	}
}
