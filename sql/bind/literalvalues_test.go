package bind

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// literalTable has a column of most scalar families, a DEFAULT and a
// GENERATED ALWAYS identity column, so random VALUES items meet every
// coercion an INSERT does.
const literalTable = `CREATE TABLE lit (
	k Int64 PRIMARY KEY, i32 Int32, i16 Int16, u64 Uint64, dbl Double,
	dec Decimal(10, 2), s Utf8, vc varchar(3), b Bool, d Date, ts Timestamp,
	iv Interval, j Json, n Int32 DEFAULT 7, id bigint GENERATED ALWAYS AS IDENTITY)`

var literalCols = []string{"k", "i32", "i16", "u64", "dbl", "dec", "s", "vc", "b", "d", "ts", "iv", "j", "n", "id"}

// randomLiteralItem returns one VALUES item: mostly the literals the fast
// path reads (with signs, casts and values that fail to coerce), now and
// then something it leaves to TiDB.
func randomLiteralItem(r *rand.Rand) string {
	atoms := []string{
		"0", "1", "42", "-7", "+3", "2147483647", "2147483648", "-2147483648", "-2147483649",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551615",
		"18446744073709551616", "123456789012345678901234567890", "1.5", "-1.25", ".5", "5.", "00012",
		"1e3", "1.5E-2", "-2e400", "1e400", "0x1F", "123.456789", "99999999.999",
		"'abc'", "''", "'12'", "'-5'", "'1.5'", "'true'", "'2024-02-29'", "'2024-13-01'",
		"'2024-01-02 03:04:05'", "'1 day'", "'{\"a\":1}'", "'it''s'", "E'a\\tb'", "\"dq\"", "'abcd'", "E'\\xff'", "E'\\xc3'::Utf8",
		"NULL", "null", "TRUE", "false", "DEFAULT", "default",
		"$1", "$2", "$3",
	}
	casts := []string{"Int32", "int", "Int64", "Utf8", "text", "Date", "Decimal(5,2)", "numeric", "Double",
		"bool", "varchar(2)", "Interval", "nosuchtype", "Int32[]", "regclass"}
	item := atoms[r.IntN(len(atoms))]
	switch x := r.IntN(20); {
	case x < 4:
		item += "::" + casts[r.IntN(len(casts))]
	case x == 4:
		item = "-" + item
	case x == 5:
		item = "(" + item + ")"
	case x == 6:
		item += " + 1"
	case x == 7:
		item = "'a' 'b'"
	case x == 8:
		item = "Date('2024-01-02')"
	}
	return item
}

// validLiterals are items each column takes, for statements that bind.
var validLiterals = map[string][]string{
	"k":   {"1", "-9223372036854775808", "'12'", "$1", "NULL", "2147483648", "3::Int64"},
	"i32": {"-2147483648", "'7'", "5::Int16", "NULL", "1.4", "$2"},
	"i16": {"-32768", "'-1'", "NULL", "2.5e0"},
	"u64": {"18446744073709551615", "'18446744073709551615'", "0", "NULL", "9223372036854775808"},
	"dbl": {"1e300", "'-0.5'", "1.25", "7", "NULL", "-.5", "$3"},
	"dec": {"12345678.99", "'1.005'", "3", "-0.125", "NULL", "1e2", "2.5::Decimal(5,2)"},
	"s":   {"'x'", "E'\\n'", "12", "TRUE", "'12'::Utf8", "NULL", "$1", "\"dq\""},
	"vc":  {"'abc'", "'ab'::varchar(2)", "NULL", "'abcdef'::varchar(3)"},
	"b":   {"TRUE", "false", "'yes'", "NULL", "'f'::bool"},
	"d":   {"'2024-02-29'", "'2024-01-02'::Date", "NULL"},
	"ts":  {"'2024-01-02 03:04:05'", "NULL", "'2024-01-02'::Date"},
	"iv":  {"'1 day'", "'PT1H'::Interval", "NULL"},
	"j":   {"'{\"a\": [1, 2]}'", "NULL", "'1'"},
	"n":   {"DEFAULT", "-5", "NULL"},
	"id":  {"DEFAULT"},
}

func randomLiteralInsert(r *rand.Rand) string {
	var sb strings.Builder
	switch r.IntN(6) {
	case 0:
		sb.WriteString("UPSERT INTO lit")
	case 1:
		sb.WriteString("REPLACE INTO lit")
	default:
		sb.WriteString("INSERT INTO lit")
	}
	cols := literalCols
	if r.IntN(4) > 0 {
		perm := r.Perm(len(literalCols))
		cols = nil
		sb.WriteString(" (")
		for i := range 1 + r.IntN(4) {
			if i > 0 {
				sb.WriteString(", ")
			}
			cols = append(cols, literalCols[perm[i]])
			sb.WriteString(cols[i])
		}
		sb.WriteString(")")
	}
	width := len(cols)
	// Half the statements bind: their items are valid for their columns.
	clean := r.IntN(2) == 0
	sb.WriteString(" VALUES ")
	rows := 1 + r.IntN(4)
	for row := range rows {
		if row > 0 {
			sb.WriteString(", ")
		}
		w := width
		if !clean && r.IntN(15) == 0 {
			w += r.IntN(3) - 1
		}
		sb.WriteString("(")
		for i := range w {
			if i > 0 {
				sb.WriteString(", ")
			}
			if clean && i < len(cols) {
				v := validLiterals[cols[i]]
				sb.WriteString(v[r.IntN(len(v))])
				continue
			}
			sb.WriteString(randomLiteralItem(r))
		}
		sb.WriteString(")")
	}
	switch r.IntN(8) {
	case 0:
		sb.WriteString(" RETURNING k, $2")
	case 1:
		sb.WriteString(" ON CONFLICT (k) DO NOTHING")
	}
	return sb.String()
}

// boundText renders what binding a statement gives: the bound statement
// with every expression of an INSERT's rows spelled with its Go types and
// SQL types, the parameter types, or the error with its position.
func boundText(c *testCatalog, sql string, full bool) string {
	parse := parser.ParseDialect
	if full {
		parse = parser.ParseFullPath
	}
	stmts, err := parse(sql, parser.DialectYQL)
	if err != nil {
		return "parse: " + errText(err)
	}
	if full == (stmts[0].Values != nil) {
		return fmt.Sprintf("fast path taken: %v", stmts[0].Values != nil)
	}
	st, params, err := Bind(&stmts[0], nil, c.env)
	if err != nil {
		return "bind: " + errText(err)
	}
	var sb strings.Builder
	sb.WriteString(describe(st, params))
	if ins, ok := st.(*Insert); ok {
		describeRows(&sb, ins)
	}
	return sb.String()
}

func describeRows(sb *strings.Builder, ins *Insert) {
	v, ok := ins.Source.(*planner.Values)
	if !ok {
		return
	}
	for _, row := range v.Rows {
		for _, e := range row {
			expr.Walk(e, func(x expr.Expr) bool {
				fmt.Fprintf(sb, "%T:%s:%s ", x, x.Type(), x.String())
				return true
			})
			sb.WriteString("| ")
		}
		sb.WriteString("\n")
	}
}

func errText(err error) string {
	var e *sqlerr.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("%s %q pos=%d", e.Code, e.Message, e.Position)
	}
	return err.Error()
}

// TestLiteralValuesMatchFullParse binds random INSERT ... VALUES statements
// of literals twice, through the fast path (parser.Statement.Values) and
// through TiDB's parser (parser.ParseFullPath), and wants the same rows,
// parameter types and errors.
func TestLiteralValuesMatchFullParse(t *testing.T) {
	c := newTestCatalog(t)
	stmts, err := parser.Parse(literalTable)
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := Bind(&stmts[0], nil, c.env)
	if err != nil {
		t.Fatal(err)
	}
	c.create(t, st.(*CreateTable), "pivotdb")

	r := rand.New(rand.NewPCG(23, 5))
	fast, errs := 0, 0
	for range 1000 {
		sql := randomLiteralInsert(r)
		got, want := boundText(c, sql, false), boundText(c, sql, true)
		if strings.HasPrefix(got, "fast path taken: false") {
			// Not all literal: the statement took the full path, which
			// is what the reference did too.
			continue
		}
		if got != want {
			t.Fatalf("%s\nfast path:\n%s\nfull parse:\n%s", sql, got, want)
		}
		fast++
		if strings.HasPrefix(got, "bind: ") || strings.HasPrefix(got, "parse: ") {
			errs++
		}
	}
	t.Logf("%d statements took the fast path, %d of them errors", fast, errs)
	if fast < 300 || errs < 50 || fast-errs < 100 {
		t.Fatalf("too few cases: %d fast, %d errors", fast, errs)
	}
}

// BenchmarkInsertLiterals parses and binds a 1,000-row INSERT of literal
// text (an integer and a string per row, as the bench's bulk load by
// script sends it) through the fast path and through TiDB's parser, and
// reports the CPU time per statement:
//
//	go test ./sql/bind -run '^$' -bench InsertLiterals
func BenchmarkInsertLiterals(b *testing.B) {
	c := newTestCatalog(b)
	stmts, err := parser.Parse("CREATE TABLE bulk (k Int64, v Utf8, PRIMARY KEY (k))")
	if err != nil {
		b.Fatal(err)
	}
	st, _, err := Bind(&stmts[0], nil, c.env)
	if err != nil {
		b.Fatal(err)
	}
	c.create(b, st.(*CreateTable), "pivotdb")
	var sb strings.Builder
	sb.WriteString("INSERT INTO bulk (k, v) VALUES ")
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%d, 'value-%016d')", i, i)
	}
	sql := sb.String()
	for _, bc := range []struct {
		name  string
		parse func(string, parser.Dialect) ([]parser.Statement, error)
	}{{"fast", parser.ParseDialect}, {"full", parser.ParseFullPath}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				stmts, err := bc.parse(sql, parser.DialectYQL)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := Bind(&stmts[0], nil, c.env); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkBindComputedUpsert parses and binds a single-row UPSERT into a
// table keyed by a computed hash column, as a client of the simple
// protocol sends it each time: binding builds the computed column's
// expression from the text the catalog stores, and reports CPU time per
// statement:
//
//	go test ./sql/bind -run '^$' -bench BindComputedUpsert
func BenchmarkBindComputedUpsert(b *testing.B) {
	c := newTestCatalog(b)
	stmts, err := parser.Parse("CREATE TABLE hkv (h Uint64 AS (farm_hash(k)), k Int64, v Utf8 DEFAULT 'none', PRIMARY KEY (h, k))")
	if err != nil {
		b.Fatal(err)
	}
	st, _, err := Bind(&stmts[0], nil, c.env)
	if err != nil {
		b.Fatal(err)
	}
	c.create(b, st.(*CreateTable), "pivotdb")
	b.ReportAllocs()
	cpu0 := processCPU()
	i := 0
	for b.Loop() {
		i++
		stmts, err := parser.Parse(fmt.Sprintf("UPSERT INTO hkv (k) VALUES (%d)", i))
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Bind(&stmts[0], nil, c.env); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
