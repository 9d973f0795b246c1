package parser

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// FuzzParse checks that Parse never panics, that every error carries a
// SQLSTATE and a position inside the script, and that every statement
// keeps the documented invariants. The seed corpus is every input of the
// data-driven files. Run it with
//
//	go test -fuzz FuzzParse ./sql/parser/
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/parse/*")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, block := range strings.Split(string(data), "\n----\n") {
			if i := strings.LastIndex(block, "\nparse"); i >= 0 {
				if j := strings.IndexByte(block[i+1:], '\n'); j >= 0 {
					f.Add(block[i+1+j+1:])
				}
			}
		}
	}
	f.Add(`ALTER ROLE "r" IN DATABASE d SET sql_dialect = 'postgresql'`)
	f.Add(`SELECT "a""b" FROM t ORDER BY 1 DESC NULLS LAST OFFSET 3`)
	f.Fuzz(func(t *testing.T, sql string) {
		checkParse(t, sql)
	})
}

// checkParse parses sql in both dialects and checks the invariants of the
// results.
func checkParse(t *testing.T, sql string) {
	checkParseDialect(t, sql, DialectYQL)
	checkParseDialect(t, sql, DialectPostgreSQL)
}

func checkParseDialect(t *testing.T, sql string, d Dialect) {
	stmts, err := ParseDialect(sql, d)
	if err != nil {
		var e *sqlerr.Error
		if !errors.As(err, &e) || len(e.Code) != 5 {
			t.Fatalf("%q: error without SQLSTATE: %v", sql, err)
		}
		if e.Code == sqlerr.InternalError {
			t.Fatalf("%q: internal error: %v", sql, err)
		}
		if e.Position < 0 || e.Position > utf8.RuneCountInString(sql)+1 {
			t.Fatalf("%q: position %d out of range", sql, e.Position)
		}
		return
	}
	for _, st := range stmts {
		if st.Offset < 0 || st.Offset+len(st.Text) > len(sql) || sql[st.Offset:st.Offset+len(st.Text)] != st.Text || st.Text == "" {
			t.Fatalf("%q: bad Text/Offset %d %q", sql, st.Offset, st.Text)
		}
		set := 0
		for _, p := range []bool{st.AST != nil, st.Settings != nil, st.Set != nil, st.Show != nil, st.Reset != nil,
			st.Txn != nil, st.Deallocate != nil, st.Discard != nil, st.Reshard != nil, st.DropIndex != nil, st.Reindex != nil,
			st.Unsupported != nil, st.User != nil, st.Grant != nil, st.AlterOwner != nil, st.Truncate != nil, st.Lock != nil, st.Vacuum != nil, st.Sequence != nil, st.RoleSetting != nil, st.Cursor != nil, st.Job != nil, st.Copy != nil, st.Type != nil, st.Function != nil, st.Cluster != nil} {
			if p {
				set++
			}
		}
		if st.Cursor != nil && st.Cursor.Kind == CursorDeclare && st.AST != nil {
			set-- // DECLARE's query is its AST
		}
		if st.Copy != nil && st.AST != nil {
			set-- // COPY TO's query is its AST
		}
		if set != 1 {
			t.Fatalf("%q: %d statement kinds set", sql, set)
		}
		if st.AST == nil {
			continue
		}
		pc := &paramCounter{}
		st.AST.Accept(pc)
		for _, order := range pc.orders {
			if order < 0 || order >= len(st.ParamIndex) {
				t.Fatalf("%q: marker order %d outside ParamIndex %v", sql, order, st.ParamIndex)
			}
		}
		for _, n := range st.ParamIndex {
			if n < 1 || n > st.NumParams {
				t.Fatalf("%q: ParamIndex %v with NumParams %d", sql, st.ParamIndex, st.NumParams)
			}
		}
	}
}

type paramCounter struct{ orders []int }

func (c *paramCounter) Enter(n ast.Node) (ast.Node, bool) {
	if pm, ok := n.(*test_driver.ParamMarkerExpr); ok {
		c.orders = append(c.orders, pm.Order)
	}
	return n, false
}

func (c *paramCounter) Leave(n ast.Node) (ast.Node, bool) { return n, true }
