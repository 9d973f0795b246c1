package sql

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/tests/logictest"
)

// FuzzBind feeds SQL text through the parser and the binder (Prepare) of a
// session whose catalog holds the tables, indexes and views that the seed
// statements create. Nothing runs: the catalog is the same for every input.
// It checks that binding never panics and that every error carries a
// SQLSTATE and is not an internal error (XX000 is a bug by definition).
//
// Seeds: the statements of tests/sql/*.test and a modest sample of the
// sqllogictest corpus (testdata/fuzz/bind-seeds.sql, statements separated
// by "----" lines). Run it with
//
//	go test -run '^$' -fuzz FuzzBind ./sql
func FuzzBind(f *testing.F) {
	seeds := bindSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	e := testEngine(f)
	s := testSession(f, e)
	// The catalog: every CREATE of the seeds that succeeds (the files reuse
	// names, so later ones may fail; that is fine).
	for _, sql := range seeds {
		head := strings.ToUpper(strings.TrimSpace(sql))
		if strings.HasPrefix(head, "CREATE TABLE") || strings.HasPrefix(head, "CREATE VIEW") ||
			strings.HasPrefix(head, "CREATE INDEX") || strings.HasPrefix(head, "CREATE UNIQUE INDEX") {
			_, _ = tryQuery(s, sql)
		}
	}
	f.Fuzz(func(t *testing.T, sql string) {
		checkBind(t, s, sql)
	})
}

// checkBind prepares every statement of sql on s and checks the errors.
func checkBind(t *testing.T, s *Session, sql string) {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return // FuzzParse checks the parser's errors.
	}
	for _, st := range stmts {
		_, err := s.Prepare(context.Background(), st.Text, nil)
		if err == nil {
			continue
		}
		var e *sqlerr.Error
		if !errors.As(err, &e) || len(e.Code) != 5 {
			t.Fatalf("%q: error without SQLSTATE: %v", st.Text, err)
		}
		if e.Code == sqlerr.InternalError {
			t.Fatalf("%q: internal error: %v", st.Text, err)
		}
	}
}

// bindSeeds returns the SQL of every statement and query record of
// tests/sql and of the sqllogictest sample.
func bindSeeds(f *testing.F) []string {
	var out []string
	files, _ := filepath.Glob("../tests/sql/*.test")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, r := range logictest.Parse(string(data)) {
			if r.SQL != "" {
				out = append(out, r.SQL)
			}
		}
	}
	data, err := os.ReadFile("testdata/fuzz/bind-seeds.sql")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range strings.Split(string(data), "\n----\n") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) < 100 {
		f.Fatalf("only %d seeds", len(out))
	}
	return out
}
