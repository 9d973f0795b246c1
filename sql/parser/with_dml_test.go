package parser

import (
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestWithDML: the data-modifying queries of a top-level WITH come out as
// statements of their own, and the rest parses without them.
func TestWithDML(t *testing.T) {
	for _, tc := range []struct {
		sql, main string
		names     []string
		texts     []string
	}{
		{"WITH x AS (INSERT INTO t VALUES (1) RETURNING a) SELECT * FROM x", "SELECT * FROM x", []string{"x"}, []string{"INSERT INTO t VALUES (1) RETURNING a"}},
		{"WITH a AS (SELECT 1), x (c) AS (DELETE FROM t RETURNING a), b AS (SELECT 2) SELECT * FROM x, a, b", "WITH a AS (SELECT 1), b AS (SELECT 2) SELECT * FROM x, a, b", []string{"x"}, []string{"DELETE FROM t RETURNING a"}},
		{"WITH x AS (UPDATE t SET a = 1 RETURNING a), y AS (UPSERT INTO t VALUES (2) RETURNING *) DELETE FROM t WHERE a IN (SELECT a FROM x)", "DELETE FROM t WHERE a IN (SELECT a FROM x)", []string{"x", "y"}, []string{"UPDATE t SET a = 1 RETURNING a", "UPSERT INTO t VALUES (2) RETURNING *"}},
		{"WITH x AS (SELECT 1) SELECT * FROM x", "", nil, nil},
	} {
		sts, err := Parse(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		st := sts[0]
		if st.Text != tc.sql {
			t.Errorf("%s: text %q", tc.sql, st.Text)
		}
		if len(st.WithDML) != len(tc.names) {
			t.Fatalf("%s: %d data-modifying queries, want %d", tc.sql, len(st.WithDML), len(tc.names))
		}
		for k, w := range st.WithDML {
			if w.Name != tc.names[k] || w.Stmt.Text != tc.texts[k] || w.Stmt.AST == nil {
				t.Errorf("%s: query %d is %q %q", tc.sql, k, w.Name, w.Stmt.Text)
			}
		}
		if tc.main != "" && !strings.EqualFold(strings.Join(strings.Fields(strings.ReplaceAll(st.TiDBText, "`", "")), " "), tc.main) {
			t.Errorf("%s: main is %q, want %q", tc.sql, st.TiDBText, tc.main)
		}
	}
	for _, sql := range []string{
		"SELECT * FROM (WITH x AS (DELETE FROM t RETURNING a) SELECT * FROM x) s",
		"WITH y AS (WITH x AS (DELETE FROM t RETURNING a) SELECT * FROM x) SELECT * FROM y",
		"WITH x AS (INSERT INTO t WITH z AS (DELETE FROM u RETURNING a) SELECT * FROM z RETURNING a) SELECT * FROM x",
	} {
		_, err := Parse(sql)
		if e := sqlerr.As(err); e == nil || e.Code != sqlerr.FeatureNotSupported || !strings.Contains(e.Message, "top level") {
			t.Errorf("%s: got %v, want 0A000 ... must be at the top level", sql, err)
		}
	}
}

// TestWithDMLMalformed: broken data-modifying WITH clauses are errors
// with a SQLSTATE, never a crash.
func TestWithDMLMalformed(t *testing.T) {
	for _, sql := range []string{
		"WITH x AS (INSERT)",
		"WITH x AS (DELETE FROM t RETURNING id)",
		"WITH x AS (DELETE FROM t RETURNING id),",
		"WITH x AS (DELETE FROM t RETURNING id), SELECT 1",
		"WITH x(a AS (DELETE FROM t) SELECT 1",
		"WITH x AS (DELETE FROM t RETURNING id) WITH y AS (DELETE FROM t) SELECT 1",
		"WITH RECURSIVE",
		"WITH x AS (UPDATE) SELECT 1",
		"EXPLAIN (COSTS OFF) WITH x AS (DELETE FROM t RETURNING id) SELECT 1",
		"EXPLAIN WITH x AS (DELETE FROM t RETURNING id) SELECT 1",
	} {
		_, err := Parse(sql)
		if e := sqlerr.As(err); e == nil || e.Code == "" {
			t.Errorf("%s: got %v, want an error with a SQLSTATE", sql, err)
		}
	}
}
