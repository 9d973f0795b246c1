package parser

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// TestStringBytes checks that string literals reach the AST byte for byte,
// whatever the bytes: invalid UTF-8, NUL, quotes and backslashes.
func TestStringBytes(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want string
	}{
		{`SELECT 'a''b\c'`, `a'b\c`},
		{`SELECT E'\xff\x00\200'`, "\xff\x00\x80"},
		{`SELECT "\xfe\"\\"`, "\xfe\"\\"},
		{"SELECT 'raw \xff\x80 bytes'", "raw \xff\x80 bytes"},
		{"SELECT $$\\'$$", `\'`},
		{`SELECT E'\u00e9\U0001F600'`, "é😀"},
		{"SELECT 'multi\nline'", "multi\nline"},
	} {
		stmts, err := Parse(tc.sql)
		if err != nil {
			t.Errorf("%q: %v", tc.sql, err)
			continue
		}
		v, ok := stmts[0].AST.(*ast.SelectStmt).Fields.Fields[0].Expr.(ast.ValueExpr)
		if !ok {
			t.Errorf("%q: not a value", tc.sql)
			continue
		}
		if got := v.GetString(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.sql, got, tc.want)
		}
	}
}

func TestLexerTokens(t *testing.T) {
	src := "SELECT a.b, `c`, 'd', E'e', \"f\", $$g$$, X'01', 1.5e3, .5, $2, <=, ::, == -- c\n/* x /* y */ */ ;"
	l := lexer{src: src}
	var kinds []tokKind
	var texts []string
	for {
		tok, err := l.next()
		if err != nil {
			t.Fatal(err)
		}
		if tok.kind == tkEOF {
			break
		}
		kinds = append(kinds, tok.kind)
		texts = append(texts, src[tok.start:tok.end])
	}
	want := []string{"SELECT", "a", ".", "b", ",", "`c`", ",", "'d'", ",", "E'e'", ",", `"f"`, ",", "$$g$$", ",",
		"X'01'", ",", "1.5e3", ",", ".5", ",", "$2", ",", "<=", ",", "::", ",", "==", ";"}
	if len(texts) != len(want) {
		t.Fatalf("got %q", texts)
	}
	for i := range want {
		if texts[i] != want[i] {
			t.Fatalf("token %d: got %q, want %q (all: %q)", i, texts[i], want[i], texts)
		}
	}
	if kinds[5] != tkQuotedIdent || kinds[7] != tkString || kinds[15] != tkBitString || kinds[17] != tkNumber || kinds[21] != tkParam {
		t.Errorf("kinds %v", kinds)
	}
	if got := l.strs; len(got) != 4 || got[0] != "d" || got[1] != "e" || got[2] != "f" || got[3] != "g" {
		t.Errorf("strings %q", got)
	}
}
