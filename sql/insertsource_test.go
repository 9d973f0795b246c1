package sql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestInsertOneValuesRow covers the single-row source read without the
// executor (insertSource, exec.OneValuesRow) beside the sources that still
// go through it: parameters, constants and casts; defaults; a cast that
// fails; a subquery in the row; two rows; EXPLAIN ANALYZE.
func TestInsertOneValuesRow(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE t (k Int64, v Utf8, n Int64 DEFAULT 7, PRIMARY KEY (k))")
	query(t, s, "UPSERT INTO t (k, v) VALUES ($1, $2)", types.NewInt64(1), types.NewString("a"))
	query(t, s, "UPSERT INTO t (k, v) VALUES ($1, $2)", types.NewInt64(1), types.NewString("b"))
	query(t, s, "INSERT INTO t (k, v, n) VALUES (2, CAST(3 AS Utf8), $1)", types.NewInt64(9))
	query(t, s, "INSERT INTO t (k, v) VALUES ((SELECT max(k) + 1 FROM t), 'sub')")
	query(t, s, "INSERT INTO t (k, v) VALUES (10, 'x'), (11, 'y')")
	got := fmt.Sprint(query(t, s, "SELECT k, v, n FROM t ORDER BY k"))
	if want := `[[1 "b" 7] [2 "3" 9] [3 "sub" 7] [10 "x" 7] [11 "y" 7]]`; got != want {
		t.Fatalf("rows: got %s, want %s", got, want)
	}
	_, err := tryQuery(s, "INSERT INTO t (k, v) VALUES (CAST('x' AS Int64), 'bad')")
	if err == nil || sqlerr.As(err).Code != "22P02" {
		t.Fatalf("a failing cast: got %v, want 22P02", err)
	}
	_, err = tryQuery(s, "INSERT INTO t (k, v) VALUES ($1, 'dup')", types.NewInt64(1))
	if err == nil || sqlerr.As(err).Code != sqlerr.UniqueViolation {
		t.Fatalf("a duplicate key: got %v, want 23505", err)
	}
	plan := fmt.Sprint(query(t, s, "EXPLAIN ANALYZE INSERT INTO t (k, v) VALUES ($1, 'ex')", types.NewInt64(20)))
	// The VALUES node is executed and measured: its stats are there.
	if !strings.Contains(plan, "Values 1 rows  (actual rows=1 loops=1") {
		t.Fatalf("EXPLAIN ANALYZE lost the VALUES node:\n%s", plan)
	}
}
