package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// valuesList is "(from, 'v<from>'), ..., (to-1, ...)" with extra rows
// appended.
func valuesList(from, to int, extra ...string) string {
	var sb strings.Builder
	for k := from; k < to; k++ {
		if sb.Len() > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, 'v%d')", k, k)
	}
	for _, e := range extra {
		sb.WriteString(", " + e)
	}
	return sb.String()
}

func wantBatchErr(t *testing.T, err error, code, detail string) {
	t.Helper()
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != code || !strings.Contains(e.Detail, detail) {
		t.Fatalf("got %v, want %s with detail containing %q", err, code, detail)
	}
}

// The batched existence checks of a multi-row INSERT (insertbatch.go)
// must answer as the row-by-row reads did: duplicates inside the
// statement, across a chunk boundary, against stored rows, and UPSERT's
// last row winning.
func TestInsertBatchedExistenceChecks(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO t (k, v) VALUES "+valuesList(0, 10))

	// A stored key in the middle of a batch.
	_, err := tryQuery(s, "INSERT INTO t (k, v) VALUES "+valuesList(100, 110, "(5, 'dup')"))
	wantBatchErr(t, err, sqlerr.UniqueViolation, "Key (k)=(5) already exists.")
	// A key repeated inside the statement: the second occurrence is read
	// again and sees the first.
	_, err = tryQuery(s, "INSERT INTO t (k, v) VALUES "+valuesList(200, 210, "(203, 'again')"))
	wantBatchErr(t, err, sqlerr.UniqueViolation, "Key (k)=(203) already exists.")
	// ... also when the two are in different chunks.
	_, err = tryQuery(s, "INSERT INTO t (k, v) VALUES "+valuesList(1000, 1000+preReadChunk+10, "(1003, 'again')"))
	wantBatchErr(t, err, sqlerr.UniqueViolation, "Key (k)=(1003) already exists.")
	// The first error in row order wins: a stored duplicate before a
	// repeated key.
	_, err = tryQuery(s, "INSERT INTO t (k, v) VALUES (300, 'a'), (7, 'stored'), (300, 'b')")
	wantBatchErr(t, err, sqlerr.UniqueViolation, "Key (k)=(7) already exists.")
	// A value that does not coerce stops the batch at its row; the rows
	// before it would have been written first, so the error is its own.
	_, err = tryQuery(s, "INSERT INTO t (k, v) VALUES (400, 'a'), ('x', 'b'), (8, 'dup')")
	if err == nil || sqlerr.As(err).Code == sqlerr.UniqueViolation {
		t.Fatalf("got %v, want the coercion error of the second row", err)
	}
	if got := query(t, s, "SELECT count(*) FROM t"); got[0][0] != types.NewInt64(10) {
		t.Fatalf("failed statements left rows: count %v", got[0][0])
	}

	// UPSERT of a repeated key: the later row wins, and unlisted columns
	// keep the stored values.
	query(t, s, "CREATE TABLE u (k Int64, a Utf8, b Utf8, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO u (k, a, b) VALUES (1, 'a1', 'b1'), (2, 'a2', 'b2')")
	query(t, s, "UPSERT INTO u (k, a) VALUES (1, 'x'), (3, 'y'), (1, 'z'), (3, 'w'), (2, 'q')")
	got := query(t, s, "SELECT k, a, b FROM u ORDER BY k")
	want := "[[1 \"z\" \"b1\"] [2 \"q\" \"b2\"] [3 \"w\" NULL]]"
	if fmt.Sprint(got) != want {
		t.Fatalf("UPSERT gave %v, want %s", got, want)
	}
	// REPLACE of a repeated key replaces the whole row.
	query(t, s, "REPLACE INTO u (k, a) VALUES (1, 'r1'), (1, 'r2')")
	if got := fmt.Sprint(query(t, s, "SELECT k, a, b FROM u WHERE k = 1")); got != "[[1 \"r2\" NULL]]" {
		t.Fatalf("REPLACE gave %s", got)
	}
}

// At REPEATABLE READ a batch that meets a key changed after the
// transaction's snapshot fails with 40001, as the row-by-row read did.
func TestInsertBatchedRepeatableReadConflict(t *testing.T) {
	e := testEngine(t)
	s1, s2 := testSession(t, e), testSession(t, e)
	query(t, s1, "CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s1, "INSERT INTO t (k, v) VALUES "+valuesList(0, 10))
	query(t, s1, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	query(t, s1, "SELECT count(*) FROM t")
	query(t, s2, "UPSERT INTO t (k, v) VALUES (5, 'changed')")
	_, err := tryQuery(s1, "UPSERT INTO t (k, v) VALUES (4, 'a'), (5, 'b'), (6, 'c')")
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.SerializationFailure {
		t.Fatalf("got %v, want 40001", err)
	}
	query(t, s1, "ROLLBACK")
}

// BenchmarkInsertBatch is a 1,000-row INSERT of new keys into a table
// with a primary key, in process: the per-statement cost above storage
// that the batched existence checks cut (cpu-ns/op as in BenchmarkWire).
func BenchmarkInsertBatch(b *testing.B) {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
	var sb strings.Builder
	sb.WriteString("INSERT INTO t (k, v) VALUES ")
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "($%d, $%d)", 2*i+1, 2*i+2)
	}
	s.BeginImplicit()
	p, err := s.Prepare(context.Background(), sb.String(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	params := make([]types.Value, 2000)
	next := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 1000; j++ {
			params[2*j] = types.NewInt64(next)
			params[2*j+1] = types.NewUtf8(fmt.Sprintf("value-%016d", next))
			next++
		}
		execCount(b, s, p, params)
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
