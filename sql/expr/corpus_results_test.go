package expr

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	tidbtypes "github.com/pingcap/tidb/pkg/parser/types"
	"github.com/pivotdb/pivotdb/sql/types"
)

// sltColumnType maps the corpus's column types the way PivotDB's catalog
// does (types.ParseTypeName): INTEGER is Int32, FLOAT is Float, TEXT and
// VARCHAR are Utf8.
func sltColumnType(ft *tidbtypes.FieldType) types.Type {
	switch ft.GetType() {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong:
		return types.TypeInt32
	case mysql.TypeLonglong:
		return types.TypeInt64
	case mysql.TypeFloat:
		return types.T(types.Float)
	case mysql.TypeDouble:
		return types.TypeDouble
	case mysql.TypeNewDecimal:
		return types.TypeDecimal
	case mysql.TypeVarchar, mysql.TypeVarString:
		if ft.GetFlen() > 0 {
			return types.Type{Family: types.Utf8, Width: ft.GetFlen()}
		}
	}
	return types.TypeUtf8
}

// slRecord is one sqllogictest record.
type slRecord struct {
	query    bool
	ok       bool // statement ok (or a query)
	types    string
	sort     string
	sql      string
	expected []string
	line     int
}

type slFile struct {
	records       []slRecord
	hashThreshold int
}

// readSLT parses a sqllogictest file, dropping records guarded for other
// engines and everything after an unguarded halt.
func readSLT(t *testing.T, file string) slFile {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := slFile{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur *slRecord
	skip, halted, inResult := false, false, false
	var sqlLines []string
	lineNo := 0
	flush := func() {
		if cur != nil && !skip && !halted {
			cur.sql = strings.Join(sqlLines, "\n")
			out.records = append(out.records, *cur)
		}
		cur, skip, inResult, sqlLines = nil, false, false, nil
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case cur == nil && strings.HasPrefix(line, "hash-threshold"):
			out.hashThreshold, _ = strconv.Atoi(strings.Fields(line)[1])
		case cur == nil && strings.HasPrefix(line, "onlyif "):
			if !strings.HasPrefix(line, "onlyif pivotdb") {
				skip = true
			}
		case cur == nil && strings.HasPrefix(line, "skipif pivotdb"):
			skip = true
		case cur == nil && strings.HasPrefix(line, "skipif "):
		case cur == nil && strings.HasPrefix(line, "halt"):
			if !skip {
				halted = true
			}
			skip = false
		case cur == nil && strings.HasPrefix(line, "statement "):
			cur = &slRecord{ok: strings.HasPrefix(line, "statement ok"), line: lineNo}
		case cur == nil && strings.HasPrefix(line, "query "):
			fs := strings.Fields(line)
			cur = &slRecord{query: true, ok: true, types: fs[1], line: lineNo}
			if len(fs) > 2 {
				cur.sort = fs[2]
			}
		case cur != nil && line == "----":
			inResult = true
		case cur != nil && inResult:
			cur.expected = append(cur.expected, line)
		case cur != nil:
			sqlLines = append(sqlLines, line)
		}
	}
	flush()
	return out
}

type slTable struct {
	cols  []testCol
	rows  []Row
	dirty bool
}

// TestCorpusResults runs the simple queries of the sqllogictest corpus —
// one table, no aggregates, subqueries, grouping, DISTINCT or LIMIT — on
// the expression engine alone (a WHERE filter and a projection over the
// rows the file inserted) and compares the results with SQLite's. It is an
// oracle for the semantics the corpus relies on: integer arithmetic and
// division, NULL logic, IN, BETWEEN, CASE, casts.
func TestCorpusResults(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.test"))
	more, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*", "*.test"))
	more2, _ := filepath.Glob(filepath.Join(corpusDir, "evidence", "*.test"))
	files = append(append(files, more...), more2...)
	if len(files) == 0 {
		t.Skip("corpus not available")
	}
	if testing.Short() {
		t.Skip("corpus tests take seconds")
	}
	p := newParser()
	ran, mismatched := 0, 0
	for _, file := range files {
		sf := readSLT(t, file)
		tables := map[string]*slTable{}
		for _, rec := range sf.records {
			sql := aggSpace.ReplaceAllString(rec.sql, "$1(")
			sql = strings.ReplaceAll(sql, " AS INTEGER", " AS SIGNED")
			stmts, _, err := p.Parse(sql, "", "")
			if err != nil || len(stmts) != 1 {
				if !rec.query {
					// A statement TiDB cannot parse may have changed data.
					for _, tb := range tables {
						tb.dirty = true
					}
				}
				continue
			}
			switch s := stmts[0].(type) {
			case *ast.CreateTableStmt:
				tb := &slTable{}
				for _, c := range s.Cols {
					typ := sltColumnType(c.Tp)
					tb.cols = append(tb.cols, testCol{table: s.Table.Name.O, name: c.Name.Name.O, typ: typ})
				}
				tables[s.Table.Name.L] = tb
			case *ast.InsertStmt:
				insertRows(t, s, tables)
			case *ast.SelectStmt:
				if !rec.query {
					continue
				}
				got, ok := runSelect(s, tables, rec.sort)
				if !ok {
					continue
				}
				ran++
				if msg := compareResult(rec, sf.hashThreshold, got); msg != "" {
					mismatched++
					if mismatched <= 25 {
						t.Errorf("%s:%d: %s\n%s", filepath.Base(file), rec.line, strings.ReplaceAll(rec.sql, "\n", " "), msg)
					}
				}
			case *ast.CreateIndexStmt, *ast.CreateViewStmt:
			default:
				for _, tb := range tables {
					tb.dirty = true
				}
			}
		}
	}
	t.Logf("ran %d queries, %d mismatched", ran, mismatched)
}

func insertRows(t *testing.T, s *ast.InsertStmt, tables map[string]*slTable) {
	ts, ok := s.Table.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return
	}
	tb := tables[tn.Name.L]
	if tb == nil || s.Select != nil || s.IsReplace {
		if tb != nil {
			tb.dirty = true
		}
		return
	}
	order := make([]int, 0, len(tb.cols))
	if len(s.Columns) == 0 {
		for i := range tb.cols {
			order = append(order, i)
		}
	} else {
		for _, c := range s.Columns {
			for i, tc := range tb.cols {
				if strings.EqualFold(tc.name, c.Name.O) {
					order = append(order, i)
				}
			}
		}
	}
	for _, list := range s.Lists {
		row := make(Row, len(tb.cols))
		for i, n := range list {
			col := tb.cols[order[i]]
			b := &Builder{}
			e, err := b.BuildAssign(n, col.typ, col.name)
			if err != nil {
				t.Fatalf("INSERT value %d: %v", i, err)
			}
			v, err := e.Eval(&Context{}, nil)
			if err != nil {
				t.Fatalf("INSERT value %d: %v", i, err)
			}
			row[order[i]] = v
		}
		tb.rows = append(tb.rows, row)
	}
}

func hasAggregate(n ast.Node) bool {
	v := &aggFinder{}
	n.Accept(v)
	return v.found
}

type aggFinder struct{ found bool }

func (v *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		v.found = true
	case *ast.FuncCallExpr:
		if IsAggregate(x.FnName.L) {
			v.found = true
		}
	}
	return n, v.found
}

func (v *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// formatSLT renders a value as sqllogictest prints a column of type c.
func formatSLT(v types.Value, c byte) string {
	if v.IsNull() {
		return "NULL"
	}
	f := v.Family()
	switch c {
	case 'I':
		switch {
		case f.IsInteger(), f == types.Bool:
			return v.Text()
		case f.IsNumeric():
			return strconv.FormatInt(int64(math.Trunc(v.AsFloat())), 10)
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v.Text()), 10, 64)
		return strconv.FormatInt(n, 10)
	case 'R':
		if f.IsNumeric() {
			return fmt.Sprintf("%.3f", v.AsFloat())
		}
		x, _ := strconv.ParseFloat(v.Text(), 64)
		return fmt.Sprintf("%.3f", x)
	}
	s := textOf(v)
	if s == "" {
		return "(empty)"
	}
	b := []byte(s)
	for i, ch := range b {
		if ch < 0x20 || ch > 0x7e {
			b[i] = '@'
		}
	}
	return string(b)
}

func compareResult(rec slRecord, threshold int, rows [][]types.Value) string {
	var vals []string
	var rowStrs [][]string
	for _, r := range rows {
		var rs []string
		for i, v := range r {
			c := byte('T')
			if i < len(rec.types) {
				c = rec.types[i]
			}
			rs = append(rs, formatSLT(v, c))
		}
		rowStrs = append(rowStrs, rs)
	}
	switch rec.sort {
	case "rowsort":
		sort.Slice(rowStrs, func(i, j int) bool {
			return strings.Join(rowStrs[i], "\x00") < strings.Join(rowStrs[j], "\x00")
		})
	}
	for _, rs := range rowStrs {
		vals = append(vals, rs...)
	}
	if rec.sort == "valuesort" {
		sort.Strings(vals)
	}
	var got []string
	want := rec.expected
	hashed := len(want) == 1 && strings.Contains(want[0], "values hashing to")
	if hashed || (threshold > 0 && len(vals) > threshold) {
		h := md5.New()
		for _, v := range vals {
			h.Write([]byte(v + "\n"))
		}
		got = []string{fmt.Sprintf("%d values hashing to %s", len(vals), hex.EncodeToString(h.Sum(nil)))}
	} else {
		got = vals
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		if len(got) > 12 {
			got = got[:12]
		}
		if len(want) > 12 {
			want = want[:12]
		}
		return fmt.Sprintf("got  %q\nwant %q", got, want)
	}
	return ""
}
