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

// FuzzBind feeds SQL text through the parser and the binder (Prepare) of
// two sessions whose catalog holds the tables, indexes and views that the
// seed statements create: the bootstrap superuser's and that of a role
// holding a few privileges, so that the privilege checks are exercised too.
// Nothing runs: the catalog is the same for every input. It checks that
// binding never panics and that every error carries a SQLSTATE and is not
// an internal error (XX000 is a bug by definition).
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
	for _, sql := range []string{
		"CREATE USER fuzzer",
		"GRANT SELECT ON t1 TO fuzzer",
		"GRANT INSERT, UPDATE ON t2 TO fuzzer WITH GRANT OPTION",
		"GRANT SELECT ON t TO PUBLIC",
	} {
		_, _ = tryQuery(s, sql)
	}
	user := asUser(f, e, "fuzzer")
	f.Fuzz(func(t *testing.T, sql string) {
		checkBind(t, s, sql)
		checkBind(t, user, sql)
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
	// Statements of the privilege system, which neither source has.
	out = append(out,
		"GRANT SELECT, INSERT ON t1, public.t2 TO fuzzer WITH GRANT OPTION",
		"REVOKE GRANT OPTION FOR ALL PRIVILEGES ON TABLE t1 FROM PUBLIC CASCADE",
		"GRANT CONNECT, CREATE ON DATABASE pivotdb TO current_user",
		"GRANT readers TO fuzzer",
		"CREATE ROLE r WITH NOLOGIN CREATEDB NOCREATEROLE SUPERUSER PASSWORD 'x'",
		"ALTER USER fuzzer NOSUPERUSER",
		"SELECT has_table_privilege('fuzzer', 't1', 'SELECT WITH GRANT OPTION'), pg_has_role('pivotdb', 'MEMBER')",
		"SELECT has_database_privilege(10, 'pivotdb', 'connect'), has_schema_privilege('public', 'CREATE')",
		"SELECT rolname, rolpassword FROM pg_authid",
		"SELECT relacl FROM pg_class JOIN pg_database ON true",
		"ALTER TABLE public.t1 OWNER TO fuzzer",
		"ALTER DATABASE pivotdb OWNER TO current_user",
	)
	if len(out) < 100 {
		f.Fatalf("only %d seeds", len(out))
	}
	return out
}
