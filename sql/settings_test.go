package sql

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/storage"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestToolSettingsNotice: a setting that changes nothing in PivotDB says so
// when set; one that acts does not; client_min_messages filters notices.
func TestToolSettingsNotice(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	s.TakeNotices()
	query(t, s, "SET synchronous_commit = off")
	n := s.TakeNotices()
	if len(n) != 1 || !strings.Contains(n[0].Message, "commits are always durable") {
		t.Fatalf("synchronous_commit notice: %+v", n)
	}
	if got := query(t, s, "SHOW synchronous_commit"); got[0][0].Str() != "off" {
		t.Fatalf("SHOW synchronous_commit = %v", got)
	}
	query(t, s, "SET work_mem = '64kB'")
	query(t, s, "SET enable_hashjoin = off")
	if n := s.TakeNotices(); len(n) != 0 {
		t.Fatalf("settings that act raised notices: %+v", n)
	}
	query(t, s, "SET search_path = public, pg_catalog")
	if n := s.TakeNotices(); len(n) != 0 {
		t.Fatalf("search_path with public raised notices: %+v", n)
	}
	query(t, s, "SET search_path = myschema")
	if n := s.TakeNotices(); len(n) != 1 || !strings.Contains(n[0].Message, "search_path without public") {
		t.Fatalf("search_path without public: %+v", n)
	}
	query(t, s, "SET client_min_messages = warning")
	query(t, s, "SET enable_mergejoin = off")
	if n := s.TakeNotices(); len(n) != 0 {
		t.Fatalf("NOTICE sent under client_min_messages=warning: %+v", n)
	}
	_, err := tryQuery(s, "SET default_with_oids = true")
	wantCode(t, err, sqlerr.FeatureNotSupported)
	_, err = tryQuery(s, "SET work_mem = '10kB'")
	wantCode(t, err, sqlerr.InvalidParameterValue)
	if got := query(t, s, "SELECT current_setting('work_mem'), setting FROM pg_settings WHERE name = 'work_mem'"); got[0][0].Str() != "64kB" || got[0][1].Str() != "64kB" {
		t.Fatalf("work_mem shown as %v", got)
	}
}

// TestWorkMemLimitsSort: a sort holding more than work_mem fails with 53200;
// raising work_mem lets it run.
func TestWorkMemLimitsSort(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE wm (k Int64, v Utf8, PRIMARY KEY (k))")
	var vals []string
	for i := 0; i < 2000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, '%s')", i, strings.Repeat("x", 100)))
	}
	query(t, s, "INSERT INTO wm VALUES "+strings.Join(vals, ","))
	query(t, s, "SET work_mem = '64kB'")
	_, err := tryQuery(s, "SELECT k FROM wm ORDER BY v, k DESC")
	wantCode(t, err, sqlerr.OutOfMemory)
	query(t, s, "SET work_mem = '4MB'")
	if got := query(t, s, "SELECT k FROM wm ORDER BY v, k DESC"); len(got) != 2000 {
		t.Fatalf("sorted %d rows", len(got))
	}
}

// TestPlannerSwitches: enable_hashjoin and enable_indexscan change the plan
// EXPLAIN shows, and the answer stays the same.
func TestPlannerSwitches(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE pa (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "CREATE TABLE pb (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "CREATE INDEX pa_v ON pa (v)")
	query(t, s, "INSERT INTO pa VALUES (1, 10), (2, 20), (3, 30)")
	query(t, s, "INSERT INTO pb VALUES (1, 10), (2, 20), (4, 40)")
	plan := func(q string) string {
		var lines []string
		for _, r := range query(t, s, "EXPLAIN "+q) {
			lines = append(lines, r[0].Str())
		}
		return strings.Join(lines, "\n")
	}
	join := "SELECT pa.k FROM pa JOIN pb ON pa.v = pb.v ORDER BY pa.k"
	if p := plan(join); !strings.Contains(p, "HashJoin") {
		t.Fatalf("default join plan:\n%s", p)
	}
	want := fmt.Sprint(query(t, s, join))
	query(t, s, "SET enable_hashjoin = off")
	if p := plan(join); strings.Contains(p, "HashJoin") || !strings.Contains(p, "NestedLoopJoin") {
		t.Fatalf("join plan with enable_hashjoin off:\n%s", p)
	}
	if got := fmt.Sprint(query(t, s, join)); got != want {
		t.Fatalf("nested loop gave %s, hash join %s", got, want)
	}
	point := "SELECT k FROM pa WHERE v = 20"
	if p := plan(point); !strings.Contains(p, "index pa_v") {
		t.Fatalf("default point plan:\n%s", p)
	}
	query(t, s, "SET enable_indexscan = off")
	if p := plan(point); strings.Contains(p, "index pa_v") || !strings.Contains(p, "full scan") {
		t.Fatalf("plan with enable_indexscan off:\n%s", p)
	}
	if got := query(t, s, point); len(got) != 1 || got[0][0].Int() != 2 {
		t.Fatalf("full scan gave %v", got)
	}
}

// TestLockTimeout: a write waiting on a row another transaction holds gives
// up after lock_timeout with 55P03.
func TestLockTimeout(t *testing.T) {
	e := testEngine(t)
	a := testSession(t, e)
	b := testSession(t, e)
	query(t, a, "CREATE TABLE lt (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, a, "INSERT INTO lt VALUES (1, 1)")
	query(t, a, "BEGIN")
	query(t, a, "UPDATE lt SET v = 2 WHERE k = 1")
	query(t, b, "SET lock_timeout = '50ms'")
	_, err := tryQuery(b, "UPDATE lt SET v = 3 WHERE k = 1")
	wantCode(t, err, sqlerr.LockNotAvailable)
	query(t, a, "COMMIT")
	query(t, b, "UPDATE lt SET v = 3 WHERE k = 1")
}

// TestWorkMemDefault: work_mem starts at the server's --max-query-memory,
// and RESET returns to it.
func TestWorkMemDefault(t *testing.T) {
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, MaxQueryMemory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := testSession(t, e)
	if got := query(t, s, "SHOW work_mem"); got[0][0].Str() != "256MB" {
		t.Fatalf("default work_mem %v", got)
	}
	query(t, s, "SET work_mem = '1GB'")
	if s.memLimit() != 256<<20 {
		t.Fatalf("work_mem above --max-query-memory: limit %d", s.memLimit())
	}
	query(t, s, "RESET work_mem")
	if got := query(t, s, "SHOW work_mem"); got[0][0].Str() != "256MB" {
		t.Fatalf("work_mem after RESET %v", got)
	}
}
