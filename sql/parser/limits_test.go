package parser

import (
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestLimits checks that pathological statements end in an error or a
// parse, within bounded time and stack. Statement sizes are 10 MB.
func TestLimits(t *testing.T) {
	const mb10 = 10 << 20
	repeat := func(prefix, unit, suffix string, size int) string {
		return prefix + strings.Repeat(unit, (size-len(prefix)-len(suffix))/len(unit)) + suffix
	}
	for _, tc := range []struct {
		name string
		sql  string
		code string // "" for success
		slow bool   // skipped with -short
	}{
		{"parens 100k", "SELECT " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000), sqlerr.StatementTooComplex, false},
		{"parens unclosed 100k", "SELECT " + strings.Repeat("(", 100000), sqlerr.StatementTooComplex, false},
		{"parens at limit", "SELECT " + strings.Repeat("(", maxNesting) + "1" + strings.Repeat(")", maxNesting), "", false},
		{"parens over limit", "SELECT " + strings.Repeat("(", maxNesting+1) + "1" + strings.Repeat(")", maxNesting+1), sqlerr.StatementTooComplex, false},
		{"plus chain 10MB", repeat("SELECT 1", "+1", "", mb10), sqlerr.StatementTooComplex, false},
		{"plus chain 50k", "SELECT 1" + strings.Repeat("+1", 50000), "", false},
		{"not chain 10MB", repeat("SELECT ", "NOT ", "1", mb10), sqlerr.StatementTooComplex, false},
		{"cast chain", "SELECT 1" + strings.Repeat("::int", 200000), sqlerr.StatementTooComplex, false},
		{"case nesting", "SELECT " + strings.Repeat("CASE WHEN a THEN ", 200000) + "1" + strings.Repeat(" END", 200000), sqlerr.StatementTooComplex, false},
		{"or chain in parens", "SELECT * FROM t WHERE (" + strings.Repeat("a = 1 OR ", 60000) + "a = 2)", sqlerr.StatementTooComplex, false},
		{"string 10MB", "SELECT '" + strings.Repeat("x", mb10) + "'", "", false},
		{"values 10MB", repeat("INSERT INTO t VALUES (1, 'abc')", ", (1, 'abc')", "", mb10), "", true},
		{"in list 10MB", repeat("SELECT * FROM t WHERE a IN (1", ", 1", ")", mb10), "", true},
		{"syntax error at end of 10MB", repeat("SELECT '", "x", "' FROM FROM", mb10), sqlerr.SyntaxError, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && testing.Short() {
				t.Skip("10 MB statements for TiDB take seconds")
			}
			start := time.Now()
			stmts, err := Parse(tc.sql)
			t.Logf("%d bytes in %v", len(tc.sql), time.Since(start))
			if tc.code == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if len(stmts) != 1 {
					t.Fatalf("got %d statements", len(stmts))
				}
				return
			}
			if got := sqlerr.Code(err); got != tc.code {
				t.Fatalf("got code %s (%v), want %s", got, err, tc.code)
			}
			if sqlerr.As(err).Position <= 0 {
				t.Fatalf("error without position: %v", err)
			}
		})
	}
}
