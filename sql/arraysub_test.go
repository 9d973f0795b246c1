package sql

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// ARRAY(SELECT ...) yields PostgreSQL's text form of an array (PivotDB has
// no array type), which array_to_string and = ANY (array) read.
func TestArraySubquery(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE p (id Int64, name Utf8, PRIMARY KEY (id))")
	query(t, s, "CREATE TABLE c (id Int64, pid Int64, v Utf8, PRIMARY KEY (id))")
	query(t, s, "INSERT INTO p (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	query(t, s, `INSERT INTO c (id, pid, v) VALUES (1, 1, 'x'), (2, 1, 'y z'), (3, 1, NULL),
		(4, 2, 'q"u\o'), (5, 2, ''), (6, 2, 'NULL'), (7, 2, '{a,b}')`)

	for _, tc := range []struct{ sql, want string }{
		{"SELECT ARRAY(SELECT id FROM p ORDER BY id)", "{1,2,3}"},
		{"SELECT ARRAY(SELECT id FROM p ORDER BY id DESC)", "{3,2,1}"},
		{"SELECT ARRAY(SELECT id FROM p WHERE id > 10)", "{}"},
		{"SELECT ARRAY(SELECT v FROM c WHERE pid = 1 ORDER BY id)", `{x,"y z",NULL}`},
		{"SELECT ARRAY(SELECT v FROM c WHERE pid = 2 ORDER BY id)", `{"q\"u\\o","","NULL","{a,b}"}`},
		{"SELECT ARRAY((SELECT name FROM p WHERE id = 2))", "{b}"},
		{"SELECT array_to_string(ARRAY(SELECT name FROM p ORDER BY id), ', ')", "a, b, c"},
		{"SELECT array_to_string(ARRAY(SELECT v FROM c WHERE pid = 1 ORDER BY id), '|')", "x|y z"},
		{"SELECT 2 = ANY (ARRAY(SELECT id FROM p))", "t"},
		{"SELECT 7 = ANY (ARRAY(SELECT id FROM p))", "f"},
		{"SELECT 'y z' = ANY (ARRAY(SELECT v FROM c))", "t"},
		{"SELECT 'zz' = ANY (ARRAY(SELECT v FROM c))", "NULL"},
		{"SELECT ARRAY(SELECT id FROM p WHERE id = 1 UNION ALL SELECT NULL)", "{1,NULL}"},
	} {
		rows := query(t, s, tc.sql)
		if len(rows) != 1 || rows[0][0].Text() != tc.want {
			t.Errorf("%s = %v, want %s", tc.sql, rows, tc.want)
		}
	}

	// Correlated: one array per outer row, '{}' where nothing matches.
	rows := query(t, s, "SELECT name, ARRAY(SELECT c.id FROM c WHERE c.pid = p.id ORDER BY c.id) FROM p ORDER BY id")
	want := []string{"a {1,2,3}", "b {4,5,6,7}", "c {}"}
	if len(rows) != len(want) {
		t.Fatalf("correlated: %v", rows)
	}
	for i, r := range rows {
		if got := r[0].Text() + " " + r[1].Text(); got != want[i] {
			t.Errorf("correlated row %d = %q, want %q", i, got, want[i])
		}
	}
	rows = query(t, s, "SELECT id FROM p WHERE 'x' = ANY (ARRAY(SELECT v FROM c WHERE c.pid = p.id)) ORDER BY id")
	if len(rows) != 1 || rows[0][0].Text() != "1" {
		t.Errorf("correlated = ANY: %v", rows)
	}

	// The column is named "array", as in PostgreSQL.
	p, err := s.Prepare(t.Context(), "SELECT ARRAY(SELECT id FROM p)", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cols := p.Columns; len(cols) != 1 || cols[0].Name != "array" {
		t.Errorf("columns = %+v", cols)
	}
	s.Sync()

	for _, tc := range []struct{ sql, code string }{
		{"SELECT ARRAY(SELECT id, name FROM p)", sqlerr.SyntaxError},
		{"SELECT ARRAY(1)", sqlerr.SyntaxError},
	} {
		if _, err := tryQuery(s, tc.sql); sqlerr.Code(err) != tc.code {
			t.Errorf("%s: err %v, want %s", tc.sql, err, tc.code)
		}
	}
}

// FormatArrayText and ParseArrayText are inverse.
func TestArrayTextRoundTrip(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, elems := range [][]*string{
		nil,
		{str("a")},
		{nil, str(""), str("NULL"), str("null")},
		{str(`a"b\c`), str("{}"), str("a,b"), str(" lead"), str("tab\there")},
	} {
		text := expr.FormatArrayText(elems)
		back, err := expr.ParseArrayText(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if len(back) != len(elems) {
			t.Fatalf("%s: %d elements back, want %d", text, len(back), len(elems))
		}
		for i := range elems {
			if (elems[i] == nil) != (back[i] == nil) || (elems[i] != nil && *elems[i] != *back[i]) {
				t.Errorf("%s: element %d read back wrong", text, i)
			}
		}
	}
}
