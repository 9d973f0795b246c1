package parser

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func TestTiDBErrorOffset(t *testing.T) {
	text := `SELECT 'x"y' FROM FROM t`
	for _, tc := range []struct {
		msg   string
		off   int
		extra string
		ok    bool
	}{
		{`line 1 column 22 near "FROM t" `, 18, "", true},
		{`line 1 column 24 near "" `, len(text), "", true},
		// The quoted rest may itself contain quotes.
		{`line 1 column 8 near "'x"y' FROM FROM t" `, 7, "", true},
		{`line 1 column 22 near "FROM t"Duplicated options `, 18, "Duplicated options", true},
		{`line 1 column 22 near "FRO"(total length 6)`, 18, "", true},
		{`[parser:1064]You have an error in your SQL syntax`, 0, "", false},
		{`line 1 column 22 near "NOT A SUFFIX" `, 0, "", false},
	} {
		off, extra, ok := tidbErrorOffset(text, tc.msg)
		if ok != tc.ok || ok && (off != tc.off || extra != tc.extra) {
			t.Errorf("%q: got (%d, %q, %v), want (%d, %q, %v)", tc.msg, off, extra, ok, tc.off, tc.extra, tc.ok)
		}
	}
}

func TestEmitterTokenAt(t *testing.T) {
	var e emitter
	e.write("SELECT", 0, false)
	e.write("pivot_cast(", 1, false) // synthetic text charged to token 1
	e.write("?", 1, true)
	e.write(",", 2, true)
	e.write("'Int32'", 2, false)
	e.write(")", 2, true)
	e.write("FROM", 4, false)
	if got := string(e.buf); got != "SELECT pivot_cast(?, 'Int32') FROM" {
		t.Fatalf("text %q", got)
	}
	for _, tc := range []struct{ off, tok int }{
		{0, 0}, {5, 0}, {7, 1}, {18, 1}, {19, 2}, {28, 2}, {30, 4}, {33, 4}, {34, -1}, {100, -1},
	} {
		if got := e.tokenAt(tc.off); got != tc.tok {
			t.Errorf("tokenAt(%d) = %d, want %d", tc.off, got, tc.tok)
		}
	}
}

func TestNeedSpace(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		adj  bool
		want bool
	}{
		{"a", "b", true, true},
		{"a", "(", true, false},
		{"-", "-", true, true},
		{"/", "*", true, true},
		{"'a'", "'b'", true, true},
		{"x", "'ab'", true, true},
		{"1", "a", true, true},
		{"a", ".", true, false},
		{"(", "1", false, true},
	} {
		if got := needSpace(tc.a[len(tc.a)-1], tc.b[0], tc.adj); got != tc.want {
			t.Errorf("needSpace(%q, %q, %v) = %v", tc.a, tc.b, tc.adj, got)
		}
	}
}

// TestErrorPositions checks that syntax errors found by TiDB in the
// rewritten text point at the right character of the original script,
// through rewrites that change lengths, multibyte characters, several
// statements and TiDB's 2048-byte cut of its message.
func TestErrorPositions(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		sql  string
		near string // the quoted token, or "" for end of input
	}{
		{"SELECT * FROM ⌘ WHERE", ""},
		{"SELECT 'ü', E'\\n', $1::int, Date(\"2024-01-01\") FROM FROM t", "FROM"},
		{"SELECT 1;\n  SELECT \"é\"::Uint64 BAD BAD;", "BAD"},
		{"SELECT '" + long + "' FROM FROM t WHERE a = '" + long + "'", "FROM"},
		{"SELECT a FROM t WHERE b = $1 AND", ""},
		{"SELECT a FROM t WHERE b = $1 AND;", ";"},
		{"CREATE TABLE t (k Uint64 NOT NULL BAD, PRIMARY KEY (k)) WITH (TTL = Interval(\"PT1H\") ON k)", "BAD"},
		{"UPSERT INTO t (key) VALUES ($1) BAD", "BAD"},
	} {
		_, err := Parse(tc.sql)
		var e *sqlerr.Error
		if !errors.As(err, &e) || e.Code != sqlerr.SyntaxError {
			t.Errorf("%.60q: got %v", tc.sql, err)
			continue
		}
		runes := []rune(tc.sql)
		if tc.near == "" {
			if e.Message != "syntax error at end of input" || e.Position != len(runes)+1 {
				t.Errorf("%.60q: got %q at %d, want end of input at %d", tc.sql, e.Message, e.Position, len(runes)+1)
			}
			continue
		}
		if want := `syntax error at or near "` + tc.near + `"`; e.Message != want {
			t.Errorf("%.60q: got %q, want %q", tc.sql, e.Message, want)
			continue
		}
		// In every case the offending token is the last occurrence of its
		// text; the position counts characters, not bytes.
		want := utf8.RuneCountInString(tc.sql[:strings.LastIndex(tc.sql, tc.near)]) + 1
		if e.Position != want {
			t.Errorf("%.60q: position %d, want %d", tc.sql, e.Position, want)
		}
	}
}
