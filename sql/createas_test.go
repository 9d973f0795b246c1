package sql

import (
	"context"
	"testing"
)

// TestCreateTableAsTagAndSettings: CREATE TABLE AS answers PostgreSQL's
// "SELECT n" tag, and YQL's WITH (...) settings apply to the new table.
func TestCreateTableAsTagAndSettings(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE cs (k Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO cs VALUES (1), (2), (3)")
	ctx := context.Background()
	s.BeginImplicit()
	p, err := s.Prepare(ctx, "CREATE TABLE cs2 WITH (UNIFORM_PARTITIONS = 4) AS SELECT k * 10 AS k10 FROM cs", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tag() != "SELECT 3" {
		t.Fatalf("tag %q, want SELECT 3", res.Tag())
	}
	res.Close()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*) FROM sys.partitions WHERE table_name = 'cs2'"); got[0][0].Int() != 4 {
		t.Fatalf("cs2 has %v shards, want 4", got)
	}
	if got := query(t, s, "SELECT sum(k10) FROM cs2"); got[0][0].Text() != "60" {
		t.Fatalf("sum %v", got)
	}
}
