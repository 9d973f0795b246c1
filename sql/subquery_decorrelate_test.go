package sql

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestDecorrelatedSubqueriesRandomized compares correlated EXISTS, NOT
// EXISTS, IN and NOT IN that run as hash semi/anti joins (exec.SubHash)
// with an oracle over random tables with NULLs: NULL correlation values on
// either side, NULLs among NOT IN's values, two keys, a statement
// parameter next to the keys, EXISTS's LIMIT 1, and the same subqueries under OR in WHERE
// (run by the parallel scan's workers: several shards; run with -race).
// EXPLAIN must show every one of them hashed, so the test fails if they
// fall back to the per-row path.
func TestDecorrelatedSubqueriesRandomized(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE p (id Int64, v Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = ((10), (20), (30)))")
	query(t, s, "CREATE TABLE q (id Int64, v Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = ((10), (20), (30)))")
	const nullable = "CASE WHEN q.id % 3 = 0 THEN NULL ELSE q.id END"
	const selectList = `SELECT id,
		EXISTS (SELECT 1 FROM q WHERE q.v = p.v),
		NOT EXISTS (SELECT 1 FROM q WHERE p.v = q.v AND q.id > $1),
		v IN (SELECT id FROM q WHERE q.v = p.v),
		id NOT IN (SELECT ` + nullable + ` FROM q WHERE q.v = p.v),
		id IN (SELECT ` + nullable + ` FROM q WHERE q.v = p.v),
		EXISTS (SELECT 1 FROM q WHERE q.v = p.v AND q.v = p.id),
		EXISTS (SELECT 1 FROM q WHERE q.v = p.v LIMIT 1)
	FROM p ORDER BY id`
	const filter = `SELECT id FROM p WHERE id NOT IN (SELECT ` + nullable + ` FROM q WHERE q.v = p.v)
		OR NOT EXISTS (SELECT 1 FROM q WHERE q.v = p.v AND q.id > $1) ORDER BY id`
	explain := func(q string) string {
		var lines []string
		for _, r := range query(t, s, "EXPLAIN "+q, types.NewInt64(0)) {
			lines = append(lines, r[0].Text())
		}
		return strings.Join(lines, "\n")
	}
	for q, want := range map[string]int{selectList: 7, filter: 2} {
		plan := explain(q)
		if got := strings.Count(plan, "HashSemiJoin") + strings.Count(plan, "HashAntiJoin"); got != want {
			t.Fatalf("%d hashed subqueries, want %d:\n%s", got, want, plan)
		}
	}
	eq := func(x, y int64) bool { return x == y }
	for round := 0; round < 12; round++ {
		seed := int64(1000 + round)
		rng := rand.New(rand.NewSource(seed))
		pr, qr := randRows(rng, 40), randRows(rng, 40)
		loadRows(t, s, "p", pr)
		loadRows(t, s, "q", qr)
		limit := int64(rng.Intn(40))
		var want, wantFilter []string
		for _, r := range pr {
			exists, notExists := triF, triT
			in, notIn, inN, two := triF, triF, triF, triF
			id := nint{v: r.id}
			for _, x := range qr {
				if cmpTri(x.v, r.v, eq) != triT {
					continue // the correlation equality is not TRUE
				}
				exists = triT
				if x.id > limit {
					notExists = triF
				}
				in = triOr(in, cmpTri(r.v, nint{v: x.id}, eq))
				val := nint{v: x.id, null: x.id%3 == 0}
				notIn = triOr(notIn, cmpTri(id, val, eq))
				inN = triOr(inN, cmpTri(id, val, eq))
				if x.v.v == r.id {
					two = triT
				}
			}
			want = append(want, fmt.Sprintf("%d %s %s %s %s %s %s %s", r.id, exists, notExists, in, triNot(notIn), inN, two, exists))
			if triNot(notIn) == triT || notExists == triT {
				wantFilter = append(wantFilter, fmt.Sprint(r.id))
			}
		}
		var got []string
		for _, row := range query(t, s, selectList, types.NewInt64(limit)) {
			var parts []string
			for _, v := range row {
				parts = append(parts, showValue(v))
			}
			got = append(got, strings.Join(parts, " "))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d (limit %d): p=%v q=%v\ngot:\n%s\nwant:\n%s", seed, limit, pr, qr, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		got = got[:0]
		for _, row := range query(t, s, filter, types.NewInt64(limit)) {
			got = append(got, showValue(row[0]))
		}
		if strings.Join(got, ",") != strings.Join(wantFilter, ",") {
			t.Fatalf("seed %d filter (limit %d): p=%v q=%v\ngot  %v\nwant %v", seed, limit, pr, qr, got, wantFilter)
		}
	}
}

// TestDecorrelatedUnsignedKeys: a table keyed by one integer column holds
// Uint64 values above the int64 range apart from the negative Int64 values
// of the same bits (18446744073709551615 is not -1).
func TestDecorrelatedUnsignedKeys(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE p (id Int64, u Uint64, PRIMARY KEY (id))")
	query(t, s, "CREATE TABLE q (id Int64, i Int64, u Uint64, PRIMARY KEY (id))")
	query(t, s, "INSERT INTO p VALUES (1, 18446744073709551615), (2, 5), (3, 9223372036854775808)")
	query(t, s, "INSERT INTO q VALUES (1, -1, 18446744073709551615), (2, 5, 7), (3, -9223372036854775808, 1)")
	for q, want := range map[string]string{
		"SELECT id FROM p WHERE EXISTS (SELECT 1 FROM q WHERE q.i = p.u) ORDER BY id":     "2",
		"SELECT id FROM p WHERE EXISTS (SELECT 1 FROM q WHERE q.u = p.u) ORDER BY id":     "1",
		"SELECT id FROM p WHERE NOT EXISTS (SELECT 1 FROM q WHERE q.i = p.u) ORDER BY id": "1,3",
		"SELECT id FROM q WHERE EXISTS (SELECT 1 FROM p WHERE p.u = q.i) ORDER BY id":     "2",
	} {
		var plan []string
		for _, r := range query(t, s, "EXPLAIN "+q) {
			plan = append(plan, r[0].Text())
		}
		if !strings.Contains(strings.Join(plan, "\n"), "Hash") {
			t.Fatalf("%s: not hashed:\n%s", q, strings.Join(plan, "\n"))
		}
		var got []string
		for _, r := range query(t, s, q) {
			got = append(got, showValue(r[0]))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: got %v, want %s", q, got, want)
		}
	}
}

// TestDecorrelatedWorkMem: the probe table of a decorrelated EXISTS counts
// against work_mem (53200 beyond it), also when the statement is run
// again with its table presized from the last build; raising work_mem
// lets it run.
func TestDecorrelatedWorkMem(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE wp (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "CREATE TABLE wq (k Int64, v Utf8, PRIMARY KEY (k))")
	var vals []string
	for i := 0; i < 3000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, '%s%d')", i, strings.Repeat("x", 40), i))
	}
	query(t, s, "INSERT INTO wp VALUES "+strings.Join(vals, ","))
	query(t, s, "INSERT INTO wq VALUES "+strings.Join(vals, ","))
	const q = "SELECT count(*) FROM wp WHERE EXISTS (SELECT 1 FROM wq WHERE wq.v = wp.v)"
	if plan := query(t, s, "EXPLAIN "+q); !strings.Contains(fmt.Sprint(plan), "HashSemiJoin") {
		t.Fatalf("not hashed: %v", plan)
	}
	for _, mem := range []string{"64kB", "4MB", "64kB", "4MB"} {
		query(t, s, "SET work_mem = '"+mem+"'")
		rows, err := tryQuery(s, q)
		if mem == "64kB" {
			wantCode(t, err, sqlerr.OutOfMemory)
			continue
		}
		if err != nil || rows[0][0].Int() != 3000 {
			t.Fatalf("work_mem %s: %v %v", mem, rows, err)
		}
	}
}
