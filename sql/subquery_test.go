package sql

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// tri is a three-valued truth for the oracles: 0 false, 1 true, 2 NULL.
type tri int

const (
	triF tri = iota
	triT
	triN
)

func (v tri) String() string { return [...]string{"false", "true", "NULL"}[v] }

func triOr(a, b tri) tri {
	switch {
	case a == triT || b == triT:
		return triT
	case a == triN || b == triN:
		return triN
	}
	return triF
}

func triAnd(a, b tri) tri {
	switch {
	case a == triF || b == triF:
		return triF
	case a == triN || b == triN:
		return triN
	}
	return triT
}

func triNot(a tri) tri {
	if a == triN {
		return triN
	}
	return 1 - a
}

// nint is a nullable integer of the oracle's tables.
type nint struct {
	v    int64
	null bool
}

func (n nint) sql() string {
	if n.null {
		return "NULL"
	}
	return fmt.Sprint(n.v)
}

func (n nint) String() string { return n.sql() }

func cmpTri(a, b nint, f func(x, y int64) bool) tri {
	if a.null || b.null {
		return triN
	}
	if f(a.v, b.v) {
		return triT
	}
	return triF
}

func eq(x, y int64) bool { return x == y }
func gt(x, y int64) bool { return x > y }
func lt(x, y int64) bool { return x < y }

func showValue(v types.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	if v.Family() == types.Bool {
		if v.Bool() {
			return "true"
		}
		return "false"
	}
	return v.Text()
}

type oracleRow struct {
	id int64
	v  nint
}

func randRows(rng *rand.Rand, n int) []oracleRow {
	var rows []oracleRow
	for id := int64(0); id < int64(n); id++ {
		if rng.Intn(4) == 0 {
			continue
		}
		r := oracleRow{id: id}
		if rng.Intn(5) == 0 {
			r.v.null = true
		} else {
			r.v.v = int64(rng.Intn(6))
		}
		rows = append(rows, r)
	}
	return rows
}

func loadRows(t *testing.T, s *Session, table string, rows []oracleRow) {
	t.Helper()
	query(t, s, "DELETE FROM "+table)
	if len(rows) == 0 {
		return
	}
	var parts []string
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("(%d, %s)", r.id, r.v.sql()))
	}
	query(t, s, "INSERT INTO "+table+" VALUES "+strings.Join(parts, ", "))
}

// TestSubqueriesRandomized compares uncorrelated and correlated IN, NOT IN,
// EXISTS, ANY, ALL and scalar subqueries with an oracle over random tables
// with NULLs. Both tables have several shards, so WHERE filters with
// subqueries run in the parallel scan's workers (run with -race); a
// statement parameter is mixed with outer references.
func TestSubqueriesRandomized(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE p (id Int64, v Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = ((10), (20), (30)))")
	query(t, s, "CREATE TABLE q (id Int64, v Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = ((10), (20), (30)))")
	const selectList = `SELECT id,
		v IN (SELECT v FROM q),
		v NOT IN (SELECT v FROM q WHERE id < $1),
		EXISTS (SELECT 1 FROM q WHERE q.v = p.v),
		(SELECT count(*) FROM q WHERE q.v < p.v),
		v > ALL (SELECT v FROM q WHERE q.id > p.id),
		v = ANY (SELECT v FROM q WHERE q.id <> p.id),
		(SELECT max(v) FROM q WHERE q.id = p.id),
		(SELECT count(*) FROM q WHERE q.id < p.id AND EXISTS (SELECT 1 FROM q AS r WHERE r.id = q.id + 1 AND r.v = p.v))
	FROM p ORDER BY id`
	const filter = `SELECT id FROM p WHERE v NOT IN (SELECT v FROM q WHERE q.id <> p.id AND q.v IS NOT NULL) OR EXISTS (SELECT 1 FROM q WHERE q.id = p.id + $1) ORDER BY id`
	for round := 0; round < 12; round++ {
		rng := rand.New(rand.NewSource(int64(round)))
		pr, qr := randRows(rng, 40), randRows(rng, 40)
		loadRows(t, s, "p", pr)
		loadRows(t, s, "q", qr)
		limit := int64(rng.Intn(40))
		byID := map[int64]nint{}
		for _, r := range qr {
			byID[r.id] = r.v
		}
		var want []string
		for _, r := range pr {
			in, notIn, exists, anyEq, all := triF, triF, triF, triF, triT
			count, count2 := 0, 0
			for _, x := range qr {
				in = triOr(in, cmpTri(r.v, x.v, eq))
				if x.id < limit {
					notIn = triOr(notIn, cmpTri(r.v, x.v, eq))
				}
				if cmpTri(x.v, r.v, eq) == triT {
					exists = triT
				}
				if cmpTri(x.v, r.v, lt) == triT {
					count++
				}
				if x.id > r.id {
					all = triAnd(all, cmpTri(r.v, x.v, gt))
				}
				if x.id != r.id {
					anyEq = triOr(anyEq, cmpTri(r.v, x.v, eq))
				}
				if next, ok := byID[x.id+1]; x.id < r.id && ok && cmpTri(next, r.v, eq) == triT {
					count2++
				}
			}
			max := "NULL"
			if v, ok := byID[r.id]; ok {
				max = v.sql()
			}
			want = append(want, fmt.Sprintf("%d %s %s %s %d %s %s %s %d", r.id, in, triNot(notIn), exists, count, all, anyEq, max, count2))
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
			t.Fatalf("round %d (limit %d): p=%v q=%v\ngot:\n%s\nwant:\n%s", round, limit, pr, qr, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		off := int64(rng.Intn(3))
		want = want[:0]
		for _, r := range pr {
			in := triF
			for _, x := range qr {
				if x.id != r.id && !x.v.null {
					in = triOr(in, cmpTri(r.v, x.v, eq))
				}
			}
			_, exists := byID[r.id+off]
			if triNot(in) == triT || exists {
				want = append(want, fmt.Sprint(r.id))
			}
		}
		got = got[:0]
		for _, row := range query(t, s, filter, types.NewInt64(off)) {
			got = append(got, showValue(row[0]))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("round %d filter (offset %d): p=%v q=%v\ngot  %v\nwant %v", round, off, pr, qr, got, want)
		}
	}
}

// TestSetOperationsRandomized compares UNION, INTERSECT and EXCEPT, with
// and without ALL, with a multiset oracle.
func TestSetOperationsRandomized(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE p (id Int64, v Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = ((10), (20)))")
	query(t, s, "CREATE TABLE q (id Int64, v Int64, PRIMARY KEY (id))")
	for round := 0; round < 10; round++ {
		rng := rand.New(rand.NewSource(int64(100 + round)))
		pr, qr := randRows(rng, 30), randRows(rng, 30)
		loadRows(t, s, "p", pr)
		loadRows(t, s, "q", qr)
		count := func(rows []oracleRow) map[string]int {
			m := map[string]int{}
			for _, r := range rows {
				m[r.v.sql()]++
			}
			return m
		}
		pc, qc := count(pr), count(qr)
		keys := map[string]bool{}
		for k := range pc {
			keys[k] = true
		}
		for k := range qc {
			keys[k] = true
		}
		for _, op := range []string{"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"} {
			var want []string
			for k := range keys {
				m, n := pc[k], qc[k]
				var c int
				switch op {
				case "UNION":
					c = min(m+n, 1)
				case "UNION ALL":
					c = m + n
				case "INTERSECT":
					c = min(m, n, 1)
				case "INTERSECT ALL":
					c = min(m, n)
				case "EXCEPT":
					if m > 0 && n == 0 {
						c = 1
					}
				case "EXCEPT ALL":
					c = max(m-n, 0)
				}
				for range c {
					want = append(want, k)
				}
			}
			var got []string
			for _, row := range query(t, s, "SELECT v FROM p "+op+" SELECT v FROM q") {
				got = append(got, showValue(row[0]))
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("round %d %s: p=%v q=%v\ngot  %v\nwant %v", round, op, pr, qr, got, want)
			}
		}
	}
}

// TestSubqueryErrors checks the SQLSTATEs of misused subqueries and set
// operations.
func TestSubqueryErrors(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE p (id Int64, v Int64, PRIMARY KEY (id))")
	query(t, s, "CREATE TABLE q (id Int64, w Utf8, PRIMARY KEY (id))")
	query(t, s, "INSERT INTO p VALUES (1, 1), (2, 2)")
	query(t, s, "INSERT INTO q VALUES (1, 'a'), (2, 'b')")
	for _, tc := range []struct{ sql, code string }{
		{"SELECT (SELECT id FROM p)", sqlerr.CardinalityViolation},
		{"SELECT (SELECT 1 UNION SELECT 2)", sqlerr.CardinalityViolation},
		{"SELECT (1, 2) = (SELECT id, v FROM p)", sqlerr.CardinalityViolation},
		{"SELECT (SELECT id, v FROM p WHERE id = 1)", sqlerr.SyntaxError},
		{"SELECT 1 IN (SELECT id, v FROM p)", sqlerr.SyntaxError},
		{"SELECT (1, 2) IN (SELECT id FROM p)", sqlerr.SyntaxError},
		{"SELECT 1 = ANY (SELECT id, v FROM p)", sqlerr.SyntaxError},
		{"SELECT id FROM p WHERE v IN (SELECT w FROM q)", sqlerr.UndefinedFunction},
		{"SELECT id FROM p WHERE v > ALL (SELECT w FROM q)", sqlerr.UndefinedFunction},
		{"SELECT id FROM p WHERE EXISTS (SELECT nosuch FROM q)", sqlerr.UndefinedColumn},
		{"SELECT v, (SELECT count(*) FROM q WHERE q.id = p.id) FROM p GROUP BY v", sqlerr.GroupingError},
		{"SELECT id, v FROM p UNION SELECT id FROM q", sqlerr.SyntaxError},
		{"SELECT id FROM p INTERSECT SELECT id, w FROM q", sqlerr.SyntaxError},
		{"SELECT v FROM p UNION SELECT w FROM q", sqlerr.DatatypeMismatch},
		{"SELECT v FROM p EXCEPT SELECT w FROM q", sqlerr.DatatypeMismatch},
		{"SELECT 1 UNION SELECT 'x'", sqlerr.InvalidTextRepresentation},
		{"SELECT id FROM p UNION SELECT id FROM q ORDER BY id + 1", sqlerr.FeatureNotSupported},
		{"SELECT id FROM p UNION SELECT id FROM q ORDER BY 2", sqlerr.InvalidColumnReference},
		{"SELECT id FROM p UNION SELECT id FROM q ORDER BY nosuch", sqlerr.UndefinedColumn},
	} {
		_, err := tryQuery(s, tc.sql)
		if got := sqlerr.Code(err); got != tc.code {
			t.Errorf("%s: got %v (%s), want SQLSTATE %s", tc.sql, err, got, tc.code)
		}
	}
}

// TestSubqueryPreparedReuse runs one prepared statement with different
// parameters: subquery results are cached per execution, never across.
func TestSubqueryPreparedReuse(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE p (id Int64, v Int64, PRIMARY KEY (id))")
	query(t, s, "INSERT INTO p VALUES (1, 10), (2, 20), (3, 30)")
	ctx := context.Background()
	s.BeginImplicit()
	prep, err := s.Prepare(ctx, "SELECT (SELECT v FROM p WHERE id = $1), (SELECT count(*) FROM p AS i WHERE i.v > p.v + $2) FROM p WHERE id = 1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prep.ParamTypes) != 2 {
		t.Fatalf("outer references leaked into the parameters: %v", prep.ParamTypes)
	}
	s.Sync()
	for _, tc := range []struct {
		a, b int64
		want string
	}{{1, 0, "10 2"}, {3, 10, "30 1"}, {9, -100, "NULL 3"}} {
		s.BeginImplicit()
		res, err := s.Execute(ctx, prep, []types.Value{types.NewInt64(tc.a), types.NewInt64(tc.b)})
		if err != nil {
			t.Fatal(err)
		}
		row, err := res.Next(ctx)
		if err != nil || row == nil {
			t.Fatal(row, err)
		}
		if got := showValue(row[0]) + " " + showValue(row[1]); got != tc.want {
			t.Errorf("$1=%d $2=%d: got %s, want %s", tc.a, tc.b, got, tc.want)
		}
		res.Close()
		s.Sync()
	}
}
